"""``gpuplane serve scaler``: the SLO-aware scaler as a KEDA external scaler (docs/live.md,
"KEDA external scaler"). Everything per service comes from the trigger's metadata."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Annotated

import typer

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError
from gpuplane.live.scaler.grpc_service import StreamSettings
from gpuplane.live.scaler.server import ServerOptions, serve


def scaler_command(
    listen: Annotated[
        str, typer.Option("--listen", help="gRPC address KEDA's scalerAddress points at.")
    ] = "127.0.0.1:9090",
    metrics_listen: Annotated[
        str, typer.Option("--metrics-listen", help="/metrics and /healthz ('' turns it off).")
    ] = "127.0.0.1:9091",
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", help="PEM certificate chain (with --tls-key).")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="PEM private key.")] = None,
    stream_interval: Annotated[
        str, typer.Option("--stream-interval", help="StreamIsActive: time between decisions.")
    ] = "5s",
    stream_heartbeat: Annotated[
        str, typer.Option("--stream-heartbeat", help="StreamIsActive: resend at least this often.")
    ] = "30s",
) -> None:
    """Serve gpuplane's SLO-aware scaler to KEDA (trigger type external or external-push)."""
    stream = StreamSettings(parse_duration_s(stream_interval), parse_duration_s(stream_heartbeat))
    if stream.interval_s <= 0 or stream.heartbeat_s <= 0:
        raise InputError("--stream-interval and --stream-heartbeat must be > 0")
    options = ServerOptions(listen, metrics_listen or None, tls_cert, tls_key, stream)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(options))
