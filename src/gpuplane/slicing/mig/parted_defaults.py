"""NVIDIA's named mig-parted configs for one GPU model, as ``config-default.yaml`` defines them.

NVIDIA/mig-parted ``deployments/systemd/config-default.yaml`` (the file the GPU Operator's
mig-manager uses unless told otherwise) has, for every supported GPU:

- ``all-disabled``: MIG off on every GPU;
- ``all-enabled``: MIG on, no instances;
- ``all-<profile>``: as many instances of one profile as fit (``+me`` written ``.me`` in the
  name, a single instance);
- ``all-balanced``: 2 x 1g + 1 x 2g + 1 x 3g, which fills all 7 compute and 8 memory slices.

Where one name means different counts on different GPUs (``all-1g.10gb`` is 7 on 80GB parts and 4
on A100-40GB, whose 1g.10gb is the double-memory 1g) NVIDIA's file separates them with
``device-filter``; a file made here for one model needs no filter. The upstream file leaves a
few of these names out for some models (for example no ``all-1g.24gb`` for the 96GB H100); here
every profile gets one.
"""

from __future__ import annotations

from gpuplane.slicing.mig.parted_config import ALL_DEVICES, PartedConfig, PartedEntry
from gpuplane.slicing.mig.profiles import MigGpu


def balanced_counts(gpu: MigGpu) -> dict[str, int]:
    """``all-balanced``: two plain 1g (one memory slice), one 2g, one 3g."""
    counts: dict[str, int] = {}
    for p in sorted(gpu.profiles, key=lambda p: p.compute_slices):
        if p.compute_slices == 1 and p.memory_slices == 1 and not p.media_extensions:
            counts[p.name] = 2
        elif p.compute_slices in (2, 3):
            counts[p.name] = 1
    return counts


def default_configs(gpu: MigGpu) -> PartedConfig:
    """The named configs for ``gpu`` (see the module docstring), in NVIDIA's order."""
    configs: list[tuple[str, tuple[PartedEntry, ...]]] = [
        ("all-disabled", (PartedEntry(ALL_DEVICES, False, (), None, False),)),
        ("all-enabled", (PartedEntry(ALL_DEVICES, True, ()),)),
    ]
    for p in sorted(
        gpu.profiles, key=lambda p: (p.compute_slices, p.memory_slices, p.media_extensions)
    ):
        count = 1 if p.media_extensions else p.max_instances
        configs.append(
            (f"all-{p.resource_suffix}", (PartedEntry(ALL_DEVICES, True, ((p.name, count),)),))
        )
    balanced = tuple(balanced_counts(gpu).items())
    configs.append(("all-balanced", (PartedEntry(ALL_DEVICES, True, balanced),)))
    return PartedConfig(tuple(configs), source=f"<mig-parted defaults for {gpu.name}>")
