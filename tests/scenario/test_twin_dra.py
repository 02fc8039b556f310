"""DRA in the twin, from a scenario file: nodes publish ResourceSlices, the resourceclaim
controller makes claims from templates, DynamicResources allocates them (NVLink pairs via
gpuplane.io/nvlinkDomain), claims are released when pods end."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpuplane.api.pod_phase import PodPhase
from gpuplane.core.errors import InputError
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.dra.state import DraState

SCENARIO = """\
name: dra
node_pools:
  - name: seed
    preset: seed-8gpu
    count: 1
    dra: true
dra: [dra.yaml]
workloads:
  - name: pairs
    path: pairs.yaml
  - name: batch
    path: batch.yaml
    duration: {fixed: 10m}
"""
DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel:
      expression: >-
        device.driver == "gpu.nvidia.com" &&
        device.attributes["gpu.nvidia.com"].type == "gpu"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nvlink-pair, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
      constraints:
      - matchAttribute: gpuplane.io/nvlinkDomain
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
"""
PAIRS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: pairs, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: pairs}}
  template:
    metadata: {labels: {app: pairs}}
    spec:
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: nvlink-pair}
      containers:
      - name: main
        image: vllm/vllm-openai
        resources:
          requests: {cpu: "2", memory: 8Gi}
          claims: [{name: gpus}]
"""
BATCH = """\
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: one-gpu}
      containers:
      - name: main
        image: busybox
        resources:
          requests: {cpu: "1", memory: 1Gi}
          claims: [{name: gpu}]
"""


def write(tmp: Path, **files: str) -> Path:
    for name, text in {
        "scenario.yaml": SCENARIO,
        "dra.yaml": DRA,
        "pairs.yaml": PAIRS,
        "batch.yaml": BATCH,
        **files,
    }.items():
        (tmp / name).write_text(textwrap.dedent(text))
    return tmp / "scenario.yaml"


def test_claims_are_allocated_on_nvlink_pairs_and_released(tmp_path: Path) -> None:
    spec = load_scenario_spec(write(tmp_path)).spec
    sim = simulation_from_spec(spec, seed=0, check_invariants=True)
    result = sim.run(3600.0)
    dra = sim.component(DraState)
    node = sim.cluster.store.nodes["seed-0"]
    assert node.num_devices == 0  # no device plugin: the DRA driver owns the GPUs
    topo = node.topology
    pairs = [p for p in sim.cluster.store.pods.values() if p.name.startswith("pairs")]
    assert len(pairs) == 3 and all(p.phase is PodPhase.RUNNING for p in pairs)
    used: set[str] = set()
    for p in pairs:
        gpus = sorted(int(d.split("-")[1]) for d in p.dra_devices)
        assert len(gpus) == 2
        islands = [set(i) for i in topo.nvlink_islands()]
        assert any(set(gpus) <= i for i in islands)
        assert not used & set(p.dra_devices)
        used |= set(p.dra_devices)
    batch = [p for p in sim.cluster.store.pods.values() if p.name.startswith("batch")]
    assert batch and batch[0].phase is PodPhase.SUCCEEDED
    assert len(batch[0].dra_devices) == 1
    # The finished Job pod's claim was deleted; the three pair claims remain, allocated.
    allocated = [c for c in dra.claims.values() if c.status.allocation is not None]
    assert len(allocated) == 3 and len(dra.claims) == 3
    assert result.summary.pods.created == 4


def test_missing_dra_file_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, **{"scenario.yaml": SCENARIO.replace("[dra.yaml]", "[nope.yaml]")})
    with pytest.raises(InputError) as info:
        load_scenario_spec(path)
    assert str(info.value).startswith(f"{path}:7: dra[0]")


def test_bad_claim_template_is_located_in_its_file(tmp_path: Path) -> None:
    path = write(tmp_path, **{"dra.yaml": DRA.replace("count: 2", "count: -1")})
    with pytest.raises(InputError) as info:
        load_scenario_spec(path)
    assert str(info.value).startswith(f"{tmp_path / 'dra.yaml'}:")


BROKEN_ONLY = """\
name: dra-error
node_pools:
  - name: seed
    preset: seed-8gpu
    count: 1
    dra: true
dra: [dra.yaml]
workloads:
  - name: batch
    path: batch.yaml
    duration: {fixed: 10m}
"""


def test_an_allocator_error_is_retried_after_back_off(tmp_path: Path) -> None:
    """The claim's selector reads an attribute no device has: every attempt fails with the
    allocator's CEL runtime error (an Error, not Unschedulable), so the pod is retried on its
    back-off (1 s doubling to 10 s) with no cluster event, and keeps reason SchedulerError."""
    broken = DRA.replace(
        "exactly: {deviceClassName: gpu.nvidia.com}",
        "exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n"
        "          - cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].nope == 1'}",
    )
    assert broken != DRA
    path = write(tmp_path, **{"scenario.yaml": BROKEN_ONLY, "dra.yaml": broken})
    sim = simulation_from_spec(load_scenario_spec(path).spec, seed=0, check_invariants=True)
    result = sim.run(60.0)
    (pod,) = sim.cluster.store.pods.values()
    assert pod.node_name is None and pod.scheduled_reason == "SchedulerError"
    assert pod.schedule_attempts >= 7  # t = 0, 1, 3, 7, 15, 25, 35, 45, 55
    (event,) = [e for e in result.events if e.reason == "FailedScheduling"]
    assert event.message.startswith('running "DynamicResources" filter plugin: claim ml/batch-')
    assert "CEL runtime error: no such key: nope" in event.message
