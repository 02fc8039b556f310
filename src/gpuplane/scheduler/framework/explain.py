"""Why a pod does not fit: per-plugin reasons per node, and kube-scheduler's FitError text.

kube-scheduler (pkg/scheduler/framework/types.go, FitError.Error) writes
``0/<all nodes> nodes are available: <PreFilter message>.`` when a PreFilter plugin rejected the
pod, else ``0/<all nodes> nodes are available: <count> <reason>, ....`` with the "count reason"
strings sorted as strings (sortReasonsHistogram), a node counting once per reason of the first
filter plugin that rejected it; nodes without an explicit status count under the "absent nodes"
status. When PostFilter ran and said something, `` <PostFilter message>`` follows, e.g.
``preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.``

A plugin answering Error (not a rejection) ends the attempt instead: kube-scheduler's
schedulePod returns that error, not a FitError, and the message is the error's text, wrapped by
the framework as ``running PreFilter plugin "<name>": <message>`` or
``running "<name>" filter plugin: <message>`` (framework/runtime/framework.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import IntArray


@dataclass(frozen=True, slots=True)
class ReasonGroup:
    """The nodes (indices) for which ``plugin`` returned ``reason``."""

    plugin: str
    code: Code
    reason: str
    nodes: IntArray


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every node's rejection for one pod (kube-scheduler's Diagnosis), kept compactly as groups
    of node indices per (plugin, reason)."""

    num_all_nodes: int
    node_names: tuple[str, ...]
    groups: tuple[ReasonGroup, ...] = ()
    # The status of nodes in no group (kube's AbsentNodesStatus): a PreFilter rejection, or
    # preemption's "Preemption is not helpful for scheduling".
    absent: tuple[str, Code, str] | None = None  # (plugin, code, reason)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: frozenset[str] = field(default_factory=frozenset)
    # Set when a PreFilter or Filter plugin answered Error: the attempt failed with this message
    # (no FitError, no PostFilter).
    error: str = ""

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for g in self.groups:
            counts[g.reason] = counts.get(g.reason, 0) + int(g.nodes.size)
        if self.absent is not None:
            missing = self.num_all_nodes - self.num_explicit()
            if missing > 0:
                counts[self.absent[2]] = counts.get(self.absent[2], 0) + missing
        return counts

    def num_explicit(self) -> int:
        if not self.groups:
            return 0
        return int(np.unique(np.concatenate([g.nodes for g in self.groups])).size)

    def message(self) -> str:
        if self.error:
            return self.error
        text = f"0/{self.num_all_nodes} nodes are available:"
        if self.pre_filter_msg:
            text += f" {self.pre_filter_msg}."
        else:
            parts = sorted(f"{count} {reason}" for reason, count in self.histogram().items())
            if parts:
                text += f" {', '.join(parts)}."
        if self.post_filter_msg:
            text += f" {self.post_filter_msg}"
        return text

    def reasons_for(self, node: str) -> tuple[tuple[str, str], ...]:
        """(plugin, reason) pairs that rejected ``node``; empty if it was not rejected."""
        i = self.node_names.index(node)
        found = tuple((g.plugin, g.reason) for g in self.groups if np.any(g.nodes == i))
        if found or self.absent is None:
            return found
        return ((self.absent[0], self.absent[2]),)

    def nodes_by_code(self, code: Code) -> IntArray:
        """Indices of nodes whose status has ``code`` (preemption tries the Unschedulable ones)."""
        picked = [g.nodes for g in self.groups if g.code is code]
        if not picked:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(picked)).astype(np.int64)

    def with_post_filter(self, message: str) -> Diagnosis:
        return Diagnosis(
            self.num_all_nodes,
            self.node_names,
            self.groups,
            self.absent,
            self.pre_filter_msg,
            message,
            self.unschedulable_plugins,
            self.error,
        )


def pre_filter_error(plugin: str, message: str) -> str:
    """The framework's text for a PreFilter plugin's Error (RunPreFilterPlugins)."""
    return f'running PreFilter plugin "{plugin}": {message}'


def filter_error(plugin: str, message: str) -> str:
    """The framework's text for a Filter plugin's Error (RunFilterPlugins)."""
    return f'running "{plugin}" filter plugin: {message}'


def fit_error(num_nodes: int, reasons: Mapping[str, int]) -> str:
    """FitError text from a reason histogram (no PreFilter or PostFilter message)."""
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."


def go_duration(seconds: float) -> str:
    """A duration as Go's time.Duration.String prints it: 10s, 1m0s, 1h0m0s, 500ms."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms"
    whole = int(seconds)
    frac = seconds - whole
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    sec = f"{s + frac:g}s"
    if h:
        return f"{h}h{m}m{sec}"
    if m:
        return f"{m}m{sec}"
    return sec
