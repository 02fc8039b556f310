"""``gpuplane serve extender``: gpuplane as a kube-scheduler extender over HTTP (docs/live.md)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from gpuplane.cli.cluster_options import ContextOpt, KubeletConfigOpt, PoolsOpt, SnapshotOpt
from gpuplane.cli.fit import _snapshot
from gpuplane.cli.numbers import finite
from gpuplane.core.errors import InputError
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.live.extender.json_log import setup_json_logging
from gpuplane.live.extender.live_feed import connect
from gpuplane.live.extender.service import DEADLINE_S, ServeConfig, make_app, settle_heap
from gpuplane.live.extender.state import ExtenderState, node_versions


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--listen {text!r} is not HOST:PORT", expected="e.g. 127.0.0.1:8888")
    return host.strip("[]") or "127.0.0.1", int(port)


def extender_command(
    snapshot: SnapshotOpt = None,
    kubeconfig: Annotated[
        str | None,
        typer.Option("--kubeconfig", help="Follow this cluster live (a path, or in-cluster)."),
    ] = None,
    context: ContextOpt = None,
    pools: PoolsOpt = None,
    kubelet_config: KubeletConfigOpt = None,
    listen: Annotated[
        str, typer.Option("--listen", help="HOST:PORT to listen on (loopback by default).")
    ] = "127.0.0.1:8888",
    url_prefix: Annotated[
        str, typer.Option("--url-prefix", help="The path before the verbs (urlPrefix's path).")
    ] = "/gpuplane",
    relist_s: Annotated[
        float,
        typer.Option(
            "--relist-s",
            callback=finite(minimum=0.0),
            help="--kubeconfig: list the resources not watched again every N s (0: once).",
        ),
    ] = 60.0,
    assume_ttl_s: Annotated[
        float,
        typer.Option(
            "--assume-ttl-s",
            callback=finite(minimum=0.0),
            help="How long an answered pod counts as bound.",
        ),
    ] = 30.0,
    packing_weight: Annotated[
        float,
        typer.Option(
            "--packing-weight",
            callback=finite(minimum=0.0, maximum=1.0),
            help="Packing's share of the score.",
        ),
    ] = 0.3,
    max_body_mib: Annotated[
        int, typer.Option("--max-body-mib", min=1, help="Largest request body accepted.")
    ] = 64,
    deadline_s: Annotated[
        float,
        typer.Option(
            "--deadline-s",
            callback=finite(minimum=0.1, maximum=30.0),
            help="Answer (with an error) by then.",
        ),
    ] = DEADLINE_S,
    bind: Annotated[
        bool,
        typer.Option(
            "--bind",
            help="--kubeconfig: answer bind by creating the pod's Binding (off: read-only).",
        ),
    ] = False,
    watch_list: Annotated[
        bool,
        typer.Option(
            "--watch-list",
            help=(
                "--kubeconfig: stream each informer's initial state as watch events "
                "(Kubernetes 1.32+) instead of listing; lists where the server refuses it."
            ),
        ),
    ] = False,
) -> None:
    """Answer kube-scheduler's filter, prioritize and preempt calls (and bind, with --bind)
    from gpuplane's kubelet verdicts; JSON-line logs on stderr."""
    from aiohttp import web

    host, port = parse_listen(listen)
    defaults = node_defaults(pools, kubelet_config)
    if (snapshot is None) == (kubeconfig is None):
        _snapshot(snapshot, None if kubeconfig is None else Path(kubeconfig), context)
    if context is not None and kubeconfig is None:
        raise InputError("--context needs --kubeconfig")
    if bind and kubeconfig is None:
        raise InputError("--bind needs --kubeconfig", expected="a cluster to create Bindings in")
    if watch_list and kubeconfig is None:
        raise InputError("--watch-list needs --kubeconfig", expected="a cluster to watch")
    settings = ExtenderSettings(packing_weight=packing_weight, assume_ttl_s=assume_ttl_s)
    state = ExtenderState(settings, defaults)
    feed, binder = None, None
    if snapshot is not None:
        snap = _snapshot(snapshot, None, None)  # a bad file is a usage error, before listening
        state.load(fit_cluster(snap, defaults), node_versions(snap))
        settle_heap()
    else:
        assert kubeconfig is not None
        feed, binder = connect(
            kubeconfig,
            context,
            resync_s=relist_s,
            defaults=defaults,
            bind=bind,
            watch_list=watch_list,
        )
    config = ServeConfig(
        url_prefix=url_prefix, max_body_bytes=max_body_mib * 2**20, deadline_s=deadline_s
    )
    setup_json_logging()
    app = make_app(state, config, binder=binder, feed=feed)
    logging.getLogger("gpuplane.extender").info(
        "listening", extra={"host": host, "port": port, "prefix": url_prefix}
    )
    web.run_app(app, host=host, port=port, print=None, shutdown_timeout=5.0, access_log=None)
