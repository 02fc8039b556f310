"""The scheduler extender's bundle: the extender (Deployment + Service), a second scheduler
(kube-scheduler v1.31 with a KubeSchedulerConfiguration whose profile ``gpuplane-scheduler``
calls the extender), ServiceAccounts and RBAC.

The extender only reads (get/list/watch), unless rendered with ``bind``: then it is also the
scheduler's binder (``bindVerb: bind``, ``serve extender --bind``) and its role adds ``create``
on ``pods/binding``, the one write a binder makes (kube-scheduler's own role,
``system:kube-scheduler``, grants the same). The second scheduler is bound to the roles
kube-scheduler itself uses (``system:kube-scheduler``, ``system:volume-scheduler``) plus the
leader-election lease and the ``extension-apiserver-authentication`` ConfigMap reader.
"""

from __future__ import annotations

import yaml

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.live.deploy.objects import (
    Obj,
    binding,
    container,
    deployment,
    labels,
    meta,
    role,
    rule,
    service_account,
)
from gpuplane.slicing.mig.catalog import default_mig_catalog

NAME = "gpuplane-extender"
SCHEDULER = "gpuplane-scheduler"
PORT = 8888
KUBE_SCHEDULER_IMAGE = "registry.k8s.io/kube-scheduler:v1.31.2"


def managed_resources() -> list[str]:
    names = {NVIDIA_GPU}
    for gpu in default_mig_catalog().gpus.values():
        names.update(p.resource_name for p in gpu.profiles)
    return sorted(names)


def scheduler_config(namespace: str, bind: bool = False) -> Obj:
    extender: Obj = {
        "urlPrefix": f"http://{NAME}.{namespace}.svc:{PORT}/gpuplane",
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 1,
    }
    if bind:
        extender["bindVerb"] = "bind"
    extender |= {
        "nodeCacheCapable": True,
        "managedResources": [{"name": r, "ignoredByScheduler": False} for r in managed_resources()],
        "ignorable": False,
        "httpTimeout": "5s",
    }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": True,
            "resourceName": SCHEDULER,
            "resourceNamespace": namespace,
        },
        "profiles": [{"schedulerName": SCHEDULER}],
        "extenders": [extender],
    }


def _extender(namespace: str, image: str, bind: bool = False) -> list[Obj]:
    args = [
        "serve",
        "extender",
        "--kubeconfig",
        "in-cluster",
        "--listen",
        f"0.0.0.0:{PORT}",
    ]
    if bind:
        args.append("--bind")
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(NAME, namespace, NAME),
        "spec": {
            "selector": {"app.kubernetes.io/name": NAME},
            "ports": [{"name": "http", "port": PORT, "targetPort": "http"}],
        },
    }
    return [deployment(NAME, namespace, NAME, [container("extender", image, args, PORT)]), service]


def _scheduler(namespace: str, bind: bool) -> list[Obj]:
    config = yaml.safe_dump(scheduler_config(namespace, bind), sort_keys=False)
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(f"{SCHEDULER}-config", namespace, SCHEDULER),
        "data": {"config.yaml": config},
    }
    sched = {
        "name": "kube-scheduler",
        "image": KUBE_SCHEDULER_IMAGE,
        "command": ["kube-scheduler", "--config=/etc/gpuplane/config.yaml"],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 10259, "scheme": "HTTPS"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 10259, "scheme": "HTTPS"}},
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/gpuplane", "readOnly": True}],
    }
    volumes = [{"name": "config", "configMap": {"name": f"{SCHEDULER}-config"}}]
    dep = deployment(SCHEDULER, namespace, SCHEDULER, [sched], volumes=volumes)
    dep["spec"]["template"]["metadata"]["labels"] = labels(SCHEDULER)
    return [cm, dep]


def _rbac(namespace: str, bind: bool) -> list[Obj]:
    read = [
        rule(
            [""],
            ["nodes", "pods", "namespaces", "services", "replicationcontrollers"],
            ["get", "list", "watch"],
        ),
        rule(["apps"], ["replicasets", "statefulsets"], ["get", "list", "watch"]),
        rule(["scheduling.k8s.io"], ["priorityclasses"], ["get", "list", "watch"]),
        rule(
            ["resource.k8s.io"],
            ["resourceslices", "deviceclasses", "resourceclaims"],
            ["get", "list", "watch"],
        ),
        rule(["topology.node.k8s.io"], ["noderesourcetopologies"], ["get", "list", "watch"]),
    ]
    if bind:
        read.append(rule([""], ["pods/binding"], ["create"]))
    out = [
        role("ClusterRole", NAME, None, NAME, read),
        binding("ClusterRoleBinding", NAME, None, NAME, "ClusterRole", NAME, namespace),
    ]
    for cluster_role in ("system:kube-scheduler", "system:volume-scheduler"):
        b = binding(
            "ClusterRoleBinding",
            f"{SCHEDULER}-{cluster_role.split(':')[1]}",
            None,
            SCHEDULER,
            "ClusterRole",
            SCHEDULER,
            namespace,
        )
        b["roleRef"]["name"] = cluster_role
        out.append(b)
    auth = binding(
        "RoleBinding",
        f"{SCHEDULER}-auth-reader",
        "kube-system",
        SCHEDULER,
        "Role",
        SCHEDULER,
        namespace,
    )
    auth["roleRef"]["name"] = "extension-apiserver-authentication-reader"
    out.append(auth)
    lease = [
        rule(["coordination.k8s.io"], ["leases"], ["create", "get", "list", "update", "watch"])
    ]
    out.append(role("Role", f"{SCHEDULER}-leases", namespace, SCHEDULER, lease))
    lb = binding(
        "RoleBinding", f"{SCHEDULER}-leases", namespace, SCHEDULER, "Role", SCHEDULER, namespace
    )
    out.append(lb)
    return out


def extender_objects(namespace: str, image: str, bind: bool = False) -> dict[str, list[Obj]]:
    """``bind``: the extender binds (``bindVerb``, ``--bind``, ``create`` on pods/binding)."""
    return {
        "serviceaccounts.yaml": [
            service_account(NAME, namespace),
            service_account(SCHEDULER, namespace),
        ],
        "rbac.yaml": _rbac(namespace, bind),
        "extender.yaml": _extender(namespace, image, bind),
        "scheduler.yaml": _scheduler(namespace, bind),
    }
