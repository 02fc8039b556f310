"""The end-of-run summary as terminal tables."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table

from gpuplane.twin.autoscaling.summary import SloScalerSummary
from gpuplane.twin.operator.summary import OperatorSummary
from gpuplane.twin.serving.summary import ServingSummary
from gpuplane.twin.summary import RunSummary


def _kv(title: str, rows: list[tuple[str, object]]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    for key, value in rows:
        table.add_row(key, str(value))
    return table


def run_summary_view(summary: RunSummary) -> RenderableType:
    gpus, pods, jobs = summary.gpus, summary.pods, summary.jobs
    lat = pods.scheduling_latency_s
    parts: list[RenderableType] = [
        _kv(
            f"{summary.scenario} (seed {summary.seed}, {summary.until_s:g} s, "
            f"{summary.events_processed:,} events)",
            [
                (
                    "nodes (ready at end)",
                    f"{summary.nodes.total} ({summary.nodes.ready_at_end})",
                ),
                ("GPUs", gpus.capacity),
                (
                    "GPU-hours allocated / capacity",
                    f"{gpus.allocated_gpu_hours:,} / "
                    f"{gpus.capacity_gpu_hours:,} ({gpus.allocation_ratio:.1%})",
                ),
                ("pods created", pods.created),
                ("pods at end", ", ".join(f"{k} {v}" for k, v in pods.at_end.as_dict().items())),
                ("container restarts", pods.restarts),
                ("pods replaced by controllers", pods.replacements_by_controllers),
                (
                    "MIG repartitions / GPU out-of-memory kills",
                    f"{pods.gpu_slicing.mig_reconfigurations} / {pods.gpu_slicing.gpu_oom_kills}",
                ),
                (
                    "kubelet admission aligned / TopologyAffinityError",
                    f"{pods.kubelet_admission.aligned} / "
                    f"{pods.kubelet_admission.rejected_topology_affinity}",
                ),
                ("scheduling latency p50 / p99 (s)", f"{lat.p50} / {lat.p99}"),
                (
                    "jobs complete / failed / active",
                    f"{jobs.complete} / {jobs.failed} / {jobs.active}",
                ),
            ],
        )
    ]
    if summary.deployments:
        table = Table(title="Deployments", title_justify="left")
        for col in ("name", "replicas", "ready", "pods created", "replacements"):
            table.add_column(col)
        for d in summary.deployments:
            table.add_row(
                d.name,
                str(d.replicas),
                str(d.ready),
                str(d.pods_created),
                str(d.replacements),
            )
        parts.append(table)
    if summary.serving is not None and summary.serving.services:
        parts.append(serving_table(summary.serving))
    scaling = _scaling_rows(summary)
    if scaling:
        table = Table(title="Autoscaling", title_justify="left")
        for col in ("scaler", "scale events", "most replicas", "replicas at end"):
            table.add_column(col, justify="left" if col == "scaler" else "right")
        for row in scaling:
            table.add_row(*(str(x) for x in row))
        parts.append(table)
    if summary.gpu_operator is not None:
        parts.append(_operator_table(summary.gpu_operator))
    if pods.pending_reasons_at_end:
        table = Table(title="Why pods are still pending", title_justify="left")
        table.add_column("pods", justify="right")
        table.add_column("last FailedScheduling message")
        for r in pods.pending_reasons_at_end:
            table.add_row(str(r.pods), r.message)
        parts.append(table)
    return Group(*parts)


def _slo_name(scaler: SloScalerSummary) -> str:
    # A result that used what only the twin knows says so (twin.autoscaling.oracle_signals).
    oracle = " (oracle signals)" if scaler.signals == "oracle" else ""
    return f"SLO scaler {scaler.service}{oracle}"


def _scaling_rows(summary: RunSummary) -> list[tuple[str, int, int, int | str]]:
    keda = summary.autoscaling.scaled_objects if summary.autoscaling is not None else ()
    slo = summary.slo_scaling.scalers if summary.slo_scaling is not None else ()
    rows: list[tuple[str, int, int, int | str]] = [
        (f"KEDA {a.scaled_object}", a.scale_events, a.max_replicas_seen, a.replicas_at_end)
        for a in keda
    ]
    rows += [(_slo_name(a), a.scale_events, a.max_replicas, "-") for a in slo]
    return rows


def _operator_table(operator: OperatorSummary) -> Table:
    rows: list[tuple[str, object]] = [("mode", operator.mode)]
    rows += [(f"nodes {k}", v) for k, v in operator.nodes_by_state.items()]
    rows += [(f"upgrade state {k}", v) for k, v in (operator.nodes_by_upgrade_state or {}).items()]
    if operator.upgrade_controller is not None:
        for k, v in operator.upgrade_controller.as_dict().items():
            rows.append((k.replace("_", " "), v))
    return _kv("GPU Operator", rows)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def serving_table(serving: ServingSummary) -> Table:
    """Per service: requests, TTFT and ITL percentiles (ms), SLO attainment."""
    table = Table(title="LLM serving (latencies in ms)", title_justify="left")
    for col in (
        "service",
        "arrived",
        "done",
        "rejected",
        "in flight",
        "TTFT p50/p90/p99",
        "ITL p50/p99",
        "SLO met",
    ):
        table.add_column(col, justify="left" if col == "service" else "right")
    for svc in serving.services:
        req, lat = svc.requests, svc.latency_s
        ttft = "/".join(_ms(x) for x in (lat.ttft_p50_s, lat.ttft_p90_s, lat.ttft_p99_s))
        itl = "/".join(_ms(x) for x in (lat.itl_p50_s, lat.itl_p99_s))
        attainment = svc.slo_attainment
        table.add_row(
            f"{svc.name} ({svc.router})",
            str(req.arrived),
            str(req.completed),
            str(req.rejected + req.aborted),
            str(req.in_flight),
            ttft,
            itl,
            "-" if attainment is None else f"{attainment:.1%}",
        )
    return table
