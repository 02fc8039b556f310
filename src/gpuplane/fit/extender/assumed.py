"""Pods the extender answered for but does not yet see bound: their GPUs count as taken.

kube-scheduler binds asynchronously after the extender answers; until the extender's view shows
the binding, the next pod's answer would offer the same GPUs again. The rule (docs/live.md):

- ``bind`` (when the extender is kube's binder) assumes the pod on the node it bound;
- otherwise the extender's own choice is assumed: the top-scoring node of ``prioritize``, or the
  single node a ``filter`` kept (kube then skips prioritize);
- a new filter or prioritize for the same pod drops its assumption (it is being scheduled again,
  so it is not bound);
- an assumption ends when the view shows the pod holding a node (the watch saw the binding) or
  ``ttl_s`` after it was made, whichever is first.

Besides the book by uid, the assumptions are indexed by node and every change marks its node
dirty, so the view with assumed pods (:mod:`gpuplane.fit.extender.overlay`) replays only the
nodes whose assumptions changed since it last looked. Expiry walks the book from its oldest
entry while times only move forward (the service's monotonic clock), so a call costs the
assumptions that end, not all of them.

Times are given by the caller (the service's clock); nothing here reads one.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from itertools import pairwise

from gpuplane.fit.model import FitPod
from gpuplane.scheduler.framework.types import PodInfo

# An assumed pod's start time, as the node replay orders pods by it: after every bound pod
# (whose start times are Unix seconds), and in the order the pods were assumed. The service's
# clock (monotonic, for the TTL) would sort them before the bound pods instead, and the replay
# would then hand the assumed pods the GPUs the bound ones really hold.
ASSUMED_START_S = float(2**40)


@dataclass(frozen=True, slots=True)
class Assumption:
    pod: FitPod  # bound to the assumed node
    until_s: float
    source: str  # "bind", "prioritize" or "filter"


class AssumedPods:
    """The book of assumptions (a mutable owner; one per extender)."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        # Insertion order is expiry order while ``_ordered`` holds (times never went back).
        self._by_uid: dict[str, Assumption] = {}
        self._by_node: dict[str, dict[str, FitPod]] = {}
        self._dirty: set[str] = set()
        self._last_until = float("-inf")
        self._ordered = True
        self._seq = 0

    def assume(self, pod: PodInfo, node: str, now_s: float, source: str) -> None:
        if self.ttl_s <= 0:
            return
        self.forget(pod.uid)
        held = FitPod(pod, node, "Running", ASSUMED_START_S + self._seq)
        self._seq += 1
        until = now_s + self.ttl_s
        if until < self._last_until:
            self._ordered = False
        self._last_until = max(self._last_until, until)
        self._by_uid[pod.uid] = Assumption(held, until, source)
        self._by_node.setdefault(node, {})[pod.uid] = held
        self._dirty.add(node)

    def forget(self, uid: str) -> bool:
        found = self._by_uid.pop(uid, None)
        if found is None:
            return False
        node = str(found.pod.node)
        on_node = self._by_node[node]
        del on_node[uid]
        if not on_node:
            del self._by_node[node]
        self._dirty.add(node)
        return True

    def node_of(self, uid: str) -> str | None:
        found = self._by_uid.get(uid)
        return None if found is None else found.pod.node

    def expire(self, now_s: float) -> None:
        """Drop the assumptions whose time is up."""
        if not self._ordered:
            for uid in [u for u, a in self._by_uid.items() if a.until_s <= now_s]:
                self.forget(uid)
            self._ordered = self._in_order()
            return
        while self._by_uid:
            uid, first = next(iter(self._by_uid.items()))
            if first.until_s > now_s:
                return
            self.forget(uid)

    def _in_order(self) -> bool:
        times = [a.until_s for a in self._by_uid.values()]
        return all(a <= b for a, b in pairwise(times))

    def drop_bound(self, bound_uids: Collection[str]) -> None:
        """Drop the pods the view shows holding a node (the watch saw their binding)."""
        for uid in [u for u in self._by_uid if u in bound_uids]:
            self.forget(uid)

    def active(self, now_s: float, bound_uids: Collection[str]) -> tuple[FitPod, ...]:
        """The pods still assumed (expired ones and those the view shows bound are dropped)."""
        self.expire(now_s)
        self.drop_bound(bound_uids)
        return tuple(a.pod for a in self._by_uid.values())

    def on_node(self, node: str) -> tuple[FitPod, ...]:
        """The pods assumed on ``node``, oldest first."""
        found = self._by_node.get(node)
        return () if found is None else tuple(found.values())

    def nodes(self) -> tuple[str, ...]:
        """The nodes with at least one assumed pod."""
        return tuple(self._by_node)

    def take_dirty(self) -> set[str]:
        """The nodes whose assumptions changed since the last call (and forget them)."""
        dirty, self._dirty = self._dirty, set()
        return dirty

    def __len__(self) -> int:
        return len(self._by_uid)
