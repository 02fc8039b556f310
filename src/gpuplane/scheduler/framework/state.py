"""The working copy of a snapshot inside one decision (kube-scheduler's cache with assumed pods).

``decide`` never changes its snapshot: it copies the mutable columns here and assumes each pod it
places, so the next pod of the same decision sees the room the previous ones took. Pods waiting at
Permit hold their reservation here too, and preemption's dry run removes and restores bound pods
node by node. Everything is undone or discarded when the decision returns.

Plugins that count pods (PodTopologySpread, InterPodAffinity) read the bound pods grouped by
labels (``bound_index``), the pods assumed so far (``assumed_pods``), and the pods on a node only
for one filter run: nominated pods added there (``added_on``) and bound pods preemption's dry run
took off (``removed_on``); kube-scheduler tells them through PreFilter's AddPod and RemovePod.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.scheduler.framework.nonzero import nonzero_extra
from gpuplane.scheduler.framework.pod_index import AffinityGroup, PodLabelIndex, has_pod_affinity
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import (
    GPU_MILLI,
    MILLI_PER_GPU,
    BoundPod,
    GpuShare,
    IntArray,
    PodInfo,
)

P = TypeVar("P", PodInfo, BoundPod)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a pod sits: node index and the devices it holds."""

    node: int
    gpu_ids: tuple[int, ...] = ()
    share: GpuShare | None = None


class CycleState:
    """Per-pod scratch data shared by the plugins of one scheduling cycle (kube's CycleState);
    ``skip_filter`` names the plugins whose PreFilter answered Skip: their Filter does not run
    for the pod (kube's SkipFilterPlugins)."""

    __slots__ = ("data", "skip_filter")

    def __init__(self) -> None:
        self.data: dict[str, object] = {}
        self.skip_filter: set[str] = set()


@dataclass(slots=True)
class Waiting:
    """A pod waiting at Permit: its reservation, its cycle state and the plugins still to allow
    it; ``plugin`` is the one whose wait ends first (it rejects the pod on timeout)."""

    pod: PodInfo
    placement: Placement
    deadline_s: float
    plugin: str
    wait_s: float
    pending: set[str]
    cs: CycleState


def pick_whole_gpus(row: IntArray, count: int) -> tuple[int, ...]:
    """The lowest-indexed entirely free GPUs (the device plugin's plain choice)."""
    free = np.flatnonzero(row == MILLI_PER_GPU)
    return tuple(int(g) for g in free[:count]) if free.size >= count else ()


def pick_share_gpu(row: IntArray, milli: int) -> int | None:
    """Best fit: the GPU with the least free milli that still holds the share (lowest index on
    ties), so shares pack onto partly used GPUs and whole GPUs stay whole."""
    fits = np.flatnonzero(row >= milli)
    if fits.size == 0:
        return None
    return int(fits[np.argmin(row[fits])])


class ClusterState:
    """Mutable per-decision state; owner of the assumed pods, waiting pods and nominations."""

    def __init__(self, snap: ClusterSnapshot) -> None:
        self.snap = snap
        self.num_nodes = snap.num_nodes
        self.row = {name: i for i, name in enumerate(snap.resources)}
        self._pods_row, self._gpu_row = self.row[PODS], self.row[NVIDIA_GPU]
        self._milli_row = self.row[GPU_MILLI]
        self.alloc = snap.allocatable
        # Only free room is kept; requested = allocatable - free, read by scoring.
        self.free = self.alloc - snap.requested
        self.gpu = snap.gpu_free_milli.copy()
        self.now_s = snap.now_s
        self.next_start = snap.next_start_index % self.num_nodes if self.num_nodes else 0
        self.assumed: dict[str, tuple[PodInfo, Placement]] = {}
        self.waiting: dict[str, Waiting] = {}
        self.nominated: dict[str, tuple[PodInfo, int]] = {}
        self.group_assumed: dict[str, int] = {}
        # Waiting pods a plugin allowed or rejected, for the scheduler to finish.
        self.allowed: list[str] = []
        self.rejections: list[tuple[str, str, str]] = []  # (uid, plugin, message)
        # Bumped whenever room is given back: results cached for "no room" are stale then.
        self.version = 0
        self._index: dict[str, int] | None = None
        self._pods_on: list[list[BoundPod]] | None = None
        self._lowest_priority: IntArray | None = None
        # Scoring's non-zero defaults (framework/nonzero.py) of the pods on each node, rows cpu
        # and memory: those bound at snapshot time (summed when first read) plus the changes
        # since (assumed pods, preemption's dry-run removals).
        self._nonzero_bound: IntArray | None = None
        self._nonzero_delta = np.zeros((2, self.num_nodes), dtype=np.int64)
        # Results plugins share for the whole decision, under keys they choose (the pods that
        # match a selector, per node: counted once for every pod of the decision).
        self.memo: dict[Hashable, object] = {}
        self.assumed_pods = PodLabelIndex()
        # node -> uid -> pod, for one filter run (see the module's docstring); kept only while
        # ``track_moves`` (the running cycle has a Filter plugin that reads them).
        self.track_moves = False
        self._added_on: dict[int, dict[str, PodInfo]] = {}
        self._removed_on: dict[int, dict[str, BoundPod]] = {}
        self._bound_index: PodLabelIndex | None = snap.pod_index
        self._bound_affinity: PodLabelIndex | None = None

    # ----- lookups -----
    def index_of(self, node: str) -> int:
        if self._index is None:
            self._index = {name: i for i, name in enumerate(self.snap.node_names)}
        return self._index[node]

    def name_of(self, i: int) -> str:
        return self.snap.node_names[i]

    def node_index(self) -> Mapping[str, int]:
        """Node name -> index."""
        if self._index is None:
            self._index = {name: i for i, name in enumerate(self.snap.node_names)}
        return self._index

    def find(self, node: str) -> int | None:
        """The index of ``node``, None if the snapshot does not hold it."""
        return self.node_index().get(node)

    def bound_index(self) -> PodLabelIndex:
        """The snapshot's bound pods grouped by labels (the caller's index, or built once)."""
        if self._bound_index is None:
            self._bound_index = PodLabelIndex.of_bound(self.snap.bound_pods.values())
        return self._bound_index

    def bound_with_affinity(self) -> Collection[AffinityGroup]:
        """Bound pods carrying pod (anti-)affinity rules (kube: NodeInfo.PodsWithAffinity), by
        equal labels and rules."""
        if self._bound_index is not None:
            return self._bound_index.with_affinity()
        if self._bound_affinity is None:
            self._bound_affinity = PodLabelIndex.of_bound(
                p
                for p in self.snap.bound_pods.values()
                if p.affinity and has_pod_affinity(p.affinity)
            )
        return self._bound_affinity.with_affinity()

    def any_pod_affinity(self) -> bool:
        """Whether a bound or assumed pod carries pod (anti-)affinity rules."""
        return bool(self.bound_with_affinity()) or bool(self.assumed_pods.with_affinity())

    def pods_on(self, i: int) -> list[BoundPod]:
        """Pods bound on node ``i`` at snapshot time (what preemption may evict)."""
        if self._pods_on is None:
            self._pods_on = [[] for _ in range(self.num_nodes)]
            for pod in self.snap.bound_pods.values():
                self._pods_on[self.index_of(pod.node)].append(pod)
        return self._pods_on[i]

    def lowest_priority(self) -> IntArray:
        """Per node, the lowest priority of its bound pods (a huge number on empty nodes)."""
        if self._lowest_priority is None and self.snap.lowest_priority is not None:
            self._lowest_priority = self.snap.lowest_priority
        if self._lowest_priority is None:
            low = np.full(self.num_nodes, np.iinfo(np.int64).max, dtype=np.int64)
            for pod in self.snap.bound_pods.values():
                i = self.index_of(pod.node)
                low[i] = min(int(low[i]), pod.priority)
            self._lowest_priority = low
        return self._lowest_priority

    # ----- charging -----
    def charge(
        self,
        i: int,
        requests: Mapping[str, int],
        place: Placement,
        sign: int,
        *,
        track: bool = True,
    ) -> None:
        """Add (sign=1) or remove (sign=-1) a pod's requests and devices on node ``i``;
        ``track=False`` for a removal that is undone before anyone else looks (a dry run)."""
        for name, amount in requests.items():
            if amount and name not in (NVIDIA_GPU, GPU_MILLI):
                k = self.row.get(name)
                if k is not None:
                    self.free[k, i] -= sign * amount
        self.free[self._pods_row, i] -= sign
        extra_cpu, extra_mem = nonzero_extra(requests)
        if extra_cpu or extra_mem:
            self._nonzero_delta[0, i] += sign * extra_cpu
            self._nonzero_delta[1, i] += sign * extra_mem
        whole = milli = 0  # change of the node's free whole GPUs and free milli
        if place.gpu_ids:
            self.gpu[i, list(place.gpu_ids)] = 0 if sign > 0 else MILLI_PER_GPU
            whole = -sign * len(place.gpu_ids)
            milli = whole * MILLI_PER_GPU
        if place.share is not None:
            g = place.share.gpu
            before = int(self.gpu[i, g])
            after = before - sign * place.share.milli
            self.gpu[i, g] = after
            whole += (after == MILLI_PER_GPU) - (before == MILLI_PER_GPU)
            milli -= sign * place.share.milli
        if whole or milli:
            self._shift_gpu_rows(i, whole, milli)
        if sign < 0 and track:
            self.version += 1

    def requested(self, row: int, nodes: IntArray) -> IntArray:
        """What the pods on ``nodes`` (bound and assumed) request of resource ``row``."""
        used: IntArray = self.alloc[row, nodes] - self.free[row, nodes]
        return used

    def nonzero_requested(self, row: int, nodes: IntArray) -> IntArray:
        """``requested`` as kube's resource scoring reads it (NodeInfo.NonZeroRequested): cpu
        and memory include the non-zero defaults of the pods that request none."""
        used = self.requested(row, nodes)
        name = self.snap.resources[row]
        if name not in (CPU, MEMORY):
            return used
        if self._nonzero_bound is None:
            bound = np.zeros((2, self.num_nodes), dtype=np.int64)
            for pod in self.snap.bound_pods.values():
                extra_cpu, extra_mem = nonzero_extra(pod.requests)
                if extra_cpu or extra_mem:
                    i = self.index_of(pod.node)
                    bound[0, i] += extra_cpu
                    bound[1, i] += extra_mem
            self._nonzero_bound = bound
        k = 0 if name == CPU else 1
        out: IntArray = used + self._nonzero_bound[k, nodes] + self._nonzero_delta[k, nodes]
        return out

    def add_nominated(self, i: int, pod: PodInfo, sign: int) -> None:
        """Count (sign=1) or stop counting (sign=-1) a nominated pod on node ``i`` for a filter
        run, as RunFilterPluginsWithNominatedPods adds it to the node (AddPod)."""
        self.charge_rows(i, pod.requests, sign)
        if self.track_moves:
            _move(self._added_on, i, pod, sign > 0)

    def remove_bound(self, i: int, pod: BoundPod, sign: int) -> None:
        """Take a bound pod off node ``i`` (sign=-1) for preemption's dry run, or put it back
        (sign=1); no other pod sees the change (RemovePod on a copy of the node)."""
        place = Placement(i, pod.gpu_ids, pod.gpu_share)
        self.charge(i, pod.requests, place, sign, track=False)
        if self.track_moves:
            _move(self._removed_on, i, pod, sign < 0)

    def added_on(self, i: int) -> Collection[PodInfo]:
        """Pods counted on node ``i`` for this filter run only (nominated pods)."""
        pods = self._added_on.get(i)
        return pods.values() if pods else ()

    def removed_on(self, i: int) -> Collection[BoundPod]:
        """Bound pods taken off node ``i`` for this filter run (preemption's dry run)."""
        pods = self._removed_on.get(i)
        return pods.values() if pods else ()

    def moved_nodes(self) -> set[int]:
        """The nodes with pods added or taken off for this filter run."""
        return {*self._added_on, *self._removed_on}

    def charge_rows(self, i: int, requests: Mapping[str, int], sign: int) -> None:
        """Requests only, devices unknown (a nominated pod, as NodeInfo.AddPod counts it)."""
        for name, amount in requests.items():
            k = self.row.get(name)
            if amount and k is not None:
                self.free[k, i] -= sign * amount
        if NVIDIA_GPU in requests:
            self.free[self.row[GPU_MILLI], i] -= sign * requests[NVIDIA_GPU] * MILLI_PER_GPU
        self.free[self.row[PODS], i] -= sign

    def _shift_gpu_rows(self, i: int, whole: int, milli: int) -> None:
        self.free[self._gpu_row, i] += whole
        self.free[self._milli_row, i] += milli

    def default_placement(self, i: int, pod: PodInfo) -> Placement:
        """Devices for a pod when no Reserve plugin chose them."""
        whole = pod.requests.get(NVIDIA_GPU, 0)
        ids = pick_whole_gpus(self.gpu[i], whole) if whole else ()
        share = None
        if pod.gpu_milli:
            g = pick_share_gpu(self.gpu[i], pod.gpu_milli)
            share = GpuShare(g, pod.gpu_milli) if g is not None else None
        return Placement(i, ids, share)

    # ----- assumed pods -----
    def assume(self, pod: PodInfo, place: Placement) -> None:
        self.charge(place.node, pod.requests, place, 1)
        self.assumed[pod.uid] = (pod, place)
        self.assumed_pods.add(pod, self.name_of(place.node))
        group = pod.group_key
        if group is not None:
            self.group_assumed[group] = self.group_assumed.get(group, 0) + 1

    def forget(self, uid: str) -> None:
        pod, place = self.assumed.pop(uid)
        self.charge(place.node, pod.requests, place, -1)
        self.assumed_pods.remove(uid)
        self.waiting.pop(uid, None)
        group = pod.group_key
        if group is not None:
            self.group_assumed[group] -= 1

    def assigned_in_group(self, group: str, exclude_uid: str) -> int:
        """Members with a node (bound, or assumed in this decision), not counting ``exclude_uid``
        (Coscheduling's CalculateAssignedPods over a snapshot taken before the pod was assumed)."""
        info = self.snap.pod_groups.get(group)
        base = info.assigned if info is not None else 0
        count = base + self.group_assumed.get(group, 0)
        assumed = self.assumed.get(exclude_uid)
        if assumed is not None and assumed[0].group_key == group:
            count -= 1
        return count

    def waiting_in_group(self, group: str) -> list[str]:
        return [uid for uid, w in self.waiting.items() if w.pod.group_key == group]

    # ----- nominations -----
    def nominate(self, pod: PodInfo, node: int) -> None:
        self.nominated[pod.uid] = (pod, node)

    def nominated_for(self, pod: PodInfo) -> dict[int, list[PodInfo]]:
        """Per node, the pods nominated there that ``pod`` must make room for (priority >=)."""
        out: dict[int, list[PodInfo]] = {}
        for uid, (other, node) in self.nominated.items():
            if uid != pod.uid and other.priority >= pod.priority:
                out.setdefault(node, []).append(other)
        return out


def _move(on: dict[int, dict[str, P]], i: int, pod: P, add: bool) -> None:
    """Put ``pod`` in node ``i``'s book (add) or take it out."""
    if add:
        on.setdefault(i, {})[pod.uid] = pod
        return
    pods = on[i]
    del pods[pod.uid]
    if not pods:
        del on[i]
