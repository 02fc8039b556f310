"""A workload asking for more pods than a Kubernetes cluster can hold is a located error, not
hours of simulation."""

from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.parse import parse_manifest
from gpuplane.k8s.manifests.workloads import MAX_PODS_PER_WORKLOAD

TEMPLATE = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c"}]}}


def _deployment(replicas: int) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "w"}},
            "template": TEMPLATE,
        },
    }


def test_a_billion_replicas_is_refused_with_the_field() -> None:
    with pytest.raises(InputError) as err:
        parse_manifest(_deployment(1_000_000_000))
    assert err.value.location.field == "spec.replicas"
    assert "150,000" in str(err.value)


def test_the_bound_itself_is_accepted() -> None:
    assert parse_manifest(_deployment(MAX_PODS_PER_WORKLOAD)).obj is not None


def test_job_parallelism_is_bounded() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "parallelism": 10**9,
            "template": {
                **TEMPLATE,
                "spec": {"containers": [{"name": "c"}], "restartPolicy": "Never"},
            },
        },
    }
    with pytest.raises(InputError) as err:
        parse_manifest(job)
    assert err.value.location.field == "spec.parallelism"


def test_time_slicing_replicas_are_bounded() -> None:
    from gpuplane.slicing.sharing.config import MAX_REPLICAS, device_plugin_config_from_dict

    def config(replicas: int) -> dict[str, object]:
        return {
            "version": "v1",
            "sharing": {
                "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}
            },
        }

    device_plugin_config_from_dict(config(MAX_REPLICAS))
    with pytest.raises(InputError, match="replicas per GPU"):
        device_plugin_config_from_dict(config(1_000_000_000))
