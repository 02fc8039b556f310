"""``gpuplane deploy render extender|mig-controller --out DIR``: kustomize-able manifests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.errors import InputError
from gpuplane.k8s.deploy.render import all_objects, render

deploy_app = typer.Typer(help="Manifests for gpuplane's live services.", no_args_is_help=True)

DEFAULT_IMAGE = "ghcr.io/gpuplane/gpuplane:latest"


@deploy_app.command("render")
def render_command(
    target: Annotated[str, typer.Argument(help="extender or mig-controller")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The directory to write (or -o to print the objects)."),
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", help="Where it runs.")] = "gpuplane",
    image: Annotated[str, typer.Option("--image", help="gpuplane's container image.")] = (
        DEFAULT_IMAGE
    ),
    output: OutputOpt = None,
) -> None:
    """Write a kustomization directory (apply with kubectl apply -k DIR); with -o yaml|json
    print every object instead, as one v1 List (kubectl apply -f -)."""
    if output is not None and out is None:
        emit(all_objects(target, namespace, image), output)
        return
    if out is None or output is not None:
        raise InputError(
            "give either --out DIR or -o yaml|json",
            expected="--out DIR (a kustomization) or -o yaml|json (a v1 List on stdout)",
        )
    for path in render(target, namespace, image, out):
        print(path)
