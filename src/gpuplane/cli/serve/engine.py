"""``gpuplane serve engine``: an OpenAI-compatible vLLM/SGLang emulator whose timing is the
twin's engine (docs/live.md, "Engine emulator")."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

import typer
from aiohttp import web

from gpuplane.cli.serving import parse_gpu_indices
from gpuplane.core.errors import InputError
from gpuplane.live.emulator.dcgm import DEFAULT_DRIVER_VERSION, DcgmSettings, make_dcgm_app
from gpuplane.live.emulator.kv_config import parse_kv_transfer_config
from gpuplane.live.emulator.nixl import DEFAULT_HOLD_S, HOLD_TIMEOUT_ENV
from gpuplane.live.emulator.service import make_app
from gpuplane.live.emulator.settings import EmulatorSettings, build, deployment
from gpuplane.live.http.aiohttp_serve import bound, serve_app
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.steptime.interconnect import pod_interconnect
from gpuplane.serving.steptime.kv_transfer import KvLink
from gpuplane.topology.catalog import get_gpu_model


def _listening(
    settings: EmulatorSettings, host: str, load_s: float, blocks: int, extra: dict[str, Any]
) -> Callable[[int], None]:
    """Logs one JSON line on stderr once the port is bound."""
    line = {
        "msg": "listening",
        "host": host,
        "model": settings.spec.served_model_name,
        "engine": settings.spec.kind,
        "load_time_s": round(load_s, 3),
        "num_gpu_blocks": blocks,
        "time_scale": settings.time_scale,
    }
    if settings.kv_transfer is not None:
        line["kv_role"] = settings.kv_transfer.kv_role
        line["kv_engine_id"] = settings.kv_transfer.engine_id

    def report(port: int) -> None:
        sys.stderr.write(json.dumps({**line, "port": port, **extra}) + "\n")
        sys.stderr.flush()

    return report


def _kv_settings(
    config: str | None, gbit: float, topology: str | None, gpus: str, gpu: str
) -> dict[str, Any]:
    """The P/D fields of the settings (none without --kv-transfer-config)."""
    if config is None:
        return {}
    out: dict[str, Any] = {
        "kv_transfer": parse_kv_transfer_config(config),
        "kv_link_gbit": gbit,
        "kv_hold_timeout_s": _hold_timeout(),
    }
    if topology is not None:
        pair = parse_gpu_indices(gpus)
        if len(pair) != 2:
            raise InputError(
                f"--kv-gpus {gpus!r}", expected="the prefill and the decode GPU, e.g. 0,4"
            )
        link = pod_interconnect(topology, pair, get_gpu_model(gpu), len(pair))
        out["kv_link"] = KvLink.from_interconnect(link)
    return out


def _hold_timeout() -> float:
    raw = os.environ.get(HOLD_TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_HOLD_S
    try:
        value = int(raw)  # vLLM reads it with int()
    except ValueError:
        value = -1
    if value <= 0:
        raise InputError(f"{HOLD_TIMEOUT_ENV}={raw!r}", expected="whole seconds > 0")
    return float(value)


def engine_command(
    model: Annotated[str, typer.Option("--model", help="Catalog name, HF id or config.json.")],
    gpu: Annotated[str, typer.Option("--gpu", help="GPU model (gpuplane's catalog).")],
    tp: Annotated[int, typer.Option("--tp", "--tensor-parallel-size", min=1)] = 1,
    engine: Annotated[
        Literal["vllm", "sglang"], typer.Option("--engine", help="Whose scheduler and metrics.")
    ] = "vllm",
    served_model_name: Annotated[
        str | None, typer.Option("--served-model-name", help="The name clients ask for.")
    ] = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="0: any free port (logged).")] = 8000,
    time_scale: Annotated[
        float, typer.Option("--time-scale", min=1e-6, help="Emulated seconds per wall second.")
    ] = 1.0,
    seed: Annotated[int, typer.Option("--seed", help="Seeds the synthetic output.")] = 0,
    mean_output_tokens: Annotated[
        int, typer.Option("--mean-output-tokens", min=1, help="Mean answer length before EOS.")
    ] = 128,
    load_time: Annotated[
        float | None,
        typer.Option("--load-time", min=0, help="Emulated seconds of loading (default: plan)."),
    ] = None,
    gpu_memory_utilization: Annotated[
        float | None, typer.Option("--gpu-memory-utilization", min=0.01, max=1.0)
    ] = None,
    max_num_seqs: Annotated[int | None, typer.Option("--max-num-seqs", min=1)] = None,
    max_num_batched_tokens: Annotated[
        int | None, typer.Option("--max-num-batched-tokens", min=1)
    ] = None,
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", min=2)] = None,
    enable_prefix_caching: Annotated[
        bool, typer.Option("--enable-prefix-caching/--no-enable-prefix-caching")
    ] = True,
    dcgm: Annotated[
        bool, typer.Option("--dcgm/--no-dcgm", help="Serve the DCGM-exporter endpoint.")
    ] = True,
    dcgm_port: Annotated[
        int, typer.Option("--dcgm-port", min=0, max=65535, help="0: any free port (logged).")
    ] = 9400,
    dcgm_collect_interval: Annotated[
        int,
        typer.Option("--dcgm-collect-interval", min=1, help="Milliseconds (-c of dcgm-exporter)."),
    ] = 30000,
    dcgm_hostname: Annotated[
        str | None, typer.Option("--dcgm-hostname", envvar="NODE_NAME", help="Hostname label.")
    ] = None,
    dcgm_driver_version: Annotated[str, typer.Option("--dcgm-driver-version")] = (
        DEFAULT_DRIVER_VERSION
    ),
    dcgm_pod: Annotated[str, typer.Option("--dcgm-pod", envvar="POD_NAME")] = "",
    dcgm_namespace: Annotated[str, typer.Option("--dcgm-namespace", envvar="POD_NAMESPACE")] = "",
    dcgm_container: Annotated[str, typer.Option("--dcgm-container", envvar="CONTAINER_NAME")] = "",
    kv_transfer_config: Annotated[
        str | None,
        typer.Option(
            "--kv-transfer-config",
            help='P/D, as vLLM takes it: {"kv_connector":"NixlConnector","kv_role":"kv_both"}.',
        ),
    ] = None,
    kv_link_gbit: Annotated[
        float,
        typer.Option("--kv-link-gbit", min=1e-3, help="P/D: NIC per prefill rank (Gb/s)."),
    ] = 400.0,
    kv_topology: Annotated[
        str | None,
        typer.Option("--kv-topology", help="P/D within one node: a preset or topology file."),
    ] = None,
    kv_gpus: Annotated[
        str, typer.Option("--kv-gpus", help="With --kv-topology: the prefill and decode GPU.")
    ] = "0,1",
) -> None:
    """Serve /v1/completions, /v1/chat/completions, /v1/models, /health and /metrics."""
    spec = InferenceServerSpec(
        kind=engine,
        model=model,
        served_model_name=served_model_name or model,
        tensor_parallel_size=tp,
        gpu_memory_utilization=gpu_memory_utilization,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        max_model_len=max_model_len,
        enable_prefix_caching=enable_prefix_caching,
    )
    settings = EmulatorSettings(
        spec,
        gpu,
        time_scale,
        seed,
        mean_output_tokens=mean_output_tokens,
        load_time_s=load_time,
        **_kv_settings(kv_transfer_config, kv_link_gbit, kv_topology, kv_gpus, gpu),
    )
    built, load_s = build(settings)
    app = make_app(settings, built.engine, load_s, precise_wake=True)  # the process is its own
    dcgm_app = None
    if dcgm:
        labels = DcgmSettings(
            hostname=dcgm_hostname or socket.gethostname(),
            driver_version=dcgm_driver_version,
            pod=dcgm_pod,
            namespace=dcgm_namespace,
            container=dcgm_container,
            collect_interval_ms=dcgm_collect_interval,
            seed=seed,
        )
        dep = deployment(settings, built, load_s)
        dcgm_app = make_dcgm_app(app, dep, labels, get_gpu_model(gpu).product_name)
    where = (host, port, dcgm_port)
    asyncio.run(_serve(settings, app, dcgm_app, where, load_s, built.plan.num_gpu_blocks))


async def _serve(
    settings: EmulatorSettings,
    app: web.Application,
    dcgm_app: web.Application | None,
    where: tuple[str, int, int],
    load_s: float,
    blocks: int,
) -> None:
    host, port, dcgm_port = where
    if dcgm_app is None:
        report = _listening(settings, host, load_s, blocks, {})
        await serve_app(app, host, port, on_listening=report)
        return
    async with contextlib.AsyncExitStack() as stack:
        try:
            bound_port = await stack.enter_async_context(bound(dcgm_app, host, dcgm_port))
        except OSError as exc:
            raise InputError(
                f"cannot listen on {host}:{dcgm_port} for the DCGM endpoint: {exc.strerror}",
                expected="a free port (--dcgm-port, 0 for any free port) or --no-dcgm",
            ) from None
        report = _listening(settings, host, load_s, blocks, {"dcgm_port": bound_port})
        await serve_app(app, host, port, on_listening=report)
