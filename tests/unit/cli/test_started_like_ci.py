"""The suite passes however it is started: a small representative part of it (the CLI's
interrupts, progress, colour and table width, completion, stdin, the CLI in subprocesses) run
as CI runners, ``nohup ... &`` and schedulers start ``make test``: standard input closed, SIGINT
ignored, no terminal and no controlling terminal, CI's variables, an odd terminal width, a
dumb TERM, the C locale, another working directory and a home directory that does not exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.cli.started import AS_A_BACKGROUND_JOB

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "tests/unit/cli"
SUBSET = (
    f"{CLI}/test_cli_shell.py",
    f"{CLI}/test_cli.py::test_show_picture",
    f"{CLI}/test_cli.py::test_kubelet_merge_hints_from_stdin",
    f"{CLI}/test_cli.py::test_process_exit_code_and_no_traceback",
)
# test_cli_shell.py without its longer runs (a full simulation, the demo, OpenB, the CLI in
# the foreground), to stay well under a minute (about 20 s of CPU).
SKIP = "not every_command and not full_run and not demo and not openb and not foreground"

CI_ENVIRONMENT = {
    "CI": "true",
    "NO_COLOR": "1",
    "FORCE_COLOR": "1",  # rich would take stderr for a terminal; the suite's conftest drops it
    "TTY_COMPATIBLE": "1",
    "COLUMNS": "37",
    "LINES": "3",
    "TERM": "dumb",
    "LC_ALL": "C",
    "LANG": "C",
}

# What the started process finds, printed before pytest runs, so the test knows the conditions
# held (and not only that the subset passed).
PROBE = """
import os, signal, sys
print("sigint ignored:", signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
print("stdin closed:", sys.stdin is None)
print("a terminal:", os.isatty(1) or os.isatty(2))
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("a controlling terminal: True")
except OSError:
    print("a controlling terminal: False")
print("cwd:", os.getcwd())
sys.stdout.flush()
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def _environment(home: Path) -> dict[str, str]:
    # Not the outer pytest's own variables (PYTEST_XDIST_WORKER, PYTEST_CURRENT_TEST...).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_CORE_"))}
    path = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH", "")) if p)
    return {**env, **CI_ENVIRONMENT, "HOME": str(home), "PYTHONPATH": path}


@pytest.mark.started_like_ci
def test_a_representative_subset_passes_started_as_ci_starts_it(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    pytest_args = ["-p", "no:cacheprovider", "-n", "0", "-k", SKIP]
    pytest_args += ["--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml")]
    pytest_args += ["--basetemp", str(tmp_path / "basetemp"), *SUBSET]
    done = subprocess.run(
        [*AS_A_BACKGROUND_JOB, sys.executable, "-c", PROBE, *pytest_args],
        capture_output=True, text=True, cwd=work, env=_environment(tmp_path / "no-home"),
        start_new_session=True,  # no controlling terminal, as under a CI runner or nohup
        timeout=600, check=False,
    )  # fmt: skip
    report = done.stdout + done.stderr
    probe = done.stdout.splitlines()[:5]
    assert probe == [
        "sigint ignored: True",
        "stdin closed: True",
        "a terminal: False",
        "a controlling terminal: False",
        f"cwd: {work}",
    ], report
    assert done.returncode == 0, report
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed is not None and int(passed.group(1)) >= 20, report
    assert not re.search(r"\d+ (failed|error)", done.stdout), report
