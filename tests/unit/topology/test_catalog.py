from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.topology.catalog import GpuCatalog, default_catalog, get_gpu_model

SHARED = Path(__file__).resolve().parents[4] / "shared"

REQUIRED = [
    "V100",
    "A100-40GB",
    "A100-80GB",
    "H100-80GB",
    "H100 NVL",
    "H200",
    "B200",
    "L40S",
    "A10",
    "T4",
    "GH200",
]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_models_present(name: str) -> None:
    model = get_gpu_model(name)
    assert model.memory_mib > 0 and model.num_sms > 0 and model.hbm_gbps > 0
    assert model.sources


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-80GB-SXM"),
        ("NVIDIA-H100-80GB-HBM3", "H100-80GB-SXM"),
        ("nvidia a100-sxm4-40gb", "A100-SXM4-40GB"),
        ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),
        ("NVIDIA H200", "H200-141GB"),
        ("NVIDIA GH200 480GB", "GH200-96GB"),
    ],
)
def test_lookup_by_product_name(name: str, key: str) -> None:
    assert get_gpu_model(name).name == key


def test_nvlink_figures_match_reference() -> None:
    # shared/reference/topology.md (bidir): NVLink 3 = 12 x 50, 4 = 18 x 50, 5 = 18 x 100
    links = {name: get_gpu_model(name).nvlink for name in ("A100-80GB", "H100", "B200")}
    assert {name: spec and spec.total_gbps_bidir for name, spec in links.items()} == {
        "A100-80GB": 600,
        "H100": 900,
        "B200": 1800,
    }
    assert get_gpu_model("H100").nvlink_gbps_per_link == 25
    assert get_gpu_model("L40S").nvlink is None


def test_mig_keys_exist_in_profiles_json() -> None:
    profiles = json.loads((SHARED / "data/mig/profiles.json").read_text())["gpus"]
    for model in default_catalog().models.values():
        if model.mig_profiles_key is not None:
            assert model.mig_profiles_key in profiles, model.name
    assert not get_gpu_model("L40S").mig_capable and get_gpu_model("H200").mig_capable


def test_unknown_model_lists_valid_names() -> None:
    with pytest.raises(InputError, match="H100-80GB-SXM"):
        get_gpu_model("Z9000")


def test_bad_catalog_is_located() -> None:
    good = get_gpu_model("T4")
    text = (
        "models:\n  X:\n    product_names: [x]\n    family: turing\n"
        "    compute_capability: [7, 5]\n    memory_mib: lots\n"
    )
    with pytest.raises(InputError, match=r"cat.yaml:6: models\.X\.memory_mib"):
        GpuCatalog.from_yaml_text(text, source="cat.yaml")
    assert good.family == "turing"
