"""The options every command that reads a cluster takes, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SnapshotOpt = Annotated[Path | None, typer.Option("--snapshot", help="A snapshot file.")]
ContextOpt = Annotated[str | None, typer.Option("--context", help="The kubeconfig context.")]
PoolsOpt = Annotated[
    Path | None, typer.Option("--pools", help="Hardware and kubelet config per node pool.")
]
KubeletConfigOpt = Annotated[
    Path | None,
    typer.Option("--kubelet-config", help="A KubeletConfiguration for nodes no pool configures."),
]
