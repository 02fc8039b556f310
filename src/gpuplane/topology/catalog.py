"""The GPU model catalog, loaded from ``data/gpus.yaml`` and validated with pydantic.

Lookup accepts the catalog key, an alias (``H100``, ``A100-40GB``), the product name NVML reports
(``NVIDIA H100 80GB HBM3``) or its GFD form (``NVIDIA-H100-80GB-HBM3``); case and the separators
space/``-``/``_`` do not matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError
from gpuplane.core.ids import GpuModelName
from gpuplane.core.units import pcie_gbps
from gpuplane.core.yamlio import validate_yaml

Family = Literal["volta", "turing", "ampere", "ada-lovelace", "hopper", "blackwell"]


class _NvlinkSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    generation: int = Field(ge=1, le=6)
    num_links: int = Field(ge=1, le=18)
    gbps_per_link_bidir: float = Field(gt=0)


class _PcieSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    gen: int = Field(ge=1, le=6)
    width: int = Field(ge=1, le=32)


class _BoardSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tdp_w: float = Field(gt=0)
    idle_w: float = Field(gt=0)
    max_sm_clock_mhz: int = Field(gt=0)
    idle_sm_clock_mhz: int = Field(gt=0)
    mem_clock_mhz: int = Field(gt=0)


class _ModelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    aliases: list[str] = []
    product_names: list[str] = Field(min_length=1)
    family: Family
    compute_capability: tuple[int, int]
    memory_mib: int = Field(gt=0)
    num_sms: int = Field(gt=0)
    hbm_gbps: float = Field(gt=0)
    bf16_dense_tflops: float | None = Field(default=None, gt=0)
    fp16_dense_tflops: float = Field(gt=0)
    nvlink: _NvlinkSpec | None = None
    c2c_gbps_bidir: float | None = None
    pcie: _PcieSpec
    form_factor: str
    board: _BoardSpec | None = None
    mig_profiles_key: str | None = None
    sources: list[str] = Field(min_length=1)
    unverified: list[str] = []


class _CatalogSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    models: dict[str, _ModelSpec]


@dataclass(frozen=True, slots=True)
class NvlinkSpec:
    generation: int
    num_links: int
    gbps_per_link_bidir: float

    @property
    def gbps_per_link(self) -> float:
        """Per-direction rate of one link (NVIDIA quotes bidirectional figures)."""
        return self.gbps_per_link_bidir / 2

    @property
    def total_gbps_bidir(self) -> float:
        return self.num_links * self.gbps_per_link_bidir


@dataclass(frozen=True, slots=True)
class BoardSpec:
    """Power and clocks of the board (what NVML reports): max board power (TDP) and a typical
    idle draw in watts, the max and idle SM clocks and the memory clock in MHz."""

    tdp_w: float
    idle_w: float
    max_sm_clock_mhz: int
    idle_sm_clock_mhz: int
    mem_clock_mhz: int


@dataclass(frozen=True, slots=True)
class GpuModel:
    name: GpuModelName
    aliases: tuple[str, ...]
    product_names: tuple[str, ...]
    family: str
    compute_capability: tuple[int, int]
    memory_mib: int
    num_sms: int
    hbm_gbps: float
    bf16_dense_tflops: float | None
    fp16_dense_tflops: float
    nvlink: NvlinkSpec | None
    c2c_gbps_bidir: float | None
    pcie_gen: int
    pcie_width: int
    form_factor: str
    mig_profiles_key: str | None
    sources: tuple[str, ...]
    unverified: tuple[str, ...]
    board: BoardSpec | None = None

    @property
    def mig_capable(self) -> bool:
        return self.mig_profiles_key is not None

    @property
    def pcie_gbps(self) -> float:
        """Per-direction bandwidth of the GPU's own PCIe link."""
        return pcie_gbps(self.pcie_gen, self.pcie_width)

    @property
    def nvlink_gbps_per_link(self) -> float:
        return self.nvlink.gbps_per_link if self.nvlink else 0.0

    @property
    def product_name(self) -> str:
        """The name NVML reports (first of ``product_names``)."""
        return self.product_names[0]


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def _to_model(key: str, spec: _ModelSpec) -> GpuModel:
    nv = spec.nvlink
    return GpuModel(
        name=GpuModelName(key),
        aliases=tuple(spec.aliases),
        product_names=tuple(spec.product_names),
        family=spec.family,
        compute_capability=spec.compute_capability,
        memory_mib=spec.memory_mib,
        num_sms=spec.num_sms,
        hbm_gbps=spec.hbm_gbps,
        bf16_dense_tflops=spec.bf16_dense_tflops,
        fp16_dense_tflops=spec.fp16_dense_tflops,
        nvlink=NvlinkSpec(nv.generation, nv.num_links, nv.gbps_per_link_bidir) if nv else None,
        c2c_gbps_bidir=spec.c2c_gbps_bidir,
        pcie_gen=spec.pcie.gen,
        pcie_width=spec.pcie.width,
        form_factor=spec.form_factor,
        mig_profiles_key=spec.mig_profiles_key,
        sources=tuple(spec.sources),
        unverified=tuple(spec.unverified),
        board=BoardSpec(**spec.board.model_dump()) if spec.board else None,
    )


class GpuCatalog:
    """All known GPU models and the name index used to find them."""

    def __init__(self, models: dict[str, GpuModel]) -> None:
        self.models = models
        self._index: dict[str, str] = {}
        for key, model in models.items():
            for name in (key, *model.aliases, *model.product_names):
                norm = _norm(name)
                other = self._index.get(norm)
                if other is not None and other != key:
                    raise ValueError(f"GPU name {name!r} is claimed by {other} and {key}")
                self._index[norm] = key

    @classmethod
    def from_yaml_text(cls, text: str, source: str) -> GpuCatalog:
        spec = validate_yaml(_CatalogSpec, text, source)
        return cls({key: _to_model(key, m) for key, m in spec.models.items()})

    def names(self) -> list[str]:
        return list(self.models)

    def find(self, name: str) -> GpuModel | None:
        key = self._index.get(_norm(name))
        return self.models[key] if key else None

    def get(self, name: str) -> GpuModel:
        model = self.find(name)
        if model is None:
            raise InputError(
                f"unknown GPU model {name!r}",
                expected=f"one of {', '.join(self.models)} (or an alias / NVML product name)",
            )
        return model


@lru_cache(maxsize=1)
def default_catalog() -> GpuCatalog:
    text = resources.files("gpuplane.topology").joinpath("data/gpus.yaml").read_text("utf-8")
    return GpuCatalog.from_yaml_text(text, source="gpuplane/topology/data/gpus.yaml")


def get_gpu_model(name: str) -> GpuModel:
    return default_catalog().get(name)
