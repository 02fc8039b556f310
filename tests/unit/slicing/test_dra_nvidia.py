"""The devices NVIDIA's DRA driver publishes for gpuplane's nodes, NVLink islands as a
matchAttribute, and MIG placements as partitionable devices with shared counters."""

from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.semver import Version
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.devices import ResourceSlice
from gpuplane.slicing.dra.node_slices import STATIC, node_resource_slices
from gpuplane.slicing.dra.nvidia import NVLINK_DOMAIN_ATTRIBUTE, MigPlacement
from gpuplane.slicing.dra.outcome import OutcomeKind
from gpuplane.slicing.dra.pools import gather_pools
from gpuplane.slicing.dra.slice_validation import validate_slice
from gpuplane.topology.presets import load_preset
from tests.unit.slicing.test_dra_support import NODE, chosen, claim, dclass, match, qty, req, run

SEED = load_preset("seed-8gpu")  # NVLink rings 0-3 and 4-7
GIB = 2**30
GPU_CLASS = dclass(
    "gpu.nvidia.com",
    'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"',
)
MIG_CLASS = dclass(
    "mig.nvidia.com",
    'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"',
)
NVLINKED_PAIR = claim(
    "pair",
    req("gpus", 2, cls="gpu.nvidia.com"),
    constraints=[match(NVLINK_DOMAIN_ATTRIBUTE)],
)


def test_gpu_devices_carry_the_driver_attributes() -> None:
    (rslice,) = node_resource_slices(SEED, node_name="n0")
    validate_slice(rslice)
    assert rslice.spec.driver == "gpu.nvidia.com" and rslice.spec.node_name == "n0"
    assert rslice.spec.pool.name == "n0" and rslice.spec.pool.resource_slice_count == 1
    gpu5 = rslice.spec.devices[5]
    assert gpu5.name == "gpu-5"
    attrs = gpu5.attributes
    assert attrs["type"] == "gpu" and attrs["productName"] == "NVIDIA H100 80GB HBM3"
    assert attrs["architecture"] == "Hopper" and attrs["brand"] == "Nvidia"
    assert attrs["cudaComputeCapability"] == Version(9, 0, 0)
    assert attrs["driverVersion"] == Version(580, 82, 7)
    assert str(attrs["uuid"]).startswith("GPU-")
    assert gpu5.capacity["memory"] == qty("81559Mi")
    domains = [d.attributes[NVLINK_DOMAIN_ATTRIBUTE] for d in rslice.spec.devices]
    assert domains == [0, 0, 0, 0, 1, 1, 1, 1]
    roots = [d.attributes[limits.PCIE_ROOT_ATTRIBUTE] for d in rslice.spec.devices]
    assert roots[0] == roots[1] != roots[2] == roots[3]  # two GPUs per host bridge


def test_an_nvswitch_node_is_one_nvlink_island() -> None:
    (rslice,) = node_resource_slices(load_preset("dgx-h100"))
    assert {d.attributes[NVLINK_DOMAIN_ATTRIBUTE] for d in rslice.spec.devices} == {0}


def test_two_gpus_on_nvlink_stay_within_one_island() -> None:
    slices = node_resource_slices(SEED, node_name="n0")
    out = run([NVLINKED_PAIR], slices, [GPU_CLASS])
    assert chosen(out) == ["gpu-0", "gpu-1"]
    # With 0-2 taken, gpu-3 and gpu-4 are free but on different islands: 4 and 5 are chosen.
    taken = [("n0", "gpu-0"), ("n0", "gpu-1"), ("n0", "gpu-2")]
    out = run([NVLINKED_PAIR], slices, [GPU_CLASS], allocated=taken)
    assert chosen(out) == ["gpu-4", "gpu-5"]
    unconstrained = run(
        [claim("any", req("gpus", 2, cls="gpu.nvidia.com"))], slices, [GPU_CLASS], allocated=taken
    )
    assert chosen(unconstrained) == ["gpu-3", "gpu-4"]
    one_per_island = [("n0", f"gpu-{i}") for i in (0, 1, 2, 4, 5, 6)]
    out = run([NVLINKED_PAIR], slices, [GPU_CLASS], allocated=one_per_island)
    assert out.kind is OutcomeKind.NO_SOLUTION


H100 = load_preset("dgx-h100")
H100_MIG = [
    MigPlacement("7g.80gb", 0, 80 * GIB),
    MigPlacement("4g.40gb", 0, 40 * GIB),
    MigPlacement("3g.40gb", 4, 40 * GIB),
    *(MigPlacement("2g.20gb", s, 20 * GIB) for s in (0, 2, 4)),
    *(MigPlacement("1g.10gb", s, 10 * GIB, multiprocessors=16) for s in range(7)),
]


def _mig_slices() -> tuple[ResourceSlice, ...]:
    return node_resource_slices(H100, node_name="n0", mig={0: H100_MIG})


def test_dynamic_mig_devices_and_counters() -> None:
    slices = _mig_slices()
    for s in slices:
        validate_slice(s)
    counter_slices = [s for s in slices if s.spec.shared_counters]
    assert len(counter_slices) == 1 and not counter_slices[0].spec.devices
    (cset,) = counter_slices[0].spec.shared_counters
    assert cset.name == "gpu-0-counter-set"
    assert {f"memory-slice-{i}" for i in range(8)} <= set(cset.counters)
    devices = {d.name: d for s in slices for d in s.spec.devices}
    assert "gpu-0" in devices and "gpu-1" in devices
    mig = devices["gpu-0-mig-3g40gb-9-4"]
    assert mig.attributes["type"] == "mig" and mig.attributes["profile"] == "3g.40gb"
    assert mig.attributes["parentUUID"] == devices["gpu-0"].attributes["uuid"]
    (use,) = mig.consumes_counters
    assert sorted(k for k in use.counters if k.startswith("memory-slice")) == [
        f"memory-slice-{i}" for i in range(4, 8)
    ]
    assert "gpu-0-mig-1g10gb-19-6" in devices and "gpu-0-mig-7g80gb-0-0" in devices
    assert all(len(s.spec.devices) <= 64 for s in slices)
    assert {s.spec.pool.resource_slice_count for s in slices} == {len(slices)}
    (pool,) = gather_pools(slices, NODE)
    assert not pool.incomplete and not pool.invalid


def _profile(name: str) -> str:
    return f'device.attributes["gpu.nvidia.com"].profile == "{name}"'


def _mig_claim(*profiles: str) -> ResourceClaim:
    return claim(
        "m",
        *(
            req(f"r{i}", cls="mig.nvidia.com", selectors=[_profile(p)])
            for i, p in enumerate(profiles)
        ),
    )


def test_mig_partitions_block_overlapping_placements_and_the_full_gpu() -> None:
    slices = _mig_slices()
    classes = [GPU_CLASS, MIG_CLASS]
    out = run([_mig_claim("3g.40gb", "4g.40gb")], slices, classes)
    assert chosen(out) == ["gpu-0-mig-3g40gb-9-4", "gpu-0-mig-4g40gb-5-0"]
    # Slices 0-3 (4g) and 4-7 (3g) are all used: no 2g placement is left.
    out = run([_mig_claim("3g.40gb", "4g.40gb", "2g.20gb")], slices, classes)
    assert out.kind is OutcomeKind.NO_SOLUTION
    # One 1g at slice 0 held by another claim: 2g at 0 overlaps, 2g at 2 does not.
    taken = [("n0", "gpu-0-mig-1g10gb-19-0")]
    out = run([_mig_claim("2g.20gb")], slices, classes, allocated=taken)
    assert chosen(out) == ["gpu-0-mig-2g20gb-14-2"]
    # The full gpu-0 consumes every counter: any partition in use blocks it (gpu-1 is taken).
    whole = claim(
        "w",
        req(
            "g", cls="gpu.nvidia.com", selectors=['device.attributes["gpu.nvidia.com"].index == 0']
        ),
    )
    assert run([whole], slices, classes, allocated=taken).kind is OutcomeKind.NO_SOLUTION
    assert chosen(run([whole], slices, classes)) == ["gpu-0"]
    out = run([_mig_claim("1g.10gb")], slices, classes, allocated=[("n0", "gpu-0")])
    assert out.kind is OutcomeKind.NO_SOLUTION


def test_seven_1g_instances_fill_the_gpu() -> None:
    slices = _mig_slices()
    out = run([_mig_claim(*["1g.10gb"] * 7)], slices, [MIG_CLASS])
    assert len(chosen(out)) == 7
    out = run([_mig_claim(*["1g.10gb"] * 7, "1g.10gb")], slices, [MIG_CLASS])
    assert out.kind is OutcomeKind.NO_SOLUTION


def test_static_mig_publishes_only_the_existing_instances() -> None:
    layout = [
        MigPlacement("3g.40gb", 0, 40 * GIB, uuid="MIG-a"),
        MigPlacement("3g.40gb", 4, 40 * GIB),
    ]
    (rslice,) = node_resource_slices(H100, node_name="n0", mig={0: layout}, mig_mode=STATIC)
    names = [d.name for d in rslice.spec.devices]
    assert names[:2] == ["gpu-0-mig-9-0-4", "gpu-0-mig-9-4-4"] and "gpu-0" not in names
    first = rslice.spec.devices[0]
    assert first.attributes["uuid"] == "MIG-a" and not first.consumes_counters
    assert {k for k in first.capacity if k.startswith("memorySlice")} == {
        f"memorySlice{i}" for i in range(4)
    }


def test_bad_mig_layouts_are_input_errors() -> None:
    with pytest.raises(InputError, match="does not have"):
        node_resource_slices(SEED, mig={9: H100_MIG})
    with pytest.raises(InputError, match="covers memory slices 6-9"):
        node_resource_slices(SEED, mig={0: [MigPlacement("3g.40gb", 6, 40 * GIB)]})
    with pytest.raises(InputError, match="MIG mode"):
        node_resource_slices(SEED, mig_mode="fancy")
