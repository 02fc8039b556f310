"""``gpuplane serve mig-controller``: relabel MIG nodes so pending MIG pods fit (docs/live.md,
"MIG repartitioning controller"). Dry-run unless ``--apply``."""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.snapshot_file import read_snapshot
from gpuplane.live.migctl.round import ConfigMapTarget, RoundInputs, read_round
from gpuplane.live.migctl.service import Controller, serve
from gpuplane.slicing.mig.controller_types import ControlSettings

IN_CLUSTER = "in-cluster"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # recorded, never decides


def _line(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _from_snapshot(path: Path) -> RoundInputs:
    snap = read_snapshot(path)
    note = f"{path}: a snapshot holds no PodDisruptionBudgets nor the mig-parted ConfigMap"
    return RoundInputs(snap, (), None, (note,))


def mig_controller_command(
    kubeconfig: Annotated[
        str | None,
        typer.Option("--kubeconfig", help=f"A kubeconfig file, or '{IN_CLUSTER}'."),
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="The context.")] = None,
    snapshot: Annotated[
        Path | None, typer.Option("--snapshot", help="Decide on a snapshot file (dry-run).")
    ] = None,
    pools: Annotated[Path | None, typer.Option("--pools", help="Hardware per node pool.")] = None,
    interval: Annotated[str, typer.Option("--interval", help="Time between rounds.")] = "30s",
    apply: Annotated[
        bool, typer.Option("--apply/--dry-run", help="Write (default: only print the plan).")
    ] = False,
    max_unavailable: Annotated[
        int, typer.Option("--max-unavailable", min=1, help="Most nodes reconfiguring at once.")
    ] = 1,
    allow_evict: Annotated[
        bool, typer.Option("--allow-evict", help="Allow disrupting running GPU pods (PDBs).")
    ] = False,
    once: Annotated[bool, typer.Option("--once", help="Run one round and exit.")] = False,
    namespace: Annotated[
        str, typer.Option("--operator-namespace", help="The GPU Operator's namespace.")
    ] = "gpu-operator",
    config_map: Annotated[
        str,
        typer.Option("--config-map", help="The mig-parted ConfigMap (migManager.config.name)."),
    ] = "custom-mig-parted-config",
    host: Annotated[str, typer.Option("--host", help="Address of /healthz /readyz /metrics.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port of the HTTP endpoints.")] = 8080,
) -> None:
    """Relabel MIG nodes (nvidia.com/mig.config) so the pending MIG pods fit."""
    if (snapshot is None) == (kubeconfig is None):
        raise InputError("give either --kubeconfig PATH|in-cluster or --snapshot FILE")
    if snapshot is not None and apply:
        raise InputError("--apply needs a live cluster (--kubeconfig), not --snapshot")
    interval_s = parse_duration_s(interval)
    target = ConfigMapTarget(namespace, config_map)
    settings = ControlSettings(max_unavailable=max_unavailable, allow_evict=allow_evict)
    defaults = node_defaults(pools, None)
    if snapshot is not None:
        path = snapshot
        controller = Controller(
            lambda: _from_snapshot(path), settings, defaults, target, None, _now, _line
        )
        _run(controller, once, interval_s, host, port)
        return
    from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister
    from gpuplane.k8s.cluster.kube_writer import KubernetesApiWriter

    assert kubeconfig is not None
    lister = (
        KubernetesApiLister.in_cluster()
        if kubeconfig == IN_CLUSTER
        else KubernetesApiLister.from_kubeconfig(Path(kubeconfig), context)
    )
    try:
        writer = KubernetesApiWriter.for_lister(lister) if apply else None
        controller = Controller(
            lambda: read_round(lister, target, read_at=_now()),
            settings,
            defaults,
            target,
            writer,
            _now,
            _line,
        )
        _run(controller, once, interval_s, host, port)
    finally:
        lister.close()


def _run(controller: Controller, once: bool, interval_s: float, host: str, port: int) -> None:
    if once:
        controller.round()
        return
    asyncio.run(serve(controller, interval_s=interval_s, host=host, port=port))
