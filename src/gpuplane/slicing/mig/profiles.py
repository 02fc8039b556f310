"""MIG GPU instance profiles and the MIG-capable GPU models, as frozen values.

A MIG-capable GPU is cut into 8 memory slices (each with its share of memory, bandwidth, L2 and
memory controllers) and 7 compute (SM) slices. A GPU instance (GI) profile ``<g>g.<N>gb`` owns g
compute slices and a contiguous run of memory slices; where it may start is fixed by the hardware
(``nvidia-smi mig -lgipp`` lists the starts). The values come from ``data/profiles.json`` (a copy
of the project's MIG fact sheet); ``verified`` says whether the placements of that GPU model were
seen in real ``-lgipp`` output or only assumed from the shared slice geometry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuplane.api.resources import MIG_RESOURCE_PREFIX, mig_resource
from gpuplane.core.errors import InputError

NUM_MEMORY_SLICES = 8
NUM_COMPUTE_SLICES = 7
MEDIA_EXTENSION_SUFFIX = "+me"

_NAME = re.compile(r"^(\d+)g\.(\d+)gb(\+me)?$")


@dataclass(frozen=True, slots=True)
class MigProfile:
    """One GPU instance profile of one GPU model (``1g.10gb``, ``3g.40gb``, ``1g.10gb+me``)."""

    name: str
    profile_id: int  # the ID `nvidia-smi mig -lgip` shows and `-cgi` accepts
    nvml_gi_profile: str
    compute_slices: int
    memory_slices: int
    starts: tuple[int, ...]  # first memory slice of every valid placement
    max_instances: int
    memory_gib: float | None  # GiB column of -lgip (lowest figure seen when drivers differ)
    sm_count: int | None
    copy_engines: int | None
    media: str | None  # "1 NVDEC/1 JPEG/0 OFA" as the user guide tables give it
    verified: bool  # placements seen in real -lgipp output for this GPU model

    @property
    def media_extensions(self) -> bool:
        """``+me``: the one 1g instance per GPU that gets the media engines (NVDEC/JPEG/OFA)."""
        return self.name.endswith(MEDIA_EXTENSION_SUFFIX)

    @property
    def nominal_memory_gb(self) -> int:
        """The ``<N>gb`` part of the name (a rounded figure, not the usable memory)."""
        match = _NAME.match(self.name)
        return int(match.group(2)) if match else 0

    @property
    def resource_suffix(self) -> str:
        """The name as Kubernetes resources carry it: ``+`` becomes ``.`` (``1g.10gb.me``)."""
        return self.name.replace("+", ".")

    @property
    def resource_name(self) -> str:
        """The device plugin's resource under the mixed strategy (``nvidia.com/mig-3g.40gb``)."""
        return mig_resource(self.resource_suffix)

    def mask(self, start: int) -> int:
        """Bit i set for every memory slice i an instance placed at ``start`` occupies."""
        return ((1 << self.memory_slices) - 1) << start

    def slices(self, start: int) -> range:
        return range(start, start + self.memory_slices)


@dataclass(frozen=True, slots=True)
class MigGpu:
    """A MIG-capable GPU model: its profiles (largest first) and where the facts come from."""

    key: str  # the key in profiles.json, e.g. "H100-96GB (GH200 96GB HBM3)"
    name: str  # the key without the parenthesised note, e.g. "H100-96GB"
    products: tuple[str, ...]
    pci_device_ids: tuple[int, ...]  # PCI device ids mig-parted filters on (0x2330 for H100 SXM)
    placements_verified: bool
    placements_note: str  # why placements are not verified (empty when they are)
    source: str
    profiles: tuple[MigProfile, ...]
    notes: tuple[str, ...]

    @property
    def profile_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def find_profile(self, name: str) -> MigProfile | None:
        """The profile called ``name``; also accepts the resource forms (``1g.10gb.me``,
        ``mig-1g.10gb``, ``nvidia.com/mig-1g.10gb``)."""
        text = name.strip()
        for prefix in (MIG_RESOURCE_PREFIX, "mig-"):
            text = text.removeprefix(prefix)
        for profile in self.profiles:
            if text in (profile.name, profile.resource_suffix):
                return profile
        return None

    def profile(self, name: str, *, what: str = "MIG profile") -> MigProfile:
        found = self.find_profile(name)
        if found is None:
            raise InputError(
                f"{what} {name!r} does not exist on {self.name}",
                expected=f"one of {', '.join(self.profile_names)}",
            )
        return found

    def profile_index(self, name: str) -> int:
        return self.profile_names.index(self.profile(name).name)


def parse_profile_name(name: str) -> tuple[int, int, bool] | None:
    """``(g, N, media_extensions)`` of a GI profile name ``<g>g.<N>gb[+me]``, else None."""
    match = _NAME.match(name)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), match.group(3) is not None
