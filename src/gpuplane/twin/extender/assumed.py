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

Times are given by the caller (the service's clock); nothing here reads one.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.twin.fit.model import FitPod


@dataclass(frozen=True, slots=True)
class Assumption:
    pod: FitPod  # bound to the assumed node
    until_s: float
    source: str  # "bind", "prioritize" or "filter"


class AssumedPods:
    """The book of assumptions (a mutable owner; one per extender)."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._by_uid: dict[str, Assumption] = {}

    def assume(self, pod: PodInfo, node: str, now_s: float, source: str) -> None:
        if self.ttl_s <= 0:
            return
        held = FitPod(pod, node, "Running", now_s)
        self._by_uid[pod.uid] = Assumption(held, now_s + self.ttl_s, source)

    def forget(self, uid: str) -> bool:
        return self._by_uid.pop(uid, None) is not None

    def node_of(self, uid: str) -> str | None:
        found = self._by_uid.get(uid)
        return None if found is None else found.pod.node

    def active(self, now_s: float, bound_uids: Collection[str]) -> tuple[FitPod, ...]:
        """The pods still assumed (expired ones and those the view shows bound are dropped)."""
        for uid, a in list(self._by_uid.items()):
            if a.until_s <= now_s or uid in bound_uids:
                del self._by_uid[uid]
        return tuple(a.pod for a in self._by_uid.values())

    def __len__(self) -> int:
        return len(self._by_uid)
