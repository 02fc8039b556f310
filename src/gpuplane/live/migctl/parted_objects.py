"""mig-parted configs as the ConfigMaps NVIDIA's MIG manager reads (``-o yaml|json`` of the
``gpuplane mig`` commands).

The GPU Operator's MIG manager reads the mig-parted file under the ``config.yaml`` key of the
ConfigMap ``ClusterPolicy.spec.migManager.config.name`` names (the operator's own is
``default-mig-parted-config``; a custom one is usually ``custom-mig-parted-config``), in the
operator's namespace; a node selects a config with the ``nvidia.com/mig.config`` label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplane.core.errors import InputError
from gpuplane.live.migctl.apply import config_map_body
from gpuplane.live.migctl.round import ConfigMapTarget
from gpuplane.slicing.mig.parted_config import PartedConfig
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import merged_config, named_node_config
from gpuplane.slicing.mig.plan_types import MigPlan
from gpuplane.slicing.mig.profiles import MigGpu

DEFAULT_CONFIG_MAP = "default-mig-parted-config"
CUSTOM_CONFIG_MAP = "custom-mig-parted-config"
OPERATOR_NAMESPACE = "gpu-operator"


def parted_config_map(config: PartedConfig, name: str, namespace: str) -> dict[str, Any]:
    return dict(config_map_body(ConfigMapTarget(namespace, name), config))


def plan_config(plan: MigPlan, models: Sequence[MigGpu]) -> tuple[str, PartedConfig]:
    """The config that gives the plan's target layouts (GPUs of one model, one node), named
    as gpuplane's MIG controller names it, after NVIDIA's named defaults for the model."""
    kinds = sorted({t.model for t in plan.targets})
    if len(kinds) != 1:
        raise InputError(
            f"the plan covers GPUs of {len(kinds)} models ({', '.join(kinds)}); a mig-parted "
            "config applies to one node",
            expected="GPUs of one model with -o",
        )
    model = next(m for m in models if m.name == kinds[0] or m.key == kinds[0])
    targets = sorted(plan.targets, key=lambda t: t.index)
    name, entries = named_node_config(model, [t.layout for t in targets])
    defaults = default_configs(model)
    return name, merged_config(defaults, [(name, entries)])
