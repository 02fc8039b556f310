"""Builders for the Kubernetes objects the deploy bundles share (plain dicts, API field names)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
PART_OF = {"app.kubernetes.io/part-of": "gpuplane"}


def labels(app: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": app, **PART_OF}


def meta(name: str, namespace: str | None, app: str) -> Obj:
    out: Obj = {"name": name, "labels": labels(app)}
    if namespace is not None:
        out["namespace"] = namespace
    return out


def service_account(name: str, namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, namespace, name)}


def rule(groups: list[str], resources: list[str], verbs: list[str], **extra: Any) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs, **extra}


def role(kind: str, name: str, namespace: str | None, app: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta(name, namespace, app),
        "rules": rules,
    }


def binding(
    kind: str, name: str, namespace: str | None, app: str, role_kind: str, sa: str, sa_ns: str
) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta(name, namespace, app),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}],
    }


def container(name: str, image: str, args: list[str], port: int) -> Obj:
    return {
        "name": name,
        "image": image,
        "args": args,
        "ports": [{"name": "http", "containerPort": port}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}},
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }


def deployment(name: str, namespace: str, sa: str, containers: list[Obj], **pod: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, namespace, name),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels(name)},
                "spec": {"serviceAccountName": sa, "containers": containers, **pod},
            },
        },
    }
