"""Benchmark: the autoscaling comparison done fairly, on the GPU-hours / SLO-attainment frontier
(issue 18).

Run: ``nice .venv/bin/python bench/autoscale_frontier.py`` (``--minutes`` of traffic per run,
default 15; ``--jobs`` parallel runs, default 2; ``--only conv-60s,...`` some trace and cold-start
pairs; ``--results PATH`` the JSON-lines file of finished points, default
``out/autoscale_frontier.jsonl``: a point already there is not run again, so an interrupted sweep
resumes; ``--plot`` and ``--markdown`` where the figure and the tables go). Results and reading:
docs/autoscaling.md, "The frontier".

The service, traces, cold starts, warm-up and SLO are ``bench/autoscale.py``'s (Qwen2.5-72B TP=4
on 8 HGX H200 nodes, llm-d router; conversation x3 and code x1; cold start 60 s or 210 s;
TTFT-P90 <= 2 s, ITL-P99 <= 200 ms). Each point is one twin run: ``--minutes`` of traffic from the
start of the rate-scaled trace after the 300 s warm-up, seed 0; a point is a pure function of its
fields (``run_point``), so the grid can become a sweep file unchanged.

Families and their knobs (each varied from the family's default, one knob at a time, except the
queue threshold, swept); the 210 s cold start runs only the points marked (210):

- ``keda``: the seed's ScaledObject (waiting > 5 or KV > 0.8, pollingInterval 5 s, HPA behavior
  +100 % per 15 s up, 300 s scale-down stabilisation): queue threshold 1 (210), 2 (210),
  5 (210), 10, 32; KV threshold 0.5; scale-down stabilisation 60 s; scale-up policy 2 pods
  per 60 s (210). (KEDA's cooldownPeriod only governs scaling to and from zero; with
  minReplicaCount 2 it never acts, so it is not swept.)
- ``keda-queue``: the queue trigger alone, threshold 1, 10.
- ``keda-ttft``: one trigger on ``histogram_quantile(0.9, ... vllm:time_to_first_token_seconds
  ...[1m])`` (metricType Value), threshold 0.5 s, 1 s (210).
- ``slo``: gpuplane's SLO-aware scaler: target margin 1.0 (210), 0.7 (210) and 0.5; ITL margin
  5 (210: it sizes for an ITL-P99 of 1 s, i.e. for the per-request objective, mean TPOT, rather
  than the ITL tail); queue-time budget 0.5 (210); without the burstiness model; the point
  forecast (forecast_quantile 0.5).
- ``oracle``: bench/autoscale.py's oracle (the actual arrivals of each minute sized with the
  capacity model) (210): the limit.

Figures per point: GPU-hours (pods' allocated GPU-hours plus what terminating pods held while
they drained), per-request attainment (TTFT within 2 s and mean TPOT within 200 ms), per-minute
attainment (share of 1-minute windows meeting TTFT-P90 and ITL-P99), requests aborted at SIGKILL.
The frontier of a family: its points not dominated by another of its points (no more GPU-hours
and no less attainment). The GPU-hours of a family at attainment level L: linear interpolation
along the frontier between the two points whose attainments bracket L (time-sharing two
configurations gives roughly that mixture); the cheapest frontier point when every point is above
L; not reached when none is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import autoscale as base
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.scenario.spec import ScenarioSpec
from gpuplane.twin.serving.runtime import ServingRuntime

ROOT = base.ROOT
FAMILIES = ("keda", "keda-queue", "keda-ttft", "slo", "oracle")
KEDA_FAMILIES = ("keda", "keda-queue", "keda-ttft")
LEVELS = (0.90, 0.95, 0.99)
MEASURES = {"attainment": "per request", "windows_met": "per minute"}
Knobs = tuple[tuple[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Point:
    trace: str
    cold: str
    family: str
    knobs: Knobs
    minutes: float
    seed: int = 0
    ttft_s: float = 2.0
    itl_s: float = 0.2

    @property
    def key(self) -> str:
        knobs = ",".join(f"{k}={v}" for k, v in self.knobs) or "default"
        return f"{self.trace}/{self.cold}/{self.family}/{knobs}/{self.minutes:g}m/s{self.seed}"


def family_grid(cold: str) -> list[tuple[str, Knobs]]:
    """Each family's points; the long cold start gets a subset (runs are expensive here)."""
    out: list[tuple[str, Knobs]] = []
    full = cold == "60s"
    out += [("keda", (("queue", q),)) for q in ((1, 2, 5, 10, 32) if full else (1, 2, 5))]
    if full:
        out += [
            ("keda", (("kv", 0.5),)),
            ("keda", (("down_window_s", 60),)),
            ("keda", (("up_policy", "2 pods/60s"),)),
        ]
        out += [("keda-queue", (("queue", q),)) for q in (1, 10)]
        out += [("keda-ttft", (("ttft_s", 0.5),))]
    else:
        out += [("keda", (("up_policy", "2 pods/60s"),))]
    out += [("keda-ttft", (("ttft_s", 1.0),))]
    out += [("slo", (("target_margin", m),)) for m in ((1.0, 0.7, 0.5) if full else (1.0, 0.7))]
    out += [("slo", (("itl_margin", 5.0),)), ("slo", (("queue_time_budget", 0.5),))]
    if full:
        out += [("slo", (("model_burstiness", False),)), ("slo", (("forecast_quantile", 0.5),))]
    out += [("oracle", (("target_margin", 1.0),))]
    return out


def grid(minutes: float, pairs: list[tuple[str, str]]) -> list[Point]:
    return [
        Point(trace, cold, family, knobs, minutes)
        for trace, cold in pairs
        for family, knobs in family_grid(cold)
    ]


# -- one point ------------------------------------------------------------------------------------
def keda_object(so: ScaledObjectIn, family: str, knobs: dict[str, Any]) -> ScaledObjectIn:
    """The seed's ScaledObject with one family's triggers and knobs, validated again."""
    data = so.model_dump()
    spec = data["spec"]
    queue, kv = spec["triggers"]
    queue["metadata"]["threshold"] = str(knobs.get("queue", 5))
    kv["metadata"]["threshold"] = f"{knobs.get('kv', 0.8):.2f}"
    if family == "keda":
        spec["triggers"] = [queue, kv]
    elif family == "keda-queue":
        spec["triggers"] = [queue]
    else:
        selector = queue["metadata"]["query"].split("{", 1)[1].split("}", 1)[0]
        ttft = (
            "histogram_quantile(0.9, sum by (le) "
            f"(rate(vllm:time_to_first_token_seconds_bucket{{{selector}}}[1m])))"
        )
        trigger = {**queue, "metadata": {**queue["metadata"], "query": ttft}}
        trigger["metadata"]["threshold"] = f"{knobs['ttft_s']:g}"
        spec["triggers"] = [trigger]
    spec["pollingInterval"] = int(knobs.get("polling_s", spec["pollingInterval"]))
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    if "down_window_s" in knobs:
        behavior["scaleDown"]["stabilizationWindowSeconds"] = int(knobs["down_window_s"])
    if knobs.get("up_policy") == "2 pods/60s":
        behavior["scaleUp"]["policies"] = [{"type": "Pods", "value": 2, "periodSeconds": 60}]
    return ScaledObjectIn.model_validate(data)


def point_spec(point: Point, trace: Any) -> tuple[ScenarioSpec, base.Case]:
    config = {"keda": "keda-seed", "keda-queue": "keda-seed", "keda-ttft": "keda-seed"}.get(
        point.family, point.family
    )
    case = base.Case(
        point.trace, point.cold, config, point.minutes * 60.0, point.ttft_s, point.itl_s, point.seed
    )
    spec = base.build_spec(case, trace)
    knobs = dict(point.knobs)
    if point.family in KEDA_FAMILIES:
        (so,) = spec.scaled_objects
        spec = replace(spec, scaled_objects=(keda_object(so, point.family, knobs),))
    elif point.family == "slo":
        assert spec.serving is not None
        (scaler,) = spec.serving.slo_scalers
        settings = scaler.settings.model_copy(update=knobs)
        settings = type(settings).model_validate(settings.model_dump())  # checked as from YAML
        serving = replace(spec.serving, slo_scalers=(replace(scaler, settings=settings),))
        spec = replace(spec, serving=serving)
    return spec, case


def run_point(point: Point) -> dict[str, Any]:
    """One twin run and its figures: the same point always gives the same figures."""
    trace = load_azure_trace(base.TRACE_DIR / base.TRACES[point.trace][0])
    spec, case = point_spec(point, trace)
    until = base.WARMUP_S + case.duration_s
    sim = simulation_from_spec(spec, seed=point.seed, keep_events=False)
    rec = base.Recorder()
    base.record(sim, rec, until)
    if point.family == "oracle":
        margin = dict(point.knobs).get("target_margin", 1.0)
        sized = replace(case, ttft_s=case.ttft_s * margin, itl_s=case.itl_s * margin)
        base.run_oracle(sim, sized, until)
    started = time.perf_counter()
    result = sim.run(until)
    wall = time.perf_counter() - started
    assert result.summary.serving is not None
    svc = result.summary.serving.services[0]
    term = svc.termination
    windows = base.window_attainment(sim, case)
    return {
        "key": point.key,
        "point": asdict(point),
        "gpu_hours": round(result.summary.pods.gpu_hours_allocated + term.gpu_hours, 3),
        "terminating_gpu_hours": term.gpu_hours,
        "attainment": svc.slo_attainment,
        "windows_met": windows["both"],
        "ttft_p90_s": svc.latency_s.ttft_p90_s,
        "itl_p99_s": svc.latency_s.itl_p99_s,
        "arrived": svc.requests.arrived,
        "aborted_at_kill": term.requests_aborted,
        "pods_terminated": term.pods,
        "scale_events": len(rec.changes),
        "mean_replicas": round(sum(r for _, r, _, _ in rec.samples) / len(rec.samples), 2),
        "cold_start_s": round(sim.component(ServingRuntime).cold_start_estimate(base.SERVICE), 1),
        "wall_s": round(wall, 1),
    }


# -- frontier and matched attainment ------------------------------------------------------------
def frontier(rows: list[dict[str, Any]], measure: str) -> list[dict[str, Any]]:
    """Points no other point dominates, by attainment (ascending) and GPU-hours."""
    best: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda r: (r["gpu_hours"], -r[measure])):
        if not best or r[measure] > best[-1][measure]:
            best.append(r)
    return best


def gpu_hours_at(front: list[dict[str, Any]], measure: str, level: float) -> float | None:
    """GPU-hours to reach ``level`` along the frontier (linear between the bracketing points;
    the cheapest point when all are above; None when none reaches it)."""
    for i, r in enumerate(front):
        if r[measure] >= level:
            if i == 0:
                return float(r["gpu_hours"])
            lo = front[i - 1]
            share = (level - lo[measure]) / (r[measure] - lo[measure])
            return float(lo["gpu_hours"] + share * (r["gpu_hours"] - lo["gpu_hours"]))
    return None


def matched(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], float | None]:
    """(trace, cold, measure, family) -> GPU-hours at each level, as ``{level: value}``."""
    out: dict[Any, Any] = {}
    for (trace, cold), group in pairs_of(rows).items():
        for measure in MEASURES:
            for family in FAMILIES:
                mine = [r for r in group if r["point"]["family"] == family]
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
            for family in FAMILIES:
                v = table[trace, cold, measure, family]
                mine = [r for r in pairs_of(rows)[trace, cold] if r["point"]["family"] == family]
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
            knobs = ", ".join(f"{k} {v}" for k, v in r["point"]["knobs"]) or "default"
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
    colors = dict(zip(FAMILIES, ("C0", "C1", "C2", "C3", "k"), strict=True))
    handles: dict[str, Any] = {}
    for col, ((trace, cold), group) in enumerate(pairs.items()):
        for row, (measure, label) in enumerate(MEASURES.items()):
            ax = axes[row][col]
            for family in FAMILIES:
                mine = [r for r in group if r["point"]["family"] == family]
                if not mine:
                    continue
                ax.scatter(
                    [r[measure] for r in mine],
                    [r["gpu_hours"] for r in mine],
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
                    linestyle="--" if family == "oracle" else "-",
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
def load_rows(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            row["point"]["knobs"] = [tuple(k) for k in row["point"]["knobs"]]
            rows[row["key"]] = row
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=15.0, help="traffic minutes per run")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs")
    ap.add_argument("--only", help="trace-cold pairs, e.g. conv-60s,code-210s (default: all)")
    ap.add_argument("--results", type=Path, default=ROOT / "out/autoscale_frontier.jsonl")
    ap.add_argument("--plot", type=Path, default=ROOT / "docs/autoscale_frontier.png")
    ap.add_argument("--markdown", type=Path, help="also write the tables here")
    ap.add_argument("--report-only", action="store_true", help="no new runs: tables from results")
    args = ap.parse_args(argv)
    every = [("conv", "60s"), ("code", "60s"), ("code", "210s"), ("conv", "210s")]
    pairs = every
    if args.only:
        pairs = [tuple(p.split("-", 1)) for p in args.only.split(",")]  # type: ignore[misc]
        unknown = [p for p in pairs if p not in every]
        if unknown:
            ap.error(f"--only: unknown pairs {unknown}; known: {every}")
    points = grid(args.minutes, pairs)
    done = load_rows(args.results)
    todo = [p for p in points if p.key not in done]
    started = time.perf_counter()
    if todo and not args.report_only:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        print(f"{len(todo)} of {len(points)} points to run, {args.jobs} at a time", flush=True)
        with Pool(max(1, args.jobs)) as pool, args.results.open("a") as out:
            for i, row in enumerate(pool.imap(run_point, todo), 1):
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[row["key"]] = row
                print(
                    f"[{i}/{len(todo)}] {row['key']}: {row['gpu_hours']:.2f} GPU-h, "
                    f"{row['attainment']:.3f} / {row['windows_met']:.2f}, {row['wall_s']} s",
                    flush=True,
                )
    wanted = {p.key for p in points}
    rows = [r for k, r in done.items() if k in wanted]
    print(
        f"\n{len(rows)} points ({args.minutes:g} min of traffic each after {base.WARMUP_S:g} s "
        f"warm-up, seed 0); {time.perf_counter() - started:.0f} s"
    )
    text = markdown(rows) + "\n\n" + points_table(rows)
    print(text)
    if rows:
        plot(rows, args.plot)
        print(f"\nplot: {args.plot}")
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
