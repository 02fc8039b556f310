"""The scenario file: one YAML document describing the cluster to simulate.

Only the node pools exist so far; later capabilities add sections (ClusterPolicy, control plane,
workloads). Unknown keys are errors, so a section this version does not know is reported rather
than silently ignored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuplane.core.errors import InputError, Location
from gpuplane.core.yamlio import validate_yaml

_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class Taint(BaseModel):
    """A Kubernetes node taint."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str = Field(min_length=1)
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodePool(BaseModel):
    """A group of identical nodes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="Pool name (a DNS label); nodes are <name>-<i>.")
    preset: str | None = Field(
        default=None, description="A hardware preset (gpuplane topo presets)."
    )
    topology_file: str | None = Field(
        default=None,
        description="Hardware YAML or saved `nvidia-smi topo -m` output, relative to the scenario.",
    )
    gpu_model: str | None = Field(default=None, description="GPU model for a topo -m file.")
    count: int = Field(ge=1, le=100_000, description="Number of nodes in the pool.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra node labels.")
    taints: list[Taint] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if len(value) > 52 or not re.match(_DNS_LABEL, value):
            # 52: node names <pool>-<i> must stay valid DNS labels (63 characters).
            raise ValueError(
                f"{value!r} is not a DNS label: use at most 52 lowercase letters, digits and "
                "'-', starting and ending with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> NodePool:
        if (self.preset is None) == (self.topology_file is None):
            raise ValueError("give exactly one of preset or topology_file")
        return self


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    description: str = ""
    node_pools: list[NodePool] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_pools(self) -> Scenario:
        names = [p.name for p in self.node_pools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"node pool names must be unique; repeated: {', '.join(dupes)}")
        return self


def load_scenario(path: Path) -> Scenario:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            "file not found", expected="a scenario YAML file", location=Location(source=str(path))
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read the file ({err})",
            expected="a UTF-8 scenario YAML file",
            location=Location(source=str(path)),
        ) from None
    return validate_yaml(Scenario, text, str(path))


def pool_topology_ref(pool: NodePool, scenario_path: Path) -> str:
    """What to pass to ``resolve_topology``: the preset, or the file relative to the scenario."""
    if pool.preset is not None:
        return pool.preset
    assert pool.topology_file is not None
    path = Path(pool.topology_file)
    return str(path if path.is_absolute() else scenario_path.parent / path)
