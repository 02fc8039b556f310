"""Reading Prometheus answers as KEDA does, metadata details, and the loading-replica book."""

from __future__ import annotations

import pytest

from gpuplane.autoscaler.slo.queries import HISTORY_STEPS
from gpuplane.autoscaler.slo.signals import history_grid as grid
from gpuplane.live.scaler.metadata import MetadataError, parse_metadata
from gpuplane.live.scaler.prom_api import PromErrorKind, PrometheusError, read_result
from gpuplane.live.scaler.snapshot import track_loading


def _vector(*values: str) -> dict[str, object]:
    result = [{"metric": {}, "value": [1.0, v]} for v in values]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def test_one_number_from_a_vector_or_a_scalar() -> None:
    assert read_result("q", _vector("2.5"), True) == 2.5
    scalar = {"status": "success", "data": {"resultType": "scalar", "result": [1.0, "3"]}}
    assert read_result("q", scalar, True) == 3.0


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf"])
def test_nan_and_inf_are_no_data_or_an_error(value: str) -> None:
    assert read_result("q", _vector(value), True) is None
    with pytest.raises(PrometheusError) as info:
        read_result("q", _vector(value), False)
    assert info.value.kind is PromErrorKind.BAD_RESULT


def test_empty_and_multiple_elements() -> None:
    assert read_result("q", _vector(), True) is None
    with pytest.raises(PrometheusError, match="the result is empty"):
        read_result("q", _vector(), False)
    with pytest.raises(PrometheusError, match="prometheus query q returned multiple elements"):
        read_result("q", _vector("1", "2"), True)


def test_other_shapes_are_errors() -> None:
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    for body in (matrix, {"status": "error"}, [1, 2], _vector("x")):
        with pytest.raises(PrometheusError):
            read_result("q", body, True)


BASE = {
    "prometheusAddress": "http://prometheus:9090/",
    "deployment": "other/qwen",
    "coldStart": "2m",
    "maxReplicas": "8",
    "prefillTokensPerSecond": "20000",
    "decodeBaseStepSeconds": "0.02",
    "decodeStepPerKvTokenSeconds": "1e-7",
}


def test_metadata_defaults_and_from_env_keys() -> None:
    meta = dict(BASE, enableTLS="true", itlP99FromEnv="150ms", waitingQuery="sum(q)")
    config = parse_metadata(meta, "llm")
    assert (config.namespace, config.deployment) == ("other", "qwen")
    assert config.prometheus_address == "http://prometheus:9090"
    assert config.cold_start_s == 120.0 and config.min_replicas == 1
    assert config.slo.itl_p99_s == pytest.approx(0.15) and config.slo.ttft_p90_s == 2.0
    assert config.queries.waiting == "sum(q)"
    assert 'namespace="other",deployment="qwen"' in config.replica_queries.spec


def test_metadata_needs_the_capacity_figures() -> None:
    meta = {k: v for k, v in BASE.items() if k != "decodeBaseStepSeconds"}
    with pytest.raises(MetadataError, match="decodeBaseStepSeconds"):
        parse_metadata(meta, "llm")


def test_loading_replicas_keep_their_first_seen_time() -> None:
    starts = track_loading((), 2, 100.0)
    assert starts == (100.0, 100.0)
    assert track_loading(starts, 3, 115.0) == (100.0, 100.0, 115.0)
    assert track_loading((100.0, 100.0, 115.0), 1, 130.0) == (115.0,)
    assert track_loading((115.0,), 0, 145.0) == ()


def test_history_grid() -> None:
    times = grid(1000.0, 15.0)
    assert len(times) == HISTORY_STEPS and times[-1] == 990.0 and times[0] == 990.0 - 39 * 15
