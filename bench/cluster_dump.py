"""Kubernetes objects as ``kubectl get -o yaml`` prints them, for examples and benchmarks.

``node(...)`` and ``pod(...)`` build a Node and a Pod the way a v1.31 API server returns them
(defaulted fields, status, GFD labels on GPU nodes); ``mixed_cluster()`` is the example cluster
of ``examples/snapshot/mixed-cluster.yaml`` and ``large_cluster(n_nodes, n_pods)`` the benchmark's.

    python bench/cluster_dump.py examples/snapshot/mixed-cluster.yaml   # rewrite the example
"""

from __future__ import annotations

import random
import sys
import zlib
from pathlib import Path
from typing import Any

import yaml

CREATED = "2026-11-20T08:14:02Z"
SYSTEM_TOLERATIONS = [
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
]
GPU_TOLERATION = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}
# product label, memory MiB, compute capability, instance type
GPUS = {
    "h100": ("NVIDIA-H100-80GB-HBM3", 81559, (9, 0), "p5.48xlarge"),
    "h200": ("NVIDIA-H200", 143771, (9, 0), "p5e.48xlarge"),
    "a100": ("NVIDIA-A100-SXM4-80GB", 81920, (8, 0), "p4de.24xlarge"),
}


def _h(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _uid(kind: str, name: str) -> str:
    h = (_h(kind + "/" + name) * 2654435761) % 10**12
    return f"{h:08x}"[:8] + "-0000-4000-8000-" + f"{h:012d}"[-12:]


def gfd_labels(gpu: str, count: int) -> dict[str, str]:
    product, memory, (major, minor), instance = GPUS[gpu]
    return {
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "127",
        "nvidia.com/cuda.driver.rev": "05",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4",
        "nvidia.com/gpu.compute.major": str(major),
        "nvidia.com/gpu.compute.minor": str(minor),
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.family": "hopper" if major == 9 else "ampere",
        "nvidia.com/gpu.machine": instance,
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true",
        "node.kubernetes.io/instance-type": instance,
    }


def node(
    name: str,
    *,
    gpu: str | None = None,
    gpus: int = 8,
    cpu: str = "191450m",
    memory: str = "2043453148Ki",
    zone: str = "us-east-1a",
    labels: dict[str, str] | None = None,
    extra_allocatable: dict[str, str] | None = None,
    unschedulable: bool = False,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    all_labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": zone,
        **(gfd_labels(gpu, gpus) if gpu else {}),
        **(labels or {}),
    }
    allocatable = {
        "cpu": cpu,
        "ephemeral-storage": "3702269362244",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
    }
    if gpu and not extra_allocatable:
        allocatable["nvidia.com/gpu"] = str(gpus)
    allocatable.update(extra_allocatable or {})
    node_taints = list(taints if taints is not None else ([GPU_TAINT] if gpu else []))
    if unschedulable:
        node_taints.append(
            {
                "effect": "NoSchedule",
                "key": "node.kubernetes.io/unschedulable",
                "timeAdded": "2026-12-01T18:00:00Z",
            }
        )
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{_h(name):016x}"}
    if node_taints:
        spec["taints"] = node_taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": CREATED,
            "labels": dict(sorted(all_labels.items())),
            "name": name,
            "resourceVersion": str(4538000 + _h(name) % 1000),
            "uid": _uid("Node", name),
        },
        "spec": spec,
        "status": {
            "allocatable": allocatable,
            "capacity": {**allocatable, "cpu": "192"},
            "conditions": [
                {
                    "lastHeartbeatTime": "2026-12-01T23:40:11Z",
                    "lastTransitionTime": "2026-11-20T08:15:31Z",
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                }
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.23",
                "kernelVersion": "6.1.115",
                "kubeProxyVersion": "v1.31.2",
                "kubeletVersion": "v1.31.2",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS",
            },
        },
    }


def pod(
    namespace: str,
    name: str,
    *,
    node_name: str | None,
    requests: dict[str, str],
    limits: dict[str, str] | None = None,
    owner: tuple[str, str] | None = None,
    priority_class: tuple[str, int] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    phase: str | None = None,
    started: str = "2026-12-01T21:02:45Z",
    gpu_toleration: bool = True,
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "creationTimestamp": started,
        "labels": labels or {},
        "name": name,
        "namespace": namespace,
        "resourceVersion": "3135225",
        "uid": _uid("Pod", f"{namespace}/{name}"),
    }
    if annotations:
        meta["annotations"] = annotations
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1" if owner[0] == "Job" else "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": owner[0],
                "name": owner[1],
                "uid": _uid(owner[0], owner[1]),
            }
        ]
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    spec: dict[str, Any] = {
        "containers": [
            {
                "image": "vllm/vllm-openai:v0.11.0",
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "resources": resources,
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": priority_class[1] if priority_class else 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": ([GPU_TOLERATION] if gpu_toleration else []) + SYSTEM_TOLERATIONS,
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if priority_class:
        spec["priorityClassName"] = priority_class[0]
    if node_name:
        spec["nodeName"] = node_name
    status: dict[str, Any] = {
        "phase": phase or ("Running" if node_name else "Pending"),
        "qosClass": "Guaranteed" if limits and limits == requests else "Burstable",
    }
    if node_name:
        status.update(hostIP="10.0.1.10", podIP="10.1.25.221", startTime=started)
    else:
        status["conditions"] = [
            {
                "lastProbeTime": None,
                "lastTransitionTime": started,
                "message": "0/6 nodes are available",
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "creationTimestamp": CREATED,
            "name": name,
            "resourceVersion": "1200",
            "uid": _uid("PriorityClass", name),
        },
        "globalDefault": default,
        "preemptionPolicy": "PreemptLowerPriority",
        "value": value,
        "description": f"{name} workloads",
    }


HIGH = ("inference-high", 100000)
LOW = ("batch-low", 1000)


def mixed_cluster() -> list[dict[str, Any]]:
    """Six nodes: H100 x3 (one cordoned), H200, A100 in MIG mode (all-1g.10gb), a CPU node."""
    mig_labels = {
        "nvidia.com/mig.config": "all-1g.10gb",
        "nvidia.com/mig.config.state": "success",
        "nvidia.com/mig.strategy": "mixed",
    }
    g = {"cpu": "16", "memory": "128Gi"}
    objs: list[dict[str, Any]] = [
        priority_class(*HIGH),
        priority_class(*LOW),
        priority_class("inference-critical", 1000000),
        node("gpu-h100-a", gpu="h100", labels={"gpuplane.example/pool": "training"}),
        node("gpu-h100-b", gpu="h100", labels={"gpuplane.example/pool": "inference"}),
        node(
            "gpu-h100-c",
            gpu="h100",
            labels={"gpuplane.example/pool": "inference"},
            unschedulable=True,
        ),
        node(
            "gpu-h200-a", gpu="h200", labels={"gpuplane.example/pool": "batch"}, zone="us-east-1b"
        ),
        node(
            "gpu-a100-mig",
            gpu="a100",
            labels=mig_labels,
            zone="us-east-1b",
            extra_allocatable={"nvidia.com/mig-1g.10gb": "56"},
        ),
        node("cpu-a", cpu="63770m", memory="257512644Ki", zone="us-east-1b"),
        # gpu-h100-a: two training shards that name their GPUs (0-2 and 5-7): 3 and 4 are free,
        # one on each NUMA node.
        pod(
            "train",
            "pretrain-7b-0",
            node_name="gpu-h100-a",
            owner=("Job", "pretrain-7b"),
            priority_class=HIGH,
            requests={**g, "nvidia.com/gpu": "3"},
            limits={**g, "nvidia.com/gpu": "3"},
            annotations={"gpuplane.io/gpu-ids": "0,1,2"},
            labels={"job-name": "pretrain-7b"},
        ),
        pod(
            "train",
            "pretrain-7b-1",
            node_name="gpu-h100-a",
            owner=("Job", "pretrain-7b"),
            priority_class=HIGH,
            requests={**g, "nvidia.com/gpu": "3"},
            limits={**g, "nvidia.com/gpu": "3"},
            annotations={"gpuplane.io/gpu-ids": "5,6,7"},
            labels={"job-name": "pretrain-7b"},
        ),
        # gpu-h100-b: one TP=4 server, GPUs not named (the usual case).
        pod(
            "llm",
            "llama-70b-7d9f8c6b5-x2k4q",
            node_name="gpu-h100-b",
            owner=("ReplicaSet", "llama-70b-7d9f8c6b5"),
            priority_class=HIGH,
            requests={"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"},
            limits={"nvidia.com/gpu": "4"},
            labels={"app": "llama-70b"},
        ),
        # gpu-h200-a: full of low-priority batch work.
        *(
            pod(
                "batch",
                f"sweep-{i}",
                node_name="gpu-h200-a",
                owner=("Job", "sweep"),
                priority_class=LOW,
                requests={"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"},
                limits={"nvidia.com/gpu": "4"},
                labels={"job-name": "sweep"},
                started=f"2026-12-01T2{i}:10:00Z",
            )
            for i in range(2)
        ),
        # gpu-a100-mig: ten 1g.10gb instances in use.
        *(
            pod(
                "dev",
                f"notebook-{i}",
                node_name="gpu-a100-mig",
                owner=("StatefulSet", "notebook"),
                requests={"cpu": "2", "memory": "16Gi", "nvidia.com/mig-1g.10gb": "1"},
                limits={"nvidia.com/mig-1g.10gb": "1"},
                labels={"app": "notebook"},
            )
            for i in range(10)
        ),
        pod(
            "kube-system",
            "coredns-6f6b679f8f-7kq2x",
            node_name="cpu-a",
            owner=("ReplicaSet", "coredns-6f6b679f8f"),
            requests={"cpu": "100m", "memory": "70Mi"},
            priority_class=("system-cluster-critical", 2000000000),
            gpu_toleration=False,
            labels={"k8s-app": "kube-dns"},
        ),
        # Pending: a 16-GPU request that no node can ever hold.
        pod(
            "llm",
            "llama-405b-6f5e4d3c2-bt8wn",
            node_name=None,
            owner=("ReplicaSet", "llama-405b-6f5e4d3c2"),
            priority_class=HIGH,
            requests={"cpu": "32", "memory": "512Gi", "nvidia.com/gpu": "16"},
            limits={"nvidia.com/gpu": "16"},
            labels={"app": "llama-405b"},
        ),
    ]
    return objs


def large_cluster(n_nodes: int, n_pods: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n_nodes`` 8-GPU H100 nodes and ``n_pods`` bound GPU pods (1, 2, 4 or 8 GPUs)."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [priority_class(*HIGH), priority_class(*LOW)]
    free = []
    for i in range(n_nodes):
        objs.append(node(f"gpu-{i:05d}", gpu="h100", zone=f"zone-{i % 3}"))
        free.append(8)
    for k in range(n_pods):
        size = rng.choice((1, 1, 2, 4))
        i = rng.randrange(n_nodes)
        while free[i] < size:  # the cluster holds 8 GPUs a node: keep 10,000 pods under it
            size, i = max(1, size // 2), rng.randrange(n_nodes)
        free[i] -= size
        objs.append(
            pod(
                "batch",
                f"job-{k:06d}",
                node_name=f"gpu-{i:05d}",
                owner=("Job", "b"),
                priority_class=LOW,
                requests={"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": str(size)},
            )
        )
    return objs


def as_list(objs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(
        {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}},
        sort_keys=False,
        width=100,
    )


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/snapshot/mixed-cluster.yaml")
    header = (
        "# A mixed GPU cluster as `kubectl get nodes,pods,priorityclasses -A -o yaml` prints "
        "it;\n# regenerate with: python bench/cluster_dump.py " + str(target) + "\n"
    )
    target.write_text(header + as_list(mixed_cluster()), encoding="utf-8")
