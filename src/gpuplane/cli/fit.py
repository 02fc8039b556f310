"""``gpuplane fit WORKLOAD.yaml --snapshot FILE | --kubeconfig PATH``: will these pods fit the
cluster, where, on which GPUs, and if not, why and what would make them fit. docs/fit.md
describes the workflow and every field of the answer."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from gpuplane.cli.cluster_options import ContextOpt, KubeletConfigOpt, PoolsOpt, SnapshotOpt
from gpuplane.cli.console import print_json
from gpuplane.cli.fit_view import print_answer
from gpuplane.cli.html_out import write_html
from gpuplane.cli.numbers import finite
from gpuplane.core.errors import InputError
from gpuplane.fit.framework_view import framework_view
from gpuplane.fit.plugin_results import results_for
from gpuplane.fit.workload import FitSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.reading import snapshot_from_kubeconfig
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.k8s.cluster.snapshot_file import read_snapshot
from gpuplane.k8s.fit.output import annotated_list
from gpuplane.k8s.fit.run import Profile, profiles_for, run_fit
from gpuplane.k8s.fit.workload import read_workload
from gpuplane.report.html.fit_page import fit_page
from gpuplane.topology.collective import MAX_MESSAGE_MIB


class Output(StrEnum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


def _snapshot(
    snapshot: Path | None, kubeconfig: Path | None, context: str | None
) -> ClusterSnapshot:
    if (snapshot is None) == (kubeconfig is None):
        raise InputError(
            "give either --snapshot FILE or --kubeconfig PATH",
            expected="exactly one cluster to answer for",
        )
    if context is not None and kubeconfig is None:
        raise InputError("--context needs --kubeconfig")
    if snapshot is not None:
        return read_snapshot(snapshot)
    assert kubeconfig is not None
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # recorded, never decides
    return snapshot_from_kubeconfig(kubeconfig, context, read_at=now)


def fit_command(
    workload: Annotated[
        Path,
        typer.Argument(
            metavar="WORKLOAD.yaml", help="Pods, Deployments, StatefulSets, Jobs, PodGroups."
        ),
    ],
    snapshot: SnapshotOpt = None,
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="Read this cluster live.")
    ] = None,
    context: ContextOpt = None,
    pools: PoolsOpt = None,
    kubelet_config: KubeletConfigOpt = None,
    scheduler_config: Annotated[
        Path | None,
        typer.Option("--scheduler-config", help="A KubeSchedulerConfiguration (its profiles)."),
    ] = None,
    profile: Annotated[
        Profile,
        typer.Option(
            "--profile", help="Without --scheduler-config: kube's default profile, or gpuplane's."
        ),
    ] = Profile.DEFAULT,
    output: Annotated[
        Output,
        typer.Option("-o", "--output", help="table, json, or yaml (the input objects annotated)"),
    ] = Output.TABLE,
    json_out: Annotated[bool, typer.Option("--json", help="Same as -o json.")] = False,
    message_mib: Annotated[
        float,
        typer.Option(
            "--message-mib",
            help="All-reduce size per GPU for the ring times.",
            callback=finite(minimum=0.0, maximum=MAX_MESSAGE_MIB),
        ),
    ] = 256.0,
    capacity_limit: Annotated[
        int,
        typer.Option(
            "--capacity-limit", min=0, max=100_000, help="Most extra replicas tried per template."
        ),
    ] = 256,
    no_remedies: Annotated[
        bool, typer.Option("--no-remedies", help="Skip defragmentation and MIG searches.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", metavar="FILE", help="Also write the answer as a self-contained HTML page."
        ),
    ] = None,
) -> None:
    """Will the workload fit, where and on which GPUs; if not, why, and what would make it fit."""
    cluster = fit_cluster(
        _snapshot(snapshot, kubeconfig, context), node_defaults(pools, kubelet_config)
    )
    read = read_workload(workload)
    documents = read.documents
    settings = FitSettings(
        message_bytes=int(message_mib * 2**20),
        capacity_limit=capacity_limit,
        remedies=not no_remedies,
    )
    done = run_fit(cluster, read, profiles_for(scheduler_config, profile), settings)
    answer, scheduler, fw = done.answer, done.scheduler, done.workload
    if html is not None:
        write_html(html, fit_page(answer, cluster, f"gpuplane fit {workload.name}"))
    chosen = Output.JSON if json_out else output
    if chosen is Output.JSON:
        print_json(answer.as_dict())
    elif chosen is Output.YAML:
        pods = {
            f"{d.parsed.obj.namespace}/{d.parsed.obj.name}"
            for d in documents
            if d.parsed.kind == "Pod"
        }
        snap = framework_view(cluster).snapshot
        found = results_for(scheduler, snap, fw, answer, pods) if pods else {}
        print(annotated_list(documents, fw, answer, found), end="")
    else:
        print_answer(answer)
