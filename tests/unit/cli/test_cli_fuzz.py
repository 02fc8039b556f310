"""End-to-end fuzz: mutated topology files through the CLI give exit 0 or 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]
TOPO_FILES = sorted((REPO.parent / "shared/data/topologies").glob("*.txt"))
PRESETS = sorted((REPO / "src/gpuplane/topology/data/presets").glob("*.yaml"))


@st.composite
def mutated(draw: st.DrawFn, files: list[Path]) -> tuple[str, str]:
    path = draw(st.sampled_from(files))
    lines = path.read_text().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "cut", "junk", "swap"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))]
        elif op == "junk":
            lines[i] = draw(st.text(alphabet="XNVPIXSYODEH0123456789 \t:-,", max_size=40)) + "\n"
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return path.suffix, "".join(lines)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=mutated(TOPO_FILES + PRESETS))
def test_mutated_inputs_exit_cleanly(
    case: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix, text = case
    path = tmp_path / f"node{suffix}"
    path.write_text(text)
    code = run(["topo", "show", str(path), "--json"])
    captured = capsys.readouterr()
    assert code in (0, 2)
    assert "Traceback" not in captured.err
    if code == 2:
        assert str(path) in captured.err
