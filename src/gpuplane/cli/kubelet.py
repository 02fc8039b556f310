"""``gpuplane kubelet``: the kubelet's node-level decisions as check commands."""

from __future__ import annotations

import typer

from gpuplane.cases.merge_hints import run_json
from gpuplane.cli.console import print_json
from gpuplane.core.textio import read_stdin

kubelet_app = typer.Typer(
    help="kubelet node-level decisions (Topology Manager).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@kubelet_app.command("merge-hints")
def merge_hints_command() -> None:
    """Read one Topology Manager case (JSON: policy, policy_options, numa_nodes, numa_distances,
    providers_hints) on stdin; print {"affinity", "preferred", "admit"} as the kubelet decides."""
    print_json(run_json(read_stdin()))
