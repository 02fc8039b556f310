"""report.html of a twin run: header, key figures, plots, serving, autoscaling, pools, MIG.

``build_run_report`` is a pure function of the run's files (``RunData``), the pools' hardware
and, for the demo, the OpenB curves: the same run gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuplane.report.html import run_plots, series_plots
from gpuplane.report.html.page import cell, esc, missing, page, table
from gpuplane.report.html.pool_view import PoolInfo, pool_html
from gpuplane.report.html.run_data import RunData
from gpuplane.report.timeline import Timeline, build_timeline

# The figures the header shows, as dotted paths into summary.json.
KEY_FIGURES = (
    ("placement", "placement"),
    ("events processed", "events_processed"),
    ("nodes", "nodes.total"),
    ("nodes ready at the end", "nodes.ready_at_end"),
    ("GPUs", "gpus.capacity"),
    ("GPUs allocated at the end", "gpus.allocated_at_end"),
    ("GPU-hours allocated", "gpus.allocated_gpu_hours"),
    ("GPU-hours of capacity", "gpus.capacity_gpu_hours"),
    ("allocation ratio", "gpus.allocation_ratio"),
    ("pods created", "pods.created"),
    ("pods pending at the end", "pods.at_end.pending"),
    ("pods running at the end", "pods.at_end.running"),
    ("pods failed", "pods.at_end.failed"),
    ("restarts", "pods.restarts"),
    ("scheduling latency p50 (s)", "pods.scheduling_latency_s.p50"),
    ("scheduling latency p90 (s)", "pods.scheduling_latency_s.p90"),
    ("scheduling latency p99 (s)", "pods.scheduling_latency_s.p99"),
    ("jobs complete", "jobs.complete"),
    ("jobs total", "jobs.total"),
    ("MIG reconfigurations", "pods.gpu_slicing.mig_reconfigurations"),
    ("GPU OOM kills", "pods.gpu_slicing.gpu_oom_kills"),
)


def lookup(summary: Mapping[str, Any], path: str) -> Any:
    value: Any = summary
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _header(run: RunData) -> str:
    s = run.summary
    rows = [
        (label, cell(lookup(s, key), key))
        for label, key in KEY_FIGURES
        if lookup(s, key) is not None
    ]
    warnings = "".join(f'<div class="warn">{esc(w)}</div>' for w in run.warnings)
    return (
        f'<p>Scenario <b data-key="scenario">{esc(s.get("scenario", ""))}</b>, seed '
        f'<b data-key="seed">{esc(s.get("seed", ""))}</b>, simulated span '
        f'<b data-key="until_s">{esc(s.get("until_s", ""))}</b> s '
        f"({run.until_s / 3600:.2f} h).</p>"
        + (warnings or "<p>No warnings.</p>")
        + table(("figure", "value"), rows)
    )


def _serving(run: RunData) -> str:
    services = run.summary.get("serving") or []
    if not services:
        return missing("LLM serving")
    rows = []
    for i, sv in enumerate(services):
        lat, key = sv.get("latency_s", {}), f"serving.{i}"
        rows.append(
            (
                sv["name"],
                sv["deployment"],
                sv.get("router", ""),
                *(
                    cell(lat.get(f"{m}_{q}_s"), f"{key}.latency_s.{m}_{q}_s")
                    for m in ("ttft", "itl")
                    for q in ("p50", "p90", "p99")
                ),
                cell(sv.get("slo_attainment"), f"{key}.slo_attainment"),
                cell(sv.get("goodput_rps"), f"{key}.goodput_rps"),
                sv.get("requests", {}).get("completed"),
            )
        )
    head = (
        "service",
        "Deployment",
        "router",
        "TTFT p50",
        "p90",
        "p99",
        "ITL p50",
        "p90",
        "p99",
        "SLO attainment",
        "goodput (req/s)",
        "completed",
    )
    return (
        table(head, rows)
        + "<p>Latencies in seconds over the whole run.</p>"
        + series_plots.serving_latency(run.series)
    )


def _autoscaling(run: RunData, timeline: Timeline) -> str:
    scalers = list(run.summary.get("autoscaling") or []) + list(
        run.summary.get("slo_scaling") or []
    )
    targets = [str(a.get("target", "")) for a in scalers]
    rows = [
        (
            a.get("scaled_object", a.get("name", "")),
            a.get("target", ""),
            a.get("replicas_at_end"),
            a.get("max_replicas_seen"),
            a.get("scale_events"),
        )
        for a in scalers
    ]
    parts = [
        table(("scaler", "target", "replicas at end", "max seen", "scale events"), rows)
        if rows
        else missing("autoscalers")
    ]
    parts.append(run_plots.replicas(timeline, targets))
    if scalers:
        parts.append(series_plots.autoscaler_signals(run.series))
    return "".join(parts)


def _cluster(run: RunData, timeline: Timeline, pools: Sequence[PoolInfo]) -> str:
    capacity = {p.name: p.num_gpus for p in pools if p.topology is not None}
    return "".join(
        [
            run_plots.cluster_gpus(run.columns),
            run_plots.pool_gpus(timeline, capacity),
            run_plots.pending_by_reason(timeline, run.columns),
            run_plots.scheduling_latency(timeline),
            series_plots.pool_fragmentation(run.series),
        ]
    )


def build_run_report(
    run: RunData,
    pools: Sequence[PoolInfo],
    *,
    openb: Mapping[str, Sequence[float | None]] | None = None,
    title: str | None = None,
) -> str:
    timeline = build_timeline(run.events, run.until_s)
    sections = [
        ("run", "Run", _header(run)),
        ("cluster", "GPUs and pods", _cluster(run, timeline, pools)),
        ("nodes", "Node states", run_plots.node_states(timeline)),
        ("serving", "Serving", _serving(run)),
        ("autoscaling", "Autoscaling", _autoscaling(run, timeline)),
        (
            "pools",
            "Node pools",
            "".join(pool_html(p, timeline.mig_changes) for p in pools) or missing("node pools"),
        ),
    ]
    if openb is not None:
        sections.append(("openb", "OpenB placement", run_plots.openb_curves(openb)))
    name = str(run.summary.get("scenario", "run"))
    return page(title or f"gpuplane report: {name}", sections)


def write_report(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
