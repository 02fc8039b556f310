"""The frontier with the SLO scaler's points rerun on the deployable signals (issue 25), without
rerunning the points that do not read them.

Run: ``nice .venv/bin/python bench/autoscale_frontier_merge.py`` after
``bench/autoscale_frontier.py --sweep examples/sweeps/autoscale-frontier-slo.yaml --results
out/sweep/autoscale-frontier-slo`` (``--before`` the points table of the last full run, default
``docs/autoscale_frontier_points.md`` at its issue-25 parent, read from git; ``--markdown``,
``--plot`` where the tables and the figure go).

Rows: KEDA's and the oracle's points from the full run (their scalers read no SLO-scaler
signal: unchanged); its ``slo`` points as the ``slo-oracle-signals`` family (before issue 25 the
twin's scaler read exactly what ``signals: oracle`` reads now, byte for byte); and the new
``slo`` points of the deployable signals. The full run's figures are rounded as its table prints
them (GPU-h to 0.01, attainment to 0.001, minutes to 0.01).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from autoscale_frontier import as_row, finished, markdown, plot, points_table
from gpuplane.sweep import load_sweep
from gpuplane.sweep.bases.registry import bases

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "837de07:docs/autoscale_frontier_points.md"  # the last full run (before issue 25)


def before_rows(text: str) -> list[dict[str, Any]]:
    """The full run's points table -> sweep records (``slo`` relabelled as oracle signals)."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or not cells[3].replace(".", "").isdigit():
            continue
        where, family, knobs, gpu_h, request, minute, aborted, events = cells
        trace, cold = (p.strip() for p in where.split(","))
        if family == "slo":
            knobs = "signals=oracle" if knobs == "default" else f"{knobs},signals=oracle"
        config = family if knobs == "default" else f"{family}:{knobs}"
        out.append(
            {
                "trace": trace,
                "cold_start": cold,
                "config": config,
                "gpu_hours": float(gpu_h),
                "attainment": float(request),
                "windows_met": float(minute),
                "aborted_at_kill": int(aborted),
                "scale_events": int(events),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default=BEFORE, help="git object or file of the full run's table")
    ap.add_argument(
        "--sweep", type=Path, default=ROOT / "examples/sweeps/autoscale-frontier-slo.yaml"
    )
    ap.add_argument("--results", type=Path, default=ROOT / "out/sweep/autoscale-frontier-slo")
    ap.add_argument("--plot", type=Path, default=ROOT / "docs/autoscale_frontier.png")
    ap.add_argument("--markdown", type=Path, help="also write the tables here")
    args = ap.parse_args(argv)
    if Path(args.before).exists():
        text = Path(args.before).read_text()
    else:
        text = subprocess.run(
            ["git", "show", args.before], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    old = before_rows(text)
    new = finished(load_sweep(args.sweep, bases()), args.results)
    done = {(r["trace"], r["cold_start"], r["config"]) for r in new}
    rows = [
        as_row(r) for r in old if r["config"].split(":")[0] != "slo" or "signals" in r["config"]
    ]
    rows += [as_row(r) for r in new]
    print(f"{len(old)} points before, {len(new)} rerun ({len(done)} distinct)", file=sys.stderr)
    text = markdown(rows) + "\n\n" + points_table(rows)
    print(text)
    plot(rows, args.plot)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
