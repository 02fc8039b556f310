"""Render :class:`~gpuplane.topology.nrt.ResourceTopology` as a ``NodeResourceTopology`` object.

Checked against k8stopologyawareschedwg/noderesourcetopology-api
``pkg/apis/topology/v1alpha2/types.go`` @ 1a8958c0 (read through the code index):

- ``NodeResourceTopology``: TypeMeta, ``metadata``, ``topologyPolicies`` ([]string, no
  omitempty, marked DEPRECATED "to be removed in v1beta1", so always written), ``zones``,
  ``attributes`` (omitempty). Cluster-scoped, so metadata has no namespace.
- ``Zone``: ``name``, ``type``, ``parent``/``costs``/``attributes``/``resources`` (omitempty);
  gpuplane writes no parent and no zone attributes.
- ``CostInfo``: ``name`` and ``value`` (int64); ``AttributeInfo``: ``name`` and ``value``
  (string); ``ResourceInfo``: ``name``, ``capacity``, ``allocatable``, ``available``, each a
  ``resource.Quantity``.

The ``topologyPolicies`` value is what node-feature-discovery's
``pkg/topologypolicy/topology-policy.go`` @ 2967f330 (DetectTopologyPolicy) derives from the
kubelet policy and scope. Quantities are written as NFD writes them,
``resource.NewQuantity(n, resource.DecimalSI)``, whose string form is apimachinery's canonical
decimal form (``amount.go`` AsCanonicalBytes): trailing zeros folded into a k/M/G/T/P/E suffix
whose exponent is a multiple of 3 (``1000`` -> ``1k``, ``1500`` -> ``1500``).
"""

from __future__ import annotations

from typing import Any

import yaml

from gpuplane.topology.nrt import (
    ResourceTopology,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
)

API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"

_POLICY_LEVEL = {
    TopologyManagerPolicy.SINGLE_NUMA_NODE: "SingleNUMANode",
    TopologyManagerPolicy.RESTRICTED: "Restricted",
    TopologyManagerPolicy.BEST_EFFORT: "BestEffort",
}
_SCOPE_LEVEL = {
    TopologyManagerScope.CONTAINER: "ContainerLevel",
    TopologyManagerScope.POD: "PodLevel",
}
_DECIMAL_SUFFIX = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_INT64_MAX = 2**63 - 1


def topology_policy(policy: TopologyManagerPolicy, scope: TopologyManagerScope) -> str:
    """The deprecated v1alpha1-style policy name, e.g. ``SingleNUMANodeContainerLevel``.

    policy ``none`` is ``None`` at either scope. (v1alpha2 also defines ``Restricted`` and
    ``BestEffort`` without a level; NFD never produces them.)
    """
    if policy is TopologyManagerPolicy.NONE:
        return "None"
    return _POLICY_LEVEL[policy] + _SCOPE_LEVEL[scope]


def decimal_si(value: int) -> str:
    """An integer as ``resource.NewQuantity(value, DecimalSI).String()`` prints it."""
    if abs(value) > _INT64_MAX:
        raise ValueError(f"{value} does not fit a Kubernetes int64 quantity")
    if value == 0:
        return "0"
    mantissa, exponent = abs(value), 0
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    # Lower the exponent to a multiple of 3 so it has an SI suffix.
    mantissa *= 10 ** (exponent % 3)
    exponent -= exponent % 3
    sign = "-" if value < 0 else ""
    return f"{sign}{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def _zone(zone: Zone) -> dict[str, Any]:
    out: dict[str, Any] = {"name": zone.name, "type": zone.type}
    if zone.costs:
        out["costs"] = [{"name": c.name, "value": c.value} for c in zone.costs]
    if zone.resources:
        out["resources"] = [
            {
                "name": r.name,
                "capacity": decimal_si(r.capacity),
                "allocatable": decimal_si(r.allocatable),
                "available": decimal_si(r.available),
            }
            for r in zone.resources
        ]
    return out


def nrt_manifest(nrt: ResourceTopology) -> dict[str, Any]:
    """The object as a plain dict, fields in the Go struct's order."""
    manifest: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": nrt.node_name},
        "topologyPolicies": [topology_policy(nrt.policy, nrt.scope)],
        "zones": [_zone(z) for z in nrt.zones],
    }
    if nrt.attributes:
        manifest["attributes"] = [{"name": n, "value": v} for n, v in nrt.attributes]
    return manifest


def nrt_manifest_yaml(nrt: ResourceTopology) -> str:
    """The manifest as YAML, ready for ``kubectl apply -f`` (quantities quoted as strings)."""
    return yaml.safe_dump(nrt_manifest(nrt), sort_keys=False, default_flow_style=False)
