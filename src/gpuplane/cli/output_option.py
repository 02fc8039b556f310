"""``-o yaml|json``: print Kubernetes objects for ``kubectl apply -f -`` (see k8s.output)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from gpuplane.k8s.output import OutputFormat, render

OutputOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "-o",
        "--output",
        help="Print the Kubernetes object(s) as yaml or json, as `kubectl get -o` does (several "
        "as a v1 List), ready for `kubectl apply -f -`.",
        case_sensitive=False,
    ),
]


def emit(objects: Sequence[dict[str, Any]], fmt: OutputFormat) -> None:
    """The objects on stdout, plain (no colour or markup)."""
    sys.stdout.write(render(objects, fmt))
