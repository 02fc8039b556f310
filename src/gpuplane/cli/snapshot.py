"""``gpuplane snapshot``: read a cluster (live, read-only, or from dumps) into a snapshot file,
and summarise one. docs/snapshot.md describes the commands, the RBAC they need and the format.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from gpuplane.cli.console import err, out, print_json
from gpuplane.core.errors import InputError
from gpuplane.fit.cluster_summary import ClusterSummary, summarise_cluster
from gpuplane.fit.framework_view import framework_view
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.reading import snapshot_from_files, snapshot_from_kubeconfig
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.k8s.cluster.snapshot_file import read_snapshot, write_snapshot
from gpuplane.k8s.cluster.snapshot_summary import SnapshotSummary, summarise
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry

snapshot_app = typer.Typer(
    help="Read a cluster into a snapshot file (read-only) and summarise it.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _now() -> str:
    # The reader records when it read; nothing that decides uses this time.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@snapshot_app.command("save")
def save_command(
    out_file: Annotated[Path, typer.Option("--out", help="The snapshot file to write.")],
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="Read the cluster of this kubeconfig.")
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="The kubeconfig context (default: current).")
    ] = None,
    from_paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="kubectl -o yaml/json dumps or a kube-scheduler-simulator export; "
            "files or folders, repeatable.",
        ),
    ] = None,
) -> None:
    """Write a ClusterSnapshot from a live cluster (--kubeconfig) or from dump files (--from)."""
    if (kubeconfig is None) == (not from_paths):
        raise InputError(
            "give either --kubeconfig PATH or --from FILE_OR_DIR",
            expected="exactly one source of objects",
        )
    if context is not None and kubeconfig is None:
        raise InputError("--context needs --kubeconfig")
    if kubeconfig is not None:
        snap = snapshot_from_kubeconfig(kubeconfig, context, read_at=_now())
    else:
        snap = snapshot_from_files(from_paths or [], read_at=_now())
    write_snapshot(snap, out_file)
    err.print(_saved_line(snap, out_file), markup=False)


def _saved_line(snap: ClusterSnapshot, path: Path) -> str:
    counts = ", ".join(f"{len(v)} {k}" for k, v in snap.objects.items() if v) or "no objects"
    text = f"wrote {path}: {counts}"
    if snap.skipped:
        text += f"; skipped: {', '.join(s.resource for s in snap.skipped)}"
    return text


def _print_summary(summary: SnapshotSummary) -> None:
    out.print(f"snapshot of {summary.source}, read {summary.read_at or 'at an unknown time'}")
    if summary.server_version:
        out.print(f"server {summary.server_version}")
    table = Table(title="Nodes by GPU model")
    for column in ("model", "nodes", "GPUs (labels)", "allocatable", "requested", "free"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for m in summary.models:
        free = m.gpus_allocatable - m.gpus_requested
        table.add_row(
            m.model,
            str(m.nodes),
            str(m.gpus_labelled),
            str(m.gpus_allocatable),
            str(m.gpus_requested),
            str(free),
        )
    out.print(table)
    out.print(
        f"pods: {summary.pods} ({summary.bound_pods} bound and not finished, "
        f"{len(summary.pending)} pending)"
    )
    for s in summary.skipped:
        out.print(f"skipped {s.resource}: {s.reason}")


def _print_cluster(c: ClusterSummary) -> None:
    table = Table(title="Node pools")
    for column in (
        "GPU product",
        "instance type",
        "nodes",
        "cordoned",
        "GPUs",
        "free",
        "hardware",
        "kubelet",
        "MIG",
    ):
        table.add_column(column)
    for p in c.pools:
        table.add_row(
            p.product,
            p.instance_type,
            str(p.nodes),
            str(p.cordoned),
            str(p.gpus),
            str(p.gpus - p.gpus_requested),
            Text(p.hardware),
            Text(p.kubelet),
            Text(p.mig or "-"),
        )
    out.print(table)
    demand = ", ".join(f"{k} {100 * v:.0f}%" for k, v in c.demand)
    out.print(
        Text(
            f"fragmentation (FGD): {c.fragmented_gpus:.1f} of {c.free_gpus} free GPUs "
            f"({c.fragmentation_pct:.1f}%) cannot serve the cluster's own demand ({demand})"
        )
    )
    for pending in c.pending:
        out.print(Text(f"  pending {pending.pod} ({pending.gpus} GPU): {pending.why}"))


@snapshot_app.command("show")
def show_command(
    snapshot_file: Annotated[Path, typer.Argument(metavar="FILE", help="A snapshot file.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    pools: Annotated[
        Path | None, typer.Option("--pools", help="Hardware and kubelet config per node pool.")
    ] = None,
    kubelet_config: Annotated[
        Path | None, typer.Option("--kubelet-config", help="A KubeletConfiguration for the rest.")
    ] = None,
) -> None:
    """Pools, GPUs by model, allocated/free, MIG layouts, fragmentation, pending pods and why."""
    snap = read_snapshot(snapshot_file)
    summary = summarise(snap)
    cluster = fit_cluster(snap, node_defaults(pools, kubelet_config))
    scheduler = Scheduler([ProfileConfig()], registry=in_tree_registry())
    detail = summarise_cluster(scheduler, cluster, framework_view(cluster))
    if json_out:
        print_json({**summary.as_dict(), **detail.as_dict(), "notes": list(cluster.notes)})
    else:
        _print_summary(summary)
        _print_cluster(detail)
        for n in cluster.notes:
            out.print(Text(f"note: {n}"))
