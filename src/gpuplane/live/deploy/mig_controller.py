"""The MIG repartitioning controller's bundle: ServiceAccount, RBAC, Deployment.

RBAC, least privilege: get/list/watch nodes, pods and PodDisruptionBudgets (cluster-wide);
patch nodes (the ``nvidia.com/mig.config`` label); create pods/eviction (only used with
``--allow-evict``); create events; and, in the GPU Operator's namespace only, list the
ConfigMaps and create/update the mig-parted one.
"""

from __future__ import annotations

from gpuplane.live.deploy.objects import (
    Obj,
    binding,
    container,
    deployment,
    role,
    rule,
    service_account,
)

NAME = "gpuplane-mig-controller"


def mig_controller_objects(
    namespace: str,
    image: str,
    operator_namespace: str = "gpu-operator",
    config_map: str = "custom-mig-parted-config",
) -> dict[str, list[Obj]]:
    cluster_rules = [
        rule([""], ["nodes"], ["get", "list", "watch", "patch"]),
        rule([""], ["pods"], ["get", "list", "watch"]),
        rule([""], ["pods/eviction"], ["create"]),
        rule(["policy"], ["poddisruptionbudgets"], ["get", "list", "watch"]),
        rule([""], ["events"], ["create", "patch"]),
        rule(["events.k8s.io"], ["events"], ["create", "patch"]),
    ]
    cm_rules = [
        rule([""], ["configmaps"], ["get", "list", "watch", "create"]),
        rule([""], ["configmaps"], ["update"], resourceNames=[config_map]),
    ]
    args = [
        "serve",
        "mig-controller",
        "--kubeconfig",
        "in-cluster",
        "--dry-run",
        "--interval",
        "30s",
        "--max-unavailable",
        "1",
        "--operator-namespace",
        operator_namespace,
        "--config-map",
        config_map,
        "--host",
        "0.0.0.0",
        "--port",
        "8080",
    ]
    return {
        "serviceaccount.yaml": [service_account(NAME, namespace)],
        "rbac.yaml": [
            role("ClusterRole", NAME, None, NAME, cluster_rules),
            binding("ClusterRoleBinding", NAME, None, NAME, "ClusterRole", NAME, namespace),
            role("Role", NAME, operator_namespace, NAME, cm_rules),
            binding("RoleBinding", NAME, operator_namespace, NAME, "Role", NAME, namespace),
        ],
        "deployment.yaml": [
            deployment(NAME, namespace, NAME, [container("controller", image, args, 8080)])
        ],
    }
