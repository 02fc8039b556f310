"""The two case forms kube-controller-manager's own tests use (hpa-examples.json ``schema``):
samples of pods the pod list lacks, on replica-calculator cases, and per-pod CPU inputs on
controller cases, with the controller's behaviour for each (replica_calculator.go,
horizontal.go; the controller cases follow horizontal_test.go's harness)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.cases.hpa_check import run_case, run_json
from gpuplane.core.errors import InputError


def _pods(levels: list[int | None], n: int, request: int = 2000) -> list[dict[str, Any]]:
    return [
        {
            "name": f"test-pod-{i}",
            "request_milli": request,
            "usage_milli": levels[i] if i < len(levels) else None,
        }
        for i in range(n)
    ]


def _util(current: int, target: int, pods: list[dict[str, Any]], *extra: int) -> dict[str, Any]:
    return {
        "family": "replica_calc_cases",
        "kind": "resource_utilization",
        "current_replicas": current,
        "target": target,
        "pods": pods,
        "extra_metrics_for_unknown_pods_milli": list(extra),
    }


# ----- samples of unknown pods -----
def test_disjoint_metrics_are_the_controllers_error() -> None:
    """TestReplicaCalcDisjointResourcesMetrics: the only sample is of a pod the lister does not
    know, the only pod has none."""
    got = run_case(_util(1, 100, _pods([], 1), 200))
    assert got == {"expected_error_contains": "no metrics returned matched known pods"}


def test_unknown_samples_do_not_count_in_the_utilization() -> None:
    """TestReplicaCalcScaleUp with a (huge) sample of an unknown pod: same answer."""
    plain = run_case(_util(3, 30, _pods([600, 1000, 1400], 3)))
    assert plain == {
        "expected_replicas": 5,
        "expected_utilization_percent": 50,
        "expected_raw_average_milli": 1000,
    }
    assert run_case(_util(3, 30, _pods([600, 1000, 1400], 3), 50_000)) == plain


def test_unknown_samples_still_count_in_the_rebalanced_pod_number() -> None:
    """With missing pods the controller rescales by len(metrics), which still holds the unknown
    pods' samples: 4 pods, 2 samples (ratio 0.24, missing pods assumed at 100 %) give
    ceil(0.62 * 4) = 3, and with one unknown sample ceil(0.62 * 5) = 4."""
    assert run_case(_util(4, 100, _pods([800, 190], 4)))["expected_replicas"] == 3
    with_unknown = run_case(_util(4, 100, _pods([800, 190], 4), 100))
    assert with_unknown == {
        "expected_replicas": 4,
        "expected_utilization_percent": 24,
        "expected_raw_average_milli": 495,
    }


def test_unknown_samples_keep_a_metric_from_looking_empty() -> None:
    """Every known pod unready: their samples are dropped, but the unknown pod's sample is
    left, so the error is the utilization's, not 'did not receive metrics'."""
    pods = [{"name": "a", "ready": False, "request_milli": 1000, "usage_milli": 500}]
    got = run_case(_util(1, 50, pods, 300))
    assert got == {"expected_error_contains": "no metrics returned matched known pods"}


def test_pods_metrics_average_every_sample_returned() -> None:
    """calcPlainMetricReplicas averages every sample the custom metrics API returned."""
    case = {
        "family": "replica_calc_cases",
        "kind": "pods_metric",
        "current_replicas": 3,
        "target": 15000,
        "pods": [{"name": f"p{i}", "usage_milli": v} for i, v in enumerate([20000, 10000, 30000])],
        "extra_metrics_for_unknown_pods_milli": [40000],
    }
    assert run_case(case) == {"expected_replicas": 5, "expected_usage_milli": 25000}


def test_unknown_pod_names_never_clash_with_the_pod_list() -> None:
    pods = [{"name": "unknown-pod-0", "request_milli": 1000, "usage_milli": None}]
    got = run_case(_util(1, 100, pods, 200))
    assert got == {"expected_error_contains": "no metrics returned matched known pods"}


def test_unknown_samples_need_a_pod_sample_kind() -> None:
    case = {
        "family": "replica_calc_cases",
        "kind": "object_value",
        "current_replicas": 1,
        "target": 100,
        "metric_values_milli": [100],
        "extra_metrics_for_unknown_pods_milli": [1],
    }
    with pytest.raises(InputError, match="only kinds resource_utilization"):
        run_case(case)


# ----- controller cases with per-pod CPU -----
def _controller(**fields: Any) -> dict[str, Any]:
    return {"family": "controller_cases", **fields}


def test_scale_up_from_per_pod_cpu() -> None:
    """TestScaleUp: 1500m used of 3000m requested is 50 % against 30 %: ceil(3 * 50/30) = 5."""
    case = _controller(
        min_replicas=2,
        max_replicas=6,
        spec_replicas=3,
        status_replicas=3,
        cpu_target_utilization=30,
        pod_cpu_usage_milli=[300, 500, 700],
        pod_cpu_request_milli=[1000, 1000, 1000],
    )
    assert run_case(case) == {
        "expected_desired_replicas": 5,
        "expected_condition": "ScalingLimited=False/DesiredWithinRange",
    }


def test_event_created_and_not_created() -> None:
    """TestEventCreated (200m of 200m against 50 %: 2) and TestEventNotCreated (within)."""
    up = _controller(
        min_replicas=1,
        max_replicas=5,
        spec_replicas=1,
        cpu_target_utilization=50,
        pod_cpu_usage_milli=[200],
        pod_cpu_request_milli=[200],
    )
    assert run_case(up)["expected_desired_replicas"] == 2
    same = {**up, "spec_replicas": 2, "pod_cpu_usage_milli": [200, 200]}
    same["pod_cpu_request_milli"] = [400, 400]
    assert run_case(same)["expected_desired_replicas"] == 2


@pytest.mark.parametrize(
    ("usage", "requests", "spec"),
    [
        ([200], [], 1),  # TestEmptyCPURequest: no pods, one sample of an unknown pod
        ([], [1000] * 4, 4),  # TestEmptyMetrics: pods, no samples
        ([200, 200], [400, None], 2),  # a pod without a CPU request
    ],
    ids=["EmptyCPURequest", "EmptyMetrics", "MissingRequest"],
)
def test_failed_cpu_metric_keeps_the_desired_count(
    usage: list[int], requests: list[int | None], spec: int
) -> None:
    case = _controller(
        min_replicas=1,
        max_replicas=6,
        spec_replicas=spec,
        cpu_target_utilization=100,
        pod_cpu_usage_milli=usage,
        pod_cpu_request_milli=requests,
    )
    assert run_case(case) == {
        "expected_desired_replicas": spec,
        "expected_condition": "ScalingActive=False/FailedGetResourceMetric",
    }


def test_without_requests_the_pods_are_status_replicas_of_one_cpu() -> None:
    """The harness's default: ``status_replicas`` pods of 1000m; 2000m used against 50 %."""
    case = _controller(
        min_replicas=1,
        max_replicas=5,
        spec_replicas=2,
        cpu_target=50,  # the older name of cpu_target_utilization
        pod_cpu_usage_milli=[1000, 1000],
    )
    assert run_case(case)["expected_desired_replicas"] == 4


def test_controller_cases_reject_negative_cpu_and_run_from_json() -> None:
    with pytest.raises(InputError, match="CPU requests and samples are >= 0"):
        run_case(_controller(max_replicas=2, spec_replicas=1, pod_cpu_request_milli=[-1]))
    text = (
        '{"family": "controller_cases", "min_replicas": 1, "max_replicas": 5, '
        '"spec_replicas": 1, "cpu_target_utilization": 50, "pod_cpu_usage_milli": [200], '
        '"pod_cpu_request_milli": [200], "expected_desired_replicas": 2}'
    )
    assert run_json(text)["expected_desired_replicas"] == 2
