from __future__ import annotations

from gpuplane.api.resources import (
    MIG_RESOURCE_PREFIX,
    NVIDIA_GPU,
    is_mig_resource,
    mig_profile_of,
    mig_resource,
)


def test_mig_resource_names_round_trip() -> None:
    name = mig_resource("1g.10gb.me")
    assert name == "nvidia.com/mig-1g.10gb.me"
    assert is_mig_resource(name)
    assert mig_profile_of(name) == "1g.10gb.me"
    assert name.startswith(MIG_RESOURCE_PREFIX)


def test_whole_gpus_are_not_a_mig_resource() -> None:
    assert not is_mig_resource(NVIDIA_GPU)
    assert mig_profile_of(NVIDIA_GPU) == NVIDIA_GPU
