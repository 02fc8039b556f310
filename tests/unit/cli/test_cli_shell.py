"""The CLI as a shell sees it: --version/-V without loading the commands, every command
loaded on demand, shell completion, progress only on a terminal, Ctrl-C keeping partial
results (exit 130), and a Ctrl-C ignored where the CLI was started with SIGINT ignored."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuplane import __version__
from gpuplane.cli import main as cli_main
from gpuplane.cli import simulate as simulate_cli
from gpuplane.cli.lazy import load_command
from gpuplane.cli.main import COMMANDS, run
from gpuplane.cli.progress import INTERRUPTED_EXIT, Interruptible, progress_bar, takes_over
from tests.unit.cli.started import AS_A_BACKGROUND_JOB

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = str(REPO / "examples/scenario.yaml")
HEAVY = ("gpuplane.twin", "gpuplane.scheduler", "gpuplane.serving", "gpuplane.k8s", "numpy")


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_no_command_module(flag: str) -> None:
    done = python(
        "import sys\nfrom gpuplane.cli.main import run\ncode = run([" + repr(flag) + "])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('gpuplane.', 'numpy'))))\n"
        "sys.exit(code)"
    )
    assert done.returncode == 0, done.stderr
    first, loaded = done.stdout.splitlines()
    assert first == f"gpuplane {__version__}"
    heavy = [
        m for m in ast.literal_eval(loaded) if m.startswith(HEAVY) or m.startswith("gpuplane.cli.")
    ]
    allowed = {"gpuplane.cli.main", "gpuplane.cli.lazy", "gpuplane.cli.console"}
    assert set(heavy) <= allowed, heavy


def test_a_command_loads_only_its_own_module() -> None:
    done = python(
        "import sys\nfrom gpuplane.cli.main import run\n"
        "code = run(['topo', 'presets', '--json'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('gpuplane.cli.')), file=sys.stderr)\n"
        "sys.exit(code)"
    )
    assert done.returncode == 0, done.stderr
    loaded = ast.literal_eval(done.stderr.splitlines()[-1])
    assert "gpuplane.cli.topo" in loaded
    assert not {"gpuplane.cli.simulate", "gpuplane.cli.serve", "gpuplane.cli.bench"} & set(loaded)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_loads_and_answers_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = load_command(name, COMMANDS[name])
    assert command.name == name
    assert run([name, "--help"]) == 0
    assert f"gpuplane {name}" in capsys.readouterr().out


def test_single_command_groups_keep_their_sub_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # kubelet has one sub-command; it must stay `gpuplane kubelet merge-hints`.
    assert run(["kubelet", "--help"]) == 0
    assert "merge-hints" in capsys.readouterr().out


def test_root_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--help"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in COMMANDS)


def test_show_completion_prints_the_bash_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--show-completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "_GPUPLANE_COMPLETE=complete_bash" in script
    assert "complete -o default -F _gpuplane_completion gpuplane" in script


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("gpuplane to", "1", "topo"),
        ("gpuplane topo n", "2", "nrt"),
        ("gpuplane dra ", "2", "allocate"),
    ],
)
def test_completion_protocol(words: str, cword: str, expected: str) -> None:
    done = python(
        "from gpuplane.cli.main import main\nmain()",
        _GPUPLANE_COMPLETE="complete_bash",
        COMP_WORDS=words,
        COMP_CWORD=cword,
    )
    assert expected in done.stdout.split(), (done.stdout, done.stderr)


def test_progress_is_off_when_stderr_is_not_a_terminal() -> None:
    with progress_bar() as bar:
        assert bar.disable  # pytest captures stderr: no bar, nothing written


def _custom_handler(signum: int, frame: object) -> None:
    raise AssertionError("the handler found on entry must not run inside Interruptible")


@pytest.fixture
def sigint() -> Iterator[Callable[[Any], None]]:
    """Sets the SIGINT handler a test starts from, and puts back the one the suite had (which
    is SIG_IGN where the suite itself was started as a background job)."""
    suite_handler = signal.getsignal(signal.SIGINT)

    def start_from(handler: Any) -> None:
        signal.signal(signal.SIGINT, handler)

    yield start_from
    signal.signal(signal.SIGINT, suite_handler)


@pytest.mark.parametrize(
    "found",
    [signal.default_int_handler, signal.SIG_DFL, _custom_handler],
    ids=["default_int_handler", "SIG_DFL", "a-python-handler"],  # the same in every xdist worker
)
def test_first_ctrl_c_asks_to_stop_and_the_second_aborts(
    found: Any, sigint: Callable[[Any], None]
) -> None:
    sigint(found)
    with Interruptible("a test") as stop:
        assert not stop()
        signal.raise_signal(signal.SIGINT)
        assert stop()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is found  # exactly the one found, not a fixed one


def test_an_ignored_ctrl_c_stays_ignored(sigint: Callable[[Any], None]) -> None:
    # As Python does at start-up: a job started with SIGINT ignored (`cmd &` in a script) keeps
    # ignoring it, so the run goes on to its end.
    sigint(signal.SIG_IGN)
    with Interruptible("a test") as stop:
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
        assert not stop()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_handler_set_outside_python_is_left_alone() -> None:
    # signal.getsignal gives None for it, and signal.signal could not put it back.
    assert not takes_over(None) and not takes_over(signal.SIG_IGN)
    assert takes_over(signal.SIG_DFL) and takes_over(signal.default_int_handler)


# The CLI in a process of its own, with a Ctrl-C at the first 1 % step of the simulation.
_CTRL_C_AT_FIRST_STEP = """
import signal, sys
from gpuplane.cli import simulate
from gpuplane.cli.main import run
from gpuplane.cli.progress import Interruptible
if sys.argv[3] == "foreground":  # what Python sets up at start where SIGINT is not ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)

class CtrlCAtFirstStep(Interruptible):
    def __call__(self):
        if not getattr(self, "sent", False):
            self.sent = True
            signal.raise_signal(signal.SIGINT)  # what a Ctrl-C on the terminal sends
        return super().__call__()

simulate.Interruptible = CtrlCAtFirstStep
sys.exit(run(["simulate", sys.argv[1], "--until", "2m", "--out", sys.argv[2]]))
"""


@pytest.mark.parametrize("started", ["background", "foreground"])
def test_ctrl_c_stops_a_foreground_cli_and_not_a_background_job(
    tmp_path: Path, started: str
) -> None:
    argv = [sys.executable, "-c", _CTRL_C_AT_FIRST_STEP, EXAMPLE, str(tmp_path), started]
    done = subprocess.run(
        [*AS_A_BACKGROUND_JOB, *argv], capture_output=True, text=True, timeout=300, check=False
    )
    ignored = started == "background"
    assert done.stdout.splitlines()[0] == str(ignored), done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    if ignored:  # the Ctrl-C was ignored: a complete run
        assert done.returncode == 0, done.stderr
        assert "interrupted" not in summary and summary["until_s"] == 120.0
    else:  # the first Ctrl-C stopped it at the next step with what it had
        assert done.returncode == INTERRUPTED_EXIT, done.stderr
        assert summary["interrupted"] is True and summary["until_s"] == pytest.approx(1.2)


class _StopAfterFirstStep(Interruptible):
    def __call__(self) -> bool:
        return True


def test_interrupted_simulation_writes_partial_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(simulate_cli, "Interruptible", _StopAfterFirstStep)
    code = run(["simulate", EXAMPLE, "--until", "2h", "--out", str(tmp_path)])
    assert code == INTERRUPTED_EXIT
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["requested_until_s"] == 7200.0
    assert summary["until_s"] == pytest.approx(72.0)  # the first 1 % step
    assert (tmp_path / "events.jsonl").exists() and (tmp_path / "report.html").exists()
    assert "interrupted at simulated t = 0.02 h of 2.00 h" in capsys.readouterr().err


def test_a_full_run_has_no_interrupted_flag(tmp_path: Path) -> None:
    assert run(["simulate", EXAMPLE, "--until", "10m", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "interrupted" not in summary and summary["until_s"] == 600.0


def test_main_module_has_no_eager_command_imports() -> None:
    source = Path(cli_main.__file__).read_text()
    assert "from gpuplane.cli.simulate" not in source


def test_progress_on_a_terminal_changes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bars drawn on a (forced) terminal leave the run's files byte-identical."""
    import io

    from rich.console import Console

    from gpuplane.cli import progress as progress_module

    argv = ["simulate", EXAMPLE, "--seed", "3", "--until", "20m", "--out"]
    assert run([*argv, str(tmp_path / "quiet")]) == 0
    screen = io.StringIO()
    # rich draws no bar on a terminal it takes as dumb (TERM=dumb, as in many CI runners)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = Console(file=screen, force_terminal=True, width=100)
    monkeypatch.setattr(progress_module, "err", terminal)
    assert run([*argv, str(tmp_path / "tty")]) == 0
    assert "simulating" in screen.getvalue()  # the bar was drawn
    for name in ("summary.json", "events.jsonl", "timeseries.csv", "resolved-config.yaml"):
        quiet = (tmp_path / "quiet" / name).read_bytes()
        assert quiet == (tmp_path / "tty" / name).read_bytes(), name


def test_interrupted_openb_reports_the_completed_seeds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane.cli import bench as bench_cli

    monkeypatch.setattr(bench_cli, "Interruptible", _StopAfterFirstStep)
    examples = REPO / "examples/openb"
    argv = ["bench", "openb", "--nodes", str(examples / "nodes.csv")]
    argv += ["--pods", str(examples / "pods.csv"), "--seeds", "42-44", "--json"]
    assert run(argv) == INTERRUPTED_EXIT
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["interrupted"] is True and data["seeds"] == [42]
    assert data["seeds_requested"] == [42, 43, 44]
    assert "1 of 3 seeds completed" in captured.err


def test_ctrl_c_anywhere_else_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane.cli import topo as topo_cli

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(topo_cli, "resolve_topology", interrupted)
    # typer turns a KeyboardInterrupt into a silent exit 130; cli.main catches any that escapes
    assert run(["topo", "nrt", "hgx-h200"]) == INTERRUPTED_EXIT
    assert "Traceback" not in capsys.readouterr().err


def test_interrupted_demo_keeps_the_pools_and_the_partial_twin_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(simulate_cli, "Interruptible", _StopAfterFirstStep)
    assert run(["demo", EXAMPLE, "--until", "1h", "--out", str(tmp_path)]) == INTERRUPTED_EXIT
    assert (tmp_path / "pools/h200-infer/nrt.yaml").exists()
    summary = json.loads((tmp_path / "twin/summary.json").read_text())
    assert summary["interrupted"] is True and summary["until_s"] == pytest.approx(36.0)
    # the OpenB comparison and the HTML report come after the twin run: not started
    assert not (tmp_path / "openb.json").exists() and not (tmp_path / "report.html").exists()
    assert "interrupted at simulated t" in capsys.readouterr().err
