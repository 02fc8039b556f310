"""The replica calculator's rules, one at a time, on small hand-built pods."""

from __future__ import annotations

import pytest

from gpuplane.api.pod_phase import PodPhase
from gpuplane.autoscaler.hpa.golang import INT32_MAX, INT32_MIN, ceil_int32, div_trunc, to_int32
from gpuplane.autoscaler.hpa.metrics import MetricsApi, MetricsSnapshot, ObjectMetricValue
from gpuplane.autoscaler.hpa.pods import (
    ConditionStatus,
    ContainerInfo,
    PodInfo,
    PodMetric,
    group_pods,
    pod_request,
)
from gpuplane.autoscaler.hpa.replica_calculator import (
    PodContext,
    ReplicaCalcError,
    Tolerances,
    external_metric_replicas,
    external_per_pod_replicas,
    metric_replicas,
    object_metric_replicas,
    object_per_pod_replicas,
    raw_resource_replicas,
    resource_replicas,
)
from gpuplane.autoscaler.hpa.spec import ObjectReference

NOW = 1000.0
TOL = Tolerances()


def make_pod(
    name: str,
    request: int | None = 1000,
    *,
    phase: PodPhase = PodPhase.RUNNING,
    ready: ConditionStatus | None = ConditionStatus.TRUE,
    start: float | None = 0.0,
    transition: float = 0.0,
    deleted: bool = False,
) -> PodInfo:
    requests = () if request is None else (("cpu", request),)
    return PodInfo(
        name,
        phase=phase,
        ready=ready,
        start_s=start,
        ready_transition_s=transition,
        deleted=deleted,
        containers=(ContainerInfo("c", requests),),
    )


def cpu(samples: dict[str, int], at: float = NOW) -> MetricsSnapshot:
    return MetricsSnapshot(
        resource={"cpu": {k: PodMetric(v, at, 60.0) for k, v in samples.items()}}
    )


def ctx(*pods: PodInfo) -> PodContext:
    return PodContext(tuple(pods), NOW, cpu_init_s=300.0, readiness_delay_s=30.0)


def test_go_integer_semantics() -> None:
    assert div_trunc(-7, 2) == -3 and div_trunc(7, 2) == 3
    assert to_int32(float("nan")) == INT32_MIN and to_int32(3e10) == INT32_MIN
    assert ceil_int32(2.0000001) == 3 and ceil_int32(INT32_MAX + 0.5) == INT32_MIN


def test_tolerance_is_inclusive_and_per_direction() -> None:
    t = Tolerances(scale_down=0.2, scale_up=0.05)
    assert t.is_within(0.8) and t.is_within(1.05)
    assert not t.is_within(0.79) and not t.is_within(1.0501)


def test_utilization_uses_integer_division_and_ceil() -> None:
    # 1700m used of 3000m requested -> 56 % (integer), target 50 -> ratio 1.12 -> ceil(3.36) = 4
    pods = [make_pod(n) for n in "abc"]
    p = resource_replicas(3, 50, "cpu", TOL, ctx(*pods), cpu({"a": 500, "b": 600, "c": 600}))
    assert (p.replicas, p.utilization_percent, p.usage_milli) == (4, 56, 566)


def test_within_tolerance_keeps_current() -> None:
    pods = [make_pod(n) for n in "ab"]
    p = resource_replicas(2, 50, "cpu", TOL, ctx(*pods), cpu({"a": 540, "b": 540}))
    assert p.replicas == 2 and p.utilization_percent == 54


def test_missing_pods_count_as_full_request_on_scale_down() -> None:
    pods = [make_pod(n) for n in "abcd"]
    # Two samples at 10 %: ratio 0.2; the two missing pods count as 100 % -> 55 % -> ratio 1.1.
    # That flips direction (0.2 < 1 < 1.1): no change.
    p = resource_replicas(4, 50, "cpu", TOL, ctx(*pods), cpu({"a": 100, "b": 100}))
    assert p.replicas == 4


def test_missing_pods_use_the_target_when_it_is_above_100_percent() -> None:
    pods = [make_pod(n) for n in "abcd"]
    # samples 100 %, target 200 %: ratio 0.5; missing pods assumed at 200 % -> new ratio 0.75.
    p = resource_replicas(4, 200, "cpu", TOL, ctx(*pods), cpu({"a": 1000, "b": 1000}))
    assert p.replicas == 3  # ceil(0.75 * 4)


def test_unready_pods_count_as_zero_only_when_scaling_up() -> None:
    pods = [make_pod("a"), make_pod("b", ready=ConditionStatus.FALSE)]
    up = resource_replicas(2, 50, "cpu", TOL, ctx(*pods), cpu({"a": 1000, "b": 1000}))
    assert up.replicas == 2  # 1000 / 2000 = 50 % after adding b as 0: within tolerance
    down = resource_replicas(2, 50, "cpu", TOL, ctx(*pods), cpu({"a": 100, "b": 1000}))
    assert down.replicas == 1  # b ignored, a at 10 % -> ceil(0.2 * 1)


def test_cpu_readiness_rules() -> None:
    sample = PodMetric(500, NOW, 60.0)
    # Inside the initialization period: a ready pod's sample must start after it became ready.
    fresh = make_pod("fresh", start=NOW - 100, transition=NOW - 100)
    stale = make_pod("stale", start=NOW - 100, transition=NOW - 30)
    # After the period: an unready pod is dropped only if it never became ready.
    never = make_pod("never", ready=ConditionStatus.FALSE, start=0.0, transition=10.0)
    lost = make_pod("lost", ready=ConditionStatus.FALSE, start=0.0, transition=500.0)
    no_cond = make_pod("no-cond", ready=None)
    pods = (fresh, stale, never, lost, no_cond)
    metrics = {p.name: sample for p in pods}
    g = group_pods(pods, metrics, "cpu", NOW, 300.0, 30.0)
    assert g.unready == {"stale", "never", "no-cond"} and g.num_ready == 2
    # Other resources ignore readiness entirely.
    assert group_pods(pods, metrics, "memory", NOW, 300.0, 30.0).num_ready == 5


def test_failed_deleted_pending_and_missing_groups() -> None:
    pods = (
        make_pod("ok"),
        make_pod("failed", phase=PodPhase.FAILED),
        make_pod("gone", deleted=True),
        make_pod("pending", phase=PodPhase.PENDING),
        make_pod("quiet"),
    )
    g = group_pods(pods, {"ok": PodMetric(1), "failed": PodMetric(1)}, "cpu", NOW, 300, 30)
    assert g.ignored == {"failed", "gone"} and g.unready == {"pending"}
    assert g.missing == {"quiet"} and g.num_ready == 1


def test_requests_from_containers_sidecars_and_pod_level() -> None:
    pod = PodInfo(
        "p",
        containers=(ContainerInfo("a", (("cpu", 200),)), ContainerInfo("b", (("cpu", 300),))),
        init_containers=(
            ContainerInfo("sidecar", (("cpu", 100),), restartable=True),
            ContainerInfo("init", (("cpu", 5000),)),
        ),
    )
    assert pod_request(pod, "", "cpu", True) == 600
    assert pod_request(pod, "b", "cpu", True) == 300
    with pytest.raises(Exception, match="container x not found in Pod p"):
        pod_request(pod, "x", "cpu", True)
    with pytest.raises(Exception, match="missing request for memory in container a of Pod p"):
        pod_request(pod, "", "memory", True)
    leveled = PodInfo("q", containers=pod.containers, pod_requests_milli=(("cpu", 2000),))
    assert pod_request(leveled, "", "cpu", True) == 2000
    assert pod_request(leveled, "", "cpu", False) == 500
    assert pod_request(leveled, "a", "cpu", True) == 200  # a named container wins


def test_disjoint_metrics_match_no_pod() -> None:
    with pytest.raises(ReplicaCalcError, match="no metrics returned matched known pods"):
        resource_replicas(1, 100, "cpu", TOL, ctx(make_pod("a")), cpu({"an-older-pod": 100}))


def test_plain_metric_missing_pods_get_the_target() -> None:
    pods = tuple(make_pod(n) for n in "abc")
    source = MetricsSnapshot(pods={"qps": {"a": PodMetric(1000), "b": PodMetric(1000)}})
    # ratio 0.5 -> missing c assumed at target 2000 -> (1000+1000+2000)/3 = 1333 -> 0.666
    p = metric_replicas(3, 2000, "qps", TOL, PodContext(pods, NOW), source)
    assert (p.replicas, p.usage_milli) == (2, 1000)


def test_raw_resource_average_value() -> None:
    pods = tuple(make_pod(n) for n in "ab")
    p = raw_resource_replicas(2, 250, "cpu", TOL, PodContext(pods, NOW), cpu({"a": 500, "b": 500}))
    assert (p.replicas, p.usage_milli) == (4, 500)


OBJ = ObjectReference("Ingress", "front", "networking.k8s.io/v1")


def test_object_value_uses_ready_pods_and_scales_from_zero() -> None:
    pods = (make_pod("a"), make_pod("b", ready=ConditionStatus.FALSE))
    source = MetricsSnapshot(objects={("Ingress", "front", "rps"): ObjectMetricValue(30_000)})
    p = object_metric_replicas(2, 10_000, "rps", OBJ, TOL, PodContext(pods, NOW), source)
    assert p.replicas == 3  # ceil(3.0 * 1 ready pod)
    zero = object_metric_replicas(0, 10_000, "rps", OBJ, TOL, PodContext((), NOW), source)
    assert zero.replicas == 3  # current 0: ceil(ratio), no tolerance, no pods needed
    with pytest.raises(
        ReplicaCalcError, match=r"unable to get metric nope: .* on Ingress default/front"
    ):
        object_metric_replicas(2, 10_000, "nope", OBJ, TOL, PodContext(pods, NOW), source)


def test_average_value_targets_use_status_replicas() -> None:
    source = MetricsSnapshot(
        objects={("Ingress", "front", "rps"): ObjectMetricValue(10_000)},
        external={"q": (6000, 4000)},
    )
    p = object_per_pod_replicas(4, 2000, "rps", OBJ, TOL, source)
    assert (p.replicas, p.usage_milli) == (5, 2500)
    e = external_per_pod_replicas(4, 2500, "q", None, TOL, source)
    assert (e.replicas, e.usage_milli) == (4, 2500)  # ratio 1.0


def test_external_value_sums_series_and_saturates() -> None:
    pods = (make_pod("a"), make_pod("b"))
    source = MetricsSnapshot(external={"q": (2**62, 2**62, 2**62)})
    p = external_metric_replicas(2, 1000, "q", None, TOL, PodContext(pods, NOW), source)
    assert p.usage_milli == 2**63 - 1 and p.replicas == INT32_MAX


def test_metrics_api_errors_are_the_controllers() -> None:
    pods = PodContext((make_pod("a"),), NOW)
    with pytest.raises(ReplicaCalcError, match="no metrics returned from custom metrics API"):
        metric_replicas(1, 1, "qps", TOL, pods, MetricsSnapshot())
    down = MetricsSnapshot(outages={MetricsApi.EXTERNAL: "connection refused"})
    with pytest.raises(
        ReplicaCalcError,
        match=r"unable to get external metric default/q/&LabelSelector\{MatchLabels:"
        r"map\[string\]string\{a: b,\}",
    ):
        external_metric_replicas(1, 1, "q", (("a", "b"),), TOL, pods, down)
    with pytest.raises(ReplicaCalcError, match="no pods returned by selector"):
        resource_replicas(1, 50, "cpu", TOL, PodContext((), NOW), cpu({"a": 1}))
