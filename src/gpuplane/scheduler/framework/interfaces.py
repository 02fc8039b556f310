"""Extension points, one Protocol each (kube-scheduler: pkg/scheduler/framework/interface.go).

Order of a scheduling cycle: QueueSort (orders the queue) -> PreFilter -> Filter -> PostFilter
(only when no node fits) -> PreScore -> Score -> NormalizeScore -> Reserve -> Permit; then the
binding cycle: PreBind -> Bind. Unreserve undoes Reserve when a later step fails.

Where kube-scheduler calls Filter and Score once per node, gpuplane's hot plugins answer for every
node at once: ``filter`` returns a boolean mask over all nodes and ``score`` an int array over the
feasible nodes it is given. Every Filter and Score plugin also answers for one node
(``filter_node``, ``score_node``): the plain reference the fast path is tested against, and what
preemption's per-node dry run uses. A fragmentation-aware scorer (FGD, gpuplane's own policy)
plugs in as a ScorePlugin whose ``score`` wraps a vectorised function over the node arrays.

Plugins get a ``Handle`` (the framework running them) when built, as kube-scheduler's ``New``
does; nothing in a plugin reads a clock or keeps per-decision state outside ``ClusterState`` and
the Handle's ``writes`` (the decision's ``WriteSink``, where a plugin records what must be written
when a pod binds: the decision carries it, the caller applies it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup
from gpuplane.scheduler.framework.state import ClusterState, CycleState, Placement
from gpuplane.scheduler.framework.status import Status
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.framework.writes import WriteSink

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

# Extension point names as KubeSchedulerConfiguration spells them.
QUEUE_SORT = "queueSort"
PRE_FILTER = "preFilter"
FILTER = "filter"
POST_FILTER = "postFilter"
PRE_SCORE = "preScore"
SCORE = "score"
RESERVE = "reserve"
PERMIT = "permit"
PRE_BIND = "preBind"
BIND = "bind"
EXTENSION_POINTS = (
    QUEUE_SORT,
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
)


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue (kube-scheduler's QueuedPodInfo); the queue owns and
    updates it, QueueSort plugins only read it."""

    pod: PodInfo
    # When the pod was last added or re-queued after a failed attempt (PrioritySort's key).
    timestamp_s: float
    # When the pod first entered the queue (Coscheduling orders non-gang pods by it).
    initial_attempt_s: float
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    status: Status
    nominated_node: int | None = None
    victims: tuple[str, ...] = ()  # uids of the pods to evict for the nomination
    clear_nominations: tuple[str, ...] = ()  # lower-priority pods nominated to the same node
    # Clear the pod's own nomination (kube: a result nominating "").
    clear: bool = False


class Handle(Protocol):
    """What plugins may ask of the framework running them (kube-scheduler's framework.Handle)."""

    @property
    def profile_name(self) -> str: ...

    @property
    def writes(self) -> WriteSink:
        """The running decision's write sink (kube: the ClientSet and the DRA manager)."""
        ...

    def run_filters_with_nominated(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int, *, dynamic_only: bool = False
    ) -> Status: ...

    def allow_waiting(self, st: ClusterState, uid: str, plugin: str) -> None: ...

    def reject_waiting(self, st: ClusterState, uid: str, plugin: str, message: str) -> None: ...


class Plugin(Protocol):
    name: ClassVar[str]
    # Extension points the plugin implements (checked against the profile).
    extension_points: ClassVar[frozenset[str]]
    # What the plugin does not model, in words (shown in errors and docs).
    unsupported: ClassVar[tuple[str, ...]]


class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, queued: QueuedPodInfo) -> tuple[object, ...]: ...


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        """SUCCESS, SKIP (the plugin's Filter does not run for the pod) or a rejection."""
        ...


class FilterPlugin(Plugin, Protocol):
    """A plugin may set ``static_filter = True`` when its verdict depends only on node labels,
    taints and cordoning: preemption's dry run then checks it once per node, not per victim.
    A plugin whose Filter can answer Error (not a rejection: the pod's attempt fails) sets
    ``filter_may_error = True``, and its ``filter_reasons`` groups carry ``Code.ERROR``.
    One that reads the pods added to or taken off a node for one filter run
    (``ClusterState.added_on``/``removed_on``: kube's PreFilterExtensions AddPod/RemovePod) sets
    ``reads_moved_pods = True``; the state keeps those books only while such a plugin runs."""

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        """Mask of the nodes that pass (None: all of them)."""
        ...

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        """Why each of ``nodes`` (all rejected by ``filter``) fails."""
        ...

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        """The reference: node ``i`` alone."""
        ...


class FitsAfterOthers(Plugin, Protocol):
    """Optional, for Filter plugins whose verdict can turn from "no" to "yes" when other pods are
    placed (required pod affinity, hard spreading): the scheduler then does not reuse one pod's
    failure for an identical pod of the same decision."""

    def may_fit_after_others(self, pod: PodInfo) -> bool: ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, diagnosis: Diagnosis
    ) -> PostFilterResult: ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> Status:
        """SKIP: this plugin's Score is skipped for the pod."""
        ...


class ScorePlugin(Plugin, Protocol):
    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        """One integer per node of ``nodes`` (before normalisation)."""
        ...

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int: ...


class NormalizeScorePlugin(ScorePlugin, Protocol):
    """A Score plugin with ScoreExtensions: scores mapped into [0, 100] over the feasible nodes."""

    def normalize(self, scores: IntArray) -> IntArray: ...

    def normalize_reference(self, scores: list[int]) -> list[int]: ...


class ReservePlugin(Plugin, Protocol):
    def reserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status: ...

    def unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None: ...


class PermitPlugin(Plugin, Protocol):
    def permit(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        """SUCCESS, WAIT (with ``wait_s``) or a rejection."""
        ...


class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, cs: CycleState, pod: PodInfo, node: str) -> Status: ...


class BindPlugin(Plugin, Protocol):
    def bind(self, cs: CycleState, pod: PodInfo, node: str) -> Status:
        """SUCCESS (bound), SKIP (let the next Bind plugin do it) or a rejection."""
        ...


# A PreFilter plugin that narrows the candidate nodes (kube's PreFilterResult.NodeNames) leaves
# their indices here (an int64 array, sorted); only they are filtered, and the others get no
# status, so they stay out of the FitError's histogram (still counted in its "0/N").
PRE_FILTER_NODES_KEY = "gpuplane/pre-filter-nodes"


def pre_filter_nodes(cs: CycleState) -> IntArray | None:
    value = cs.data.get(PRE_FILTER_NODES_KEY)
    return value if isinstance(value, np.ndarray) else None


# The Reserve plugin that picked a pod's devices leaves them here for the framework to assume.
PLACEMENT_KEY = "gpuplane/placement"


def chosen_placement(cs: CycleState) -> Placement | None:
    value = cs.data.get(PLACEMENT_KEY)
    return value if isinstance(value, Placement) else None
