"""NVIDIA Multi-Instance GPU: profiles, layouts, the device plugin's view, mig-parted, planner.

Assumptions: every GPU is MIG-enabled and is modelled at the GPU-instance level (a compute
instance as wide as its GPU instance, which is what the device plugin advertises); facts come
from the packaged copy of the project's MIG fact sheet (``slicing/data/profiles.json``), whose
``verified`` flags travel into every output. Modules:

- ``profiles``, ``catalog``: profiles and GPU models; lookup by key or NVML product name.
- ``layout``, ``enumerate``: layouts and their rules; every valid layout of a model.
- ``auto_place``: the driver's auto-placement and mig-parted's way of applying counts.
- ``strategy``: the device plugin's none/single/mixed strategies and GFD's MIG labels.
- ``parted_config``, ``parted_check``, ``parted_defaults``: mig-parted files.
- ``plan_types``, ``plan_options``, ``plan_solver``, ``planner``: the exact planner
  (``planner.decide``); ``demand`` and ``current_file`` read its inputs; ``serialize`` its JSON.
"""

from __future__ import annotations

from gpuplane.slicing.mig.catalog import default_mig_catalog, get_mig_gpu
from gpuplane.slicing.mig.layout import Instance, Layout, make_layout
from gpuplane.slicing.mig.plan_types import (
    GpuState,
    GpuTarget,
    MigPlan,
    MigPlanSettings,
    MigSnapshot,
    make_snapshot,
)
from gpuplane.slicing.mig.planner import decide
from gpuplane.slicing.mig.profiles import MigGpu, MigProfile

__all__ = [
    "GpuState",
    "GpuTarget",
    "Instance",
    "Layout",
    "MigGpu",
    "MigPlan",
    "MigPlanSettings",
    "MigProfile",
    "MigSnapshot",
    "decide",
    "default_mig_catalog",
    "get_mig_gpu",
    "make_layout",
    "make_snapshot",
]
