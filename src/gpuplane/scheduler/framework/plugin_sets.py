"""From a profile's config to the ordered plugins of every extension point, the way kube-scheduler
does it:

- defaults: kube-scheduler v1.31's default multiPoint plugins, in its order and with its weights
  (pkg/scheduler/apis/config/v1/default_plugins.go ``getDefaultPlugins``), and DynamicResources
  before DefaultPreemption where upstream's ``applyFeatureGates`` puts it when the
  DynamicResourceAllocation gate is on (the switch: ``DRA_IN_DEFAULT_PROFILE``, below). A default
  a registry does not hold because gpuplane does not model it (``NOT_MODELLED``) is left out
  (every v1.31 default is in the in-tree registry, some as no-ops);
- gpuplane's own plugins are in no default: the gpuplane profile (``GPUPLANE_MULTIPOINT``, and
  ``config.gpuplane_profile``) adds GPUSharing and Coscheduling the way scheduler-plugins'
  Coscheduling recipe writes it (multiPoint enables both and disables PrioritySort, whose place
  Coscheduling's QueueSort takes);
- the user's sets merge into those (default_plugins.go mergePluginSet): ``disabled`` removes a
  default (``*``: all), an ``enabled`` plugin already a default replaces it in place, others are
  appended;
- multiPoint expands to every extension point a plugin implements (framework/runtime
  expandMultiPointPlugins): first the plugins named both in multiPoint and at the point (in the
  point's order), then the other multiPoint plugins, then the point's own plugins. A Score
  plugin's weight is the one given at the point, else in multiPoint, else 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import BIND, EXTENSION_POINTS, QUEUE_SORT
from gpuplane.scheduler.framework.registry import NOT_MODELLED, Registry

if TYPE_CHECKING:
    from gpuplane.scheduler.framework.config import ProfileConfig

# The Kubernetes release whose kube-scheduler defaults gpuplane's default profile follows.
KUBERNETES_VERSION = "v1.31"

# (name, weight): kube-scheduler v1.31's default multiPoint list, in its order.
KUBE_DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)
# v1.31 adds DynamicResources (before DefaultPreemption) only with the DynamicResourceAllocation
# feature gate, alpha and off by default in v1.31. gpuplane models DRA and keeps it on: for a pod
# without resource claims the plugin skips at PreFilter and never scores, so decisions for such
# pods are the v1.31 default's; a profile matching a v1.31 cluster with the gate off disables it
# (``multiPoint: {disabled: [{name: DynamicResources}]}``). Documented in docs/scheduler.md.
DRA_IN_DEFAULT_PROFILE = True
DRA_PLUGIN = "DynamicResources"

# The gpuplane profile's additions (scheduler-plugins' Coscheduling recipe, plus GPUSharing).
GPUPLANE_MULTIPOINT_ENABLED: tuple[str, ...] = ("GPUSharing", "Coscheduling")
GPUPLANE_MULTIPOINT_DISABLED: tuple[str, ...] = ("PrioritySort",)

_Set = tuple[list[tuple[str, int | None]], list[str]]


@dataclass(frozen=True, slots=True)
class ResolvedPlugin:
    name: str
    weight: int = 1


@dataclass(frozen=True, slots=True)
class ResolvedProfile:
    scheduler_name: str
    points: dict[str, tuple[ResolvedPlugin, ...]]
    args: dict[str, BaseModel | None]
    percentage_of_nodes_to_score: int | None

    def plugin_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for point in EXTENSION_POINTS:
            for p in self.points[point]:
                seen.setdefault(p.name)
        return list(seen)


def merge_plugin_set(
    default: list[tuple[str, int | None]],
    enabled: list[tuple[str, int | None]],
    disabled: list[str],
) -> list[tuple[str, int | None]]:
    """kube-scheduler's mergePluginSet on (name, weight) lists."""
    custom = {name: i for i, (name, _) in enumerate(enabled)}
    replaced: set[int] = set()
    out: list[tuple[str, int | None]] = []
    if "*" not in disabled:
        for name, weight in default:
            if name in disabled:
                continue
            if name in custom:
                replaced.add(custom[name])
                name, weight = enabled[custom[name]]
            out.append((name, weight))
    out.extend(p for i, p in enumerate(enabled) if i not in replaced)
    return out


def default_multipoint(registry: Registry) -> list[tuple[str, int | None]]:
    """kube's default multiPoint list (with DynamicResources per ``DRA_IN_DEFAULT_PROFILE``),
    less the defaults gpuplane does not model yet and the registry therefore lacks."""
    out: list[tuple[str, int | None]] = []
    for name, weight in KUBE_DEFAULT_PLUGINS:
        if name == "DefaultPreemption" and DRA_IN_DEFAULT_PROFILE:
            out.append((DRA_PLUGIN, None))
        if name in NOT_MODELLED and name not in registry:
            continue
        out.append((name, weight))
    return out


def _expand(
    point: str,
    multi: list[tuple[str, int | None]],
    specific: list[tuple[str, int | None]],
    disabled: list[str],
    registry: Registry,
) -> tuple[ResolvedPlugin, ...]:
    multi_names = {name: weight for name, weight in multi}
    specific_names = {name for name, _ in specific}
    ordered: list[tuple[str, int | None]] = []
    ordered += [
        (n, w if w is not None else multi_names[n]) for n, w in specific if n in multi_names
    ]
    if "*" not in disabled:
        ordered += [
            (n, w)
            for n, w in multi
            if point in registry.get(n).extension_points
            and n not in disabled
            and n not in specific_names
        ]
    ordered += [(n, w) for n, w in specific if n not in multi_names]
    names = [n for n, _ in ordered]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"plugin {dupes[0]} is enabled twice at {point}")
    return tuple(ResolvedPlugin(n, w if w is not None else 1) for n, w in ordered)


def resolve_profile(cfg: ProfileConfig, registry: Registry) -> ResolvedProfile:
    """The profile's plugins per extension point and their parsed args; ValueError if invalid."""
    plugins = cfg.plugins
    mp = plugins.multiPoint
    multi = merge_plugin_set(
        default_multipoint(registry),
        [(p.name, p.weight) for p in mp.enabled],
        [p.name for p in mp.disabled],
    )
    points: dict[str, tuple[ResolvedPlugin, ...]] = {}
    for point in EXTENSION_POINTS:
        pset = plugins.at(point)
        points[point] = _expand(
            point,
            multi,
            [(p.name, p.weight) for p in pset.enabled],
            [p.name for p in pset.disabled],
            registry,
        )
    if len(points[QUEUE_SORT]) != 1:
        raise ValueError(
            f"exactly one queueSort plugin must be enabled, got {len(points[QUEUE_SORT])}"
        )
    if not points[BIND]:
        raise ValueError("at least one bind plugin is needed")
    given = {c.name: c.args for c in cfg.pluginConfig}
    args: dict[str, BaseModel | None] = {}
    names: dict[str, None] = {}
    for point in EXTENSION_POINTS:
        for p in points[point]:
            names.setdefault(p.name)
    for name in names:
        args[name] = registry.get(name).parse_args(given.get(name))
    return ResolvedProfile(cfg.schedulerName, points, args, cfg.percentageOfNodesToScore)
