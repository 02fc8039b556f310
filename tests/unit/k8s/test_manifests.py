"""Kubernetes manifests -> twin spec values: real-world YAML, defaults, validation, locations."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml

from gpuplane.api.qos import QosClass
from gpuplane.api.taints import Toleration
from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.fit import workload_objects as wo
from gpuplane.k8s.manifests.parse import ParsedManifest, load_manifest, parse_manifest
from gpuplane.twin.cluster.qos import qos_class

GiB = 1024**3

VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-3-70b
  namespace: inference
  labels: {app.kubernetes.io/name: vllm, app.kubernetes.io/instance: llama-3-70b}
  annotations: {deployment.kubernetes.io/revision: "3"}
spec:
  replicas: 2
  revisionHistoryLimit: 3
  progressDeadlineSeconds: 1200
  selector:
    matchLabels: {app.kubernetes.io/instance: llama-3-70b}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: llama-3-70b, app.kubernetes.io/name: vllm}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "8000"}
    spec:
      priorityClassName: inference-high
      serviceAccountName: vllm
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector: {matchLabels: {app.kubernetes.io/instance: llama-3-70b}}
      securityContext: {runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000}
      terminationGracePeriodSeconds: 120
      volumes:
        - name: shm
          emptyDir: {medium: Memory, sizeLimit: 16Gi}
        - name: models
          persistentVolumeClaim: {claimName: hf-cache}
      initContainers:
        - name: fetch-weights
          image: ghcr.io/example/model-fetcher:1.2
          command: [sh, -c, "huggingface-cli download meta-llama/Llama-3-70B --local-dir /models"]
          volumeMounts: [{name: models, mountPath: /models}]
          resources:
            requests: {cpu: "2", memory: 8Gi}
            limits: {cpu: "2", memory: 8Gi}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          imagePullPolicy: IfNotPresent
          args: ["--model", "/models", "--tensor-parallel-size", "4", "--port", "8000"]
          env:
            - {name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf-token, key: token}}}
            - {name: VLLM_WORKER_MULTIPROC_METHOD, value: spawn}
          envFrom: [{configMapRef: {name: vllm-extra}}]
          ports: [{name: http, containerPort: 8000, protocol: TCP}]
          readinessProbe:
            httpGet: {path: /health, port: http}
            periodSeconds: 10
            failureThreshold: 3
          livenessProbe:
            httpGet: {path: /health, port: 8000}
            initialDelaySeconds: 600
          startupProbe:
            httpGet: {path: /health, port: 8000}
            failureThreshold: 120
          lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          volumeMounts:
            - {name: shm, mountPath: /dev/shm}
            - {name: models, mountPath: /models, readOnly: true}
          resources:
            limits: {nvidia.com/gpu: 4, cpu: "32", memory: 256Gi}
            requests: {cpu: "16", memory: 256Gi}
"""

PYTORCH_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: llama-finetune
spec:
  completions: 4
  parallelism: 4
  completionMode: Indexed
  backoffLimit: 0
  activeDeadlineSeconds: 86400
  ttlSecondsAfterFinished: 3600
  podFailurePolicy:
    rules:
      - action: FailJob
        onExitCodes: {containerName: trainer, operator: In, values: [42]}
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: llama-finetune, app: finetune}
    spec:
      restartPolicy: Never
      schedulerName: default-scheduler
      subdomain: llama-finetune
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.05-py3
          command: [torchrun]
          args: ["--nnodes=4", "--nproc-per-node=8", "--node-rank=$(JOB_COMPLETION_INDEX)",
                 "train.py"]
          env:
            - {name: MASTER_ADDR, value: llama-finetune-0.llama-finetune}
            - {name: NCCL_IB_HCA, value: mlx5}
          resources:
            limits: {nvidia.com/gpu: 8, rdma/ib: 1, cpu: "96", memory: 1500Gi, hugepages-2Mi: 2Gi}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""

POD_GROUP = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: llama-finetune
spec:
  minMember: 4
  scheduleTimeoutSeconds: 600
  minResources: {nvidia.com/gpu: 32, cpu: "384", memory: 6000Gi}
"""


def parse_text(text: str) -> ParsedManifest:
    node, data = parse_yaml(text, "m.yaml")
    assert node is not None
    return load_manifest(data, source="m.yaml", line_of=LineIndex(node, "m.yaml").line_of)


def error_of(text: str) -> str:
    with pytest.raises(InputError) as info:
        parse_text(text)
    return str(info.value)


def pod(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **meta}, "spec": spec}


def container(name: str = "c", **resources: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "resources": resources}


def test_vllm_deployment() -> None:
    parsed = parse_text(VLLM)
    d = parsed.obj
    assert isinstance(d, wo.DeploymentSpec)
    assert (d.name, d.namespace, d.replicas) == ("llama-3-70b", "inference", 2)
    assert (d.max_surge, d.max_unavailable) == (1, 0)
    t = d.template
    (main,) = t.containers
    assert main.requests == {"nvidia.com/gpu": 4, "cpu": 16000, "memory": 256 * GiB}
    assert main.limits == {"nvidia.com/gpu": 4, "cpu": 32000, "memory": 256 * GiB}
    assert t.init_containers[0].requests == {"cpu": 2000, "memory": 8 * GiB}
    assert t.priority_class_name == "inference-high"
    assert t.tolerations == (Toleration("nvidia.com/gpu", "Exists", None, "NoSchedule"),)
    assert t.node_selector == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert t.affinity is not None and "podAntiAffinity" in t.affinity
    assert t.termination_grace_period_s == 120.0
    assert t.restart_policy is wo.RestartPolicy.ALWAYS
    assert qos_class(t) is QosClass.BURSTABLE
    assert parsed.warnings == ()


def test_pytorch_job_and_pod_group() -> None:
    job = parse_text(PYTORCH_JOB).obj
    assert isinstance(job, wo.JobSpec)
    assert (job.completions, job.parallelism, job.backoff_limit) == (4, 4, 0)
    assert job.completion_mode == "Indexed" and job.active_deadline_s == 86400.0
    assert job.labels == {"scheduling.x-k8s.io/pod-group": "llama-finetune", "app": "finetune"}
    labels = job.template.labels
    assert labels["job-name"] == labels["batch.kubernetes.io/job-name"] == "llama-finetune"
    (trainer,) = job.template.containers
    assert trainer.requests == {
        "nvidia.com/gpu": 8,
        "rdma/ib": 1,
        "cpu": 96_000,
        "memory": 1500 * GiB,
        "hugepages-2Mi": 2 * GiB,
    }
    assert qos_class(job.template) is QosClass.GUARANTEED
    group = parse_text(POD_GROUP).obj
    assert group == wo.PodGroupSpec(
        name="llama-finetune",
        namespace="default",
        min_member=4,
        min_resources={"nvidia.com/gpu": 32, "cpu": 384_000, "memory": 6000 * GiB},
        schedule_timeout_s=600.0,
    )


def test_legacy_pod_group_names_are_read_with_a_warning() -> None:
    legacy = POD_GROUP.replace("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1")
    assert parse_text(legacy).warnings[0][0] == "apiVersion"
    old_label = pod({"containers": [container()]}, labels={"pod-group.scheduling.sigs.k8s.io": "g"})
    parsed = parse_manifest(old_label)
    assert isinstance(parsed.obj, wo.PodSpecObject)
    assert parsed.obj.template.labels == {"scheduling.x-k8s.io/pod-group": "g"}
    assert "before v0.24" in parsed.warnings[0][1]


def test_defaults() -> None:
    deployment = yaml.safe_load(VLLM)
    del deployment["spec"]["replicas"], deployment["spec"]["strategy"]
    template = deployment["spec"]["template"]["spec"]
    del template["terminationGracePeriodSeconds"], template["priorityClassName"]
    d = parse_manifest(deployment).obj
    assert isinstance(d, wo.DeploymentSpec)
    assert (d.replicas, d.max_surge, d.max_unavailable) == (1, "25%", "25%")
    assert d.template.termination_grace_period_s == 30.0
    assert d.template.scheduler_name == "default-scheduler"
    assert d.template.priority_class_name is None
    job = yaml.safe_load(PYTORCH_JOB)
    spec = job["spec"]
    for key in ("completions", "parallelism", "completionMode", "backoffLimit"):
        del spec[key]
    j = parse_manifest(job).obj
    assert isinstance(j, wo.JobSpec)
    assert (j.completions, j.parallelism, j.backoff_limit, j.completion_mode) == (
        1,
        1,
        6,
        "NonIndexed",
    )
    spec["parallelism"] = 3  # a work queue: completions stay unset
    j = parse_manifest(job).obj
    assert isinstance(j, wo.JobSpec) and (j.completions, j.parallelism) == (None, 3)
    spec.pop("parallelism")
    spec["completions"] = 5
    j = parse_manifest(job).obj
    assert isinstance(j, wo.JobSpec) and (j.completions, j.parallelism) == (5, 1)
    p = parse_manifest(pod({"containers": [container()]})).obj
    assert isinstance(p, wo.PodSpecObject) and p.namespace == "default"
    assert p.template.restart_policy is wo.RestartPolicy.ALWAYS


def test_limits_default_requests_and_gpu_rules() -> None:
    def requests(**resources: Any) -> dict[str, int]:
        obj = parse_manifest(pod({"containers": [container(**resources)]})).obj
        assert isinstance(obj, wo.PodSpecObject)
        return obj.template.containers[0].requests

    assert requests(limits={"nvidia.com/gpu": 2}) == {"nvidia.com/gpu": 2}
    assert requests(limits={"cpu": "0.0001"}) == {"cpu": 1}
    assert requests(requests={"cpu": "500m"}, limits={"cpu": 2}) == {"cpu": 500}
    cases: dict[str, dict[str, Any]] = {
        "limits.nvidia.com/gpu: '0.5': must be an integer": {"limits": {"nvidia.com/gpu": "0.5"}},
        "requests.nvidia.com/gpu: 1: must be equal to nvidia.com/gpu limit of 2": {
            "requests": {"nvidia.com/gpu": 1},
            "limits": {"nvidia.com/gpu": 2},
        },
        "nvidia.com/gpu: Limit must be set for non overcommitable resources": {
            "requests": {"nvidia.com/gpu": 1}
        },
        "requests.cpu: 3: must be less than or equal to cpu limit of 2": {
            "requests": {"cpu": 3},
            "limits": {"cpu": 2},
        },
        "limits.gpu: 'gpu': must be a standard resource for containers": {"limits": {"gpu": 1}},
        "3Mi is not positive integer multiple of hugepages-2Mi": {
            "limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}
        },
        "HugePages require cpu or memory": {"limits": {"hugepages-2Mi": "2Mi"}},
        "requests.memory: '-1Gi': must be greater than or equal to 0": {
            "requests": {"memory": "-1Gi"}
        },
    }
    for expected, resources in cases.items():
        with pytest.raises(InputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
            requests(**resources)


QOS_TABLE = [
    # (containers, init containers, expected): pkg/apis/core/v1/helper/qos semantics.
    ([{}], [], QosClass.BEST_EFFORT),
    ([{"limits": {"nvidia.com/gpu": 1}}], [], QosClass.BEST_EFFORT),
    ([{"limits": {"cpu": 1, "memory": "1Gi"}}], [], QosClass.GUARANTEED),
    (
        [{"requests": {"cpu": 1, "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "1Gi"}}],
        [],
        QosClass.GUARANTEED,
    ),
    ([{"limits": {"cpu": 1}}], [], QosClass.BURSTABLE),
    (
        [{"requests": {"cpu": "500m"}, "limits": {"cpu": 1, "memory": "1Gi"}}],
        [],
        QosClass.BURSTABLE,
    ),
    ([{"limits": {"cpu": 1, "memory": "1Gi"}}, {}], [], QosClass.BURSTABLE),
    # Init containers count: one without limits makes the pod Burstable ...
    ([{"limits": {"cpu": 1, "memory": "1Gi"}}], [{"requests": {"cpu": 1}}], QosClass.BURSTABLE),
    # ... and an init container with no resources at all, too (it lacks cpu/memory limits).
    ([{"limits": {"cpu": 1, "memory": "1Gi"}}], [{}], QosClass.BURSTABLE),
    (
        [{"limits": {"cpu": 1, "memory": "1Gi"}}],
        [{"limits": {"cpu": 2, "memory": "2Gi"}}],
        QosClass.GUARANTEED,
    ),
    ([{}], [{"requests": {"memory": "1Gi"}}], QosClass.BURSTABLE),
]


@pytest.mark.parametrize(("containers", "init", "expected"), QOS_TABLE)
def test_qos_table(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], expected: QosClass
) -> None:
    spec = {
        "containers": [container(f"c{i}", **r) for i, r in enumerate(containers)],
        "initContainers": [container(f"i{i}", **r) for i, r in enumerate(init)],
    }
    obj = parse_manifest(pod(spec)).obj
    assert isinstance(obj, wo.PodSpecObject)
    assert qos_class(obj.template) is expected


def test_selector_rules() -> None:
    mismatch = VLLM.replace(
        "matchLabels: {app.kubernetes.io/instance: llama-3-70b}\n  strategy",
        "matchLabels: {app: other}\n  strategy",
    )
    message = error_of(mismatch)
    assert "m.yaml:19: spec.template.metadata.labels" in message
    assert "`selector` does not match template `labels`" in message
    empty = VLLM.replace(
        "matchLabels: {app.kubernetes.io/instance: llama-3-70b}\n  strategy",
        "{}\n  strategy",
    )
    assert "empty selector is invalid for deployment" in error_of(empty)
    expressions = yaml.safe_load(VLLM)
    expressions["spec"]["selector"] = {
        "matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "In", "values": ["x"]}]
    }
    with pytest.raises(InputError, match="does not match"):
        parse_manifest(expressions)
    expressions["spec"]["selector"]["matchExpressions"][0]["values"] = ["vllm", "x"]
    assert isinstance(parse_manifest(expressions).obj, wo.DeploymentSpec)
    expressions["spec"]["selector"]["matchExpressions"][0] = {
        "key": "a",
        "operator": "Exists",
        "values": ["x"],
    }
    with pytest.raises(InputError, match="may not be specified when `operator` is 'Exists'"):
        parse_manifest(expressions)
    job = yaml.safe_load(PYTORCH_JOB)
    job["spec"]["selector"] = {"matchLabels": {"app": "finetune"}}
    with pytest.raises(InputError, match="`selector` not auto-generated"):
        parse_manifest(job)
    job["spec"]["manualSelector"] = True
    assert isinstance(parse_manifest(job).obj, wo.JobSpec)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "      containers:\n        - name: vllm",
            "      containers:\n        - nmae: vllm",
            "m.yaml:50: spec.template.spec.containers[0].nmae: unknown field "
            '"spec.template.spec.containers[0].nmae" (first of 2 problems); expected name',
        ),
        (
            "          resources:\n            limits: {nvidia.com/gpu: 4",
            "          resource:\n            limits: {nvidia.com/gpu: 4",
            'spec.template.spec.containers[0].resource: unknown field "spec.template',
        ),
        (
            "      nodeSelector:",
            "      nodeselector:",
            'spec.template.spec.nodeselector: unknown field "spec.template.spec.nodeselector"; '
            "expected nodeSelector",
        ),
        ("  revisionHistoryLimit", "  revisionHistory", "expected revisionHistoryLimit"),
        ("    rollingUpdate: {maxSurge", "    rollingUpdates: {maxSurge", "expected rollingUpdate"),
        ("  annotations: {deployment", "  anotations: {deployment", "expected annotations"),
        (
            "imagePullPolicy: IfNotPresent",
            "imagePullPolicey: IfNotPresent",
            "m.yaml:52: spec.template.spec.containers[0].imagePullPolicey: unknown field",
        ),
    ],
)
def test_typos_are_located_with_close_names(old: str, new: str, expected: str) -> None:
    assert old in VLLM
    assert expected in error_of(VLLM.replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("      restartPolicy: Never\n", "", 'restartPolicy: Required value: valid values: "OnF'),
        ("restartPolicy: Never", "restartPolicy: OnFailure", 'only "Never" is supported'),
        ("  completions: 4\n", "", "spec.completions: Required value: when completion mode is"),
        ("completionMode: Indexed", "completionMode: Ordered", "Unsupported value: 'Ordered'"),
        ("backoffLimit: 0", "backoffLimit: -1", "spec.backoffLimit: -1: must be greater than"),
        ("parallelism: 4", "parallelism: 4.5", "spec.parallelism: got 4.5"),
        ("parallelism: 4", "parallelism: true", "spec.parallelism"),
        ("parallelism: 4", "parallelism: '4'", "spec.parallelism: got '4'"),
        ("name: llama-finetune\nspec", "name: Llama\nspec", "metadata.name: 'Llama'"),
        ("app: finetune}", "app: 1}", "spec.template.metadata.labels.app: got 1"),
        ("app: finetune}", "app: fine tune}", "label value 'fine tune'"),
    ],
)
def test_job_mistakes(old: str, new: str, expected: str) -> None:
    assert old in PYTORCH_JOB
    message = error_of(PYTORCH_JOB.replace(old, new, 1))
    assert message.startswith("m.yaml:")
    assert expected in message


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ({"type": "Recreate", "rollingUpdate": {}}, "may not be specified when strategy `type`"),
        ({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, "may not be 0 when `maxSurge`"),
        ({"rollingUpdate": {"maxUnavailable": "120%"}}, "must not be greater than 100%"),
        ({"rollingUpdate": {"maxSurge": "1"}}, "a valid percent string"),
        ({"type": "BlueGreen"}, "Unsupported value: 'BlueGreen'"),
    ],
)
def test_deployment_strategy(strategy: dict[str, Any], expected: str) -> None:
    doc = yaml.safe_load(VLLM)
    doc["spec"]["strategy"] = strategy
    with pytest.raises(InputError, match=expected.replace("(", r"\(")):
        parse_manifest(doc)


def test_recreate_strategy() -> None:
    doc = yaml.safe_load(VLLM)
    doc["spec"]["strategy"] = {"type": "Recreate"}
    d = parse_manifest(doc).obj
    assert isinstance(d, wo.DeploymentSpec) and (d.max_surge, d.max_unavailable) == (0, "100%")


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"operator": "Equal", "value": "x"}, "operator must be Exists when `key` is empty"),
        ({"key": "a", "operator": "Exists", "value": "x"}, "value must be empty when `operator`"),
        ({"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5}, "effect must be 'NoExec"),
        ({"key": "a", "operator": "Lt", "value": "3"}, "Unsupported value: 'Lt'"),
        ({"key": "a", "effect": "NoWay"}, "Unsupported value: 'NoWay'"),
        ({"key": "bad key"}, "toleration key 'bad key'"),
    ],
)
def test_tolerations(toleration: dict[str, Any], expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        parse_manifest(pod({"containers": [container()], "tolerations": [toleration]}))


def test_pod_kind_and_structure_errors() -> None:
    cases = {
        "apiVersion: v1\nkind: StatefulSet\nmetadata: {name: a}\n": "m.yaml:2: kind: kind "
        "'StatefulSet' is not supported",
        "apiVersion: extensions/v1beta1\nkind: Deployment\n": "apiVersion 'extensions/v1beta1' "
        "does not serve Deployment; expected apps/v1",
        "kind: Pod\n": "required key 'apiVersion' is missing",
        "- a\n- b\n": "expected a Kubernetes object",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {}\n": "m.yaml:4: spec.containers"
        ": Required value",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a}]\n": "name or generateName",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: a}, {name: a"
        "}]\n": "Duplicate value: 'a'",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  ephemeralContainers: [{}]\n  "
        "containers: [{name: a}]\n": "cannot be set on create",
    }
    for text, expected in cases.items():
        assert expected in error_of(text), text


def test_replica_set_and_unmodelled_warnings() -> None:
    doc = yaml.safe_load(VLLM)
    doc["kind"] = "ReplicaSet"
    for key in ("strategy", "revisionHistoryLimit", "progressDeadlineSeconds"):
        del doc["spec"][key]
    rs = parse_manifest(doc).obj
    assert isinstance(rs, wo.ReplicaSetSpec) and rs.replicas == 2
    doc["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    with pytest.raises(InputError, match=r'Unsupported value.*expected "Always"'):
        parse_manifest(doc)
    spec = {"containers": [container()], "resources": {"limits": {"cpu": 1}}, "nodeName": "n1"}
    fields = [w[0] for w in parse_manifest(pod(spec)).warnings]
    assert fields == ["spec.resources", "spec.nodeName"]


def test_inline_manifest_errors_carry_the_prefix() -> None:
    text = "workloads:\n  - manifest:\n" + textwrap.indent(PYTORCH_JOB, "      ")
    text = text.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 8.5")
    node, data = parse_yaml(text, "s.yaml")
    assert node is not None
    with pytest.raises(InputError) as info:
        load_manifest(
            data["workloads"][0]["manifest"],
            source="s.yaml",
            line_of=LineIndex(node, "s.yaml").line_of,
            prefix="workloads[0].manifest",
        )
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "nvidia.com/gpu: 8.5" in t)
    assert str(info.value).startswith(
        f"s.yaml:{line}: workloads[0].manifest.spec.template.spec.containers[0].resources.limits."
        "nvidia.com/gpu: '8.5': must be an integer"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "      affinity:\n",
            "      affinity:\n"
            "        nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: true}\n",
            "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            "      affinity:\n",
            "      affinity:\n        podAfinity: {}\n",
            'unknown field "spec.template.spec.affinity.podAfinity"',
        ),
    ],
)
def test_affinity_is_decoded_as_the_api_server_does(old: str, new: str, expected: str) -> None:
    assert old in VLLM
    assert expected in error_of(VLLM.replace(old, new, 1))


def test_affinity_reaches_the_scheduler_with_the_keys_the_manifest_set() -> None:
    d = parse_text(VLLM).obj
    assert isinstance(d, wo.DeploymentSpec)
    assert d.template.affinity == {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {
                            "matchLabels": {"app.kubernetes.io/instance": "llama-3-70b"}
                        },
                    },
                }
            ]
        }
    }
