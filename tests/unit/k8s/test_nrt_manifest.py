from __future__ import annotations

import pytest
import yaml

from gpuplane.core.ids import NumaId
from gpuplane.core.units import GIB
from gpuplane.k8s.manifests.nrt import (
    API_VERSION,
    KIND,
    decimal_si,
    nrt_manifest,
    nrt_manifest_yaml,
    topology_policy,
)
from gpuplane.topology.nrt import (
    ResourceTopology,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
    node_resource_topology,
)
from tests.factories import all_pairs, make_topology

P = TopologyManagerPolicy
S = TopologyManagerScope


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (8, "8"),
        (100, "100"),
        (1000, "1k"),
        (1200, "1200"),
        (1500, "1500"),
        (10_000, "10k"),
        (120_000, "120k"),
        (2_000_000, "2M"),
        (64 * GIB, "68719476736"),
        (265_094_635_520, "265094635520"),
        (10**12, "1T"),
        (10**18, "1E"),
        (-2000, "-2k"),
    ],
)
def test_decimal_si_quantities(value: int, text: str) -> None:
    assert decimal_si(value) == text


def test_decimal_si_rejects_values_past_int64() -> None:
    with pytest.raises(ValueError):
        decimal_si(2**63)


@pytest.mark.parametrize(
    ("policy", "scope", "name"),
    [
        (P.SINGLE_NUMA_NODE, S.CONTAINER, "SingleNUMANodeContainerLevel"),
        (P.SINGLE_NUMA_NODE, S.POD, "SingleNUMANodePodLevel"),
        (P.RESTRICTED, S.CONTAINER, "RestrictedContainerLevel"),
        (P.RESTRICTED, S.POD, "RestrictedPodLevel"),
        (P.BEST_EFFORT, S.CONTAINER, "BestEffortContainerLevel"),
        (P.BEST_EFFORT, S.POD, "BestEffortPodLevel"),
        (P.NONE, S.CONTAINER, "None"),
        (P.NONE, S.POD, "None"),
    ],
)
def test_topology_policies_as_nfd_derives_them(
    policy: TopologyManagerPolicy, scope: TopologyManagerScope, name: str
) -> None:
    assert topology_policy(policy, scope) == name


def nrt() -> ResourceTopology:
    topo = make_topology(all_pairs(8, "NV18"), numa_of_gpu=[0, 0, 0, 0, 1, 1, 1, 1])
    return node_resource_topology(
        topo, node_name="gpu-node-1", reserved_cpus=[0], allocated_gpus=[4]
    )


def test_manifest_shape() -> None:
    m = nrt_manifest(nrt())
    assert list(m) == ["apiVersion", "kind", "metadata", "topologyPolicies", "zones", "attributes"]
    assert m["apiVersion"] == API_VERSION == "topology.node.k8s.io/v1alpha2"
    assert m["kind"] == KIND == "NodeResourceTopology"
    assert m["metadata"] == {"name": "gpu-node-1"}
    assert m["topologyPolicies"] == ["SingleNUMANodeContainerLevel"]
    assert m["attributes"] == [
        {"name": "topologyManagerPolicy", "value": "single-numa-node"},
        {"name": "topologyManagerScope", "value": "container"},
    ]
    zone0, zone1 = m["zones"]
    assert zone0["name"] == "node-0" and zone0["type"] == "Node"
    assert zone0["costs"] == [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 20}]
    assert zone0["resources"] == [
        {"name": "cpu", "capacity": "8", "allocatable": "7", "available": "7"},
        {
            "name": "memory",
            "capacity": "68719476736",
            "allocatable": "68719476736",
            "available": "68719476736",
        },
        {"name": "nvidia.com/gpu", "capacity": "4", "allocatable": "4", "available": "4"},
    ]
    assert zone1["resources"][2]["available"] == "3"
    assert "parent" not in zone0


def test_empty_optional_fields_are_omitted() -> None:
    bare = ResourceTopology(
        node_name="n",
        zones=(Zone(name="node-0", numa=NumaId(0), costs=(), resources=()),),
        policy=P.NONE,
        scope=S.CONTAINER,
    )
    assert nrt_manifest(bare)["zones"] == [{"name": "node-0", "type": "Node"}]
    assert nrt_manifest(bare)["topologyPolicies"] == ["None"]


def test_yaml_round_trips_with_string_quantities() -> None:
    text = nrt_manifest_yaml(nrt())
    assert text.startswith(
        "apiVersion: topology.node.k8s.io/v1alpha2\nkind: NodeResourceTopology\n"
    )
    loaded = yaml.safe_load(text)
    assert loaded == nrt_manifest(nrt())
    assert loaded["zones"][0]["resources"][0]["capacity"] == "8"
