"""``gpuplane deploy render extender|mig-controller --out DIR [--bind]``: kustomize-able
manifests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuplane.k8s.deploy.render import render

deploy_app = typer.Typer(help="Manifests for gpuplane's live services.", no_args_is_help=True)

DEFAULT_IMAGE = "ghcr.io/gpuplane/gpuplane:latest"


@deploy_app.command("render")
def render_command(
    target: Annotated[str, typer.Argument(help="extender or mig-controller")],
    out: Annotated[Path, typer.Option("--out", help="The directory to write.")],
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
) -> None:
    """Write a kustomization directory (apply with kubectl apply -k DIR)."""
    for path in render(target, namespace, image, out, bind):
        print(path)
