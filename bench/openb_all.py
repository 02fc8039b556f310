"""Benchmark: every OpenB trace x every policy x seeds (fgd-openb.md §6), as a sweep.

Run: ``.venv/bin/python bench/openb_all.py`` (defaults: the grid of
``examples/sweeps/openb-grid.yaml``: the 20 traces in ``../shared/data/openb``, the GPU node list,
the seven policies, seeds 42-51, on ``gpuplane sweep``'s local pool with 2 workers; ``--ray
local|auto|ADDRESS`` runs the points on Ray; ``--traces``, ``--policies``, ``--seeds`` pick a
subset). The runs are kept in ``out/sweep/openb-all/results.csv`` as they finish, so a killed run
resumes where it stopped (docs/sweep.md).
Writes ``docs/openb_results.json`` (every per-seed number and the default trace's curves),
``docs/openb_results.md`` (mean +- population sd of the unallocated GPU % at arrived = 100 %,
published numbers beside ours, gpuplane - FGD paired by seed) and
``docs/openb_default_curves.png`` (unallocated % vs arrived %, default trace, all policies).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from gpuplane.scheduler.policies import POLICY_NAMES
from gpuplane.sweep import LocalPool, RayPool, Row, Sweep, load_sweep, run_sweep
from gpuplane.sweep.bases.registry import bases

REPO = Path(__file__).resolve().parents[1]
GRID = REPO / "examples/sweeps/openb-grid.yaml"
DEFAULT_TRACE = "default"
# fgd-openb.md §5: the simulator repo's cached results, mean +- population sd, seeds 42-51.
PUBLISHED: dict[str, dict[str, float]] = {
    "default": {"random": 13.70, "dotprod": 9.38, "clustering": 8.35, "packing": 8.22,
                "bestfit": 7.14, "fgd": 4.77},
    "cpu050": {"random": 10.98, "dotprod": 6.97, "clustering": 6.48, "packing": 6.54,
               "bestfit": 6.44, "fgd": 5.00},
    "cpu100": {"random": 12.56, "dotprod": 8.27, "clustering": 7.58, "packing": 7.50,
               "bestfit": 6.74, "fgd": 4.79},
    "cpu250": {"random": 20.00, "dotprod": 16.43, "clustering": 12.25, "packing": 11.95,
               "bestfit": 8.79, "fgd": 6.80},
    "gpushare40": {"random": 15.14, "dotprod": 10.70, "clustering": 10.24, "packing": 10.23,
                   "bestfit": 8.56, "fgd": 6.04},
    "gpushare60": {"random": 17.19, "dotprod": 13.18, "clustering": 13.10, "packing": 12.85,
                   "bestfit": 10.94, "fgd": 8.75},
    "gpushare100": {"random": 21.10, "dotprod": 18.02, "clustering": 17.78, "packing": 17.87,
                    "bestfit": 15.38, "fgd": 13.36},
    "gpuspec10": {"random": 13.74, "dotprod": 9.83, "clustering": 8.04, "packing": 7.76,
                  "bestfit": 6.90, "fgd": 5.34},
    "gpuspec20": {"random": 14.10, "dotprod": 11.71, "clustering": 10.89, "packing": 10.72,
                  "bestfit": 11.54, "fgd": 5.34},
    "gpuspec33": {"random": 16.13, "dotprod": 20.18, "clustering": 18.91, "packing": 17.78,
                  "bestfit": 19.61, "fgd": 12.16},
    "multigpu20": {"random": 13.08, "dotprod": 8.15, "clustering": 6.66, "packing": 6.50,
                   "bestfit": 6.27, "fgd": 4.47},
    "multigpu30": {"random": 13.37, "dotprod": 6.89, "clustering": 5.45, "packing": 5.30,
                   "bestfit": 5.43, "fgd": 3.64},
    "multigpu50": {"random": 18.72, "dotprod": 5.27, "clustering": 4.31, "packing": 3.94,
                   "bestfit": 4.38, "fgd": 2.91},
}  # fmt: skip


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    values = [r["unallocated_pct_at_100"] for r in rows]
    clean = [float(v) for v in values if v is not None]
    return {
        "mean": statistics.fmean(clean) if clean else None,
        "sd": statistics.pstdev(clean) if clean else None,
        "wall_s_mean": statistics.fmean(r["wall_s"] for r in rows),
        "per_seed": {str(r["seed"]): r["unallocated_pct_at_100"] for r in rows},
    }


def _paired_diff(results: dict[str, Any], a: str, b: str) -> tuple[float, float] | None:
    """Mean and population sd over seeds of a - b (both must have every seed)."""
    if a not in results or b not in results:
        return None
    pa, pb = results[a]["per_seed"], results[b]["per_seed"]
    diffs = [pa[s] - pb[s] for s in pa if pa[s] is not None and pb.get(s) is not None]
    return (statistics.fmean(diffs), statistics.pstdev(diffs)) if diffs else None


def markdown(results: dict[str, dict[str, Any]], policies: list[str], command: str) -> str:
    lines = [
        "Unallocated GPU % at arrived = 100 % (mean ± population sd over seeds; lower is"
        " better). Command:",
        "",
        f"    {command}",
        "",
        "| trace | " + " | ".join(policies) + " | gpuplane − fgd (paired) |",
        "|---|" + "---|" * (len(policies) + 1),
    ]
    for trace in sorted(results, key=lambda t: (t != DEFAULT_TRACE, t)):
        cells = []
        for policy in policies:
            s = results[trace].get(policy)
            cells.append(
                "–" if s is None or s["mean"] is None else f"{s['mean']:.2f} ± {s['sd']:.2f}"
            )
        diff = _paired_diff(results[trace], "gpuplane", "fgd")
        cells.append("–" if diff is None else f"{diff[0]:+.2f} ± {diff[1]:.2f}")
        lines.append(f"| {trace} | " + " | ".join(cells) + " |")
    lines += ["", "Ours vs the published means (fgd-openb.md §5), same traces:", ""]
    shown = [p for p in policies if p != "gpuplane"]
    lines.append("| trace | " + " | ".join(f"{p} ours / pub" for p in shown) + " |")
    lines.append("|---|" + "---|" * len(shown))
    for trace in sorted(set(results) & set(PUBLISHED), key=lambda t: (t != DEFAULT_TRACE, t)):
        cells = []
        for policy in shown:
            ours = results[trace].get(policy, {}).get("mean")
            pub = PUBLISHED[trace].get(policy)
            cells.append(f"{'–' if ours is None else f'{ours:.2f}'} / {pub:.2f}")
        lines.append(f"| {trace} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_curves(curves: dict[str, list[list[float | None]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = np.arange(131)
    for policy, per_seed in curves.items():
        data = np.array([[np.nan if v is None else v for v in c] for c in per_seed], dtype=float)
        median = np.nanmedian(data, axis=0)
        low, high = np.nanpercentile(data, [25, 75], axis=0)
        for ax in axes:
            (line,) = ax.plot(xs, median, label=policy, linewidth=1.4)
            ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2)
    axes[0].set_xlim(0, 130)
    axes[1].set_xlim(75, 130)
    axes[1].set_ylim(0, 20)
    for ax in axes:
        ax.set_xlabel("arrived workload (% of cluster GPUs)")
        ax.set_ylabel("unallocated GPUs (%)")
        ax.grid(alpha=0.3)
    axes[0].set_title("OpenB default trace: median over seeds, 25-75 % band")
    axes[1].set_title("zoom: arrived 75-130 %")
    axes[1].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _collect(
    rows: list[dict[str, Any]], traces: list[str], policies: list[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, list[list[float | None]]]]:
    """Per (trace, policy) summaries, and the default trace's curves per policy."""
    results: dict[str, dict[str, Any]] = {}
    curves: dict[str, list[list[float | None]]] = {}
    for trace in traces:
        results[trace] = {}
        for policy in policies:
            mine = sorted(
                (r for r in rows if r["trace"] == trace and r["policy"] == policy),
                key=lambda r: r["seed"],
            )
            results[trace][policy] = _summary(mine)
            if trace == DEFAULT_TRACE:
                curves[policy] = [r["curve"] for r in mine]
    return results, curves


def _write(
    out: Path,
    command: str,
    seeds: list[int],
    started: float,
    results: dict[str, dict[str, Any]],
    curves: dict[str, list[list[float | None]]],
    policies: list[str],
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": command,
        "seeds": seeds,
        "wall_s": round(time.perf_counter() - started, 1),
        "results": results,
        "default_curves": curves,
    }
    (out / "openb_results.json").write_text(json.dumps(payload, indent=1) + "\n")
    (out / "openb_results.md").write_text(markdown(results, policies, command))
    if curves:
        plot_curves(curves, out / "openb_default_curves.png")
    print(markdown(results, policies, command))


def grid(args: argparse.Namespace) -> Sweep:
    """openb-grid.yaml's points for the chosen traces, policies and seeds; figures: the table's
    own, each run's wall time and the 0-130 % curve (for the default trace's plot)."""
    sweep = load_sweep(GRID, bases())
    low, _, high = args.seeds.partition("-")
    seeds = set(range(int(low), int(high or low) + 1))
    policies = set(args.policies.split(","))
    traces = set(args.traces.split(",")) if args.traces else None
    points = tuple(
        p
        for p in sweep.points
        if p.value("policy") in policies
        and p.value("seed") in seeds
        and (traces is None or p.value("trace") in traces)
    )
    figures = (*sweep.figures, "wall_s", *(f"unallocated_pct_at_{x}" for x in range(131)))
    digest = hashlib.sha256(f"{sweep.digest} {figures}".encode()).hexdigest()[:16]
    return dataclasses.replace(sweep, points=points, figures=figures, digest=digest)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    """A table row in the shape the summaries and the plot read."""
    return {
        "trace": record["trace"],
        "policy": record["policy"],
        "seed": record["seed"],
        "unallocated_pct_at_100": record["unallocated_pct_at_100"],
        "wall_s": record["wall_s"],
        "curve": [record[f"unallocated_pct_at_{x}"] for x in range(131)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="", help="comma-separated names (default: all)")
    parser.add_argument("--policies", default=",".join(POLICY_NAMES))
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ray", default=None, help="local, auto or a Ray address")
    parser.add_argument("--results", type=Path, default=REPO / "out/sweep/openb-all")
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args(argv)
    sweep = grid(args)
    executor = LocalPool(args.workers) if args.ray is None else RayPool(args.ray, args.workers)
    started = time.perf_counter()

    def progress(done: int, total: int, row: Row) -> None:
        if done % 20 == 0 or done == total:
            print(f"{done}/{total} runs, {time.perf_counter() - started:.0f} s", flush=True)

    result = run_sweep(sweep, executor, args.results, on_row=progress)
    rows = [_row(r) for r in result.records()]
    traces = list(dict.fromkeys(str(p.value("trace")) for p in sweep.points))
    policies = [p for p in POLICY_NAMES if p in set(args.policies.split(","))]
    results, curves = _collect(rows, traces, policies)
    seeds = sorted({int(r["seed"]) for r in rows})
    command = "python bench/openb_all.py " + " ".join(argv if argv is not None else sys.argv[1:])
    _write(args.out, command.strip(), seeds, started, results, curves, policies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
