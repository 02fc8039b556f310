"""Render a twin :class:`~gpuplane.twin.cluster.objects.Node` as the ``v1`` Node object
``kubectl get node -o yaml`` shows (the fields the twin models).

- ``metadata.labels``: the node's labels, sorted as the API server returns map keys.
- ``spec.taints``: ``key``, ``value`` (omitted when empty), ``effect``; ``spec.unschedulable``
  only when cordoned (omitempty).
- ``status.capacity`` / ``status.allocatable``: resource.Quantity strings in the form the kubelet
  writes them: cpu as a whole number of cores or millicores (``96``, ``95500m``), memory and
  other byte amounts in apimachinery's canonical BinarySI form (``1Gi``, ``527952936Ki``), counts
  in canonical DecimalSI (``8``, ``110``).
"""

from __future__ import annotations

from typing import Any

from gpuplane.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from gpuplane.k8s.manifests.nrt import decimal_si
from gpuplane.twin.cluster.objects import Node

_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_BYTE_RESOURCES = frozenset({MEMORY, EPHEMERAL_STORAGE})


def binary_si(value: int) -> str:
    """``resource.NewQuantity(value, BinarySI).String()``: the largest power-of-1024 suffix that
    divides the amount exactly (``1073741824`` -> ``1Gi``; ``1536`` has none and stays ``1536``)."""
    if value == 0:
        return "0"
    mantissa, step = abs(value), 0
    while mantissa % 1024 == 0 and step < len(_BINARY_SUFFIX) - 1:
        mantissa //= 1024
        step += 1
    return f"{'-' if value < 0 else ''}{mantissa}{_BINARY_SUFFIX[step]}"


def quantity_string(resource: str, amount: int) -> str:
    """A canonical twin amount (cpu in millicores, bytes, counts) as the kubelet writes it."""
    if resource == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource in _BYTE_RESOURCES or resource.startswith("hugepages-"):
        return binary_si(amount)
    return decimal_si(amount)


def _resources(amounts: dict[str, int]) -> dict[str, str]:
    """Zero device counts are left out: a resource no device plugin registers (MIG GPUs under
    the mixed strategy, GPUs behind NVIDIA's DRA driver) is absent from the Node."""
    return {
        name: quantity_string(name, amounts[name])
        for name in sorted(amounts)
        if amounts[name] or "/" not in name
    }


def _hardware(node: Node) -> dict[str, int]:
    """Capacity the hardware gives where the topology knows it (CPUs, memory); allocatable is
    capacity minus kube/system reserved and the eviction threshold, or the pool's override."""
    topo = node.topology
    out: dict[str, int] = {}
    cpus = sum(len(n.cpus) for n in topo.cpu_numa_nodes())
    if cpus and cpus * 1000 >= node.allocatable.get(CPU, 0):
        out[CPU] = cpus * 1000
    memory = sum(n.memory_bytes or 0 for n in topo.numa_nodes)
    if memory and memory >= node.allocatable.get(MEMORY, 0):
        out[MEMORY] = memory
    return out


def node_manifest(node: Node) -> dict[str, Any]:
    """The Node as a plain dict (apiVersion, kind, metadata, spec, status)."""
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": str(t.effect)}
            for t in node.taints
        ]
    # The twin keeps device counts in capacity; the kubelet reports them in both.
    allocatable = {**node.capacity, **node.allocatable}
    capacity = {**node.capacity, **_hardware(node)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": dict(sorted(node.labels.items()))},
        "spec": spec,
        "status": {"capacity": _resources(capacity), "allocatable": _resources(allocatable)},
    }


def node_labels_patch(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A Node carrying only ``labels``: a merge patch for ``kubectl patch node``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(sorted(labels.items()))},
    }
