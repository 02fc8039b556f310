from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.slicing.mig.catalog import MigCatalog, default_mig_catalog, get_mig_gpu
from gpuplane.slicing.mig.profiles import NUM_COMPUTE_SLICES, NUM_MEMORY_SLICES

SHARED = Path(__file__).resolve().parents[4] / "shared"
PACKAGED = resources.files("gpuplane.slicing").joinpath("data/profiles.json")

MODELS = [
    "A100-40GB",
    "A100-80GB",
    "H100-80GB",
    "H100-94GB",
    "H100-96GB",
    "GH200-144GB",
    "H200-141GB",
    "B200",
]


def test_every_model_of_the_fact_sheet_loads() -> None:
    catalog = default_mig_catalog()
    assert catalog.names() == MODELS
    raw = json.loads(PACKAGED.read_text("utf-8"))
    assert set(catalog.gpus) == set(raw["gpus"])
    assert len(catalog.rules) == len(raw["rules"])


@pytest.mark.skipif(not (SHARED / "data/mig/profiles.json").exists(), reason="no ../shared")
def test_packaged_copy_matches_the_shared_fact_sheet() -> None:
    shared = json.loads((SHARED / "data/mig/profiles.json").read_text("utf-8"))
    assert json.loads(PACKAGED.read_text("utf-8")) == shared


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("A100-40GB", "A100-40GB"),
        ("a100 40gb", "A100-40GB"),
        ("A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA H100 PCIe", "H100-80GB"),
        ("NVIDIA H100 NVL", "H100-94GB"),
        ("H100-96GB (GH200 96GB HBM3)", "H100-96GB"),
        ("NVIDIA GH200 480GB", "H100-96GB"),
        ("NVIDIA GH200 144G HBM3e", "GH200-144GB"),
        ("GH200-144GB (HBM3e)", "GH200-144GB"),
        ("NVIDIA H200", "H200-141GB"),
        ("NVIDIA H200 NVL", "H200-141GB"),
        ("H200-141GB", "H200-141GB"),
        ("NVIDIA B200", "B200"),
    ],
)
def test_lookup_by_key_and_nvml_product_name(name: str, expected: str) -> None:
    assert get_mig_gpu(name).name == expected


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(InputError) as err:
        get_mig_gpu("Z100")
    for name in MODELS:
        assert name in str(err.value)


def test_model_without_mig_says_so() -> None:
    with pytest.raises(InputError, match="does not support MIG"):
        get_mig_gpu("L40S")


def test_profile_geometry_is_consistent() -> None:
    for gpu in default_mig_catalog().gpus.values():
        assert len(gpu.profiles) == 7
        assert sum(p.media_extensions for p in gpu.profiles) == 1
        for p in gpu.profiles:
            assert 1 <= p.compute_slices <= NUM_COMPUTE_SLICES
            assert all(0 <= s <= NUM_MEMORY_SLICES - p.memory_slices for s in p.starts)
            assert p.name.startswith(f"{p.compute_slices}g.")
            assert p.nominal_memory_gb > 0
        # largest first: the full-GPU profile leads
        assert gpu.profiles[0].compute_slices == 7 and gpu.profiles[0].memory_slices == 8


def test_verified_flag_carries_through() -> None:
    assert get_mig_gpu("A100-40GB").placements_verified
    assert all(p.verified for p in get_mig_gpu("H100-80GB").profiles)
    for name in ("A100-80GB", "H200-141GB", "B200", "GH200-144GB", "H100-96GB"):
        gpu = get_mig_gpu(name)
        assert not gpu.placements_verified
        assert gpu.placements_note
        assert not any(p.verified for p in gpu.profiles)


def test_values_from_the_fact_sheet() -> None:
    a100 = get_mig_gpu("A100-40GB")
    p = a100.profile("3g.20gb")
    assert (p.profile_id, p.compute_slices, p.memory_slices, p.starts) == (9, 3, 4, (0, 4))
    assert p.memory_gib == 19.5 and p.sm_count == 42
    # a range in the file ("78.75-79.00") keeps the lowest figure
    assert get_mig_gpu("A100-80GB").profile("7g.80gb").memory_gib == 78.75
    assert get_mig_gpu("B200").profile("7g.180gb").memory_gib is None
    assert get_mig_gpu("H100-80GB").pci_device_ids[0] == 0x2330


def test_profile_lookup_accepts_resource_forms() -> None:
    h100 = get_mig_gpu("H100-80GB")
    me = h100.profile("1g.10gb+me")
    assert me.media_extensions and me.resource_name == "nvidia.com/mig-1g.10gb.me"
    for form in ("1g.10gb.me", "mig-1g.10gb.me", "nvidia.com/mig-1g.10gb.me"):
        assert h100.profile(form) is me
    with pytest.raises(InputError, match=r"1g\.5gb") as err:
        h100.profile("1g.5gb")
    assert "3g.40gb" in str(err.value)


def test_broken_data_file_is_a_located_error() -> None:
    text = PACKAGED.read_text("utf-8").replace(
        '"starts": [0, 4], "size": 4}', '"starts": [0, 4], "size": 3}', 1
    )
    with pytest.raises(InputError, match=r"broken\.json:\d+"):
        MigCatalog.from_json_text(text, "broken.json")
