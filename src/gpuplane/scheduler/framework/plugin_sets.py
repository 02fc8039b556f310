"""From a profile's config to the ordered plugins of every extension point, the way kube-scheduler
does it:

- defaults: kube-scheduler's default multiPoint plugins that gpuplane models
  (apis/config/v1/default_plugins.go: PrioritySort, NodeUnschedulable, TaintToleration weight 3,
  NodeAffinity weight 2, NodeResourcesFit weight 1, DefaultPreemption, DefaultBinder), merged
  with gpuplane's additions as scheduler-plugins' Coscheduling recipe writes them (multiPoint
  enables GPUSharing and Coscheduling and disables PrioritySort, whose place Coscheduling's
  QueueSort takes);
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
from gpuplane.scheduler.framework.registry import Registry

if TYPE_CHECKING:
    from gpuplane.scheduler.framework.config import ProfileConfig

# (name, weight) in kube-scheduler's default order, keeping the plugins gpuplane models.
KUBE_DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("DefaultBinder", None),
)
GPUPLANE_ENABLED: tuple[tuple[str, int | None], ...] = (
    ("GPUSharing", None),
    ("Coscheduling", None),
)
GPUPLANE_DISABLED: tuple[str, ...] = ("PrioritySort",)

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


def default_multipoint() -> list[tuple[str, int | None]]:
    return merge_plugin_set(
        list(KUBE_DEFAULT_PLUGINS), list(GPUPLANE_ENABLED), list(GPUPLANE_DISABLED)
    )


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
        default_multipoint(),
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
