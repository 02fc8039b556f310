"""Device plugin sharing config (time-slicing, MPS), labels, request checks, OOM decisions."""

from __future__ import annotations

import textwrap

import pytest

from gpuplane.api.strategies import SharingStrategy
from gpuplane.core.errors import InputError
from gpuplane.slicing.sharing.advertise import distribute, request_error, sharing_labels
from gpuplane.slicing.sharing.config import (
    device_plugin_config_from_dict,
    parse_device_plugin_config,
)
from gpuplane.slicing.sharing.oom import (
    mig_oom,
    mps_client_limit_bytes,
    mps_thread_percentage,
    shared_gpu_oom,
)

GIB = 1024**3
TS = """\
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: false
    resources:
      - name: nvidia.com/gpu
        replicas: 4
"""


def test_time_slicing_config() -> None:
    cfg = parse_device_plugin_config(TS, "cfg.yaml")
    assert cfg.strategy is SharingStrategy.TIME_SLICING
    assert cfg.replicas_of("nvidia.com/gpu") == 4
    assert cfg.advertised_name("nvidia.com/gpu") == "nvidia.com/gpu"
    assert not cfg.fail_requests_greater_than_one
    renamed = parse_device_plugin_config(
        TS.replace("renameByDefault: false", "renameByDefault: true"), "c"
    )
    assert renamed.advertised_name("nvidia.com/gpu") == "nvidia.com/gpu.shared"


def test_mps_defaults_fail_requests_greater_than_one_and_wins_over_time_slicing() -> None:
    cfg = device_plugin_config_from_dict(
        {
            "sharing": {
                "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
                "mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 5}]},
            }
        }
    )
    assert cfg.strategy is SharingStrategy.MPS
    assert cfg.replicas_of("nvidia.com/gpu") == 5
    assert cfg.fail_requests_greater_than_one


def test_one_replica_is_no_sharing_and_empty_config_is_none() -> None:
    one = device_plugin_config_from_dict(
        {"sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 1}]}}}
    )
    assert one.strategy is SharingStrategy.NONE
    assert device_plugin_config_from_dict({}).strategy is SharingStrategy.NONE


def test_rename_and_devices_are_accepted_but_ignored_with_a_warning() -> None:
    cfg = device_plugin_config_from_dict(
        {
            "sharing": {
                "timeSlicing": {
                    "resources": [
                        {"name": "nvidia.com/gpu", "replicas": 2, "rename": "x", "devices": [0]}
                    ]
                }
            }
        }
    )
    assert len(cfg.warnings) == 2
    assert "rename" in cfg.warnings[0]


@pytest.mark.parametrize(
    ("old", "new", "line", "needle"),
    [
        ("        replicas: 4", "        replicas: 0", 10, "number of replicas must be >= 0"),
        ("version: v1", "version: v2", 1, "unknown version: v2"),
        ("    renameByDefault: false", "    strategy: packed", 6, "unknown time-slicing strategy"),
        ("      - name: nvidia.com/gpu", "      - name: amd.com/gpu", 9, "unsupported resource"),
        ("  migStrategy: none", "  migStrategy: triple", 3, "migStrategy"),
        ("        replicas: 4", "        replicas: 4\n        devices: some", 11, "only valid"),
    ],
)
def test_mistakes_are_located(old: str, new: str, line: int, needle: str) -> None:
    with pytest.raises(InputError) as info:
        parse_device_plugin_config(TS.replace(old, new), "cfg.yaml")
    assert str(info.value).startswith(f"cfg.yaml:{line}: "), str(info.value)
    assert needle in str(info.value)


def test_no_resources_specified() -> None:
    text = textwrap.dedent(
        """\
        sharing:
          timeSlicing:
            resources: []
        """
    )
    with pytest.raises(InputError, match="no resources specified"):
        parse_device_plugin_config(text, "c.yaml")


def test_labels_and_request_check() -> None:
    cfg = parse_device_plugin_config(TS, "c")
    labels = sharing_labels(cfg, "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu")
    assert labels == {
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/mps.capable": "false",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED",
    }
    assert request_error(cfg, "nvidia.com/gpu", 2) is None  # failRequestsGreaterThanOne false
    strict = parse_device_plugin_config(TS.replace("One: false", "One: true"), "c")
    message = request_error(strict, "nvidia.com/gpu", 2)
    assert message is not None
    assert "request for 'nvidia.com/gpu: 2' too large: maximum request size for shared " in message
    assert request_error(strict, "nvidia.com/gpu", 1) is None


def test_distribute_spreads_over_the_least_used_gpus() -> None:
    assert distribute([0, 0, 0], [4, 4, 4], 3) == [0, 1, 2]
    assert distribute([2, 0, 1], [2, 4, 3], 2) == [1, 1]
    assert distribute([0, 0], [1, 0], 2) == []


def test_oom_time_slicing_kills_everyone_mps_and_mig_only_the_offender() -> None:
    demand = {"a": 30 * GIB, "b": 30 * GIB, "c": 30 * GIB}
    ts = shared_gpu_oom(SharingStrategy.TIME_SLICING, 80 * GIB, 4, demand)
    assert ts.victims == ("a", "b", "c")
    assert shared_gpu_oom(SharingStrategy.TIME_SLICING, 80 * GIB, 4, {"a": 30 * GIB}).victims == ()
    mps = shared_gpu_oom(SharingStrategy.MPS, 80 * GIB, 4, {"a": 30 * GIB, "b": 15 * GIB})
    assert mps.victims == ("a",)
    assert mps_client_limit_bytes(80 * GIB, 4) == 20 * GIB
    assert mps_thread_percentage(4) == 25
    assert mig_oom(10 * GIB, {"x": 12 * GIB, "y": 9 * GIB}).victims == ("x",)
