"""examples/sweeps/openb-grid.yaml reproduces bench/openb_all.py's recorded results
(docs/openb_results.json) on a subset of its 1,400 points: the sweep changed how the grid runs,
not what it computes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gpuplane.sweep import LocalPool, load_sweep, run_sweep
from gpuplane.sweep.bases.registry import bases

REPO = Path(__file__).resolve().parents[3]
# A fast policy and a slow one, two traces of different kinds, two seeds.
SUBSET = {("packing", "cpu0", 42), ("packing", "multigpu50", 47), ("random", "gpushare40", 51),
          ("fgd", "default", 42), ("gpuplane", "gpuspec33", 45)}  # fmt: skip


def test_the_grid_file_reproduces_the_recorded_results(tmp_path: Path) -> None:
    sweep = load_sweep(REPO / "examples/sweeps/openb-grid.yaml", bases())
    assert len(sweep.points) == 1400
    recorded = json.loads((REPO / "docs/openb_results.json").read_text())["results"]
    assert {(p.value("trace"), p.value("policy")) for p in sweep.points} == {
        (t, p) for t in recorded for p in recorded[t]
    }
    chosen = tuple(
        p for p in sweep.points if (p.value("policy"), p.value("trace"), p.value("seed")) in SUBSET
    )
    assert len(chosen) == len(SUBSET)
    result = run_sweep(dataclasses.replace(sweep, points=chosen), LocalPool(2), tmp_path)
    for record in result.records():
        per_seed = recorded[record["trace"]][record["policy"]]["per_seed"]
        assert record["unallocated_pct_at_100"] == per_seed[str(record["seed"])], record
