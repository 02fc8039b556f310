"""Total GPU memory as CUDA reports it, from logged figures or the GPU catalog."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.units import GIB, MIB
from gpuplane.core.yamlio import validate_yaml
from gpuplane.topology.catalog import GpuModel


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    total_gib: float = Field(gt=0)
    source: str


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    gpus: dict[str, _Entry]


@lru_cache(maxsize=1)
def _table() -> dict[str, _Entry]:
    text = (
        resources.files("gpuplane.serving")
        .joinpath("data/cuda_total_memory.yaml")
        .read_text("utf-8")
    )
    return validate_yaml(_Spec, text, "gpuplane/serving/data/cuda_total_memory.yaml").gpus


def cuda_total_bytes(gpu: GpuModel) -> tuple[int, str]:
    """(total bytes, where the figure comes from) for one GPU model."""
    entry = _table().get(gpu.name)
    if entry is not None:
        return int(entry.total_gib * GIB), entry.source
    return gpu.memory_mib * MIB, "GPU catalog memory_mib (NVML total; CUDA reports a little less)"
