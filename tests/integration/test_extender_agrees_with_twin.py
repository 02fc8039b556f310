"""The extender and the twin's kubelet give one verdict: a small twin run (DGX-like 4+4 NUMA
nodes under single-numa-node with the static CPU manager) leaves its GPUs fragmented; the
cluster at that instant becomes fit's values (``twin.fit_projection.project_cluster``), and for
pending pods of every GPU count the extender keeps exactly the nodes where the twin's kubelet
(``NodeAdmission.admit``, as if the pod were bound there) admits the pod, and fails with a NUMA
reason exactly those where it answers ``TopologyAffinityError``.

The pending pods are probes built from templates at that instant (not in the twin's store), so
the twin's own scheduler does not bind them in between. Nodes where a probe does not fit by
count (fewer free GPUs than it asks) are left out: kube-scheduler's NodeResourcesFit filters
them before the extender sees them, and the twin's kubelet is never asked about them.
"""

from __future__ import annotations

import pytest

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.extender.decide import filter_nodes
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.view import make_view
from gpuplane.fit.resources import pod_requests
from gpuplane.fit.workload_objects import DeploymentSpec, PodTemplate
from gpuplane.kubelet.config import CpuManagerPolicy, KubeletConfig
from gpuplane.kubelet.topology_manager.policy import PolicyName
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.cluster.qos import qos_class
from gpuplane.twin.fit_projection import project_cluster
from gpuplane.twin.kubelet.admission import NodeAdmission
from gpuplane.twin.scenario.spec import Workload
from gpuplane.twin.scheduling.snapshot import SnapshotBuilder
from tests.factories import make_pool
from tests.scenario.test_twin_admission import guaranteed
from tests.twin_factories import RecordedSimulation, build_recorded

pytestmark = pytest.mark.integration
SNN_STATIC = KubeletConfig(
    topology_manager_policy=PolicyName.SINGLE_NUMA_NODE,
    cpu_manager_policy=CpuManagerPolicy.STATIC,
    reserved_cpus=frozenset({0, 112}),
)


def _run() -> RecordedSimulation:
    """3-GPU and 1-GPU pods that leave 1+1, 0+1, 4+0... free GPUs across four nodes."""
    workloads = [
        Workload(name, DeploymentSpec(name=name, namespace="ml", template=t, replicas=n))
        for name, t, n in (("tp3", guaranteed(3), 5), ("one", guaranteed(1), 3))
    ]
    sim = build_recorded(
        [make_pool(count=4, kubelet=SNN_STATIC)], workloads, seed=3, check_invariants=True
    )
    sim.result = sim.run(30.0)
    return sim


def _probe(gpus: int, now_s: float) -> Pod:
    template: PodTemplate = guaranteed(gpus)
    return Pod(
        f"probe-{gpus}",
        f"probe-{gpus}",
        "ml",
        template,
        pod_requests(template),
        qos_class(template),
        now_s,
    )


def test_filter_agrees_with_the_twins_kubelet_on_every_node() -> None:
    sim = _run()
    store = sim.cluster.store
    assert all(p.phase is PodPhase.RUNNING for p in store.pods.values() if p.is_active)
    view = make_view(project_cluster(sim.cluster))
    admission = NodeAdmission(store)
    builder = SnapshotBuilder(sim.cluster)
    rejected_somewhere = admitted_somewhere = 0
    for gpus in range(1, 9):
        probe = _probe(gpus, sim.cluster.now)
        info = builder.pod_info(probe)
        offered = [n.name for n in store.nodes.values() if len(store.free_whole_gpus(n)) >= gpus]
        decision = filter_nodes(view, info, GpuNeeds(), offered)
        for name in offered:
            twin = admission.admit(store.nodes[name], probe)
            if twin.admit:
                admitted_somewhere += 1
                assert name in decision.kept, (gpus, name)
            else:
                rejected_somewhere += 1
                assert twin.reason == "TopologyAffinityError", (gpus, name, twin.reason)
                reason = decision.failed.get(name) or decision.unresolvable.get(name, "")
                assert name not in decision.kept and "NUMA" in reason, (gpus, name, reason)
        assert set(decision.kept) <= set(offered)
        assert info.requests.get(NVIDIA_GPU) == gpus
    # The run must exercise both verdicts, or the test proves nothing.
    assert rejected_somewhere and admitted_somewhere
