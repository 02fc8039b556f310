"""Clusters with hostname and zone labels, label selectors and spread constraints, for the
PodTopologySpread and InterPodAffinity tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.api.topology_spread import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import BoundPod
from tests.unit.scheduler.factories import make_cluster


def selector(**labels: str) -> LabelSelector:
    return from_match_fields(labels, None)


def exists(key: str) -> LabelSelector:
    return from_match_fields(None, [(key, "Exists", None)])


def spread(
    key: str,
    max_skew: int = 1,
    when: UnsatisfiableAction = "DoNotSchedule",
    sel: LabelSelector | None = None,
    **kw: Any,
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(max_skew, key, when, sel, **kw)


def zoned(
    zones: Sequence[str | None],
    *,
    bound_pods: Sequence[BoundPod] = (),
    extra: Mapping[int, Mapping[str, str]] | None = None,
    **kw: Any,
) -> ClusterSnapshot:
    """Nodes n0.. with hostname labels and ``zones[i]`` as zone (None: no zone label)."""
    labels: dict[int, dict[str, str]] = {}
    for i, zone in enumerate(zones):
        labels[i] = {LABEL_HOSTNAME: f"n{i}", **({LABEL_ZONE: zone} if zone else {})}
        labels[i].update((extra or {}).get(i, {}))
    return make_cluster([8] * len(zones), labels=labels, bound_pods=bound_pods, **kw)


def anti_affinity(key: str, **match: str) -> dict[str, object]:
    term = {"labelSelector": {"matchLabels": dict(match)}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def affinity(key: str, **match: str) -> dict[str, object]:
    term = {"labelSelector": {"matchLabels": dict(match)}, "topologyKey": key}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def preferred(kind: str, weight: int, key: str, **match: str) -> dict[str, object]:
    term = {"labelSelector": {"matchLabels": dict(match)}, "topologyKey": key}
    entry = {"weight": weight, "podAffinityTerm": term}
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [entry]}}
