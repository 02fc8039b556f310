"""Loading the packaged MIG fact sheet (``slicing/data/profiles.json``) and finding a GPU model.

A GPU model is found by its key in the file (``A100-40GB``, ``H200-141GB``, ``B200``), the key
without its note (``H100-96GB`` for ``H100-96GB (GH200 96GB HBM3)``), a product the file lists
(``A100-SXM4-40GB``), the name NVML reports (``NVIDIA H100 80GB HBM3``, ``NVIDIA A100-SXM4-80GB``,
``NVIDIA H200``, ``NVIDIA B200``, ``NVIDIA GH200 480GB``) or any alias the topology catalog knows
for a model with a ``mig_profiles_key``. Case, spaces, ``-`` and ``_`` and a leading ``NVIDIA``
do not matter.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import validate_yaml
from gpuplane.slicing.mig.profiles import (
    NUM_COMPUTE_SLICES,
    NUM_MEMORY_SLICES,
    MigGpu,
    MigProfile,
    parse_profile_name,
)
from gpuplane.topology.catalog import default_catalog

DATA_SOURCE = "gpuplane/slicing/data/profiles.json"

# Names NVML reports for boards the file and the topology catalog do not spell out. Each maps to
# the profile table of the same silicon and memory size (the user guide names the profiles the
# same way on these boards).
_EXTRA_NVML_NAMES = {
    "NVIDIA A100 80GB PCIe": "A100-80GB",
    "NVIDIA A100-PCIE-40GB": "A100-40GB",
    "NVIDIA A800-SXM4-80GB": "A100-80GB",
    "NVIDIA A800-SXM4-40GB": "A100-40GB",
    "NVIDIA H100 PCIe": "H100-80GB",
    "NVIDIA H800": "H100-80GB",
    "NVIDIA H800 PCIe": "H100-80GB",
    "NVIDIA H200 NVL": "H200-141GB",
    "NVIDIA H20": "H100-96GB (GH200 96GB HBM3)",
}


class _Placements(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    starts: list[int] = Field(min_length=1)
    size: int = Field(ge=1, le=NUM_MEMORY_SLICES)


class _ProfileSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    profile_id: int = Field(ge=0)
    nvml_gi_profile: str
    compute_slices: int = Field(ge=1, le=NUM_COMPUTE_SLICES)
    memory_slices: int = Field(ge=1, le=NUM_MEMORY_SLICES)
    memory_fraction: str
    sm_fraction: str
    max_instances: int = Field(ge=1, le=NUM_COMPUTE_SLICES)
    placements: _Placements
    sm_count: int | None = None
    memory_gib_lgip: float | str | None = None
    copy_engines: int | None = None
    media: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> _ProfileSpec:
        parsed = parse_profile_name(self.name)
        if parsed is None or parsed[0] != self.compute_slices:
            raise ValueError(f"profile name {self.name!r} does not match its compute slices")
        if self.placements.size != self.memory_slices:
            raise ValueError(f"{self.name}: placement size differs from memory_slices")
        if any(
            not 0 <= s <= NUM_MEMORY_SLICES - self.memory_slices for s in self.placements.starts
        ):
            raise ValueError(f"{self.name}: a placement runs past memory slice 7")
        return self


class _GpuSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    products: list[str]
    pci_device_ids_mig_parted: list[str]
    source: str
    placements_verified: bool | str
    profiles: list[_ProfileSpec] = Field(min_length=1)
    notes: list[str] = []


class _FileSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: dict[str, Any] = Field(alias="schema")
    rules: list[str]
    observed_auto_placements_A100_40GB: list[dict[str, Any]]
    gpus: dict[str, _GpuSpec]
    mig_parted: dict[str, Any]
    k8s_device_plugin: dict[str, Any]


def _norm(name: str) -> str:
    text = re.sub(r"[\s_\-]+", "", name).lower()
    return text.removeprefix("nvidia")


def _memory_gib(value: float | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):  # "78.75-79.00": the figure differs by driver; keep the lowest
        return min(float(part) for part in value.split("-"))
    return float(value)


def _pci_id(text: str) -> int:
    match = re.match(r"0x([0-9A-Fa-f]{4})", text.strip())
    if match is None:
        raise ValueError(f"PCI device id {text!r} is not 0xDDDD")
    return int(match.group(1), 16)


def _to_gpu(key: str, spec: _GpuSpec) -> MigGpu:
    verified = spec.placements_verified is True
    profiles = tuple(
        MigProfile(
            name=p.name,
            profile_id=p.profile_id,
            nvml_gi_profile=p.nvml_gi_profile,
            compute_slices=p.compute_slices,
            memory_slices=p.memory_slices,
            starts=tuple(sorted(p.placements.starts)),
            max_instances=p.max_instances,
            memory_gib=_memory_gib(p.memory_gib_lgip),
            sm_count=p.sm_count,
            copy_engines=p.copy_engines,
            media=p.media,
            verified=verified,
        )
        for p in spec.profiles
    )
    # Largest first (7g, 4g, 3g, 2g, 1g double memory, 1g, 1g+me): the order layouts are built in.
    profiles = tuple(
        sorted(
            profiles,
            key=lambda p: (-p.compute_slices, -p.memory_slices, p.media_extensions, p.name),
        )
    )
    note = "" if verified else str(spec.placements_verified or "not verified")
    return MigGpu(
        key=key,
        name=key.split(" (")[0],
        products=tuple(spec.products),
        pci_device_ids=tuple(_pci_id(t) for t in spec.pci_device_ids_mig_parted),
        placements_verified=verified,
        placements_note=note,
        source=spec.source,
        profiles=profiles,
        notes=tuple(spec.notes),
    )


class MigCatalog:
    """Every MIG-capable GPU model of the fact sheet and the name index used to find them."""

    def __init__(self, gpus: dict[str, MigGpu], rules: tuple[str, ...]) -> None:
        self.gpus = gpus
        self.rules = rules
        self._index: dict[str, str] = {}
        for key, gpu in gpus.items():
            self._add(key, key)
            for name in (key, gpu.name, *gpu.products):
                if not name.startswith("("):
                    self._add(re.sub(r"\s*\(.*\)\s*$", "", name), key)
        for model in default_catalog().models.values():
            if model.mig_profiles_key in gpus:
                for name in (model.name, *model.aliases, *model.product_names):
                    self._add(name, model.mig_profiles_key)
        for name, key in _EXTRA_NVML_NAMES.items():
            self._add(name, key)

    def _add(self, name: str, key: str) -> None:
        norm = _norm(name)
        other = self._index.setdefault(norm, key)
        if other != key:
            raise ValueError(f"GPU name {name!r} is claimed by {other} and {key}")

    @classmethod
    def from_json_text(cls, text: str, source: str) -> MigCatalog:
        spec = validate_yaml(_FileSpec, text, source, what="the MIG profile fact sheet")
        gpus = {key: _to_gpu(key, g) for key, g in spec.gpus.items()}
        return cls(gpus, tuple(spec.rules))

    def names(self) -> list[str]:
        return [gpu.name for gpu in self.gpus.values()]

    def find(self, name: str) -> MigGpu | None:
        key = self._index.get(_norm(name))
        return self.gpus[key] if key is not None else None

    def get(self, name: str) -> MigGpu:
        found = self.find(name)
        if found is not None:
            return found
        model = default_catalog().find(name)
        if model is not None:
            raise InputError(
                f"GPU model {name!r} ({model.name}) does not support MIG",
                expected=f"a MIG-capable model: {', '.join(self.names())}",
            )
        raise InputError(
            f"unknown MIG GPU model {name!r}",
            expected=f"one of {', '.join(self.names())} "
            "(or the product name NVML reports, e.g. 'NVIDIA H100 80GB HBM3')",
        )


@lru_cache(maxsize=1)
def default_mig_catalog() -> MigCatalog:
    text = resources.files("gpuplane.slicing").joinpath("data/profiles.json").read_text("utf-8")
    return MigCatalog.from_json_text(text, DATA_SOURCE)


def get_mig_gpu(name: str) -> MigGpu:
    """The MIG GPU model called ``name`` (see the module docstring); InputError if unknown."""
    return default_mig_catalog().get(name)
