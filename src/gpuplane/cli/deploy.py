"""``gpuplane deploy render extender|mig-controller|serving --out DIR [--bind]``: kustomize-able
manifests (docs/live.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.errors import InputError
from gpuplane.live.deploy.render import all_objects, render
from gpuplane.live.deploy.serving import VLLM_IMAGE, ServingBundle
from gpuplane.serving.routing.registry import ROUTER_NAMES, make_router

deploy_app = typer.Typer(help="Manifests for gpuplane's live services.", no_args_is_help=True)

DEFAULT_IMAGE = "ghcr.io/gpuplane/gpuplane:latest"
SERVING = "Options for serving"


@deploy_app.command("render")
def render_command(
    target: Annotated[str, typer.Argument(help="extender, mig-controller or serving")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The directory to write (or -o to print the objects)."),
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", help="Where it runs.")] = "gpuplane",
    image: Annotated[str, typer.Option("--image", help="gpuplane's container image.")] = (
        DEFAULT_IMAGE
    ),
    bind: Annotated[
        bool,
        typer.Option(
            "--bind",
            help=(
                "extender: make it the scheduler's binder (bindVerb: bind, serve --bind, and "
                "create on pods/binding in its role)."
            ),
        ),
    ] = False,
    engine: Annotated[
        Literal["emulator", "vllm"],
        typer.Option(
            "--engine", help="gpuplane's emulator or a real vLLM.", rich_help_panel=SERVING
        ),
    ] = "emulator",
    vllm_image: Annotated[
        str, typer.Option("--vllm-image", help="With --engine vllm.", rich_help_panel=SERVING)
    ] = VLLM_IMAGE,
    model: Annotated[str, typer.Option("--model", rich_help_panel=SERVING)] = "Llama-3.1-8B",
    gpu: Annotated[str, typer.Option("--gpu", rich_help_panel=SERVING)] = "H100-80GB",
    tp: Annotated[int, typer.Option("--tp", min=1, rich_help_panel=SERVING)] = 1,
    served_model_name: Annotated[
        str | None, typer.Option("--served-model-name", rich_help_panel=SERVING)
    ] = None,
    name: Annotated[
        str, typer.Option("--name", help="Prefix of the objects.", rich_help_panel=SERVING)
    ] = "llm",
    policy: Annotated[
        str,
        typer.Option(
            "--policy", help=f"One of: {', '.join(ROUTER_NAMES)}.", rich_help_panel=SERVING
        ),
    ] = "llm-d",
    min_replicas: Annotated[
        int, typer.Option("--min-replicas", min=0, rich_help_panel=SERVING)
    ] = 1,
    max_replicas: Annotated[
        int, typer.Option("--max-replicas", min=1, rich_help_panel=SERVING)
    ] = 8,
    prometheus: Annotated[
        str, typer.Option("--prometheus", help="Prometheus' URL.", rich_help_panel=SERVING)
    ] = "http://prometheus.monitoring.svc:9090",
    ttft_p90: Annotated[str, typer.Option("--ttft-p90", rich_help_panel=SERVING)] = "2s",
    itl_p99: Annotated[str, typer.Option("--itl-p99", rich_help_panel=SERVING)] = "200ms",
    pd: Annotated[
        bool,
        typer.Option(
            "--pd/--no-pd",
            help="A prefill and a decode set (NixlConnector) instead of one.",
            rich_help_panel=SERVING,
        ),
    ] = False,
    discovery: Annotated[
        bool,
        typer.Option(
            "--discovery/--no-discovery",
            help="The router follows the engine Services' EndpointSlices (a ServiceAccount "
            "that may watch them) instead of every replica's address.",
            rich_help_panel=SERVING,
        ),
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Write a kustomization directory (apply with kubectl apply -k DIR); with -o yaml|json
    print every object instead, as one v1 List (kubectl apply -f -)."""
    make_router(policy)  # an unknown name fails here, with the valid ones
    serving = ServingBundle(
        namespace,
        image,
        model=model,
        gpu=gpu,
        tp=tp,
        served_model_name=served_model_name,
        engine=engine,
        vllm_image=vllm_image,
        name=name,
        policy=policy,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        prometheus=prometheus,
        ttft_p90=ttft_p90,
        itl_p99=itl_p99,
        pd=pd,
        discovery=discovery,
    )
    if output is not None and out is None:
        emit(all_objects(target, namespace, image, bind, serving), output)
        return
    if out is None or output is not None:
        raise InputError(
            "give either --out DIR or -o yaml|json",
            expected="--out DIR (a kustomization) or -o yaml|json (a v1 List on stdout)",
        )
    for path in render(target, namespace, image, out, bind, serving):
        print(path)
