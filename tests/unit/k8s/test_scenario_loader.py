"""The full scenario loader: every section read, every mistake located."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from gpuplane.api.strategies import MigStrategy
from gpuplane.api.taints import Taint
from gpuplane.core.errors import InputError
from gpuplane.fit import workload_objects as wo
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.scenario import spec as tw

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests/fixtures/traces"
GiB = 1024**3
MiB = 1024**2

SCENARIO = """\
name: test-cluster
description: one of everything
control_plane:
  scheduler_name: default-scheduler
  pod_initial_backoff_seconds: 2
  pod_max_backoff_seconds: 20
  metrics_interval: 15s
  kube_reserved: cpu=500m,memory=1Gi
  system_reserved: {cpu: 1, memory: 2Gi}
  max_pods: 64
node_pools:
  - name: h100
    preset: dgx-h100
    count: 2
    labels: {pool: train}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  - name: della
    topology_file: topo-m.txt
    gpu_model: H100-80GB-SXM
    count: 1
    allocatable: {cpu: 96, memory: 1000Gi, pods: 200}
cluster_policy:
  path: cluster-policy.yaml
operator:
  upgrade_requeue: 60s
faults:
  - {kind: node-lost, at: 1h, nodes: {pool: h100, count: 1}, recover_after: 10m}
workloads:
  - manifest:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
              - name: vllm
                image: vllm/vllm-openai
                args: [--model, Qwen/Qwen2.5-7B-Instruct]
                resources: {limits: {nvidia.com/gpu: 1}}
  - name: finetune
    path: manifests/finetune.yaml
    arrival: {poisson: {mean_interarrival: 10m, count: 5, start: 30m}}
    duration: {exponential: {mean: 2h}}
    failure_probability: 0.1
  - path: manifests/batch.yaml
    arrival:
      trace: {path: traces/batch_jobs.csv, time_column: submit_s, duration_column: run_s}
    duration: {fixed: 10m}  # for rows without a run time
  - path: manifests/chat.yaml
    arrival:
      trace:
        path: traces/llm_requests.csv
        time_column: TIMESTAMP
        scale: 2
        start_at: 1m
        limit: 4
    duration: {fixed: 90s}
"""

FINETUNE = """\
# a coscheduled fine-tuning job and its PodGroup
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: finetune}
spec: {minMember: 2}
---
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {labels: {scheduling.x-k8s.io/pod-group: finetune}}
    spec:
      restartPolicy: OnFailure
      containers:
        - name: trainer
          resources: {limits: {nvidia.com/gpu: 8}}
---
"""

BATCH = """\
apiVersion: v1
kind: Pod
metadata: {generateName: batch-}
spec:
  restartPolicy: Never
  containers: [{name: main, resources: {requests: {cpu: 2, memory: 4Gi}}}]
"""

CHAT = BATCH.replace("generateName: batch-", "name: chat")

CLUSTER_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  mig: {strategy: mixed}
"""


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "manifests/finetune.yaml").write_text(FINETUNE)
    (tmp_path / "manifests/batch.yaml").write_text(BATCH)
    (tmp_path / "manifests/chat.yaml").write_text(CHAT)
    (tmp_path / "cluster-policy.yaml").write_text(CLUSTER_POLICY)
    shutil.copy(REPO / "examples/topologies/h100-della-topo-m.txt", tmp_path / "topo-m.txt")
    for name in ("batch_jobs.csv", "llm_requests.csv"):
        shutil.copy(FIXTURES / name, tmp_path / "traces" / name)
    return tmp_path


def test_example_scenario_loads() -> None:
    loaded = load_scenario_spec(REPO / "examples/scenario.yaml")
    pools = {p.name: p for p in loaded.spec.node_pools}
    assert len(pools) == len(loaded.scenario.node_pools) >= 9
    # Derived: 224 logical CPUs and 2 TiB, minus kube_reserved (500m, 1Gi) and the kubelet's
    # 100Mi hard eviction threshold.
    assert pools["h100-train"].allocatable == {
        "cpu": 224_000 - 500,
        "memory": 2 * 1024 * GiB - GiB - 100 * MiB,
        "pods": 110,
    }
    assert pools["h100-della"].allocatable == {"cpu": 96_000, "memory": 1000 * GiB, "pods": 110}
    assert pools["h100-train"].topology.num_gpus == 8
    assert loaded.spec.control_plane.scheduler_name == "default-scheduler"


def test_every_section(scenario_dir: Path) -> None:
    loaded = load_scenario_spec(scenario_dir / "scenario.yaml")
    spec = loaded.spec
    assert (spec.name, spec.description) == ("test-cluster", "one of everything")
    h100, della = spec.node_pools
    reserved_cpu, reserved_mem = 1500, 3 * GiB
    assert h100.allocatable == {
        "cpu": 224_000 - reserved_cpu,
        "memory": 2 * 1024 * GiB - reserved_mem - 100 * MiB,
        "pods": 64,
    }
    assert h100.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert della.allocatable == {"cpu": 96_000, "memory": 1000 * GiB, "pods": 200}
    cp = spec.control_plane
    assert (cp.pod_initial_backoff_s, cp.pod_max_backoff_s, cp.metrics_interval_s) == (2, 20, 15)
    assert spec.cluster_policy is not None
    assert spec.cluster_policy.mig_strategy is MigStrategy.MIXED
    assert spec.operator.upgrade_requeue == 60.0
    assert len(spec.faults) == 1 and spec.faults[0].kind == "node-lost"
    assert [w.name for w in spec.workloads] == [
        "deployment/web",
        "finetune/podgroup/finetune",
        "finetune/job/finetune",
        "pod/batch-",
        "pod/chat",
    ]
    assert loaded.warnings == ()


def test_workload_values(scenario_dir: Path) -> None:
    workloads = load_scenario_spec(scenario_dir / "scenario.yaml").spec.workloads
    web, group, job, batch, chat = workloads
    assert web.duration == tw.UntilEnd()
    assert web.arrival == tw.ArriveAt(0.0)
    scenario = scenario_dir / "scenario.yaml"
    assert web.source == f"{scenario}:{line_of(scenario, '  - manifest:')}"
    assert isinstance(group.obj, wo.PodGroupSpec) and group.duration == tw.UntilEnd()
    assert isinstance(job.obj, wo.JobSpec) and job.failure_probability == 0.1
    assert job.arrival == tw.ArrivePoisson(rate_per_s=1 / 600, count=5, start_s=1800.0)
    assert job.duration == tw.ExponentialDuration(mean_s=7200.0)
    assert job.source.endswith("finetune.yaml:7")
    # A trace with a run-time column: numbers and duration strings; blank cells fall back.
    assert isinstance(batch.arrival, tw.ArriveFromTrace)
    assert [(r.t_s, r.duration_s) for r in batch.arrival.rows] == [
        (0.0, 3600.0),
        (12.0, None),
        (30.5, 1800.0),
        (90.0, 7200.0),
    ]
    assert isinstance(batch.obj, wo.PodSpecObject) and batch.obj.name == "batch-"
    # ISO datetimes: offsets from the earliest row, scaled, from start_at; first 4 rows only.
    assert isinstance(chat.arrival, tw.ArriveFromTrace)
    assert [r.t_s for r in chat.arrival.rows] == [60.0, 63.0, 67.5, 68.5]
    assert chat.duration == tw.FixedDuration(seconds=90.0)


def test_workload_names_must_be_unique(scenario_dir: Path) -> None:
    path = write(
        scenario_dir,
        "  - path: manifests/batch.yaml",
        "  - name: pod/chat\n    path: manifests/batch.yaml",
    )
    with pytest.raises(InputError, match=r"workloads\[3\]: workload name 'pod/chat' is used tw"):
        load_scenario_spec(path)


def write(scenario_dir: Path, old: str, new: str, file: str = "scenario.yaml") -> Path:
    path = scenario_dir / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return scenario_dir / "scenario.yaml"


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


SCENARIO_MISTAKES = [
    (
        "  max_pods: 64",
        "  max_podz: 64",
        "max_podz",
        "control_plane.max_podz: unknown key "
        "'max_podz' (not a field of ControlPlane); expected max_pods",
    ),
    (
        "  pod_max_backoff_seconds: 20",
        "  pod_max_backoff_seconds: 0.5",
        "pod_max_backoff",
        "control_plane.pod_max_backoff_seconds",
    ),
    (
        "kube_reserved: cpu=500m,memory=1Gi",
        "kube_reserved: gpu=1",
        "kube_reserved",
        "control_plane.kube_reserved.gpu: cannot reserve 'gpu' resource",
    ),
    (
        "system_reserved: {cpu: 1, memory: 2Gi}",
        "system_reserved: {cpu: 1, memory: 2Gb}",
        "system_reserved",
        "control_plane.system_reserved.memory: '2Gb': quantities must match",
    ),
    (
        "metrics_interval: 15s",
        "metrics_interval: soon",
        "metrics_interval",
        "control_plane.metrics_interval",
    ),
    (
        "    count: 2\n    labels",
        "    count: 2\n    allocatable: {cpu: 2 cores}\n    labels",
        "allocatable: {cpu: 2 cores}",
        "node_pools[0].allocatable.cpu: '2 cores'",
    ),
    (
        "    allocatable: {cpu: 96, memory: 1000Gi, pods: 200}",
        "",
        "name: della",
        "node_pools[1]: topology 'topo-m' does not list every CPU of the node; expected "
        "allocatable.cpu",
    ),
    (
        "    preset: dgx-h100",
        "    preset: dgx-h99",
        "preset: dgx-h99",
        "node_pools[0].preset: no preset or file named 'dgx-h99'",
    ),
    (
        "    topology_file: topo-m.txt\n    gpu_model",
        "    preset: dgx-h100\n    gpu_model",
        "gpu_model: H100",
        "node_pools[1].gpu_model: gpu_model only applies",
    ),
    (
        "  upgrade_requeue: 60s",
        "  upgrade_requeu: 60s",
        "upgrade_requeu",
        "operator.upgrade_requeu: unknown key",
    ),
    (
        "kind: node-lost, at: 1h",
        "kind: node-lost",
        "kind: node-lost",
        "faults[0]: give exactly one of at or rate_per_hour",
    ),
    ("kind: node-lost", "kind: disk-full", "kind: disk-full", "faults[0]"),
    (
        "  - manifest:\n",
        "  - manifest:\n      colour: red\n",
        "colour: red",
        'workloads[0].manifest.colour: unknown field "colour"; expected one of apiVersion',
    ),
    (
        "resources: {limits: {nvidia.com/gpu: 1}}",
        "resources: {limits: {nvidia.com/gpu: 0.5}}",
        "nvidia.com/gpu: 0.5",
        "workloads[0].manifest.spec.template.spec.containers[0].resources."
        "limits.nvidia.com/gpu: '0.5': must be an integer",
    ),
    (
        "        selector: {matchLabels: {app: web}}",
        "        selector: {matchLabels: {app: x}}",
        "metadata: {labels: {app: web}}",
        "workloads[0].manifest.spec.template.metadata.labels: Invalid value",
    ),
    (
        "    path: manifests/finetune.yaml",
        "    path: manifests/nope.yaml",
        "nope.yaml",
        "workloads[1].path: ",
    ),
    (
        "arrival: {poisson: {mean_interarrival: 10m, count: 5, start: 30m}}",
        "arrival: {poisson: {mean_interarrival: 10m, rate_per_s: 1, count: 5}}",
        "rate_per_s: 1",
        "workloads[1].arrival.poisson: give exactly one of rate_per_s or mean_interarrival",
    ),
    (
        "    duration: {exponential: {mean: 2h}}",
        "    duration: {exponential: {mean: 2h}, fixed: 1h}",
        "exponential: {mean: 2h}",
        "workloads[1].duration: give exactly one",
    ),
    (
        "    duration: {fixed: 90s}\n",
        "",
        "- path: manifests/chat.yaml",
        "workloads[3]: a Pod's pods need a run time; expected duration: {fixed: 2h}",
    ),
    (
        "time_column: submit_s",
        "time_column: submitted",
        "time_column",
        "batch_jobs.csv:1: no column 'submitted'; expected one of submit_s, run_s, user",
    ),
    (
        "path: traces/batch_jobs.csv",
        "path: traces/missing.csv",
        "missing.csv",
        "workloads[2].arrival.trace.path: ",
    ),
    (
        "  - name: finetune",
        "  - name: web\n    manifest: {}\n    path: x.yaml\n  - name: finetune",
        "  - name: web",
        "workloads[1]: give exactly one of manifest or path (got manifest, path)",
    ),
    (
        "    labels: {pool: train}",
        "    labels: {pool: train}\n    kubelet: {topologyManagerPolicy: single-numa-nod}",
        "topologyManagerPolicy",
        "node_pools[0].kubelet.topologyManagerPolicy",
    ),
    (
        "    labels: {pool: train}",
        "    labels: {pool: train}\n    kubelet:\n      topologyManagerPolicyOptions:\n"
        "        max-allowable-numa-nodes: '4'",
        "topologyManagerPolicyOptions",
        "should not be less than 8",
    ),
    (
        "    labels: {pool: train}",
        "    labels: {pool: train}\n    kubelet: {reservedSystemCPUs: '0-3,9-7'}",
        "reservedSystemCPUs",
        "runs backwards",
    ),
    (
        "    labels: {pool: train}",
        "    labels: {pool: train}\n    device_plugin:\n      sharing:\n        timeSlicing:\n"
        "          resources: [{name: nvidia.com/gpu, replicas: 0}]",
        "resources:",
        "node_pools[0].device_plugin.sharing.timeSlicing.resources[0].replicas",
    ),
    (
        "    labels: {pool: train}",
        "    labels: {pool: train}\n    kubelet: {reservedSystemCPUs: '0,9999'}",
        "reservedSystemCPUs",
        "node_pools[0].kubelet.reservedSystemCPUs: reservedSystemCPUs [9999] are not CPUs",
    ),
    (
        "cluster_policy:\n  path: cluster-policy.yaml",
        "cluster_policy:\n  path: cp.yaml",
        "path: cp.yaml",
        "cluster_policy.path: ",
    ),
    (
        "cluster_policy:\n  path: cluster-policy.yaml",
        "cluster_policy:\n  apiVersion: nvidia.com/v1\n  kind: ClusterPolicy\n  spec: {mig: "
        "{strategy: triple}}",
        "strategy: triple",
        "cluster_policy.spec.mig.strategy",
    ),
]


@pytest.mark.parametrize(("old", "new", "needle", "expected"), SCENARIO_MISTAKES)
def test_scenario_mistakes_are_located(
    scenario_dir: Path, old: str, new: str, needle: str, expected: str
) -> None:
    path = write(scenario_dir, old, new)
    with pytest.raises(InputError) as info:
        load_scenario_spec(path)
    message = str(info.value)
    assert expected in message
    if "csv" not in expected:
        assert message.startswith(f"{path}:{line_of(path, needle)}: "), message


@pytest.mark.parametrize(
    ("file", "old", "new", "needle", "expected"),
    [
        (
            "manifests/finetune.yaml",
            "restartPolicy: OnFailure",
            "restartPolicy: Always",
            "restartPolicy: Always",
            "spec.template.spec.restartPolicy: Required value",
        ),
        (
            "manifests/finetune.yaml",
            "spec: {minMember: 2}",
            "spec: {minMembers: 2}",
            "minMembers",
            'spec.minMembers: unknown field "spec.minMembers"; expected minMember',
        ),
        (
            "manifests/finetune.yaml",
            "- name: trainer",
            "- name: trainer\n          name: again",
            "name: again",
            "duplicate key 'name'",
        ),
        (
            "manifests/batch.yaml",
            "memory: 4Gi",
            "memory: 4 Gi",
            "memory: 4 Gi",
            "spec.containers[0].resources.requests.memory: '4 Gi'",
        ),
        (
            "traces/batch_jobs.csv",
            "30.5,1800,bob",
            "soon,1800,bob",
            "soon",
            "'soon' is not a time; expected a number",
        ),
        (
            "traces/batch_jobs.csv",
            "90,2h,dave",
            "90,later,dave",
            "later",
            "run_s 'later' is not a duration",
        ),
    ],
)
def test_mistakes_in_named_files_name_that_file(
    scenario_dir: Path, file: str, old: str, new: str, needle: str, expected: str
) -> None:
    write(scenario_dir, old, new, file)
    with pytest.raises(InputError) as info:
        load_scenario_spec(scenario_dir / "scenario.yaml")
    message = str(info.value)
    line = line_of(scenario_dir / file, needle)
    assert message.startswith(f"{scenario_dir / file}:{line}: "), message
    assert expected in message


def test_unknown_top_level_key_and_empty_files(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\njobs: []\nnode_pools:\n  - {name: a, preset: dgx-h100, count: 1}\n")
    with pytest.raises(InputError, match=r"s.yaml:2: jobs: unknown key 'jobs'"):
        load_scenario_spec(path)
    path.write_text("# nothing\n")
    with pytest.raises(InputError, match="the file is empty"):
        load_scenario_spec(path)
    with pytest.raises(InputError, match="file not found"):
        load_scenario_spec(tmp_path / "missing.yaml")
    (tmp_path / "empty.yaml").write_text("---\n# only comments\n---\n")
    path.write_text(
        "name: x\nnode_pools:\n  - {name: a, preset: dgx-h100, count: 1}\n"
        "workloads:\n  - path: empty.yaml\n"
    )
    with pytest.raises(InputError, match=r"s.yaml:5: workloads\[0\].path: .*holds no manifest"):
        load_scenario_spec(path)


def test_warnings_point_at_their_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: x
            node_pools:
              - {name: a, preset: dgx-h100, count: 1}
            workloads:
              - manifest:
                  apiVersion: v1
                  kind: Pod
                  metadata: {name: p, labels: {scheduling.x-k8s.io/pod-group: g}}
                  spec:
                    schedulerName: volcano
                    containers: [{name: c}]
                duration: {until_end: true}
            """
        )
    )
    warnings = load_scenario_spec(path).warnings
    assert any("schedulerName 'volcano'" in w and w.startswith(f"{path}:5") for w in warnings)
    assert any("no workload creates PodGroup 'g'" in w for w in warnings)


def test_pool_kubelet_section(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: k
            control_plane: {system_reserved: {cpu: 1500m}}
            node_pools:
              - name: snn
                preset: seed-8gpu
                count: 1
                kubelet:
                  topologyManagerPolicy: single-numa-node
                  topologyManagerScope: pod
                  topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}
                  cpuManagerPolicy: static
                  gpuAllocationPolicy: gpuplane
              - name: pinned
                preset: seed-8gpu
                count: 1
                kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0-1,112-113"}
              - name: plain
                preset: seed-8gpu
                count: 1
            """
        )
    )
    spec = load_scenario_spec(path).spec
    snn, pinned, plain = (p.kubelet for p in spec.node_pools)
    assert snn.topology_manager_policy.value == "single-numa-node"
    assert snn.topology_manager_scope.value == "pod"
    assert snn.topology_manager_policy_options.prefer_closest_numa
    assert snn.gpu_allocation.value == "gpuplane"
    # ceil(1.5) = 2 CPUs: CPU 0 and its hyper-thread sibling 112.
    assert snn.reserved_cpus == frozenset({0, 112})
    assert pinned.reserved_cpus == frozenset({0, 1, 112, 113})
    assert spec.node_pools[1].allocatable["cpu"] == (224 - 4) * 1000
    assert plain.topology_manager_policy.value == "none"
    assert plain.gpu_allocation.value == "best-effort"


def test_static_cpu_manager_needs_a_reservation(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: k\nnode_pools:\n  - name: a\n    preset: seed-8gpu\n    count: 1\n"
        "    kubelet: {cpuManagerPolicy: static}\n"
    )
    with pytest.raises(InputError, match=r"requires systemreserved\.cpu"):
        load_scenario_spec(path)
