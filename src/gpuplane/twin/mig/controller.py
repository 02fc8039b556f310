"""gpuplane's demand-driven MIG repartitioning controller, in the twin.

NVIDIA's MIG manager applies whatever layout the ``nvidia.com/mig.config`` label names; choosing
that layout is left to the admin. This controller chooses it from demand: every ``interval_s``
it counts the pending pods that asked for ``nvidia.com/mig-<profile>`` and failed to schedule,
builds a ``MigSnapshot`` of every GPU of the pools with ``mig.dynamic`` (their layouts and the
instances pods hold), and asks the exact planner through the step it shares with the live
controller (``gpuplane.slicing.mig.repartition.plan_nodes``) for
target layouts: the demand on as few GPUs as possible, then as few GPUs changed, never evicting
a running pod. It applies each changed GPU the way NVML does (destroy the instances that go,
create the new ones; instances that stay keep running):

- the node's ``nvidia.com/mig.config.state`` label goes ``pending``; destroyed instances leave
  the device plugin's list at once;
- ``reconfigure_s`` later the created instances are advertised, the state is ``success``, and
  an event records the change; the scheduler retries the pending pods.

GPUs being reconfigured are left out of the next plans until they are done.
"""

from __future__ import annotations

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import is_mig_resource, mig_profile_of
from gpuplane.core.kernel import Priority
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.node_devices import MIG_STATE_LABEL, mig_gpu_of, mig_slots
from gpuplane.slicing.mig.plan_types import MigPlanSettings
from gpuplane.slicing.mig.repartition import NodeGpu, plan_nodes
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.component import Component

PLAN_SETTINGS = MigPlanSettings(time_limit_s=10.0)


class MigRepartitioner(Component):
    def __init__(self, cluster: Cluster, interval_s: float, reconfigure_s: float) -> None:
        self.c = cluster
        self.interval_s = interval_s
        self.reconfigure_s = reconfigure_s
        self.busy: set[tuple[str, int]] = set()
        # Instances being created by reconfigurations in flight, per profile: the pods waiting
        # for them are not demand any more.
        self.incoming: dict[str, int] = {}
        self.plans = 0

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        self.c.loop.after(self.interval_s, self._tick, priority=Priority.CONTROLLER, label="mig")

    def _nodes(self) -> list[Node]:
        return [
            n
            for n in (self.c.store.nodes[name] for name in self.c.store.node_order)
            if n.mig_layouts is not None
            and n.ready
            and not n.lost
            and n.gpus_advertised
            and n.labels.get(MIG_STATE_LABEL) != "pending"
        ]

    def _demand(self) -> dict[str, int]:
        demand: dict[str, int] = {}
        for uid in sorted(self.c.store.active):
            pod = self.c.store.pods[uid]
            if pod.phase is not PodPhase.PENDING or pod.node_name or not pod.schedule_attempts:
                continue
            for name, count in pod.requests.items():
                if is_mig_resource(name):
                    profile = mig_profile_of(name)
                    demand[profile] = demand.get(profile, 0) + count
        return demand

    def _tick(self) -> None:
        if self.c.now + self.interval_s <= self.until_s:
            self.c.loop.after(
                self.interval_s, self._tick, priority=Priority.CONTROLLER, label="mig"
            )
        demand = {
            k: v - self.incoming.get(_suffix(k), 0)
            for k, v in self._demand().items()
            if v > self.incoming.get(_suffix(k), 0)
        }
        nodes = self._nodes()
        if not demand or not nodes:
            return
        gpus: list[NodeGpu] = []
        for node in nodes:
            model = mig_gpu_of(node.topology)
            held = _held_instances(node)
            assert node.mig_layouts is not None
            for g, layout in enumerate(node.mig_layouts):
                if (node.name, g) in self.busy:
                    continue
                gpus.append(NodeGpu(node.name, g, model, layout, frozenset(held.get(g, ()))))
        planned = plan_nodes(gpus, demand, PLAN_SETTINGS)
        if planned is None:
            return
        self.plans += 1
        for name, targets in planned.changes:
            self._apply(self.c.store.nodes[name], {g: t.layout for g, t in targets})

    def _apply(self, node: Node, targets: dict[int, Layout]) -> None:
        assert node.mig_layouts is not None
        final = list(node.mig_layouts)
        interim = list(node.mig_layouts)
        created: dict[str, int] = {}
        for g, layout in targets.items():
            final[g] = layout
            kept = tuple(i for i in node.mig_layouts[g].instances if i in layout)
            interim[g] = Layout(kept)
            self.busy.add((node.name, g))
            for inst in layout.instances:
                if inst not in kept:
                    key = _suffix(inst.profile)
                    created[key] = created.get(key, 0) + 1
        for key, n in created.items():
            self.incoming[key] = self.incoming.get(key, 0) + n
        node.labels[MIG_STATE_LABEL] = "pending"
        node.mig_layouts = interim
        self._advertise(node)
        self.c.count("mig_reconfigurations")
        self.c.loop.after(
            self.reconfigure_s,
            lambda: self._done(node, final, sorted(targets), created),
            priority=Priority.NODE,
            label=f"mig reconfigure {node.name}",
        )

    def _done(
        self, node: Node, final: list[Layout], gpus: list[int], created: dict[str, int]
    ) -> None:
        assert node.mig_layouts is not None
        for key, n in created.items():
            self.incoming[key] = self.incoming.get(key, 0) - n
        for g in gpus:
            node.mig_layouts[g] = final[g]
            self.busy.discard((node.name, g))
        node.labels[MIG_STATE_LABEL] = "success"
        self._advertise(node)
        described = "; ".join(f"GPU {g}: {final[g].describe()}" for g in gpus)
        self.c.emit("Node", node.name, "MigReconfigured", f"MIG layout applied: {described}")
        self.c.cluster_changed(nodes=True)

    def _advertise(self, node: Node) -> None:
        assert node.mig_layouts is not None
        _, ext = mig_slots(node.topology, tuple(node.mig_layouts), node.mig_strategy or "mixed")
        self.c.store.reshape_ext_devices(node, ext)


def _held_instances(node: Node) -> dict[int, list[Instance]]:
    out: dict[int, list[Instance]] = {}
    for name, owners in node.ext_owner.items():
        for d, uid in enumerate(owners):
            slot = node.ext_slots[name][d]
            if uid is not None and slot.profile is not None and slot.start is not None:
                out.setdefault(slot.gpu, []).append(Instance(slot.start, slot.profile))
    return out


def _suffix(profile: str) -> str:
    """The resource-name form of a profile (``1g.10gb+me`` -> ``1g.10gb.me``)."""
    return profile.replace("+", ".")
