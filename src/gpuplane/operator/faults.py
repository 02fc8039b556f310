"""Faults a scenario injects (its ``faults:`` list), planned up front into timed events.

Two kinds:

- ``node-lost``: the kubelet stops reporting (power, kernel panic, network). The twin marks the
  node NotReady; the node lifecycle controller then taints it ``node.kubernetes.io/unreachable``
  and evicts pods after their toleration (300 s by default) - the twin's concern, not this file's.
  On recovery the node has rebooted, so the GPU Operator's pods start over (lifecycle
  ``node-lost -> joining``).
- ``gpu-xid``: the driver reports an Xid on one GPU. The device plugin's health check
  (NVIDIA/k8s-device-plugin ``internal/rm/health.go`` @ 02597b97) listens for NVML
  ``EventTypeXidCriticalError`` events and marks the device ``Unhealthy`` for every Xid except the
  application errors it ignores by default: 13, 31, 43, 45, 68, 109 (more can be ignored with
  ``DP_DISABLE_HEALTHCHECKS``). An unhealthy device is dropped from what ListAndWatch reports, so
  the node's allocatable ``nvidia.com/gpu`` falls by one; running pods are not evicted. The plugin
  never marks a device healthy again on its own; ``recover_after`` stands for the GPU being reset
  and the plugin restarted. Without it the GPU stays unhealthy for the rest of the run.

:func:`plan_faults` is deterministic for a seed and merges overlapping faults on the same node
(or GPU), so for each target fault and recovery events alternate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplane.core.errors import InputError, Location
from gpuplane.operator.settings import Seconds

# k8s-device-plugin health.go: application errors after which "the GPU should still be healthy".
IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})
XID_MEANINGS = {
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "Preemptive cleanup, due to previous errors",
    48: "Double Bit ECC Error",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    68: "Video processor exception",
    74: "NVLink Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    109: "Context Switch Timeout Error",
    119: "GSP RPC Timeout",
}
MAX_OCCURRENCES = 100_000  # per spec; a rate that would exceed it is a mistake


def marks_unhealthy(xid: int) -> bool:
    """Whether the device plugin (default settings) marks a GPU Unhealthy for ``xid``."""
    return xid not in IGNORED_XIDS


class NodeSelection(BaseModel):
    """Which nodes a fault may hit: every filter given must match; ``count`` picks among them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    names: list[str] = Field(default_factory=list, description="Node names (<pool>-<i>).")
    pool: str | None = Field(default=None, description="Only nodes of this pool.")
    labels: dict[str, str] = Field(
        default_factory=dict, description="Only nodes with these labels."
    )
    count: int | None = Field(
        default=None, ge=1, description="Nodes hit per occurrence, drawn at random; all if unset."
    )


class _FaultBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    at: Seconds | None = Field(default=None, description="One occurrence at this time.")
    rate_per_hour: float | None = Field(
        default=None, gt=0, le=3600, description="Occurrences per hour (a Poisson process)."
    )
    nodes: NodeSelection = Field(default_factory=NodeSelection)
    recover_after: Seconds | None = Field(
        default=None, description="Back to normal after this long; never if unset."
    )

    @model_validator(mode="after")
    def _one_timing(self) -> _FaultBase:
        if (self.at is None) == (self.rate_per_hour is None):
            raise ValueError("give exactly one of at or rate_per_hour")
        return self


class NodeLostFault(_FaultBase):
    """The node stops reporting (NotReady) until it recovers."""

    kind: Literal["node-lost"]


class GpuXidFault(_FaultBase):
    """An Xid error on one GPU of each node hit."""

    kind: Literal["gpu-xid"]
    xid: int = Field(default=79, ge=1, le=1000, description="Xid code, e.g. 79 or 48.")
    gpu: int | Literal["random"] = Field(
        default="random", description="GPU index on the node, or random."
    )

    @model_validator(mode="after")
    def _gpu_index(self) -> GpuXidFault:
        if isinstance(self.gpu, int) and self.gpu < 0:
            raise ValueError(f"gpu must be >= 0 or 'random', got {self.gpu}")
        return self


FaultSpec = Annotated[NodeLostFault | GpuXidFault, Field(discriminator="kind")]


class FaultEventKind(StrEnum):
    NODE_LOST = "node-lost"
    NODE_RECOVERED = "node-recovered"
    GPU_XID = "gpu-xid"
    GPU_RECOVERED = "gpu-recovered"


_RANK = {
    FaultEventKind.NODE_RECOVERED: 0,
    FaultEventKind.GPU_RECOVERED: 0,
    FaultEventKind.NODE_LOST: 1,
    FaultEventKind.GPU_XID: 1,
}


@dataclass(frozen=True, slots=True)
class FaultEvent:
    t_s: float
    kind: FaultEventKind
    node: str
    gpu_index: int | None = None
    xid: int | None = None
    marks_unhealthy: bool = False  # gpu-xid: the device plugin drops the GPU
    spec_index: int = 0  # which entry of faults: caused it
    message: str = ""


@dataclass(frozen=True, slots=True)
class _Interval:
    start_s: float
    end_s: float
    node: str
    gpu: int | None
    spec_index: int
    xid: int | None


def _error(index: int, part: str, problem: str, expected: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=f"faults[{index}]{part}"))


def _candidates(
    index: int,
    selection: NodeSelection,
    node_names_by_pool: Mapping[str, Sequence[str]],
    labels_by_node: Mapping[str, Mapping[str, str]] | None,
) -> list[str]:
    if selection.pool is not None and selection.pool not in node_names_by_pool:
        pools = ", ".join(sorted(node_names_by_pool))
        raise _error(index, ".nodes.pool", f"no node pool {selection.pool!r}", f"one of {pools}")
    names = [n for pool in sorted(node_names_by_pool) for n in node_names_by_pool[pool]]
    unknown = sorted(set(selection.names) - set(names))
    if unknown:
        raise _error(index, ".nodes.names", f"no node {unknown[0]!r}", "names like <pool>-<i>")
    if selection.labels and labels_by_node is None:
        raise _error(index, ".nodes.labels", "node labels are not known here", "no labels")
    pool_nodes = set(node_names_by_pool[selection.pool]) if selection.pool else None
    out = []
    for name in names:
        if selection.names and name not in selection.names:
            continue
        if pool_nodes is not None and name not in pool_nodes:
            continue
        node_labels = labels_by_node.get(name, {}) if labels_by_node else {}
        if any(node_labels.get(k) != v for k, v in selection.labels.items()):
            continue
        out.append(name)
    return out


def _times(
    index: int, spec: NodeLostFault | GpuXidFault, horizon_s: float, rng: np.random.Generator
) -> list[float]:
    if spec.at is not None:
        return [spec.at] if spec.at < horizon_s else []
    assert spec.rate_per_hour is not None  # the model validator guarantees one of the two
    mean_gap_s = 3600.0 / spec.rate_per_hour
    times: list[float] = []
    t = float(rng.exponential(mean_gap_s))
    while t < horizon_s:
        if len(times) >= MAX_OCCURRENCES:
            raise _error(
                index,
                ".rate_per_hour",
                "too many occurrences in the run",
                f"at most {MAX_OCCURRENCES} per fault",
            )
        times.append(t)
        t += float(rng.exponential(mean_gap_s))
    return times


def _gpu_for(
    index: int,
    spec: GpuXidFault,
    node: str,
    num_gpus_by_node: Mapping[str, int] | None,
    rng: np.random.Generator,
) -> int:
    num = num_gpus_by_node.get(node) if num_gpus_by_node is not None else None
    if spec.gpu == "random":
        if not num:
            raise _error(index, ".gpu", f"GPU count of node {node!r} unknown", "a GPU index")
        return int(rng.integers(num))
    if num is not None and spec.gpu >= num:
        raise _error(
            index,
            ".gpu",
            f"node {node!r} has {num} GPUs, no GPU {spec.gpu}",
            f"an index below {num} or random",
        )
    return spec.gpu


def _intervals(
    index: int,
    spec: NodeLostFault | GpuXidFault,
    candidates: list[str],
    horizon_s: float,
    rng: np.random.Generator,
    num_gpus_by_node: Mapping[str, int] | None,
) -> list[_Interval]:
    out: list[_Interval] = []
    for t in _times(index, spec, horizon_s, rng):
        chosen = candidates
        if spec.nodes.count is not None and spec.nodes.count < len(candidates):
            picks = rng.choice(len(candidates), size=spec.nodes.count, replace=False)
            chosen = [candidates[i] for i in sorted(int(p) for p in picks)]
        end = t + spec.recover_after if spec.recover_after is not None else float("inf")
        for node in chosen:
            if isinstance(spec, GpuXidFault):
                gpu = _gpu_for(index, spec, node, num_gpus_by_node, rng)
                out.append(_Interval(t, end, node, gpu, index, spec.xid))
            else:
                out.append(_Interval(t, end, node, None, index, None))
    return out


def _events(interval: _Interval, horizon_s: float) -> list[FaultEvent]:
    node, gpu, xid, i = interval.node, interval.gpu, interval.xid, interval.spec_index
    if xid is None:
        start = FaultEvent(
            interval.start_s,
            FaultEventKind.NODE_LOST,
            node,
            spec_index=i,
            message="node stopped reporting",
        )
        end_kind, end_msg = FaultEventKind.NODE_RECOVERED, "node back after a reboot"
    else:
        meaning = XID_MEANINGS.get(xid, "Xid error")
        start = FaultEvent(
            interval.start_s,
            FaultEventKind.GPU_XID,
            node,
            gpu,
            xid,
            marks_unhealthy(xid),
            i,
            f"Xid {xid} ({meaning}) on GPU {gpu}",
        )
        end_kind, end_msg = FaultEventKind.GPU_RECOVERED, f"GPU {gpu} reset, plugin restarted"
    events = [start]
    if interval.end_s < horizon_s:
        events.append(
            FaultEvent(interval.end_s, end_kind, node, gpu, spec_index=i, message=end_msg)
        )
    return events


def _merge(intervals: list[_Interval]) -> list[_Interval]:
    """Per target, overlapping intervals become one (first cause kept, latest end)."""
    by_target: dict[tuple[str, int | None], list[_Interval]] = {}
    for iv in sorted(intervals, key=lambda iv: (iv.start_s, iv.spec_index)):
        group = by_target.setdefault((iv.node, iv.gpu), [])
        if group and iv.start_s < group[-1].end_s:
            last = group[-1]
            group[-1] = _Interval(
                last.start_s,
                max(last.end_s, iv.end_s),
                last.node,
                last.gpu,
                last.spec_index,
                last.xid,
            )
        else:
            group.append(iv)
    return [iv for group in by_target.values() for iv in group]


def plan_faults(
    specs: Sequence[NodeLostFault | GpuXidFault],
    node_names_by_pool: Mapping[str, Sequence[str]],
    horizon_s: float,
    rng: np.random.Generator,
    *,
    labels_by_node: Mapping[str, Mapping[str, str]] | None = None,
    num_gpus_by_node: Mapping[str, int] | None = None,
) -> list[FaultEvent]:
    """Every fault and recovery before ``horizon_s``, time-ordered.

    Specs are planned in order, each drawing from ``rng`` in a fixed order, so one seed gives one
    plan. Mistakes (unknown pool or node, GPU index too large) are InputErrors located at
    ``faults[i]...`` without a file; the caller adds it with ``InputError.located``.
    """
    intervals: list[_Interval] = []
    for index, spec in enumerate(specs):
        candidates = _candidates(index, spec.nodes, node_names_by_pool, labels_by_node)
        intervals += _intervals(index, spec, candidates, horizon_s, rng, num_gpus_by_node)
    events = [e for iv in _merge(intervals) for e in _events(iv, horizon_s)]
    return sorted(
        events, key=lambda e: (e.t_s, _RANK[e.kind], e.node, e.gpu_index or 0, e.spec_index)
    )


def fault_candidates(
    index: int,
    selection: NodeSelection,
    node_names_by_pool: Mapping[str, Sequence[str]],
    labels_by_node: Mapping[str, Mapping[str, str]] | None,
) -> list[str]:
    """The nodes ``faults[index]`` may hit; an unknown pool or node is a located InputError."""
    return _candidates(index, selection, node_names_by_pool, labels_by_node)
