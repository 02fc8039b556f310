"""build_topology on small hand-made trees: the ``topo -m`` class rules and path bandwidths.

A property test compares the builder with a literal reading of the nvidia-smi legend (count the
bridges on the path between two devices) on random trees.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.ids import NumaId
from gpuplane.core.units import GIB, pcie_gbps
from gpuplane.topology.build import build_topology
from gpuplane.topology.hardware_spec import HardwareSpec
from gpuplane.topology.model import BridgeKind, NodeTopology

GEN5 = pcie_gbps(5, 16)  # 63.008
GEN4 = pcie_gbps(4, 16)  # 31.504


def make_spec(
    bridges: list[dict[str, Any]],
    gpus: list[dict[str, Any]],
    nics: list[dict[str, Any]] | None = None,
    **overrides: Any,
) -> HardwareSpec:
    """Two sockets with one NUMA node each (cpus 0-1 and 2-3), H100s, Gen5 x16 by default."""
    raw: dict[str, Any] = {
        "name": "tiny",
        "gpu_model": "H100-80GB-SXM",
        "cpu": {"model": "test", "sockets": 2, "cores_per_socket": 2},
        "numa_nodes": [
            {"id": 0, "cpus": "0-1", "socket": 0, "memory_gib": 2},
            {"id": 1, "cpus": "2-3", "socket": 1},
        ],
        "pcie": {"gen": 5, "width": 16},
        "bridges": bridges,
        "gpus": gpus,
        "nics": nics or [],
    }
    raw.update(overrides)
    return HardwareSpec.model_validate(raw)


def hb(bridge_id: str, numa: int = 0) -> dict[str, Any]:
    return {"id": bridge_id, "kind": "host-bridge", "numa": numa}


def sw(bridge_id: str, parent: str, **extra: Any) -> dict[str, Any]:
    return {"id": bridge_id, "kind": "switch", "parent": parent, **extra}


def gpus_on(*parents: str) -> list[dict[str, Any]]:
    return [{"index": i, "parent": p} for i, p in enumerate(parents)]


def build(spec: HardwareSpec) -> NodeTopology:
    return build_topology(spec, source="test.yaml")


def labels(*parents: str, bridges: list[dict[str, Any]], **kw: Any) -> list[list[str]]:
    return build(make_spec(bridges, gpus_on(*parents), **kw)).link_labels()


# ----- classes -----


def test_same_switch_is_pix() -> None:
    assert labels("sw0", "sw0", bridges=[hb("hb0"), sw("sw0", "hb0")])[0][1] == "PIX"


def test_sibling_switches_under_a_switch_are_pxb() -> None:
    bridges = [hb("hb0"), sw("up", "hb0"), sw("a", "up"), sw("b", "up")]
    assert labels("a", "b", bridges=bridges)[0][1] == "PXB"


def test_switch_and_its_child_switch_are_pxb() -> None:
    # The LCA is ``up`` itself: the direct parent of one device but not of both.
    bridges = [hb("hb0"), sw("up", "hb0"), sw("a", "up")]
    assert labels("up", "a", bridges=bridges)[0][1] == "PXB"


def test_common_host_bridge_is_phb() -> None:
    bridges = [hb("hb0"), sw("a", "hb0"), sw("b", "hb0")]
    assert labels("hb0", "hb0", "a", "b", bridges=bridges)[0][1:] == ["PHB", "PHB", "PHB"]
    assert labels("a", "b", bridges=bridges)[0][1] == "PHB"


def test_host_bridges_of_one_numa_node_are_node() -> None:
    assert labels("hb0", "hb1", bridges=[hb("hb0"), hb("hb1")])[0][1] == "NODE"


def test_different_numa_nodes_are_sys() -> None:
    assert labels("hb0", "hb1", bridges=[hb("hb0"), hb("hb1", numa=1)])[0][1] == "SYS"


def test_nics_follow_the_same_rules_and_come_after_gpus() -> None:
    bridges = [hb("hb0"), sw("sw0", "hb0"), hb("hb1", numa=1)]
    nics = [{"name": "mlx5_1", "parent": "hb1"}, {"name": "mlx5_0", "parent": "sw0"}]
    topo = build(make_spec(bridges, gpus_on("sw0"), nics))
    assert topo.device_names() == ["GPU0", "NIC0", "NIC1"]
    assert [n.name for n in topo.nics] == ["mlx5_1", "mlx5_0"]  # file order, as nvidia-smi's
    assert topo.link_labels()[0] == ["X", "SYS", "PIX"]
    assert topo.nearest_nics(0) == [1]


# ----- NVLink -----


def test_mesh_pairs_override_pcie_classes() -> None:
    bridges = [hb("hb0"), hb("hb1", numa=1)]
    nvlink = {"fabric": "mesh", "pairs": [[0, 2, 4], [1, 0, 2]]}
    topo = build(make_spec(bridges, gpus_on("hb0", "hb0", "hb1"), nvlink=nvlink))
    assert topo.gpu_link_labels() == [["X", "NV2", "NV4"], ["NV2", "X", "SYS"], ["NV4", "SYS", "X"]]
    assert topo.gpu_bandwidth_gbps(0, 2) == 4 * 25.0
    assert topo.gpu_bandwidth_gbps(0, 1) == 2 * 25.0
    assert not topo.nvswitch and topo.nvlink_islands() == [[0, 1, 2]]


def test_nvswitch_gives_every_pair_all_links_but_not_nics() -> None:
    bridges = [hb("hb0"), hb("hb1", numa=1)]
    nics = [{"name": "mlx5_0", "parent": "hb0"}]
    topo = build(
        make_spec(bridges, gpus_on("hb0", "hb1", "hb1"), nics, nvlink={"fabric": "nvswitch"})
    )
    assert topo.link_labels() == [
        ["X", "NV18", "NV18", "PHB"],
        ["NV18", "X", "NV18", "SYS"],
        ["NV18", "NV18", "X", "SYS"],
        ["PHB", "SYS", "SYS", "X"],
    ]
    assert topo.nvswitch and topo.gpu_bandwidth_gbps(1, 2) == 18 * 25.0


def test_nvswitch_with_nvlink5_gpus() -> None:
    topo = build(
        make_spec(
            [hb("hb0")], gpus_on("hb0", "hb0"), gpu_model="B200", nvlink={"fabric": "nvswitch"}
        )
    )
    assert topo.gpu_link(0, 1).label == "NV18" and topo.gpu_bandwidth_gbps(0, 1) == 900.0


# ----- bandwidth -----


def test_switch_uplink_is_the_bottleneck_only_when_climbed() -> None:
    bridges = [hb("hb0"), sw("sw0", "hb0", pcie={"gen": 4, "width": 8}), hb("hb1")]
    topo = build(make_spec(bridges, gpus_on("sw0", "sw0", "hb1")))
    assert topo.gpu_bandwidth_gbps(0, 1) == GEN5  # PIX: the uplink is not on the path
    assert topo.gpu_bandwidth_gbps(0, 2) == pcie_gbps(4, 8)  # NODE: climbs the x8 uplink


def test_device_links_bound_the_path() -> None:
    gpus = [
        {"index": 0, "parent": "hb0", "pcie": {"gen": 3, "width": 16}},
        {"index": 1, "parent": "hb0"},
    ]
    nics = [{"name": "mlx5_0", "parent": "hb0", "pcie": {"gen": 4, "width": 8}}]
    topo = build(make_spec([hb("hb0")], gpus, nics))
    assert topo.gpus[0].pcie_gbps == pcie_gbps(3, 16) and topo.gpus[1].pcie_gbps == GEN5
    assert topo.gpu_bandwidth_gbps(0, 1) == pcie_gbps(3, 16)
    assert topo.bandwidth_gbps[1][2] == pcie_gbps(4, 8)


def test_socket_caps_apply_to_node_and_sys_only() -> None:
    bridges = [hb("hb0"), hb("hb1"), hb("hb2", numa=1)]
    spec = make_spec(
        bridges, gpus_on("hb0", "hb0", "hb1", "hb2"), inter_socket_gbps=20, intra_socket_gbps=50
    )
    topo = build(spec)
    assert topo.gpu_bandwidth_gbps(0, 1) == GEN5  # PHB
    assert topo.gpu_bandwidth_gbps(0, 2) == 50.0  # NODE, intra-socket cap
    assert topo.gpu_bandwidth_gbps(0, 3) == 20.0  # SYS, inter-socket cap


def test_sys_within_one_socket_uses_the_intra_socket_cap() -> None:
    # AMD NPS2/NPS4: two NUMA nodes in one package; nvidia-smi still prints SYS.
    numa = [{"id": 0, "cpus": "0-1", "socket": 0}, {"id": 1, "cpus": "2-3", "socket": 0}]
    cpu = {"model": "test", "sockets": 1, "cores_per_socket": 4}
    bridges = [hb("hb0"), hb("hb1", numa=1)]
    topo = build(
        make_spec(bridges, gpus_on("hb0", "hb1"), numa_nodes=numa, cpu=cpu, inter_socket_gbps=10)
    )
    assert topo.gpu_link(0, 1).label == "SYS"
    assert topo.gpu_bandwidth_gbps(0, 1) == GEN5
    topo = build(
        make_spec(bridges, gpus_on("hb0", "hb1"), numa_nodes=numa, cpu=cpu, intra_socket_gbps=30)
    )
    assert topo.gpu_bandwidth_gbps(0, 1) == 30.0


def test_c2c_gpu_uses_its_c2c_rate() -> None:
    numa = [
        {"id": 0, "cpus": "0-1", "socket": 0},
        {"id": 1, "cpus": "2-3", "socket": 1},
        {"id": 4, "kind": "gpu-memory", "socket": 0, "memory_gib": 96},
    ]
    gpus = [{"index": 0, "parent": "hb0", "host_link": "c2c", "memory_numa": 4}]
    nics = [{"name": "mlx5_0", "parent": "hb0"}]
    topo = build(make_spec([hb("hb0")], gpus, nics, gpu_model="GH200", numa_nodes=numa))
    assert topo.gpus[0].pcie_gbps == 450.0 and topo.gpus[0].memory_numa == 4
    assert topo.bandwidth_gbps[0][1] == GEN5  # the NIC's Gen5 x16 link is the bottleneck
    assert topo.numa_nodes[2].memory_bytes == 96 * GIB and not topo.numa_nodes[2].cpus


# ----- the rest of the model -----


def test_gpus_are_ordered_by_index_and_carry_affinity() -> None:
    gpus = [{"index": 1, "parent": "hb1"}, {"index": 0, "parent": "hb0", "model": "A10"}]
    spec = make_spec([hb("hb0"), hb("hb1", numa=1)], gpus, sources=["s"], assumptions=["a"])
    topo = build(spec)
    assert [g.index for g in topo.gpus] == [0, 1]
    assert topo.gpus[0].model == "A10" and topo.gpus[1].model == "H100-80GB-SXM"
    assert topo.gpus[1].numa == 1 and topo.gpus[1].cpu_affinity == (2, 3)
    assert topo.gpus[1].numa_affinity == (1,) and topo.gpus[1].parent == "hb1"
    assert topo.notes == ("source: s", "assumption: a") and topo.source == "test.yaml"


def test_bridges_inherit_numa_and_report_uplinks() -> None:
    bridges = [hb("hb0", numa=1), sw("sw0", "hb0"), sw("sw1", "sw0", pcie={"gen": 4, "width": 16})]
    topo = build(make_spec(bridges, gpus_on("sw1")))
    by_id = {str(b.id): b for b in topo.bridges}
    assert by_id["hb0"].kind is BridgeKind.HOST_BRIDGE and by_id["hb0"].uplink_gbps is None
    assert by_id["sw1"].numa == 1 and by_id["sw1"].parent == "sw0"
    assert by_id["sw0"].uplink_gbps == GEN5 and by_id["sw1"].uplink_gbps == GEN4


def test_numa_distances_default_and_explicit() -> None:
    spec = make_spec([hb("hb0")], gpus_on("hb0"))
    assert build(spec).numa_distances == ((10, 21), (21, 10))
    spec = make_spec([hb("hb0")], gpus_on("hb0"), numa_distances=[[10, 32], [32, 10]])
    topo = build(spec)
    assert (
        topo.numa_distance(NumaId(0), NumaId(1)) == 32
        and topo.numa_nodes[0].memory_bytes == 2 * GIB
    )


# ----- property: the builder agrees with a literal reading of the legend -----


def _reference_class(
    a: int, b: int, parent: dict[str, str | None], dev: list[str], numa: dict[str, int]
) -> str:
    """Walk the tree path between devices a and b; count bridges, look for the host bridge."""

    def up(node: str) -> list[str]:
        chain = [node]
        while (p := parent[chain[-1]]) is not None:
            chain.append(p)
        return chain

    ca, cb = up(dev[a]), up(dev[b])
    if ca[-1] != cb[-1]:
        return "NODE" if numa[ca[-1]] == numa[cb[-1]] else "SYS"
    shared = next(x for x in ca if x in cb)
    path = ca[: ca.index(shared) + 1] + cb[: cb.index(shared)]
    if parent[shared] is None:
        return "PHB"
    return "PIX" if len(path) == 1 else "PXB"


@st.composite
def random_trees(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str]]:
    num_hosts = draw(st.integers(1, 3))
    bridges = [hb(f"hb{i}", numa=draw(st.integers(0, 1))) for i in range(num_hosts)]
    for i in range(draw(st.integers(0, 6))):
        up = draw(st.sampled_from([b["id"] for b in bridges]))
        bridges.append(sw(f"sw{i}", up))
    devices = draw(st.lists(st.sampled_from([b["id"] for b in bridges]), min_size=2, max_size=6))
    return bridges, devices


@settings(max_examples=150, deadline=None)
@given(random_trees())
def test_classes_match_the_legend_on_random_trees(
    tree: tuple[list[dict[str, Any]], list[str]],
) -> None:
    bridges, devices = tree
    topo = build(make_spec(bridges, gpus_on(*devices)))
    parent = {b["id"]: b.get("parent") for b in bridges}
    numa = {b["id"]: b["numa"] for b in bridges if "numa" in b}
    for a in range(len(devices)):
        for b in range(len(devices)):
            expected = "X" if a == b else _reference_class(a, b, parent, devices, numa)
            assert topo.gpu_link(a, b).label == expected
