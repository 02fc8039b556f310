"""Scheduler profiles as KubeSchedulerConfiguration writes them (kubescheduler.config.k8s.io/v1):
``profiles[].schedulerName``, ``plugins.<extension point>.enabled/disabled`` (with ``weight`` for
Score), ``pluginConfig[].args`` and ``percentageOfNodesToScore``.

The plugin names, extension points and args are checked against a plugin registry, which the
framework does not own: given in the validation context (``context={REGISTRY_CONTEXT: registry}``,
as the scenario does with the in-tree registry), they are checked when the model is validated, so
a scenario with a bad profile fails at load time with the field's path: an unknown plugin name
lists the valid ones, a plugin enabled at an extension point it does not implement says which
ones it does, bad args name the arg. Without one only the shape is checked, and ``Scheduler``
checks the rest against its registry when it is built (``with_registry``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gpuplane.scheduler.framework.interfaces import EXTENSION_POINTS
from gpuplane.scheduler.framework.registry import Registry

# The validation context key of the plugin registry profiles are checked against.
REGISTRY_CONTEXT = "gpuplane.scheduler.registry"


def context_registry(info: ValidationInfo) -> Registry | None:
    """The registry given in the validation context, if any."""
    context = info.context
    found = context.get(REGISTRY_CONTEXT) if isinstance(context, dict) else None
    return found if isinstance(found, Registry) else None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PluginRef(_Model):
    """One plugin in an enabled or disabled list."""

    name: str = Field(min_length=1, description="A registered plugin name; '*' in disabled: all.")
    weight: int | None = Field(
        default=None, ge=1, le=1_000_000, description="Score weight (default 1)."
    )

    @field_validator("name")
    @classmethod
    def _known(cls, value: str, info: ValidationInfo) -> str:
        registry = context_registry(info)
        if value != "*" and registry is not None:
            registry.get(value)  # raises, listing the valid names
        return value


class PluginSet(_Model):
    """Plugins enabled (in order) and disabled at one extension point."""

    enabled: list[PluginRef] = Field(default_factory=list)
    disabled: list[PluginRef] = Field(default_factory=list)

    @field_validator("enabled")
    @classmethod
    def _no_star(cls, value: list[PluginRef]) -> list[PluginRef]:
        if any(p.name == "*" for p in value):
            raise ValueError("'*' may only be used under disabled")
        return value


class Plugins(_Model):
    """Per extension point plugin sets; ``multiPoint`` enables a plugin everywhere it applies."""

    multiPoint: PluginSet = Field(default_factory=PluginSet)
    queueSort: PluginSet = Field(default_factory=PluginSet)
    preFilter: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    postFilter: PluginSet = Field(default_factory=PluginSet)
    preScore: PluginSet = Field(default_factory=PluginSet)
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    preBind: PluginSet = Field(default_factory=PluginSet)
    bind: PluginSet = Field(default_factory=PluginSet)

    def at(self, point: str) -> PluginSet:
        value = getattr(self, point)
        assert isinstance(value, PluginSet)
        return value

    @model_validator(mode="after")
    def _implemented(self, info: ValidationInfo) -> Plugins:
        registry = context_registry(info)
        if registry is None:
            return self
        for point in EXTENSION_POINTS:
            for i, ref in enumerate(self.at(point).enabled):
                spec = registry.get(ref.name)
                if point not in spec.extension_points:
                    has = ", ".join(p for p in EXTENSION_POINTS if p in spec.extension_points)
                    raise ValueError(
                        f"{point}.enabled[{i}]: plugin {ref.name} does not extend {point}; "
                        f"it extends {has}"
                    )
        for i, ref in enumerate(self.multiPoint.enabled):
            spec = registry.get(ref.name)
            if not spec.extension_points and spec.no_op is None:
                raise ValueError(f"multiPoint.enabled[{i}]: plugin {ref.name} extends nothing")
        return self


class PluginConfigEntry(_Model):
    """Args for one plugin (``pluginConfig[].args``)."""

    name: str = Field(min_length=1, description="The plugin these args are for.")
    args: dict[str, Any] = Field(default_factory=dict, description="The plugin's args.")

    @model_validator(mode="after")
    def _args_valid(self, info: ValidationInfo) -> PluginConfigEntry:
        registry = context_registry(info)
        if registry is not None:
            registry.get(self.name).parse_args(self.args)
        return self


class ProfileConfig(_Model):
    """One scheduling profile (KubeSchedulerProfile)."""

    schedulerName: str = Field(
        default="default-scheduler",
        min_length=1,
        description="Pods whose spec.schedulerName is this one are scheduled by this profile.",
    )
    plugins: Plugins = Field(
        default_factory=Plugins,
        description="Changes to gpuplane's default plugins (merged like kube-scheduler does).",
    )
    pluginConfig: list[PluginConfigEntry] = Field(default_factory=list)
    percentageOfNodesToScore: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Stop filtering once this share of nodes is feasible; unset or 0: adaptive.",
    )

    @model_validator(mode="after")
    def _resolves(self, info: ValidationInfo) -> ProfileConfig:
        names = [c.name for c in self.pluginConfig]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"pluginConfig repeats plugin(s) {', '.join(repeated)}")
        registry = context_registry(info)
        if registry is not None:
            from gpuplane.scheduler.framework.plugin_sets import resolve_profile

            resolve_profile(self, registry)  # raises ValueError with the problem
        return self

    def with_registry(self, registry: Registry) -> ProfileConfig:
        """The profile checked against ``registry`` (a pydantic ValidationError if it names
        plugins the registry lacks, at points they do not extend, or bad args)."""
        return ProfileConfig.model_validate(self.model_dump(), context={REGISTRY_CONTEXT: registry})


def check_profiles(profiles: Sequence[ProfileConfig], registry: Registry) -> None:
    """Cross-profile rules of kube-scheduler's config validation: unique scheduler names and one
    queue sort plugin shared by every profile (the queue is shared)."""
    from gpuplane.scheduler.framework.plugin_sets import resolve_profile

    names = [p.schedulerName for p in profiles]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"duplicate profile with scheduler name {repeated[0]!r}")
    sorts = {
        tuple(p.name for p in resolve_profile(cfg, registry).points["queueSort"])
        for cfg in profiles
    }
    if len(sorts) > 1:
        raise ValueError("different queue sort plugins for profiles; all must use the same one")


# The scheduler name the gpuplane profile gets unless told otherwise.
GPUPLANE_SCHEDULER_NAME = "gpuplane-scheduler"


def gpuplane_profile(
    scheduler_name: str = GPUPLANE_SCHEDULER_NAME, *, registry: Registry | None = None
) -> ProfileConfig:
    """gpuplane's profile: kube's default plugins plus GPUSharing (fractional GPUs on a concrete
    device) and Coscheduling (PodGroup gangs; its QueueSort replaces PrioritySort), written as an
    ordinary KubeSchedulerConfiguration profile (``plugins.multiPoint``), so it dumps to YAML a
    scenario or a kube-scheduler config can hold. Checked against ``registry`` when given."""
    from gpuplane.scheduler.framework.plugin_sets import (
        GPUPLANE_MULTIPOINT_DISABLED,
        GPUPLANE_MULTIPOINT_ENABLED,
    )

    data = {
        "schedulerName": scheduler_name,
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": n} for n in GPUPLANE_MULTIPOINT_ENABLED],
                "disabled": [{"name": n} for n in GPUPLANE_MULTIPOINT_DISABLED],
            }
        },
    }
    context = {REGISTRY_CONTEXT: registry} if registry is not None else None
    return ProfileConfig.model_validate(data, context=context)
