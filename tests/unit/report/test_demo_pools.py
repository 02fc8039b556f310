"""The demo's per-pool files come from the node the twin builds for the pool: GFD sharing and
MIG labels, the kubelet's Topology Manager policy and scope in the NodeResourceTopology, zone
resources as the device plugin advertises them, and the pool's allocatable on the Node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.node import binary_si, node_manifest, quantity_string
from gpuplane.k8s.manifests.nrt import nrt_manifest
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.report.demo import DemoReport, PoolReport, build_demo

SCENARIO = """
name: pools
node_pools:
  - name: plain
    preset: l40s-8gpu-pcie
    count: 1
  - name: sliced
    preset: l40s-8gpu-pcie
    count: 2
    device_plugin:
      version: v1
      sharing:
        timeSlicing:
          resources: [{name: nvidia.com/gpu, replicas: 4}]
  - name: renamed
    preset: l40s-8gpu-pcie
    count: 1
    device_plugin:
      version: v1
      sharing:
        timeSlicing:
          renameByDefault: true
          resources: [{name: nvidia.com/gpu, replicas: 2}]
  - name: mig
    preset: dgx-a100
    count: 1
    mig: {strategy: mixed, config: all-1g.10gb}
  - name: dra
    preset: seed-8gpu
    count: 1
    dra: true
  - name: restricted
    preset: hgx-h200
    count: 1
    kubelet: {topologyManagerPolicy: restricted, topologyManagerScope: pod}
  - name: sized
    preset: dgx1-v100
    count: 1
    allocatable: {cpu: 40, memory: 500Gi}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> DemoReport:
    path = tmp_path_factory.mktemp("demo") / "scenario.yaml"
    path.write_text(SCENARIO)
    loaded = load_scenario_spec(path)
    return build_demo(loaded.scenario, {p.name: p for p in loaded.spec.node_pools}, str(path))


def pool(report: DemoReport, name: str) -> PoolReport:
    return next(p for p in report.pools if p.pool.name == name)


def zone_amounts(rep: PoolReport) -> dict[str, int]:
    """Capacity per resource summed over the NRT zones."""
    out: dict[str, int] = {}
    for zone in rep.nrt.zones:
        for r in zone.resources:
            out[r.name] = out.get(r.name, 0) + r.capacity
    return out


def test_plain_pool_is_whole_gpus_and_no_topology_policy(report: DemoReport) -> None:
    rep = pool(report, "plain")
    assert rep.labels["nvidia.com/gpu.sharing-strategy"] == "none"
    assert rep.labels["nvidia.com/gpu.replicas"] == "1"
    assert rep.labels["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    assert rep.labels["kubernetes.io/hostname"] == "plain-0"
    # The kubelet's default Topology Manager policy is none, not single-numa-node.
    assert nrt_manifest(rep.nrt)["topologyPolicies"] == ["None"]
    assert zone_amounts(rep)["nvidia.com/gpu"] == 8


def test_time_sliced_pool_labels_and_replicas(report: DemoReport) -> None:
    rep = pool(report, "sliced")
    assert rep.labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert rep.labels["nvidia.com/gpu.replicas"] == "4"
    assert rep.labels["nvidia.com/gpu.product"] == "NVIDIA-L40S-SHARED"
    assert zone_amounts(rep)["nvidia.com/gpu"] == 32
    status = node_manifest(rep.node)["status"]
    assert status["allocatable"]["nvidia.com/gpu"] == "32"


def test_renamed_replicas_keep_the_product_and_use_the_shared_name(report: DemoReport) -> None:
    rep = pool(report, "renamed")
    assert rep.labels["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    assert rep.labels["nvidia.com/gpu.replicas"] == "2"
    amounts = zone_amounts(rep)
    assert amounts["nvidia.com/gpu.shared"] == 16 and "nvidia.com/gpu" not in amounts
    status = node_manifest(rep.node)["status"]
    assert "nvidia.com/gpu" not in status["capacity"]
    assert status["capacity"]["nvidia.com/gpu.shared"] == "16"


def test_mig_pool_publishes_mig_resources_not_gpus(report: DemoReport) -> None:
    rep = pool(report, "mig")
    assert rep.labels["nvidia.com/mig.strategy"] == "mixed"
    assert rep.labels["nvidia.com/mig-1g.10gb.count"] == "56"
    assert rep.labels["nvidia.com/mig.config"] == "all-1g.10gb"
    amounts = zone_amounts(rep)
    assert amounts["nvidia.com/mig-1g.10gb"] == 56 and "nvidia.com/gpu" not in amounts
    capacity = node_manifest(rep.node)["status"]["capacity"]
    assert capacity["nvidia.com/mig-1g.10gb"] == "56" and "nvidia.com/gpu" not in capacity


def test_dra_pool_advertises_no_device_plugin_resource(report: DemoReport) -> None:
    rep = pool(report, "dra")
    assert not any("nvidia.com" in name for name in zone_amounts(rep))
    capacity = node_manifest(rep.node)["status"]["capacity"]
    assert not any(name.startswith("nvidia.com/") for name in capacity)
    assert rep.labels["nvidia.com/gpu.count"] == "8"  # GFD still labels the node


def test_restricted_pod_scope_pool(report: DemoReport) -> None:
    manifest = nrt_manifest(pool(report, "restricted").nrt)
    assert manifest["topologyPolicies"] == ["RestrictedPodLevel"]
    assert manifest["attributes"] == [
        {"name": "topologyManagerPolicy", "value": "restricted"},
        {"name": "topologyManagerScope", "value": "pod"},
    ]


def test_allocatable_override_is_on_the_node(report: DemoReport) -> None:
    status = node_manifest(pool(report, "sized").node)["status"]
    assert status["allocatable"]["cpu"] == "40"
    assert status["allocatable"]["memory"] == "500Gi"
    assert status["capacity"]["cpu"] == "48"  # the hardware's 48 CPUs


def test_every_written_object_is_valid_for_kubectl(report: DemoReport) -> None:
    for rep in report.pools:
        node: Any = yaml.safe_load(yaml.safe_dump(node_manifest(rep.node)))
        assert kubernetes_validate.validate(node, "1.31.0", strict=True) is not None


def test_a_pool_label_gfd_owns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\nnode_pools:\n  - name: p\n    preset: l40s-8gpu-pcie\n    count: 1\n"
        "    labels: {nvidia.com/gpu.replicas: '9'}\n"
    )
    # Refused where the scenario is read (docs/validation.md), so demo and simulate agree.
    with pytest.raises(InputError, match=r"s\.yaml:6: .*GPU Feature Discovery"):
        load_scenario_spec(path)


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 96000, "96"),
        ("cpu", 95500, "95500m"),
        ("memory", 2**30, "1Gi"),
        ("memory", 1536, "1536"),
        ("memory", 527952936 * 1024, "527952936Ki"),
        ("nvidia.com/gpu", 8, "8"),
        ("pods", 110, "110"),
    ],
)
def test_quantities_as_the_kubelet_writes_them(resource: str, amount: int, text: str) -> None:
    assert quantity_string(resource, amount) == text


def test_binary_si_zero_and_negative() -> None:
    assert binary_si(0) == "0" and binary_si(-2048) == "-2Ki"
