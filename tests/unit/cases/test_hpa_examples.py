"""Every case of shared/reference/hpa-examples.json, plus more of the upstream
replica_calculator_test.go cases ported to the same JSON form (hand-converted: per-container
levels doubled to pod totals, as the file's schema describes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cases.hpa_check import FAMILIES, run_case, run_json
from gpuplane.core.errors import InputError

REF = Path(__file__).resolve().parents[4] / "shared/reference/hpa-examples.json"
EXAMPLES = json.loads(REF.read_text())
CASES = [
    (family, case) for family, cases in EXAMPLES.items() if family != "schema" for case in cases
]


def _strip(family: str, case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    inputs = {k: v for k, v in case.items() if not k.startswith("expected")}
    inputs["family"] = family
    expected = {k: v for k, v in case.items() if k.startswith("expected")}
    return inputs, expected


def test_the_file_has_every_family() -> None:
    assert set(FAMILIES) == {k for k in EXAMPLES if k != "schema"}
    assert len(CASES) >= 20


@pytest.mark.parametrize(
    ("family", "case"), CASES, ids=lambda x: x if isinstance(x, str) else x["name"]
)
def test_reference_case(family: str, case: dict[str, Any]) -> None:
    inputs, expected = _strip(family, case)
    assert run_case(inputs) == expected


def _pods(
    n: int,
    levels: list[int],
    *,
    ready: list[bool] | None = None,
    start: list[str] | None = None,
    phase: list[str] | None = None,
    deleted: list[bool] | None = None,
) -> list[dict[str, Any]]:
    """Pods as replica_calculator_test.go builds them: 2 containers of 1 CPU each, and one
    level per container (so pod totals are doubled)."""
    return [
        {
            "name": f"test-pod-{i}",
            "phase": phase[i] if phase else "Running",
            "ready": ready[i] if ready else True,
            "start": start[i] if start else "cool",
            "deleted": deleted[i] if deleted else False,
            "request_milli": 2000,
            "usage_milli": 2 * levels[i] if i < len(levels) else None,
        }
        for i in range(n)
    ]


def _res(current: int, target: int, pods: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "family": "replica_calc_cases",
        "kind": "resource_utilization",
        "current_replicas": current,
        "target": target,
        "pods": pods,
    }


UPSTREAM_RESOURCE = [
    (
        "ScaleUpUnreadyLessScale",
        _res(3, 30, _pods(3, [300, 500, 700], ready=[False, True, True])),
        (4, 60, 1200),
    ),
    (
        "ScaleUpHotCpuLessScale",
        _res(3, 30, _pods(3, [300, 500, 700], start=["hot", "cool", "cool"])),
        (4, 60, 1200),
    ),
    (
        "ScaleUpUnreadyNoScale",
        _res(3, 30, _pods(3, [400, 500, 700], ready=[True, False, False])),
        (3, 40, 800),
    ),
    (
        "ScaleHotCpuNoScale",
        _res(
            3,
            30,
            _pods(3, [400, 500, 700], ready=[True, False, False], start=["cool", "hot", "hot"]),
        ),
        (3, 40, 800),
    ),
    (
        "ScaleUpIgnoresFailedPods",
        _res(
            2,
            30,
            _pods(
                4,
                [500, 700],
                ready=[True, True, False, False],
                phase=["Running"] * 2 + ["Failed"] * 2,
            ),
        ),
        (4, 60, 1200),
    ),
    (
        "ScaleUpIgnoresDeletionPods",
        _res(
            2,
            30,
            _pods(
                4, [500, 700], ready=[True, True, False, False], deleted=[False, False, True, True]
            ),
        ),
        (4, 60, 1200),
    ),
    ("ScaleDown", _res(5, 50, _pods(5, [100, 300, 500, 250, 250])), (3, 28, 560)),
    (
        "ScaleDownExcludeUnreadyPods",
        _res(5, 50, _pods(5, [100, 300, 500, 250, 250], ready=[True] * 3 + [False] * 2)),
        (2, 30, 600),
    ),
    (
        "ScaleDownExcludeUnscheduledPods",
        _res(
            5, 50, _pods(5, [100], ready=[True] + [False] * 4, phase=["Running"] + ["Pending"] * 4)
        ),
        (1, 10, 200),
    ),
    (
        "ScaleDownIgnoreHotCpuPods",
        _res(5, 50, _pods(5, [100, 300, 500, 250, 250], start=["cool"] * 3 + ["hot"] * 2)),
        (2, 30, 600),
    ),
    (
        "ScaleDownIgnoresDeletionPods",
        _res(
            5,
            50,
            _pods(
                7,
                [100, 300, 500, 250, 250],
                ready=[True] * 5 + [False] * 2,
                deleted=[False] * 5 + [True] * 2,
            ),
        ),
        (3, 28, 560),
    ),
    ("MissingMetrics", _res(4, 100, _pods(4, [400, 95])), (3, 24, 495)),
    ("MissingMetricsNoChangeEq", _res(2, 100, _pods(2, [1000])), (2, 100, 2000)),
    ("MissingMetricsNoChangeGt", _res(2, 100, _pods(2, [1900])), (2, 190, 3800)),
    ("MissingMetricsNoChangeLt", _res(2, 100, _pods(2, [600])), (2, 60, 1200)),
    (
        "MissingMetricsUnreadyChange",
        _res(3, 50, _pods(3, [100, 450], ready=[False, True, True])),
        (3, 45, 900),
    ),
    (
        "Tolerance",
        _res(
            3,
            100,
            [
                {"name": "a", "request_milli": 1800, "usage_milli": 2020},
                {"name": "b", "request_milli": 2000, "usage_milli": 2060},
                {"name": "c", "request_milli": 2200, "usage_milli": 2040},
            ],
        ),
        (3, 102, 2040),
    ),
]


@pytest.mark.parametrize(
    ("name", "case", "want"), UPSTREAM_RESOURCE, ids=[c[0] for c in UPSTREAM_RESOURCE]
)
def test_upstream_resource_cases(
    name: str, case: dict[str, Any], want: tuple[int, int, int]
) -> None:
    got = run_case(case)
    assert (
        got["expected_replicas"],
        got["expected_utilization_percent"],
        got["expected_raw_average_milli"],
    ) == want


def _metric(kind: str, current: int, target: int, **extra: Any) -> dict[str, Any]:
    return {
        "family": "replica_calc_cases",
        "kind": kind,
        "current_replicas": current,
        "target": target,
        **extra,
    }


def _plain(n: int, levels: list[int], ready: list[bool] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "name": f"p{i}",
            "ready": ready[i] if ready else True,
            "usage_milli": levels[i] if i < len(levels) else None,
        }
        for i in range(n)
    ]


UPSTREAM_METRIC = [
    (
        "ScaleUpCM",
        _metric("pods_metric", 3, 15000, pods=_plain(3, [20000, 10000, 30000])),
        (4, 20000),
    ),
    # Pods metrics ignore readiness (only CPU samples are checked), so the unready pod counts.
    (
        "ScaleUpCMUnreadyHotCpuNoLessScale",
        _metric(
            "pods_metric",
            3,
            15000,
            pods=_plain(3, [50000, 10000, 30000], ready=[True, True, False]),
        ),
        (6, 30000),
    ),
    (
        "ScaleUpCMUnreadyHotCpuScaleWouldScaleDown",
        _metric(
            "pods_metric",
            3,
            15000,
            pods=_plain(3, [50000, 15000, 30000], ready=[False, True, False]),
        ),
        (7, 31666),
    ),
    (
        "ScaleUpCMObject",
        _metric("object_value", 3, 15000, pods=_plain(3, []), metric_values_milli=[20000]),
        (4, 20000),
    ),
    (
        "ScaleUpCMPerPodObject",
        _metric("object_average_value", 3, 5000, metric_values_milli=[20000]),
        (4, 6667),
    ),
    (
        "ScaleUpCMObjectIgnoresUnreadyPods",
        _metric(
            "object_value",
            3,
            10000,
            pods=_plain(3, [], ready=[False, True, False]),
            metric_values_milli=[50000],
        ),
        (5, 50000),
    ),
    (
        "ScaleUpCMExternalIgnoresUnreadyPods",
        _metric(
            "external_value",
            3,
            4400,
            pods=_plain(3, [], ready=[False, True, False]),
            metric_values_milli=[8600],
        ),
        (2, 8600),
    ),
    (
        "ScaleUpPerPodCMExternal",
        _metric("external_average_value", 3, 2150, metric_values_milli=[8600]),
        (4, 2867),
    ),
    (
        "ScaleDownPerPodCMExternal",
        _metric("external_average_value", 5, 2867, metric_values_milli=[8600]),
        (3, 1720),
    ),
    (
        "TolerancePerPodCMObject",
        _metric("object_average_value", 4, 5000, metric_values_milli=[20166]),
        (4, 5042),
    ),
    (
        "ToleranceCMExternal",
        _metric("external_value", 3, 8888, pods=_plain(3, []), metric_values_milli=[8600]),
        (3, 8600),
    ),
    (
        "TolerancePerPodCMExternal",
        _metric("external_average_value", 3, 2900, metric_values_milli=[8600]),
        (3, 2867),
    ),
    (
        "PlainMissingMetricsNoChangeEq",
        _metric("pods_metric", 5, 20000, pods=_plain(5, [20000, 19000, 21000])),
        (5, 20000),
    ),
    (
        "ToleranceCMObject",
        _metric("object_value", 3, 20000, pods=_plain(3, []), metric_values_milli=[20666]),
        (3, 20666),
    ),
]


@pytest.mark.parametrize(
    ("name", "case", "want"), UPSTREAM_METRIC, ids=[c[0] for c in UPSTREAM_METRIC]
)
def test_upstream_metric_cases(name: str, case: dict[str, Any], want: tuple[int, int]) -> None:
    got = run_case(case)
    assert (got["expected_replicas"], got["expected_usage_milli"]) == want


def test_error_cases_report_the_controllers_message() -> None:
    empty = run_case(_res(4, 100, _pods(3, [])))
    assert empty == {
        "expected_error_contains": "unable to get metrics for resource cpu: "
        "no metrics returned from resource metrics API"
    }
    no_request = run_case(_res(1, 100, [{"name": "p", "usage_milli": 400}]))
    assert "missing request for cpu" in no_request["expected_error_contains"]
    all_unready = run_case(_res(2, 50, _pods(2, [100, 100], ready=[False, False])))
    assert all_unready["expected_error_contains"] == (
        "did not receive metrics for targeted pods (pods might be unready)"
    )


def test_controller_cases_name_the_last_condition() -> None:
    base = {"family": "controller_cases", "min_replicas": 3, "max_replicas": 5}
    assert run_case({**base, "spec_replicas": 2}) == {
        "expected_desired_replicas": 3,
        "expected_condition": "AbleToScale=True/SucceededRescale",
    }
    assert run_case({**base, "spec_replicas": 10})["expected_desired_replicas"] == 5


def test_limit_case_for_scale_up() -> None:
    case = {
        "family": "limit_cases",
        "function": "scale_up_limit",
        "current_replicas": 10,
        "rules": {
            "selectPolicy": "Min",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 60},
                {"type": "Percent", "value": 30, "periodSeconds": 60},
            ],
        },
        "events": [{"change": 2, "age_seconds": 10}],
    }
    # period start 8: Pods -> 12, Percent -> ceil(8 * 1.3) = 11; Min picks 11.
    assert run_case(case) == {"expected": 11}


def test_unknown_and_missing_family_list_the_families() -> None:
    with pytest.raises(InputError) as err:
        run_case({"family": "nope"})
    assert "unknown family 'nope'" in str(err.value)
    assert "replica_calc_cases" in str(err.value) and "controller_cases" in str(err.value)
    with pytest.raises(InputError, match="missing 'family'"):
        run_case({})


def test_bad_input_is_located() -> None:
    with pytest.raises(InputError, match=r"<stdin>: target"):
        run_json(
            '{"family": "replica_calc_cases", "kind": "pods_metric", '
            '"current_replicas": 1, "target": 0}'
        )
    with pytest.raises(InputError, match="not valid JSON"):
        run_json("{")
    with pytest.raises(InputError, match="unknown key 'bogus'"):
        run_case(
            {
                "family": "legacy_rules_cases",
                "current_replicas": 1,
                "desired_replicas": 1,
                "min_replicas": 1,
                "max_replicas": 2,
                "bogus": 1,
            }
        )
