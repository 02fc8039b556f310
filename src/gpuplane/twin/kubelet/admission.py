"""The kubelet's admission of a bound pod on a twin node, through ``gpuplane.kubelet``.

The decision is the kubelet layer's pure ``admit_pod`` (Topology Manager with the CPU, memory
and device managers as hint providers); this module builds its input from the twin's node (the
node's KubeletConfiguration, the CPUs other pods hold exclusively, the GPUs other pods own or
share, unhealthy GPUs) and hands back the verdict. The device plugin's preferred GPUs come from
the node's ``gpuAllocationPolicy`` (``gpuplane.kubelet.device_choice``). ``at_bind`` makes the
pod's ``BindAllocation``: its devices and, where the kubelet manages resources, the verdict.

Not modelled: the memory manager's per-NUMA bookkeeping of other pods' memory (its hints see
each NUMA node's whole memory), hugepages, and devices other than ``nvidia.com/gpu``.
"""

from __future__ import annotations

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.fit.workload_objects import ContainerSpec
from gpuplane.kubelet.admission import AdmitResult, ContainerRequest, GpuChooser, admit_pod
from gpuplane.kubelet.admission import node_state as kubelet_node_state
from gpuplane.kubelet.config import CpuManagerPolicy, MemoryManagerPolicy
from gpuplane.kubelet.device_choice import gpu_chooser
from gpuplane.slicing.devices import DeviceSlot
from gpuplane.slicing.sharing.advertise import distribute
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.store import GPU_MILLI, ObjectStore
from gpuplane.twin.kubelet.bind_allocation import BindAllocation


class NodeAdmission:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self._choosers: dict[str, GpuChooser] = {}

    def chooser(self, node: Node) -> GpuChooser:
        got = self._choosers.get(node.name)
        if got is None:
            got = self._choosers[node.name] = gpu_chooser(
                node.topology, node.kubelet.gpu_allocation
            )
        return got

    def at_bind(
        self,
        node: Node,
        pod: Pod,
        gpu_share: tuple[int, int] | None = None,
        dra_devices: tuple[str, ...] = (),
    ) -> BindAllocation:
        """The pod's devices on ``node`` and, where the kubelet manages resources, its verdict
        (computed once: the GPU choice and the CPU hold both read it). ``gpu_share`` is the
        scheduler's choice for a fractional pod, as a sharing device plugin reads it from the
        pod; without one a fractional pod gets the fullest GPU that still holds it."""
        verdict = self.admit(node, pod) if node.kubelet.manages_resources else None
        gpus = self.gpus_at_bind(node, pod, verdict) if pod.requests.get(NVIDIA_GPU, 0) else ()
        milli = pod.requests.get(GPU_MILLI, 0)
        if gpu_share is None and milli:
            row = self.store.gpu_free_milli[self.store.index_of(node.name)]
            fits = [g for g in range(node.num_gpus) if row[g] >= milli]
            gpu_share = (min(fits, key=lambda g: (row[g], g)), milli) if fits else None
        return BindAllocation(
            node.name, gpus, gpu_share, self.ext_devices_at_bind(node, pod), dra_devices, verdict
        )

    def gpus_at_bind(
        self, node: Node, pod: Pod, verdict: AdmitResult | None = None
    ) -> tuple[int, ...]:
        """The GPUs the kubelet will allocate to ``pod`` on ``node``: inside the Topology
        Manager's affinity (``verdict``) where the node runs one, else the device plugin's
        preference among the free whole GPUs (the lowest ids if it has none)."""
        need = pod.requests.get(NVIDIA_GPU, 0)
        if not need:
            return ()
        free = self.store.free_whole_gpus(node)
        if not node.devices_are_gpus:
            return tuple(sorted(self._replicas(node.device_slots, node.gpu_owner, free, need)))
        if verdict is not None and verdict.admit and len(verdict.gpus) == need:
            # The kubelet allocates at admission, inside the NUMA affinity it will choose.
            return verdict.gpus
        chosen = self.chooser(node)(free, need)
        return tuple(sorted(chosen)) if chosen is not None else tuple(free[:need])

    def ext_devices_at_bind(self, node: Node, pod: Pod) -> dict[str, tuple[int, ...]]:
        """Devices of the pod's other device resources (``nvidia.com/gpu.shared``, MIG)."""
        out: dict[str, tuple[int, ...]] = {}
        for name, slots in node.ext_slots.items():
            need = pod.requests.get(name, 0)
            if need:
                free = self.store.free_ext_devices(node, name)
                out[name] = tuple(sorted(self._replicas(slots, node.ext_owner[name], free, need)))
        return out

    @staticmethod
    def _replicas(
        slots: list[DeviceSlot], owners: list[str | None], free: list[int], need: int
    ) -> list[int]:
        """The plugin's distributed choice: each device from the physical GPU with the fewest
        devices in use (lowest index on ties); the lowest free ids when that cannot be met."""
        gpus = sorted({s.gpu for s in slots})
        used = [sum(1 for d, s in enumerate(slots) if s.gpu == g and owners[d]) for g in gpus]
        free_by_gpu = [[d for d in free if slots[d].gpu == g] for g in gpus]
        order = distribute(used, [len(f) for f in free_by_gpu], need)
        if not order:
            return free[:need]
        picked = []
        for k in order:
            picked.append(free_by_gpu[k].pop(0))
        return picked

    def admit(self, node: Node, pod: Pod) -> AdmitResult:
        """The kubelet's verdict on ``pod`` (already charged to ``node``) and its allocation."""
        cfg = node.kubelet
        taken_cpus = frozenset(
            c for uid, cpus in node.exclusive_cpus.items() if uid != pod.uid for c in cpus
        )
        shares = self.store.gpu_shares[node.name]
        taken_gpus = (
            frozenset(
                g
                for g in range(node.num_gpus)
                if (node.gpu_owner[g] not in (None, pod.uid))
                or shares[g]
                or not node.gpus_advertised
            )
            if node.devices_are_gpus
            else frozenset()
        )
        unhealthy = frozenset(g for g in range(node.num_gpus) if not node.gpu_healthy[g])
        state = kubelet_node_state(
            node.topology,
            policy=cfg.topology_manager_policy,
            scope=cfg.topology_manager_scope.value,
            options=cfg.topology_manager_policy_options,
            cpu_manager_static=cfg.cpu_manager_policy is CpuManagerPolicy.STATIC,
            memory_manager_static=cfg.memory_manager_policy is MemoryManagerPolicy.STATIC,
            reserved_cpus=cfg.reserved_cpus,
            taken_cpus=taken_cpus,
            taken_gpus=taken_gpus,
            unhealthy_gpus=unhealthy,
        )
        # Replicas and MIG devices are not aligned here: their NUMA node is their GPU's, and the
        # twin's Topology Manager model works on whole GPUs only.
        whole = node.devices_are_gpus
        containers = [
            *(_request(c, init=True, align_gpus=whole) for c in pod.template.init_containers),
            *(_request(c, init=False, align_gpus=whole) for c in pod.template.containers),
        ] or [
            _request(
                ContainerSpec("main", requests=dict(pod.requests)), init=False, align_gpus=whole
            )
        ]
        return admit_pod(
            state,
            containers,
            guaranteed=pod.qos is QosClass.GUARANTEED,
            choose=self.chooser(node),
        )


def _request(c: ContainerSpec, *, init: bool, align_gpus: bool = True) -> ContainerRequest:
    return ContainerRequest(
        c.name,
        cpu_milli=c.requests.get(CPU, 0),
        memory_bytes=c.requests.get(MEMORY, 0),
        gpus=c.requests.get(NVIDIA_GPU, 0) if align_gpus else 0,
        init=init,
    )
