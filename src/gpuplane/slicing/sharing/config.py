"""NVIDIA k8s-device-plugin's config file: ``flags`` and ``sharing`` (time-slicing and MPS).

The format is the plugin's ``api/config/v1`` (config.go, sharing.go, replicas.go, read through
the code index), described here, not copied:

```yaml
version: v1                      # empty means v1; anything else: "unknown version: <v>"
flags: {migStrategy: none}       # none | single | mixed (other flags are accepted, not modelled)
sharing:
  timeSlicing:                   # or mps: (the same shape); MPS wins when both replicate
    renameByDefault: false       # true: advertise <name>.shared instead of <name>
    failRequestsGreaterThanOne: false   # true: a container asking for more than 1 replica fails
    resources:
      - name: nvidia.com/gpu     # or a MIG resource such as nvidia.com/mig-1g.10gb
        replicas: 4              # > 0 ("number of replicas must be >= 0" when it is not)
```

- ``strategy`` of timeSlicing must be absent or empty ("unknown time-slicing strategy").
- ``resources`` must be non-empty ("no resources specified"); every entry needs ``name`` and
  ``replicas``.
- ``rename`` and ``devices`` parse (devices: ``all``, a count > 0, or a list of GPU indices, MIG
  indices ``gpu:mig`` or UUIDs) but the plugin ignores them today (DisableResourceNamingInConfig
  warns and clears them): gpuplane warns the same way and replicates every device.
- For MPS, ``failRequestsGreaterThanOne`` defaults to true (the plugin keeps MPS's historical
  behaviour unless the config sets it). A resource is replicated when its replicas are > 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuplane.api.resources import MIG_RESOURCE_PREFIX, NVIDIA_GPU
from gpuplane.api.strategies import MigStrategy, SharingStrategy
from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import validate_yaml

VERSION = "v1"
_MIG_RESOURCE = re.compile("^" + re.escape(MIG_RESOURCE_PREFIX) + r"\d+g\.\d+gb(\+me)?$")
_DEVICE_REF = re.compile(
    r"^(\d+|\d+:\d+|GPU-[0-9a-fA-F-]{36}|MIG-[0-9a-fA-F-]{36}|MIG-GPU-[0-9a-fA-F-]{36}/\d+/\d+)$"
)


# Time-slicing replicas per GPU gpuplane accepts (docs/slicing.md, "Bounds").
MAX_REPLICAS = 1000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ReplicaResource(_Model):
    name: str
    rename: str | None = None
    devices: str | int | list[str | int] = "all"
    replicas: int

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value != NVIDIA_GPU and not _MIG_RESOURCE.match(value):
            raise ValueError(
                f"unsupported resource {value!r}; expected {NVIDIA_GPU} or a MIG resource "
                "such as nvidia.com/mig-1g.10gb"
            )
        return value

    @field_validator("replicas")
    @classmethod
    def _replicas(cls, value: int) -> int:
        if value <= 0:
            # The plugin's own wording, although it rejects 0 as well.
            raise ValueError("number of replicas must be >= 0 (the plugin needs at least 1)")
        if value > MAX_REPLICAS:
            # The plugin sets no limit, but a node runs at most maxPods pods (110 by default,
            # Kubernetes' threshold 250 per node): more replicas per GPU cannot all be used,
            # and the twin would keep a slot for each.
            raise ValueError(
                f"{value} replicas per GPU: more than a node can run "
                f"(gpuplane's bound: {MAX_REPLICAS}; a node runs at most maxPods pods)"
            )
        return value

    @field_validator("devices")
    @classmethod
    def _devices(cls, value: str | int | list[str | int]) -> str | int | list[str | int]:
        if isinstance(value, str) and value != "all":
            raise ValueError(f"devices set as '{value}' but the only valid string input is 'all'")
        if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            raise ValueError(f"devices set as '{value}' but a count of devices must be > 0")
        if isinstance(value, list):
            for item in value:
                if not _DEVICE_REF.match(str(item)):
                    raise ValueError(f"unsupported type for device in devices list: {item}")
        return value


class ReplicatedResources(_Model):
    strategy: str = ""
    rename_by_default: bool = Field(default=False, alias="renameByDefault")
    fail_requests_greater_than_one: bool | None = Field(
        default=None, alias="failRequestsGreaterThanOne"
    )
    resources: list[ReplicaResource]

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, value: str) -> str:
        if value:
            raise ValueError(f"unknown time-slicing strategy: {value}")
        return value

    @field_validator("resources")
    @classmethod
    def _resources(cls, value: list[ReplicaResource]) -> list[ReplicaResource]:
        if not value:
            raise ValueError("no resources specified")
        return value


class Sharing(_Model):
    time_slicing: ReplicatedResources | None = Field(default=None, alias="timeSlicing")
    mps: ReplicatedResources | None = None


class Flags(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    mig_strategy: MigStrategy = Field(default=MigStrategy.NONE, alias="migStrategy")


class ConfigFile(_Model):
    version: str = VERSION
    flags: Flags = Field(default_factory=Flags)
    resources: dict[str, Any] | None = None
    sharing: Sharing = Field(default_factory=Sharing)
    imex: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _version(self) -> ConfigFile:
        if self.version not in ("", VERSION):
            raise ValueError(f"unknown version: {self.version}")
        return self


@dataclass(frozen=True, slots=True)
class Replication:
    """One replicated resource: ``replicas`` per device, advertised as ``advertised_name``."""

    name: str
    replicas: int

    def advertised_name(self, rename_by_default: bool) -> str:
        return f"{self.name}.shared" if rename_by_default else self.name


@dataclass(frozen=True, slots=True)
class DevicePluginConfig:
    mig_strategy: MigStrategy = MigStrategy.NONE
    strategy: SharingStrategy = SharingStrategy.NONE
    replications: tuple[Replication, ...] = ()
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    warnings: tuple[str, ...] = ()

    def replicas_of(self, resource: str) -> int:
        for r in self.replications:
            if r.name == resource:
                return r.replicas
        return 1

    def advertised_name(self, resource: str) -> str:
        if self.strategy is SharingStrategy.NONE or self.replicas_of(resource) <= 1:
            return resource
        return f"{resource}.shared" if self.rename_by_default else resource


def _replicated(r: ReplicatedResources | None) -> bool:
    return r is not None and any(x.replicas > 1 for x in r.resources)


def from_model(cfg: ConfigFile) -> DevicePluginConfig:
    """The active strategy and its replicated resources (sharing.go SharingStrategy)."""
    mps, ts = cfg.sharing.mps, cfg.sharing.time_slicing
    if _replicated(mps):
        strategy, active = SharingStrategy.MPS, mps
    elif _replicated(ts):
        strategy, active = SharingStrategy.TIME_SLICING, ts
    else:
        return DevicePluginConfig(mig_strategy=cfg.flags.mig_strategy)
    assert active is not None
    warnings = []
    for i, res in enumerate(active.resources):
        if res.rename is not None:
            warnings.append(
                f"resources[{i}].rename: customizing the 'rename' field is not yet supported "
                "by the device plugin; ignored"
            )
        if res.devices != "all":
            warnings.append(
                f"resources[{i}].devices: customizing the 'devices' field is not yet supported "
                "by the device plugin; every device is replicated"
            )
    fail = active.fail_requests_greater_than_one
    if fail is None:
        fail = strategy is SharingStrategy.MPS
    return DevicePluginConfig(
        mig_strategy=cfg.flags.mig_strategy,
        strategy=strategy,
        replications=tuple(Replication(r.name, r.replicas) for r in active.resources),
        rename_by_default=active.rename_by_default,
        fail_requests_greater_than_one=fail,
        warnings=tuple(warnings),
    )


def parse_device_plugin_config(text: str, source: str) -> DevicePluginConfig:
    """Read a device plugin config (YAML); mistakes are ``file:line: field: problem``."""
    return from_model(validate_yaml(ConfigFile, text, source, what="a device plugin config"))


def device_plugin_config_from_dict(data: object) -> DevicePluginConfig:
    """The same from already-parsed data (a scenario's inline config); errors carry the field."""
    from gpuplane.core.validation import validate_model

    if not isinstance(data, dict):
        raise InputError(f"got {type(data).__name__}", expected="a device plugin config mapping")
    return from_model(validate_model(ConfigFile, data))
