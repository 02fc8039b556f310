"""The links a tensor-parallel group's all-reduces run over.

Tensor parallelism all-reduces every layer's output twice, so its cost is set by the slowest hop
of the ring NCCL builds over the pod's GPUs: NVLink/NVSwitch on SXM boards, PCIe (through a switch,
a host bridge or across sockets) on PCIe cards, NVLink bridges between pairs of PCIe cards. An
:class:`Interconnect` is built from the node topology and the GPU indices the pod actually got,
so a pod spread across sockets is priced differently from one on a single NVSwitch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gpuplane.core.errors import InputError
from gpuplane.topology.catalog import GpuModel, get_gpu_model
from gpuplane.topology.collective import best_ring, ring_hops
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset, preset_names
from gpuplane.topology.resolve import resolve_topology

LinkKind = Literal["nvlink", "pcie", "none"]

# The built-in node each GPU model is assumed to sit in when no topology is given.
DEFAULT_PRESETS = {
    "A100-SXM4-80GB": "dgx-a100",
    "A100-SXM4-40GB": "dgx-a100",
    "H100-80GB-SXM": "dgx-h100",
    "H200-141GB": "hgx-h200",
    "B200": "hgx-b200",
    "L40S": "l40s-8gpu-pcie",
    "A10": "a10-4gpu-pcie",
    "V100-SXM2-16GB": "dgx1-v100",
    "V100-SXM2-32GB": "dgx1-v100",
    "GH200-96GB": "gh200-4node",
}


@dataclass(frozen=True, slots=True)
class Interconnect:
    """A TP group's ring: its size, slowest hop (GB/s per direction) and that hop's kind."""

    num_gpus: int
    bottleneck_gbps: float
    link_kind: LinkKind
    description: str
    ring: tuple[int, ...] = ()

    @classmethod
    def single_gpu(cls) -> Interconnect:
        return cls(1, 0.0, "none", "one GPU: no all-reduce")

    @classmethod
    def from_topology(cls, topo: NodeTopology, gpus: Sequence[int]) -> Interconnect:
        """The widest ring over ``gpus`` of ``topo`` (what NCCL would pick)."""
        try:
            ring = best_ring(topo, gpus)
        except ValueError as err:
            raise InputError(str(err), expected=f"GPU indices 0..{topo.num_gpus - 1}") from None
        if ring.size < 2:
            return cls.single_gpu()
        hops = ring_hops(ring.order)
        slowest = min(hops, key=lambda hop: topo.bandwidth_gbps[hop[0]][hop[1]])
        link = topo.links[slowest[0]][slowest[1]]
        kind: LinkKind = "nvlink" if link.is_nvlink else "pcie"
        order = "-".join(map(str, ring.order))
        return cls(
            ring.size,
            ring.bottleneck_gbps,
            kind,
            f"{topo.name} GPUs {order}: slowest hop {link} at {ring.bottleneck_gbps:g} GB/s",
            ring.order,
        )

    @classmethod
    def default_for(cls, gpu_model: str, tp: int) -> Interconnect:
        """GPUs 0..tp-1 of the built-in node for this GPU model (the model's usual board)."""
        if tp == 1:
            return cls.single_gpu()
        preset = DEFAULT_PRESETS.get(gpu_model)
        if preset is None:
            raise InputError(
                f"no built-in node for {gpu_model} to take the TP={tp} links from",
                expected="--topology PRESET_OR_FILE and --gpus",
            )
        topo = load_preset(preset)
        if tp > topo.num_gpus:
            raise InputError(
                f"TP={tp} needs more GPUs than {preset} has ({topo.num_gpus})",
                expected=f"--tp <= {topo.num_gpus}",
            )
        return cls.from_topology(topo, list(range(tp)))


def pod_interconnect(
    topology: str | None, gpus: Sequence[int] | None, gpu: GpuModel, tp: int
) -> Interconnect:
    """The links of a pod's TP group: ``gpus`` of the node ``topology`` (a preset, a hardware
    YAML or saved ``nvidia-smi topo -m`` output; default GPUs 0..tp-1), or without a topology the
    GPU model's usual node. The node's GPUs must be the model the engine is priced on."""
    if topology is None:
        return Interconnect.default_for(gpu.name, tp)
    if topology in preset_names():
        topo = load_preset(topology)
    else:
        text_file = not topology.lower().endswith((".yaml", ".yml"))
        topo = resolve_topology(topology, gpu_model=gpu.name if text_file else None)
    indices = list(gpus) if gpus is not None else list(range(tp))
    if len(indices) != tp:
        raise InputError(f"--gpus names {len(indices)} GPUs for --tp {tp}", expected=f"{tp} GPUs")
    for index in indices:
        if not 0 <= index < topo.num_gpus:
            raise InputError(
                f"GPU {index} is not on {topo.name}", expected=f"indices 0..{topo.num_gpus - 1}"
            )
        there = topo.gpus[index].model
        if get_gpu_model(there).name != gpu.name:
            raise InputError(
                f"GPU {index} of {topo.name} is model {there}, not {gpu.name}",
                expected=f"--gpu {there} or another topology",
            )
    return Interconnect.from_topology(topo, indices)
