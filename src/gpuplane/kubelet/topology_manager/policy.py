"""Topology Manager policies and policy options (policy_*.go, policy_options.go).

| policy | merge | admit |
|---|---|---|
| none | no merge: {nil, false} | always |
| best-effort | full merge | always |
| restricted | full merge | iff preferred |
| single-numa-node | only {nil, preferred} and preferred single-node hints, Narrowest; an
  all-nodes result becomes nil | iff preferred |
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gpuplane.core.errors import InputError, Location
from gpuplane.kubelet.topology_manager.hints import (
    ProviderHints,
    TopologyHint,
    filter_providers_hints,
)
from gpuplane.kubelet.topology_manager.merger import HintMerger
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo


class PolicyName(StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


PREFER_CLOSEST = "prefer-closest-numa-nodes"
MAX_ALLOWABLE = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


@dataclass(frozen=True, slots=True)
class PolicyOptions:
    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def parse_policy_options(raw: Mapping[str, str]) -> PolicyOptions:
    """kubelet topologyManagerPolicyOptions, with the kubelet's validation (policy_options.go)."""
    prefer, max_nodes = False, DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name, value in raw.items():
        if name == PREFER_CLOSEST:
            # strconv.ParseBool accepts exactly these spellings.
            if value not in _TRUE | _FALSE:
                raise InputError(
                    f'bad value for option "{name}": {value!r}',
                    expected="a boolean (true/false, 1/0, t/f)",
                )
            prefer = value in _TRUE
        elif name == MAX_ALLOWABLE:
            try:
                max_nodes = int(value)
            except ValueError:
                raise InputError(
                    f'bad value for option "{name}": {value!r}', expected="an integer"
                ) from None
            if max_nodes < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise InputError(
                    f"the minimum value of {MAX_ALLOWABLE!r} should not be less than "
                    f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}",
                    expected=f"an integer >= {DEFAULT_MAX_ALLOWABLE_NUMA_NODES}",
                )
        else:
            raise InputError(
                f"unknown Topology Manager Policy option: {name!r}",
                expected=f"{PREFER_CLOSEST} or {MAX_ALLOWABLE}",
            )
    return PolicyOptions(prefer, max_nodes)


@dataclass(frozen=True, slots=True)
class MergeResult:
    hint: TopologyHint
    admit: bool


def _single_numa_filter(lists: list[list[TopologyHint]]) -> list[list[TopologyHint]]:
    return [
        [
            h
            for h in hints
            if (h.affinity is None and h.preferred)
            or (h.preferred and h.affinity is not None and h.affinity.count() == 1)
        ]
        for hints in lists
    ]


# The merge visits every combination of the providers' hints (kubelet's
# iterateAllProviderTopologyHints), in order, keeping a running best; gpuplane refuses inputs whose
# combinations exceed this rather than run for hours (docs/kubelet.md, "Bounds").
MAX_COMBINATIONS = 10_000_000


def merge_hints(
    policy: PolicyName,
    numa: NumaInfo,
    providers: Sequence[ProviderHints],
    options: PolicyOptions | None = None,
) -> MergeResult:
    """One Topology Manager merge for one container (or pod, under the pod scope)."""
    options = options or PolicyOptions()
    if len(numa.nodes) > options.max_allowable_numa_nodes:
        raise InputError(
            f"unsupported on machines with more than {options.max_allowable_numa_nodes} NUMA Nodes",
            expected=f"raise {MAX_ALLOWABLE} or use policy none",
            location=Location(field="numa_nodes"),
        )
    if policy is PolicyName.NONE:
        return MergeResult(TopologyHint(None, False), True)
    lists = filter_providers_hints(providers)
    combinations = math.prod(len(hints) for hints in lists)
    if combinations > MAX_COMBINATIONS:
        sizes = " x ".join(str(len(h)) for h in lists)
        raise InputError(
            f"the Topology Manager merges every combination of the providers' hints: {sizes} = "
            f"{combinations:,} here",
            expected=f"at most {MAX_COMBINATIONS:,} combinations (a kubelet would take as long: "
            "real nodes have a few providers of a few hints each)",
        )
    if policy is PolicyName.SINGLE_NUMA_NODE:
        merged = HintMerger.make(numa, _single_numa_filter(lists), numa.narrowest).merge()
        if merged.affinity == numa.default_affinity():
            merged = TopologyHint(None, merged.preferred)
        return MergeResult(merged, merged.preferred)
    if options.prefer_closest_numa and numa.distances is None:
        raise InputError(
            "error getting NUMA distances from cadvisor",
            expected="numa_distances for every NUMA node",
        )
    comparator = numa.closest if options.prefer_closest_numa else numa.narrowest
    merged = HintMerger.make(numa, lists, comparator).merge()
    admit = policy is PolicyName.BEST_EFFORT or merged.preferred
    return MergeResult(merged, admit)
