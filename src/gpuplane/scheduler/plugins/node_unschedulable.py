"""NodeUnschedulable (kube-scheduler: framework/plugins/nodeunschedulable): a cordoned node
(spec.unschedulable) takes only pods that tolerate ``node.kubernetes.io/unschedulable:NoSchedule``.
Rejections are UnschedulableAndUnresolvable: evicting pods does not uncordon a node.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from gpuplane.api.taints import Taint, tolerated
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.static_cache import StaticCache
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unresolvable
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable:
    name: ClassVar[str] = "NodeUnschedulable"
    extension_points: ClassVar[frozenset[str]] = frozenset({FILTER})
    unsupported: ClassVar[tuple[str, ...]] = ()
    static_filter: ClassVar[bool] = True

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        self._cache: StaticCache[BoolArray] = StaticCache()

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        if tolerated(UNSCHEDULABLE_TAINT, pod.tolerations):
            return None
        return self._cache.get(st.snap, "cordon", lambda: ~st.snap.unschedulable)

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        return [ReasonGroup(self.name, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON, nodes)]

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        if bool(st.snap.unschedulable[i]) and not tolerated(UNSCHEDULABLE_TAINT, pod.tolerations):
            return unresolvable(REASON)
        return SUCCESS
