"""Moving a request's KV cache from a prefill engine to a decode engine (P/D disaggregation).

After prefill, the decode engine must receive the K and V of every prompt token for every layer:
``tokens x 2 x layers x kv_heads x head_dim x kv_dtype_bytes`` bytes for the whole model. Each
tensor-parallel rank of the prefill engine holds its share of the heads and sends it over its own
path (NVLink within a node, a NIC between nodes: NIXL/UCX or NCCL send/recv), so the shares move
in parallel; a rank holding a replicated head (fewer KV heads than ranks) sends one copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.errors import InputError
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.steptime.interconnect import Interconnect


@dataclass(frozen=True, slots=True)
class KvLink:
    """The path one rank's KV shard takes: bandwidth per direction (GB/s), efficiency, latency."""

    gbps: float
    efficiency: float = 0.8
    latency_s: float = 20e-6
    parallel_paths: int = 1
    description: str = ""

    @classmethod
    def nic(cls, gbit_per_s: float, *, parallel_paths: int = 1) -> KvLink:
        """An RDMA NIC of ``gbit_per_s`` (400 for NDR InfiniBand), one per sending rank."""
        return cls(
            gbit_per_s / 8, parallel_paths=parallel_paths, description=f"{gbit_per_s:g} Gb/s NIC"
        )

    @classmethod
    def from_interconnect(cls, link: Interconnect) -> KvLink:
        """Within one node: the slowest hop of the GPUs involved."""
        if link.num_gpus < 2:
            raise InputError("a KV transfer needs two GPUs", expected="an interconnect of 2+ GPUs")
        return cls(link.bottleneck_gbps, description=link.description)


def kv_transfer_bytes(tokens: int, model: ModelShape, kv_dtype_bytes: float | None = None) -> int:
    """K and V of ``tokens`` tokens over every layer and KV head of the model."""
    return tokens * model.kv_bytes_per_token(1, kv_dtype_bytes)


def kv_transfer_s(
    tokens: int, model: ModelShape, link: KvLink, *, kv_dtype_bytes: float | None = None
) -> float:
    """Seconds to move a ``tokens``-token prompt's KV cache over ``link``."""
    if tokens < 0:
        raise InputError(f"{tokens} tokens", expected="a token count >= 0")
    moved = kv_transfer_bytes(tokens, model, kv_dtype_bytes)
    if moved == 0:
        return 0.0
    rate = link.gbps * 1e9 * link.efficiency * max(link.parallel_paths, 1)
    return link.latency_s + moved / rate
