"""Benchmark: every OpenB trace x every policy x seeds (fgd-openb.md §6), in worker processes.

Run: ``.venv/bin/python bench/openb_all.py`` (defaults: all ``openb_pod_list_*.csv`` in
``../shared/data/openb``, the GPU node list, the seven policies, seeds 42-51, 2 workers).
Writes ``docs/openb_results.json`` (every per-seed number and the default trace's curves),
``docs/openb_results.md`` (mean +- population sd of the unallocated GPU % at arrived = 100 %,
published numbers beside ours, gpuplane - FGD paired by seed) and
``docs/openb_default_curves.png`` (unallocated % vs arrived %, default trace, all policies).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import lru_cache
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from gpuplane.scheduler.openb.experiment import run_seed
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, load_nodes, load_pods
from gpuplane.scheduler.policies import POLICY_NAMES

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "openb"
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


@lru_cache(maxsize=4)
def _tables(nodes: str, pods: str) -> tuple[NodeTable, PodTable]:
    return load_nodes(Path(nodes)), load_pods(Path(pods))


def _task(args: tuple[str, str, str, str, int]) -> dict[str, Any]:
    trace, nodes, pods, policy, seed = args
    node_table, pod_table = _tables(nodes, pods)
    result = run_seed(node_table, pod_table, policy, seed)
    return {
        "trace": trace,
        "policy": policy,
        "seed": seed,
        "unallocated_pct_at_100": result.unallocated_pct_at_100,
        "failed_pods": result.num_failed,
        "arrivals": result.num_arrivals,
        "wall_s": round(result.wall_s, 3),
        "curve": [None if v != v else float(v) for v in result.unallocated_curve.tolist()],
    }


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--nodes", default="openb_node_list_gpu_node.csv")
    parser.add_argument("--traces", default="", help="comma-separated names (default: all)")
    parser.add_argument("--policies", default=",".join(POLICY_NAMES))
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args(argv)
    low, _, high = args.seeds.partition("-")
    seeds = list(range(int(low), int(high or low) + 1))
    policies = args.policies.split(",")
    files = sorted(args.data.glob("openb_pod_list_*.csv"))
    traces = {f.stem.removeprefix("openb_pod_list_"): f for f in files}
    if args.traces:
        traces = {t: traces[t] for t in args.traces.split(",")}
    nodes = str(args.data / args.nodes)
    # Slow policies first, so the two workers finish together.
    tasks = [
        (t, nodes, str(f), p, s)
        for p in sorted(policies, key=lambda p: p not in ("fgd", "gpuplane"))
        for t, f in traces.items()
        for s in seeds
    ]
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with Pool(args.workers) as pool:
        for i, row in enumerate(pool.imap_unordered(_task, tasks), 1):
            rows.append(row)
            if i % 20 == 0 or i == len(tasks):
                print(f"{i}/{len(tasks)} runs, {time.perf_counter() - started:.0f} s", flush=True)
    results, curves = _collect(rows, list(traces), policies)
    command = "python bench/openb_all.py " + " ".join(argv if argv is not None else sys.argv[1:])
    _write(args.out, command.strip(), seeds, started, results, curves, policies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
