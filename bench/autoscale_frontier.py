"""Benchmark: the autoscaling comparison done fairly, on the GPU-hours / SLO-attainment frontier
(issue 18).

Run: ``nice .venv/bin/python bench/autoscale_frontier.py`` (``--workers`` parallel runs, default 2;
``--sweep PATH`` another sweep file of the ``autoscaling`` base, default
``examples/sweeps/autoscale-frontier.yaml``; ``--results DIR`` the sweep's results folder, default
``out/sweep/autoscale-frontier``: a point already there is not run again, so an interrupted run
resumes; ``--report-only`` draws from what is there; ``--plot`` and ``--markdown`` where the
figure and the tables go). Results and reading: docs/autoscaling.md, "The frontier".

The grid is the sweep file's (``gpuplane sweep`` runs the same points): both Azure 2023 traces
(conversation x3, code x1), both cold starts (60 s, 210 s), one hour of traffic after the 5-minute
warm-up at two replicas, seed 0, and every configuration it lists: KEDA on the seed's triggers,
on the queue alone and on TTFT-P90, with their knobs (thresholds, pollingInterval, cooldownPeriod,
scale-down stabilisation, scale-up policy); the SLO-aware scaler with its default objective
(TTFT-P90 and ITL-P99 in each minute) and told the per-request objective, with its knobs; the
oracle for each objective. A configuration's family is the part of its name before the colon.

Figures per point: GPU-hours (pods' allocated GPU-hours plus what terminating pods held while
they drained), per-request attainment (TTFT within 2 s and mean TPOT within 200 ms), per-minute
attainment (share of 1-minute windows meeting TTFT-P90 and ITL-P99), requests aborted at SIGKILL.
The frontier of a family: its points not dominated by another of its points (no more GPU-hours
and no less attainment). The GPU-hours of a family at attainment level L: the cheapest of its
frontier points at or above L and of the mixtures of two frontier points that bracket L
(running each configuration for a share of the time gives, roughly, that linear mixture of both
figures): the frontier's lower convex hull at L; not reached when no point reaches L.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from gpuplane.sweep import LocalPool, RayPool, ResultsStore, Row, load_sweep, run_sweep
from gpuplane.sweep.bases.registry import bases

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "examples/sweeps/autoscale-frontier.yaml"
FAMILIES = ("keda", "keda-queue", "keda-ttft", "slo", "slo-oracle-signals", "oracle")
# Views of one family: the SLO scaler with its default objective (percentiles per minute), and
# told the per-request objective; reported beside the families, not in the goal's verdict.
VIEWS = {"slo:percentile": "slo", "slo:per_request": "slo"}
# The SLO scaler told ``signals: oracle`` (what only the twin knows: true arrivals, exact prompt
# quantiles, burstiness) is a family of its own, beside the deployable scaler, never in it.
ORACLE_SIGNALS = "signals=oracle"
KEDA_FAMILIES = ("keda", "keda-queue", "keda-ttft")
LEVELS = (0.90, 0.95, 0.99)
MEASURES = {"attainment": "per request", "windows_met": "per minute"}


def as_row(record: dict[str, Any]) -> dict[str, Any]:
    """A sweep table record in the shape the tables and the plot read."""
    config = str(record["config"])
    family, _, knobs = config.partition(":")
    if family == "slo" and ORACLE_SIGNALS in knobs.split(","):
        family = "slo-oracle-signals"
        knobs = ",".join(k for k in knobs.split(",") if k != ORACLE_SIGNALS)
    point = {"trace": record["trace"], "cold": record["cold_start"], "family": family}
    return {**record, "key": config, "knobs": knobs or "default", "point": point}


def members(group: list[dict[str, Any]], family: str) -> list[dict[str, Any]]:
    """The rows of a family (``keda``...) or a view (``slo:per_request``)."""
    name, _, form = family.partition(":")
    mine = [r for r in group if r["point"]["family"] == name]
    if form:
        mine = [
            r for r in mine if ("objective=per_request" in r["knobs"]) == (form != "percentile")
        ]
    return mine


# -- frontier and matched attainment ------------------------------------------------------------
def frontier(rows: list[dict[str, Any]], measure: str) -> list[dict[str, Any]]:
    """Points no other point dominates, by attainment (ascending) and GPU-hours."""
    best: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda r: (r["gpu_hours"], -r[measure])):
        if not best or r[measure] > best[-1][measure]:
            best.append(r)
    return best


def gpu_hours_at(front: list[dict[str, Any]], measure: str, level: float) -> float | None:
    """GPU-hours to reach ``level`` with the frontier's points: the cheapest of any point at or
    above it and of any mixture of two points that bracket it (running each configuration for
    a share of the time: linear in both figures), i.e. the frontier's lower convex hull; None
    when no point reaches it."""
    best: float | None = None
    for hi in front:
        if hi[measure] < level:
            continue
        best = min(float(hi["gpu_hours"]), best if best is not None else math.inf)
        for lo in front:
            if lo[measure] < level < hi[measure]:
                share = (level - lo[measure]) / (hi[measure] - lo[measure])
                mix = float(lo["gpu_hours"] + share * (hi["gpu_hours"] - lo["gpu_hours"]))
                best = min(best, mix)
    return best


def matched(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], float | None]:
    """(trace, cold, measure, family) -> GPU-hours at each level, as ``{level: value}``."""
    out: dict[Any, Any] = {}
    for (trace, cold), group in pairs_of(rows).items():
        for measure in MEASURES:
            for family in (*FAMILIES, *VIEWS):
                mine = members(group, family)
                front = frontier(mine, measure)
                out[trace, cold, measure, family] = {
                    lv: gpu_hours_at(front, measure, lv) for lv in LEVELS
                }
    return out


def pairs_of(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["point"]["trace"], r["point"]["cold"]), []).append(r)
    return dict(sorted(out.items()))


def _cell(v: float | None) -> str:
    return "not reached" if v is None else f"{v:.2f}"


def markdown(rows: list[dict[str, Any]]) -> str:
    table = matched(rows)
    lines = [
        "| trace, cold start | attainment | family | GPU-h at 0.90 | at 0.95 | at 0.99 "
        "| best reached (GPU-h) |",
        "|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for trace, cold in pairs_of(rows):
        for measure, label in MEASURES.items():
            for family in (*FAMILIES, *VIEWS):
                v = table[trace, cold, measure, family]
                mine = members(pairs_of(rows)[trace, cold], family)
                top = frontier(mine, measure)[-1] if mine else None
                best = "" if top is None else f"{top[measure]:.3f} ({top['gpu_hours']:.2f})"
                lines.append(
                    f"| {trace}, {cold} | {label} | {family} | "
                    + " | ".join(_cell(v[lv]) for lv in LEVELS)
                    + f" | {best} |"
                )
            keda = [table[trace, cold, measure, f][0.95] for f in KEDA_FAMILIES]
            best = min((k for k in keda if k is not None), default=None)
            slo = table[trace, cold, measure, "slo"][0.95]
            if best is not None and slo is not None:
                verdicts.append(
                    f"- {trace}, {cold}, {label}: at 0.95 the SLO scaler's frontier needs "
                    f"{slo:.2f} GPU-h, the best KEDA family's {best:.2f} ({slo / best - 1:+.0%})"
                )
            else:
                verdicts.append(
                    f"- {trace}, {cold}, {label}: at 0.95 SLO scaler {_cell(slo)}, "
                    f"best KEDA {_cell(best)}"
                )
    return "\n".join(lines) + "\n\n" + "\n".join(verdicts)


def points_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| trace, cold | family | knobs | GPU-h | per request | per minute | aborted | events |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (trace, cold), group in pairs_of(rows).items():
        for r in sorted(group, key=lambda r: (FAMILIES.index(r["point"]["family"]), r["key"])):
            knobs = r["knobs"]
            lines.append(
                f"| {trace}, {cold} | {r['point']['family']} | {knobs} | {r['gpu_hours']:.2f} | "
                f"{r['attainment']:.3f} | {r['windows_met']:.2f} | {r['aborted_at_kill']} | "
                f"{r['scale_events']} |"
            )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = pairs_of(rows)
    fig, axes = plt.subplots(
        len(MEASURES), len(pairs), figsize=(4.2 * len(pairs), 7.5), squeeze=False
    )
    drawn = (*FAMILIES, "slo:per_request")
    colors = dict(zip(drawn, ("C0", "C1", "C2", "C3", "C5", "k", "C4"), strict=True))
    handles: dict[str, Any] = {}
    for col, ((trace, cold), group) in enumerate(pairs.items()):
        for row, (measure, label) in enumerate(MEASURES.items()):
            ax = axes[row][col]
            for family in drawn:
                mine = members(group, family)
                if not mine:
                    continue
                ax.scatter(  # a view's points are its family's: drawn once
                    [] if ":" in family else [r[measure] for r in mine],
                    [] if ":" in family else [r["gpu_hours"] for r in mine],
                    s=14,
                    color=colors[family],
                    alpha=0.5,
                )
                front = frontier(mine, measure)
                (handles[family],) = ax.plot(
                    [r[measure] for r in front],
                    [r["gpu_hours"] for r in front],
                    marker="o",
                    color=colors[family],
                    markersize=3,
                    label=family,
                    linestyle="--" if family == "oracle" else ":" if ":" in family else "-",
                )
            for lv in LEVELS:
                ax.axvline(lv, color="0.85", linewidth=0.8, zorder=0)
            ax.set_title(f"{trace}, cold start {cold}", fontsize=9)
            ax.set_xlabel(f"SLO attainment ({label})", fontsize=8)
            ax.set_ylabel("GPU-hours", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.legend(
        list(handles.values()),
        [f"{f} (frontier; dots: every point)" for f in handles],
        loc="upper center",
        ncol=len(handles),
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=100)
    plt.close(fig)


# -- driver ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", type=Path, default=SWEEP, help="a sweep file (autoscaling base)")
    ap.add_argument("--workers", type=int, default=2, help="parallel runs")
    ap.add_argument("--ray", default=None, help="local, auto or a Ray address")
    ap.add_argument("--results", type=Path, default=ROOT / "out/sweep/autoscale-frontier")
    ap.add_argument("--plot", type=Path, default=ROOT / "docs/autoscale_frontier.png")
    ap.add_argument("--markdown", type=Path, help="also write the tables here")
    ap.add_argument("--report-only", action="store_true", help="no new runs: tables from results")
    args = ap.parse_args(argv)
    sweep = load_sweep(args.sweep, bases())
    started = time.perf_counter()
    if args.report_only:
        executor: Any = LocalPool(1)
        todo = 0
    else:
        executor = LocalPool(args.workers) if args.ray is None else RayPool(args.ray, args.workers)
        todo = len(sweep.points)

    def progress(done: int, total: int, row: Row) -> None:
        print(f"[{done}/{total}] {time.perf_counter() - started:.0f} s", flush=True)

    if todo:
        result = run_sweep(sweep, executor, args.results, on_row=progress)
        records = result.records()
    else:
        records = finished(sweep, args.results)
    rows = [as_row(r) for r in records]
    print(f"\n{len(rows)} points of {args.sweep.name}; {time.perf_counter() - started:.0f} s")
    text = markdown(rows) + "\n\n" + points_table(rows)
    print(text)
    if rows:
        plot(rows, args.plot)
        print(f"\nplot: {args.plot}")
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    return 0


def finished(sweep: Any, folder: Path) -> list[dict[str, Any]]:
    """The points already in the results folder (``--report-only``)."""
    store = ResultsStore(sweep, folder)
    columns = sweep.columns
    return [r.values(columns) for r in sorted(store.rows.values(), key=lambda r: r.index)]


if __name__ == "__main__":
    sys.exit(main())
