"""Every command documented in examples/README.md ("Every command") runs and exits 0; every
command of the CLI is documented there (the live ones in the block the test does not run)."""

from __future__ import annotations

import io
import re
import shlex
import sys
from pathlib import Path

import pytest

from gpuplane.cli.lazy import load_command
from gpuplane.cli.main import COMMANDS, run

REPO = Path(__file__).resolve().parents[3]
README = REPO / "examples/README.md"
SECTION = "## Every command, with an example input"


def _blocks(kind: str) -> list[str]:
    text = README.read_text().split(SECTION, 1)[1]
    lines: list[str] = []
    for block in re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S):
        lines += [line for line in block.splitlines() if line.startswith("gpuplane ")]
    return lines


RUN = _blocks("sh")
LIVE = _blocks("text")


def _leaf_commands() -> list[str]:
    names = []
    for name, spec in COMMANDS.items():
        command = load_command(name, spec)
        subs = getattr(command, "commands", None)
        names += [f"{name} {sub}" for sub in subs] if subs else [name]
    return names


def test_every_command_has_a_documented_example() -> None:
    documented = [line.removeprefix("gpuplane ") for line in RUN + LIVE]
    missing = [
        c for c in _leaf_commands() if not any(d.startswith(c + " ") or d == c for d in documented)
    ]
    assert not missing, f"no example in examples/README.md for: {missing}"


def test_every_example_input_file_is_referenced() -> None:
    text = README.read_text()
    inputs = [
        p.relative_to(REPO / "examples").as_posix()
        for p in (REPO / "examples").rglob("*")
        if p.is_file() and p.suffix in (".json", ".csv") and "traces" not in p.parts
    ]
    assert [p for p in inputs if p not in text] == []


def _argv(line: str, out: Path) -> tuple[list[str], Path | None]:
    words = shlex.split(line)[1:]
    stdin = None
    if "<" in words:
        at = words.index("<")
        stdin = REPO / words[at + 1]
        words = words[:at] + words[at + 2 :]
    return [w.replace("out/", f"{out}/", 1) if w.startswith("out/") else w for w in words], stdin


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("examples")


@pytest.mark.parametrize("line", RUN, ids=[" ".join(shlex.split(x)[1:3]) for x in RUN])
def test_documented_example_exits_0(
    line: str, out_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The lines run in order (they share out/: snapshot, run); pytest keeps file order.
    monkeypatch.chdir(REPO)
    argv, stdin = _argv(line, out_dir)
    if stdin is not None:
        data = io.TextIOWrapper(io.BytesIO(stdin.read_bytes()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", data)
    code = run(argv)
    captured = capsys.readouterr()
    assert code == 0, f"{line}\n{captured.err[-2000:]}"
    assert captured.out or "--out" in argv, f"{line} printed nothing"
