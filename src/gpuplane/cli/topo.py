"""``gpuplane topo``: hardware presets, pictures, GFD labels, NodeResourceTopology, discovery."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from gpuplane.api.validation import dns1123_subdomain_errors, invalid
from gpuplane.cli.console import out, print_json
from gpuplane.cli.numbers import finite
from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.manifests.node import node_labels_patch
from gpuplane.k8s.manifests.nrt import nrt_manifest, nrt_manifest_yaml
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.gpuallocator import best_effort
from gpuplane.report.topology_view import render_topology
from gpuplane.topology.collective import MAX_MESSAGE_MIB, best_ring, ring_allreduce_cost
from gpuplane.topology.gfd import format_gfd_labels, gfd_labels
from gpuplane.topology.nrt import node_resource_topology
from gpuplane.topology.nvml_discovery import discover_node
from gpuplane.topology.presets import load_preset, preset_names
from gpuplane.topology.resolve import resolve_topology
from gpuplane.topology.serialize import topology_to_dict

topo_app = typer.Typer(
    help="Node hardware: presets, topology pictures, GFD labels, NodeResourceTopology.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

RefArg = Annotated[
    str,
    typer.Argument(
        metavar="PRESET_OR_FILE",
        help="A preset name (see `gpuplane topo presets`), a hardware YAML file, "
        "or saved `nvidia-smi topo -m` output.",
    ),
]
GpuModelOpt = Annotated[
    str | None,
    typer.Option("--gpu-model", help="GPU model of a `topo -m` file (it does not name the model)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a picture.")]


@topo_app.command("presets")
def presets_command(json_out: JsonOpt = False) -> None:
    """List the built-in node hardware presets."""
    rows: list[dict[str, Any]] = []
    for name in preset_names():
        topo = load_preset(name)
        rows.append(
            {
                "name": name,
                "machine": topo.machine,
                "gpus": topo.num_gpus,
                "gpu_models": list(topo.gpu_models),
                "nvswitch": topo.nvswitch,
                "nics": len(topo.nics),
                "cpu_numa_nodes": len(topo.cpu_numa_nodes()),
                "description": topo.description,
            }
        )
    if json_out:
        print_json(rows)
        return
    table = Table(title="Hardware presets")
    for col in ("name", "GPUs", "model", "NVLink", "NICs", "NUMA", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["name"],
            str(r["gpus"]),
            ", ".join(r["gpu_models"]),
            "NVSwitch" if r["nvswitch"] else "mesh/none",
            str(r["nics"]),
            str(r["cpu_numa_nodes"]),
            str(r["description"]),
        )
    out.print(table)


@topo_app.command("show")
def show_command(ref: RefArg, gpu_model: GpuModelOpt = None, json_out: JsonOpt = False) -> None:
    """Show a node's sockets, PCIe switches, GPUs, NICs and links."""
    topo = resolve_topology(ref, gpu_model=gpu_model)
    if json_out:
        print_json(topology_to_dict(topo))
    else:
        out.print(render_topology(topo))


@topo_app.command("labels")
def labels_command(
    ref: RefArg,
    gpu_model: GpuModelOpt = None,
    json_out: JsonOpt = False,
    output: OutputOpt = None,
    node_name: Annotated[
        str | None, typer.Option(help="metadata.name with -o (default: the topology name).")
    ] = None,
) -> None:
    """Print the labels NVIDIA GPU Feature Discovery would put on this node; -o yaml|json
    prints them as a Node object carrying only the labels, for `kubectl patch node NAME
    --type merge --patch-file FILE`."""
    topo = resolve_topology(ref, gpu_model=gpu_model)
    labels = gfd_labels(topo, machine=topo.machine)
    if output is not None:
        emit([node_labels_patch(node_name or topo.name, labels)], output)
    elif json_out:
        print_json(labels)
    else:
        print(format_gfd_labels(labels), end="")


@topo_app.command("nrt")
def nrt_command(
    ref: RefArg,
    gpu_model: GpuModelOpt = None,
    node_name: Annotated[
        str | None, typer.Option(help="metadata.name (default: the topology name).")
    ] = None,
    policy: Annotated[
        str, typer.Option(help="kubelet --topology-manager-policy.")
    ] = "single-numa-node",
    scope: Annotated[str, typer.Option(help="kubelet --topology-manager-scope.")] = "container",
    output: OutputOpt = None,
) -> None:
    """Print the NodeResourceTopology (topology.node.k8s.io/v1alpha2) object as YAML (-o json:
    as JSON)."""
    for problem in dns1123_subdomain_errors(node_name) if node_name is not None else ():
        # metadata.name of a NodeResourceTopology is its node's name: a DNS subdomain.
        raise InputError(invalid(node_name, problem), location=Location(field="--node-name"))
    topo = resolve_topology(ref, gpu_model=gpu_model)
    nrt = node_resource_topology(topo, node_name=node_name or topo.name, policy=policy, scope=scope)
    if output is None:
        print(nrt_manifest_yaml(nrt), end="")
    else:
        emit([nrt_manifest(nrt)], output)


def _parse_gpu_list(text: str, num_gpus: int, flag: str = "--gpus") -> list[int]:
    try:
        gpus = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(
            f"{flag} {text!r} is not a list of GPU indices",
            expected="comma-separated integers like 0,1,2,3",
        ) from None
    bad = [g for g in gpus if not 0 <= g < num_gpus]
    if bad or len(set(gpus)) != len(gpus) or not gpus:
        raise InputError(
            f"{flag} {text!r} names a GPU twice, none, or one the node lacks",
            expected=f"distinct indices in 0..{num_gpus - 1}",
        )
    return gpus


@topo_app.command("ring")
def ring_command(
    ref: RefArg,
    gpus: Annotated[str, typer.Option(help="GPU indices, e.g. 0,1,2,3.")],
    message_mib: Annotated[
        float,
        typer.Option(
            help="All-reduce size per GPU in MiB.",
            callback=finite(minimum=0.0, maximum=MAX_MESSAGE_MIB),
        ),
    ] = 64.0,
    gpu_model: GpuModelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The best ring over a GPU set and the time of a ring all-reduce on it."""
    topo = resolve_topology(ref, gpu_model=gpu_model)
    ring = best_ring(topo, _parse_gpu_list(gpus, topo.num_gpus))
    cost = ring_allreduce_cost(ring, int(message_mib * 1024 * 1024))
    single = ring.size < 2
    data = {
        "order": list(ring.order),
        # One GPU has no ring and no all-reduce traffic: no bottleneck (null, not Infinity).
        "bottleneck_gbps": None if single else ring.bottleneck_gbps,
        "total_gbps": ring.total_gbps,
        "exact": ring.exact,
        "message_bytes": cost.message_bytes,
        "time_s": cost.time_s,
        "algbw_gbps": cost.algbw_gbps,
        "busbw_gbps": cost.busbw_gbps,
    }
    if json_out:
        print_json(data)
        return
    if single:
        out.print(f"GPU {ring.order[0]} alone: no ring, an all-reduce moves no data")
        return
    out.print(
        f"ring {' -> '.join(map(str, ring.order))}: bottleneck {ring.bottleneck_gbps:g} GB/s "
        f"per direction ({'exact' if ring.exact else 'heuristic'})"
    )
    out.print(
        f"all-reduce of {message_mib:g} MiB per GPU: {cost.time_s * 1e3:.3f} ms, "
        f"algbw {cost.algbw_gbps:.1f} GB/s, busbw {cost.busbw_gbps:.1f} GB/s"
    )


@topo_app.command("pick")
def pick_command(
    ref: RefArg,
    available: Annotated[str, typer.Option(help="Free GPU indices, e.g. 0,1,2,3.")],
    size: Annotated[int, typer.Option(min=1, help="How many GPUs the pod needs.")],
    required: Annotated[str, typer.Option(help="GPUs that must be in the set.")] = "",
    numa_aligned: Annotated[bool, typer.Option(help="Only sets inside one NUMA node.")] = False,
    policy: Annotated[
        str, typer.Option(help="gpuplane, or gpuallocator (NVIDIA's best-effort).")
    ] = "gpuplane",
    gpu_model: GpuModelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Choose the GPUs for a pod on one node (widest ring, nearest paths, no stranding)."""
    topo = resolve_topology(ref, gpu_model=gpu_model)
    free = _parse_gpu_list(available, topo.num_gpus, "--available")
    req = _parse_gpu_list(required, topo.num_gpus, "--required") if required.strip() else []
    if policy == "gpuplane":
        pick = pick_gpus(topo, free, size, required=req, numa_aligned=numa_aligned)
        gpus = list(pick.gpus) if pick else []
        exact = pick.exact if pick else True
    elif policy == "gpuallocator":
        gpus, exact = best_effort(topo, free, req, size), True
    else:
        raise InputError(f"--policy {policy!r}", expected="gpuplane or gpuallocator")
    ring = best_ring(topo, gpus) if gpus else None
    data = {
        "policy": policy,
        "gpus": gpus,
        "bottleneck_gbps": ring.bottleneck_gbps if ring and len(gpus) > 1 else None,
        "total_gbps": ring.total_gbps if ring else None,
        "numa_nodes": sorted({int(n) for g in gpus if (n := topo.gpus[g].numa) is not None}),
        "exact": exact,
    }
    if json_out:
        print_json(data)
    elif not gpus:
        out.print(f"no set of {size} GPUs fits ({policy})")
    else:
        bw = data["bottleneck_gbps"]
        out.print(
            f"GPUs {gpus} on NUMA {data['numa_nodes']}"
            + (f", ring bottleneck {bw:g} GB/s per direction" if bw else "")
        )


@topo_app.command("discover")
def discover_command(json_out: JsonOpt = False) -> None:
    """Read this machine's GPUs through NVML (needs an NVIDIA driver)."""
    topo, _driver = discover_node()
    if json_out:
        print_json(topology_to_dict(topo))
    else:
        out.print(render_topology(topo))
