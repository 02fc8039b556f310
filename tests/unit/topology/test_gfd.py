from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplane.api.strategies import SharingStrategy
from gpuplane.core.errors import InputError
from gpuplane.core.ids import GpuModelName
from gpuplane.core.units import MIB
from gpuplane.topology.gfd import (
    GpuSharing,
    arch_family,
    format_gfd_labels,
    gfd_labels,
    gpu_mode,
    sanitise,
    version_labels,
)
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nvml_api import DriverInfo, GpuFacts
from tests.factories import all_pairs, make_topology

DRIVER = DriverInfo("550.54.15", 12040)


def dgx_h100() -> NodeTopology:
    topo = make_topology(all_pairs(8, "NV18"), numa_of_gpu=[0, 0, 0, 0, 1, 1, 1, 1])
    return replace(topo, machine="DGX H100")


def test_dgx_h100_label_set() -> None:
    assert gfd_labels(dgx_h100(), driver=DRIVER) == {
        "nvidia.com/cuda.driver-version.full": "550.54.15",
        "nvidia.com/cuda.driver-version.major": "550",
        "nvidia.com/cuda.driver-version.minor": "54",
        "nvidia.com/cuda.driver-version.revision": "15",
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "54",
        "nvidia.com/cuda.driver.rev": "15",
        "nvidia.com/cuda.runtime-version.full": "12.4",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "4",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4",
        "nvidia.com/gpu.compute.major": "9",
        "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.family": "hopper",
        "nvidia.com/gpu.machine": "DGX-H100",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mps.capable": "false",
    }


def test_no_timestamp_and_no_versions_without_driver() -> None:
    labels = gfd_labels(dgx_h100())
    assert "nvidia.com/gfd.timestamp" not in labels
    assert not any(k.startswith("nvidia.com/cuda.") for k in labels)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
        ("Tesla V100-SXM2-16GB", "Tesla-V100-SXM2-16GB"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB"),
        ("  NVIDIA  GeForce RTX 4090 (rev a1) ", "NVIDIA-GeForce-RTX-4090-rev-a1"),
        ("NVIDIA\tRTX/A6000", "NVIDIARTXA6000"),
        ("GH200 144G_HBM3e v1.0", "GH200-144G_HBM3e-v1.0"),
    ],
)
def test_product_sanitising(raw: str, label: str) -> None:
    assert sanitise(raw) == label


@pytest.mark.parametrize(
    ("cc", "family"),
    [
        ((1, 3), "tesla"),
        ((2, 1), "fermi"),
        ((3, 7), "kepler"),
        ((4, 0), "undefined"),
        ((5, 2), "maxwell"),
        ((6, 1), "pascal"),
        ((7, 0), "volta"),
        ((7, 2), "volta"),
        ((7, 5), "turing"),
        ((8, 0), "ampere"),
        ((8, 6), "ampere"),
        ((8, 9), "ada-lovelace"),
        ((9, 0), "hopper"),
        ((10, 0), "undefined"),
        ((12, 0), "undefined"),
    ],
)
def test_family_table(cc: tuple[int, int], family: str) -> None:
    assert arch_family(*cc) == family


def test_b200_is_undefined_as_in_gfd() -> None:
    labels = gfd_labels(make_topology(all_pairs(8, "NV18"), model="B200"))
    assert labels["nvidia.com/gpu.family"] == "undefined"
    assert labels["nvidia.com/gpu.compute.major"] == "10"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-B200"


def test_l40s_is_ada_and_not_mig_capable() -> None:
    labels = gfd_labels(make_topology(all_pairs(4, "SYS"), model="L40S"))
    assert labels["nvidia.com/gpu.family"] == "ada-lovelace"
    assert labels["nvidia.com/mig.capable"] == "false"
    assert labels["nvidia.com/gpu.mode"] == "compute"


@pytest.mark.parametrize(
    ("version", "cuda", "expect"),
    [
        ("550.54.15", 12040, ("550", "54", "15", "12", "4")),
        ("535.104", 12020, ("535", "104", "", "12", "2")),
        ("470.82.01", 11040, ("470", "82", "01", "11", "4")),
    ],
)
def test_version_labels(version: str, cuda: int, expect: tuple[str, ...]) -> None:
    labels = version_labels(DriverInfo(version, cuda))
    keys = ("driver.major", "driver.minor", "driver.rev", "runtime.major", "runtime.minor")
    assert tuple(labels[f"nvidia.com/cuda.{k}"] for k in keys) == expect
    assert labels["nvidia.com/cuda.driver-version.revision"] == expect[2]
    assert labels["nvidia.com/cuda.driver-version.full"] == version
    assert labels["nvidia.com/cuda.runtime-version.full"] == f"{expect[3]}.{expect[4]}"


@pytest.mark.parametrize("version", ["550", "1.2.3.4", ""])
def test_bad_driver_version(version: str) -> None:
    with pytest.raises(InputError, match=r"X\.Y"):
        version_labels(DriverInfo(version, 12040))


def test_time_slicing_appends_shared() -> None:
    sharing = GpuSharing(SharingStrategy.TIME_SLICING, replicas=4)
    labels = gfd_labels(dgx_h100(), sharing=sharing)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-SHARED"
    assert labels["nvidia.com/gpu.replicas"] == "4"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["nvidia.com/mps.capable"] == "false"


def test_renamed_resource_is_not_suffixed() -> None:
    sharing = GpuSharing(SharingStrategy.TIME_SLICING, replicas=2, renamed=True)
    labels = gfd_labels(dgx_h100(), sharing=sharing)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.replicas"] == "2"


def test_mps_and_single_replica_and_disabled() -> None:
    mps = gfd_labels(dgx_h100(), sharing=GpuSharing(SharingStrategy.MPS, replicas=2))
    assert mps["nvidia.com/gpu.sharing-strategy"] == "mps"
    assert mps["nvidia.com/mps.capable"] == "true"
    one = gfd_labels(dgx_h100(), sharing=GpuSharing(SharingStrategy.TIME_SLICING, replicas=1))
    assert one["nvidia.com/gpu.sharing-strategy"] == "none"
    assert not one["nvidia.com/gpu.product"].endswith("SHARED")
    off = gfd_labels(dgx_h100(), sharing=None)
    assert off["nvidia.com/gpu.replicas"] == "0"
    assert off["nvidia.com/gpu.sharing-strategy"] == "none"


def test_sharing_validation() -> None:
    with pytest.raises(ValueError):
        GpuSharing(replicas=2)
    with pytest.raises(ValueError):
        GpuSharing(SharingStrategy.MPS, replicas=0)


def test_mixed_models_label_the_first_gpu() -> None:
    topo = make_topology(all_pairs(2, "SYS"))
    a100 = replace(topo.gpus[1], model=GpuModelName("A100-SXM4-40GB"))
    labels = gfd_labels(replace(topo, gpus=(topo.gpus[0], a100)))
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "1"


def test_facts_take_precedence_over_the_catalog() -> None:
    topo = make_topology(all_pairs(2, "SYS"))
    facts = [
        GpuFacts(i, "NVIDIA GeForce RTX 4090", f"GPU-{i}", "", 24564 * MIB, (8, 9), pci_class=cls)
        for i, cls in enumerate(("0x030000", "0x030200"))
    ]
    labels = gfd_labels(topo, facts=facts)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-GeForce-RTX-4090"
    assert labels["nvidia.com/gpu.memory"] == "24564"
    assert labels["nvidia.com/gpu.family"] == "ada-lovelace"
    assert labels["nvidia.com/gpu.mode"] == "graphics"  # GFD uses the first device's class
    with pytest.raises(ValueError):
        gfd_labels(topo, facts=facts[:1])


def test_uncatalogued_gpu_without_facts_omits_memory_and_arch() -> None:
    topo = make_topology(all_pairs(1, "X"))
    odd = replace(topo, gpus=(replace(topo.gpus[0], model=GpuModelName("NVIDIA Future 1")),))
    labels = gfd_labels(odd)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-Future-1"
    assert "nvidia.com/gpu.memory" not in labels and "nvidia.com/gpu.family" not in labels
    assert labels["nvidia.com/mig.capable"] == "false"


@pytest.mark.parametrize(
    ("product", "pci_class", "mode"),
    [
        ("NVIDIA H100 80GB HBM3", None, "compute"),
        ("NVIDIA GeForce RTX 4090", None, "graphics"),
        ("NVIDIA RTX A6000", None, "graphics"),
        ("Quadro RTX 8000", None, "graphics"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None, "compute"),
        ("NVIDIA H100 80GB HBM3", "0x030000\n", "graphics"),
        ("NVIDIA GeForce RTX 4090", "0x030200", "compute"),
        ("NVIDIA H100 80GB HBM3", "0x038000", "unknown"),
    ],
)
def test_gpu_mode(product: str, pci_class: str | None, mode: str) -> None:
    assert gpu_mode(product, pci_class) == mode


def test_machine_label() -> None:
    topo = make_topology(all_pairs(1, "X"))
    assert gfd_labels(topo)["nvidia.com/gpu.machine"] == "unknown"
    machine = gfd_labels(topo, machine=" PowerEdge XE9680 \n")["nvidia.com/gpu.machine"]
    assert machine == "PowerEdge-XE9680"


def test_no_gpus_no_labels() -> None:
    empty = NodeTopology(
        name="cpu-only", gpus=(), nics=(), numa_nodes=(), links=(), bandwidth_gbps=()
    )
    assert gfd_labels(empty, driver=DRIVER) == {}


def test_output_file_format() -> None:
    text = format_gfd_labels({"nvidia.com/b": "2", "nvidia.com/a": "1"})
    assert text == "nvidia.com/a=1\nnvidia.com/b=2\n"
    lines = format_gfd_labels(gfd_labels(dgx_h100(), driver=DRIVER)).splitlines()
    assert lines == sorted(lines) and len(lines) == 24
    assert "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3" in lines
