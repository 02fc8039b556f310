"""The object store: every node, pod and workload object of the run, plus per-node resource
arrays kept in step with binds and releases so scheduling can be vectorised.

Only the store changes a node's charged resources (``bind`` / ``release``), which is what keeps
the books balanced: a node's ``requested`` is always the sum of the requests of the pods that
hold resources on it, every GPU index has at most one owner, and a GPU either has an owner or
holds shares of fractional pods (``gpuplane.io/gpu-milli``), at most 1000 milli in all.

``gpu_free_milli`` is the scheduler's device view: per node and GPU index, the free milli-GPU
(1000 - shares for a healthy, advertised, unowned GPU; 0 otherwise; -1 past the node's GPUs).
"""

from __future__ import annotations

import numpy as np

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.fit import resources as res
from gpuplane.slicing.devices import DeviceSlot
from gpuplane.twin.cluster.objects import (
    DeploymentState,
    JobState,
    Node,
    Pod,
    PodGroupState,
    ReplicaSetState,
)

CORE = (CPU, MEMORY, NVIDIA_GPU, PODS)
GPU_MILLI = "gpuplane.io/gpu-milli"
MILLI_PER_GPU = 1000


class ObjectStore:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.node_order: list[str] = []
        self.pods: dict[str, Pod] = {}
        self.replica_sets: dict[str, ReplicaSetState] = {}
        self.deployments: dict[str, DeploymentState] = {}
        self.jobs: dict[str, JobState] = {}
        self.pod_groups: dict[str, PodGroupState] = {}
        self._index: dict[str, int] = {}
        # free = allocatable - requested, per core resource; schedulable = can take new pods.
        self.free = {k: np.zeros(0, dtype=np.int64) for k in CORE}
        self.alloc = {k: np.zeros(0, dtype=np.int64) for k in CORE}
        self.alloc_gpu = np.zeros(0, dtype=np.int64)
        self.schedulable = np.zeros(0, dtype=bool)
        self.gpu_free_milli = np.zeros((0, 0), dtype=np.int64)
        # Fractional pods: node -> milli taken per GPU index; pod uid -> (GPU index, milli).
        self.gpu_shares: dict[str, list[int]] = {}
        self.share_of: dict[str, tuple[int, int]] = {}
        # Pods that are neither terminal nor deleted (kept in step by the cluster's pod hooks).
        self.active: set[str] = set()

    # ----- nodes -----
    def add_node(self, node: Node) -> None:
        self.nodes[node.name] = node
        self._index[node.name] = len(self.node_order)
        self.node_order.append(node.name)
        for k in CORE:
            self.free[k] = np.append(self.free[k], 0)
            self.alloc[k] = np.append(self.alloc[k], 0)
        self.schedulable = np.append(self.schedulable, False)
        self.alloc_gpu = np.append(self.alloc_gpu, 0)
        n, g = self.gpu_free_milli.shape
        grown = np.full((n + 1, max(g, node.num_devices)), -1, dtype=np.int64)
        grown[:n, :g] = self.gpu_free_milli
        self.gpu_free_milli = grown
        self.gpu_shares[node.name] = [0] * node.num_devices
        self.refresh_node(node)

    def index_of(self, name: str) -> int:
        return self._index[name]

    def refresh_node(self, node: Node) -> None:
        """Recompute a node's free resources and schedulability after any change to it."""
        i = self._index[node.name]
        alloc = dict(node.allocatable)
        alloc[NVIDIA_GPU] = self.gpu_allocatable(node)
        self.alloc_gpu[i] = alloc[NVIDIA_GPU]
        for k in CORE:
            self.alloc[k][i] = alloc.get(k, 0)
            self.free[k][i] = alloc.get(k, 0) - node.requested.get(k, 0)
        self.schedulable[i] = node.ready and not node.unschedulable and not node.lost
        shares = self.gpu_shares[node.name]
        row = self.gpu_free_milli[i]
        for g in range(node.num_devices):
            usable = node.gpus_advertised and node.device_healthy(g) and node.gpu_owner[g] is None
            row[g] = MILLI_PER_GPU - shares[g] if usable else 0
        for name, slots in node.ext_slots.items():
            healthy = sum(1 for d in slots if node.gpu_healthy[d.gpu])
            node.allocatable[name] = healthy if node.gpus_advertised else 0

    @staticmethod
    def gpu_allocatable(node: Node) -> int:
        """What the device plugin advertises: healthy GPUs, once it is running."""
        if not node.gpus_advertised:
            return 0
        return sum(1 for d in range(node.num_devices) if node.device_healthy(d))

    def node_free(self, node: Node) -> dict[str, int]:
        alloc = dict(node.allocatable)
        alloc[NVIDIA_GPU] = self.gpu_allocatable(node)
        return res.sub(alloc, node.requested)

    # ----- pods -----
    def add_pod(self, pod: Pod) -> None:
        if pod.uid in self.pods:
            raise ValueError(f"pod uid {pod.uid} exists")
        self.pods[pod.uid] = pod
        if pod.is_active:
            self.active.add(pod.uid)

    def bind(
        self,
        pod: Pod,
        node: Node,
        gpu_ids: tuple[int, ...],
        t_s: float,
        share: tuple[int, int] | None = None,
        ext: dict[str, tuple[int, ...]] | None = None,
    ) -> None:
        """Charge ``pod`` to ``node``: its requests, whole GPUs ``gpu_ids``, and for a fractional
        pod ``share`` = (GPU index, milli)."""
        if pod.node_name is not None:
            raise ValueError(f"pod {pod.key} is already bound to {pod.node_name}")
        shares = self.gpu_shares[node.name]
        for g in gpu_ids:
            if node.gpu_owner[g] is not None or not node.device_healthy(g) or shares[g]:
                raise ValueError(f"GPU {g} of {node.name} is not free for {pod.key}")
        for name, ids in (ext or {}).items():
            owners = node.ext_owner[name]
            for d in ids:
                if owners[d] is not None or not node.gpu_healthy[node.ext_slots[name][d].gpu]:
                    raise ValueError(f"{name} device {d} of {node.name} is not free for {pod.key}")
        if share is not None:
            g, milli = share
            if node.gpu_owner[g] is not None or shares[g] + milli > MILLI_PER_GPU:
                raise ValueError(f"GPU {g} of {node.name} has no {milli} milli free for {pod.key}")
            shares[g] += milli
            self.share_of[pod.uid] = share
        for g in gpu_ids:
            node.gpu_owner[g] = pod.uid
        for name, ids in (ext or {}).items():
            for d in ids:
                node.ext_owner[name][d] = pod.uid
        pod.ext_device_ids = dict(ext or {})
        pod.node_name = node.name
        pod.gpu_ids = gpu_ids
        pod.scheduled_s = t_s
        pod.conditions["PodScheduled"] = True
        node.requested = res.add(node.requested, self.charge(pod))
        node.pods.add(pod.uid)
        self.refresh_node(node)

    def release(self, pod: Pod) -> None:
        """Give a bound pod's resources back (it finished, failed or was deleted)."""
        if pod.node_name is None or pod.uid not in self.nodes[pod.node_name].pods:
            return
        node = self.nodes[pod.node_name]
        for g in pod.gpu_ids:
            if node.gpu_owner[g] == pod.uid:
                node.gpu_owner[g] = None
        for name, ids in pod.ext_device_ids.items():
            owners = node.ext_owner.get(name, [])
            for d in ids:
                if d < len(owners) and owners[d] == pod.uid:
                    owners[d] = None
        share = self.share_of.pop(pod.uid, None)
        if share is not None:
            self.gpu_shares[node.name][share[0]] -= share[1]
        node.requested = {k: v for k, v in res.sub(node.requested, self.charge(pod)).items() if v}
        node.pods.discard(pod.uid)
        node.exclusive_cpus.pop(pod.uid, None)
        self.refresh_node(node)

    def move_gpus(self, pod: Pod, gpu_ids: tuple[int, ...]) -> None:
        """Swap a bound pod's whole GPUs for ``gpu_ids`` (the kubelet allocated others than the
        ones charged at binding); the count stays the same."""
        node = self.nodes[pod.node_name] if pod.node_name is not None else None
        if node is None or len(gpu_ids) != len(pod.gpu_ids):
            raise ValueError(f"cannot move GPUs of {pod.key} to {gpu_ids}")
        shares = self.gpu_shares[node.name]
        for g in gpu_ids:
            owner = node.gpu_owner[g]
            if (owner is not None and owner != pod.uid) or not node.device_healthy(g) or shares[g]:
                raise ValueError(f"GPU {g} of {node.name} is not free for {pod.key}")
        for g in pod.gpu_ids:
            node.gpu_owner[g] = None
        for g in gpu_ids:
            node.gpu_owner[g] = pod.uid
        pod.gpu_ids = gpu_ids
        self.refresh_node(node)

    @staticmethod
    def charge(pod: Pod) -> dict[str, int]:
        return res.add(pod.requests, {PODS: 1})

    # ----- queries -----
    def reshape_ext_devices(self, node: Node, ext: dict[str, list[DeviceSlot]]) -> None:
        """Replace the node's non-``nvidia.com/gpu`` devices (a MIG layout changed), keeping
        every held device with its owner; a held device missing from ``ext`` is an error."""

        def key(slot: DeviceSlot) -> tuple[object, ...]:
            return (slot.gpu, slot.kind, slot.profile, slot.start, slot.replica)

        held: dict[tuple[str, tuple[object, ...]], str] = {}
        for name, owners in node.ext_owner.items():
            for d, uid in enumerate(owners):
                if uid is not None:
                    held[(name, key(node.ext_slots[name][d]))] = uid
        owners_by_name = {
            name: [held.pop((name, key(slot)), None) for slot in slots]
            for name, slots in ext.items()
        }
        if held:
            raise ValueError(f"{node.name}: devices in use would disappear: {sorted(held)}")
        for gone in set(node.ext_slots) - set(ext):
            node.allocatable.pop(gone, None)
            node.capacity.pop(gone, None)
        node.ext_slots = {k: list(v) for k, v in ext.items()}
        node.ext_owner = owners_by_name
        for name, slots in ext.items():
            node.capacity[name] = len(slots)
        for uid in node.pods:
            pod = self.pods[uid]
            if pod.ext_device_ids:
                pod.ext_device_ids = {
                    name: tuple(d for d, o in enumerate(owners_by_name[name]) if o == uid)
                    for name in pod.ext_device_ids
                }
        self.refresh_node(node)

    def free_ext_devices(self, node: Node, name: str) -> list[int]:
        """Free, healthy devices of a non-``nvidia.com/gpu`` device resource."""
        if not node.gpus_advertised:
            return []
        owners = node.ext_owner.get(name, [])
        slots = node.ext_slots.get(name, [])
        return [d for d, o in enumerate(owners) if o is None and node.gpu_healthy[slots[d].gpu]]

    def free_whole_gpus(self, node: Node) -> list[int]:
        """GPU indices a whole-GPU pod may take: free, healthy, advertised and unshared."""
        shares = self.gpu_shares[node.name]
        return [g for g in node.free_gpu_ids() if not shares[g]]

    def pods_on(self, node: Node) -> list[Pod]:
        return [self.pods[u] for u in sorted(node.pods)]

    def live_pods(self) -> list[Pod]:
        return [p for p in self.pods.values() if not p.is_deleted]
