"""``gpuplane serve scaler`` called as KEDA calls it, against a fake Prometheus on loopback.

KEDA's order per ScaledObject: ``GetMetricSpec`` when it builds the HPA; per poll
``GetMetrics`` then ``IsActive``; with ``external-push`` a long-lived ``StreamIsActive``.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message
from grpc import aio
from grpc_health.v1 import health_pb2

from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.replica_calculator import Tolerances, external_per_pod_replicas
from gpuplane.autoscaler.slo.queries import QUANTILES, SignalQueries
from gpuplane.live.scaler.engine import ScalerEngine
from gpuplane.live.scaler.grpc_service import StreamSettings
from gpuplane.live.scaler.keda_grpc.externalscaler_pb2 import (
    GetMetricSpecResponse,
    GetMetricsRequest,
    GetMetricsResponse,
    IsActiveResponse,
    ScaledObjectRef,
)
from gpuplane.live.scaler.metadata import ReplicaQueries, parse_metadata
from gpuplane.live.scaler.server import RunningScaler, ServerOptions, start
from tests.integration.fake_prometheus import FakePrometheus

pytestmark = pytest.mark.integration

NS, NAME = "llm", "qwen"
PATH = "/externalscaler.ExternalScaler/"


class Clock:
    def __init__(self, t_s: float = 1_000_000.0) -> None:
        self.t_s = t_s

    def __call__(self) -> float:
        return self.t_s


def metadata(prometheus: str, **extra: str) -> dict[str, str]:
    meta = {
        "scalerAddress": "gpuplane-scaler.llm:9090",
        "prometheusAddress": prometheus,
        "deployment": NAME,
        "podSelector": 'model_name="qwen"',
        "coldStart": "60s",
        "minReplicas": "0",
        "maxReplicas": "16",
        "ttftP90": "2s",
        "itlP99": "200ms",
        "prefillTokensPerSecond": "20000",
        "decodeBaseStepSeconds": "0.02",
        "decodeStepPerKvTokenSeconds": "1e-7",
        "maxNumBatchedTokens": "8192",
        "kvCapacityTokens": "500000",
    }
    return meta | extra


def queries() -> SignalQueries:
    return parse_metadata(metadata("http://prometheus:9090"), NS).queries


def replica_queries() -> ReplicaQueries:
    return parse_metadata(metadata("http://prometheus:9090"), NS).replica_queries


def load(prom: FakePrometheus, rps: float, ready: int, spec: int, waiting: float = 0.0) -> None:
    q, kube = queries(), replica_queries()
    prom.answers.update(
        {
            q.arrival_rate: rps,
            kube.ready: float(ready),
            kube.spec: float(spec),
            q.waiting: waiting,
            q.running: 8.0 * ready if rps else 0.0,
            q.kv_usage: 0.3 if rps else 0.0,
            q.preemptions: 0.0,
            q.ttft_p90: 0.4 if rps else None,
            q.itl_p99: 0.05 if rps else None,
            q.prompt_tokens: 1500.0,
            q.output_tokens: 300.0,
        }
    )
    for p, tokens in zip(QUANTILES, (800.0, 1000.0, 2000.0, 3000.0, 4000.0, 6000.0), strict=True):
        prom.answers[q.quantile(p)] = tokens


@dataclass
class Keda:
    """The calls KEDA makes, on one channel."""

    channel: aio.Channel

    async def metric_spec(self, ref: ScaledObjectRef) -> GetMetricSpecResponse:
        call = self.channel.unary_unary(
            PATH + "GetMetricSpec",
            request_serializer=ScaledObjectRef.SerializeToString,
            response_deserializer=GetMetricSpecResponse.FromString,
        )
        return await call(ref)

    async def metrics(self, ref: ScaledObjectRef, name: str) -> GetMetricsResponse:
        call = self.channel.unary_unary(
            PATH + "GetMetrics",
            request_serializer=GetMetricsRequest.SerializeToString,
            response_deserializer=GetMetricsResponse.FromString,
        )
        return await call(GetMetricsRequest(scaledObjectRef=ref, metricName=name))

    async def is_active(self, ref: ScaledObjectRef) -> bool:
        call = self.channel.unary_unary(
            PATH + "IsActive",
            request_serializer=ScaledObjectRef.SerializeToString,
            response_deserializer=IsActiveResponse.FromString,
        )
        return (await call(ref)).result

    def stream(self, ref: ScaledObjectRef) -> aio.UnaryStreamCall[Message, IsActiveResponse]:
        call = self.channel.unary_stream(
            PATH + "StreamIsActive",
            request_serializer=ScaledObjectRef.SerializeToString,
            response_deserializer=IsActiveResponse.FromString,
        )
        return call(ref)

    def metric_spec_stream(
        self, ref: ScaledObjectRef
    ) -> aio.UnaryStreamCall[Message, GetMetricSpecResponse]:
        call = self.channel.unary_stream(
            PATH + "StreamMetricSpec",
            request_serializer=ScaledObjectRef.SerializeToString,
            response_deserializer=GetMetricSpecResponse.FromString,
        )
        return call(ref)


@asynccontextmanager
async def running(clock: Clock) -> AsyncIterator[tuple[FakePrometheus, Keda, RunningScaler]]:
    prom = FakePrometheus()
    await prom.start()
    options = ServerOptions(
        listen="127.0.0.1:0", metrics_listen=None, stream=StreamSettings(0.02, 30.0)
    )
    scaler = await start(options, ScalerEngine(clock))
    channel = aio.insecure_channel(f"127.0.0.1:{scaler.port}")
    try:
        yield prom, Keda(channel), scaler
    finally:
        await channel.close()
        await scaler.stop(0)
        await prom.stop()


def ref(meta: dict[str, str]) -> ScaledObjectRef:
    return ScaledObjectRef(name="qwen-slo", namespace=NS, scalerMetadata=meta)


def hpa_lands_on(value: float, status_replicas: int) -> int:
    source = MetricsSnapshot(external={"slo-replicas": (int(value * 1000),)})
    return external_per_pod_replicas(
        status_replicas, 1000, "slo-replicas", None, Tolerances(0.0, 0.0), source
    ).replicas


def test_polls_as_keda_does_then_scales_to_zero() -> None:
    async def scenario() -> None:
        clock = Clock()
        async with running(clock) as (prom, keda, _):
            r = ref(metadata(prom.address))
            spec = (await keda.metric_spec(r)).metricSpecs
            assert [(s.metricName, s.targetSize, s.targetSizeFloat) for s in spec] == [
                ("slo-replicas", 1, 1.0)
            ]
            load(prom, rps=12.0, ready=2, spec=2, waiting=40.0)
            values = (await keda.metrics(r, "slo-replicas")).metricValues
            assert await keda.is_active(r)
            (value,) = values
            assert value.metricName == "slo-replicas"
            desired = value.metricValue
            assert desired > 2  # 12 req/s and a queue need more than two replicas
            assert value.metricValueFloat == float(desired)
            assert hpa_lands_on(value.metricValueFloat, 2) == desired
            history = [t for q, t in prom.queries if q == queries().arrival_rate]
            assert len(history) == 40  # the first decision backfills the forecast's history
            prom.queries.clear()
            clock.t_s += 15.0
            await keda.metrics(r, "slo-replicas")
            assert len([q for q, _ in prom.queries if q == queries().arrival_rate]) == 1
            load(prom, rps=0.0, ready=2, spec=2)
            clock.t_s += 600.0
            values = (await keda.metrics(r, "slo-replicas")).metricValues
            assert values[0].metricValue == 0 and values[0].metricValueFloat == 0.0
            assert not await keda.is_active(r)

    asyncio.run(scenario())


def test_stream_is_active_sends_on_change() -> None:
    async def scenario() -> None:
        clock = Clock()
        async with running(clock) as (prom, keda, _):
            load(prom, rps=5.0, ready=1, spec=1)
            stream = keda.stream(ref(metadata(prom.address)))
            first = await stream.read()
            assert isinstance(first, IsActiveResponse) and first.result
            load(prom, rps=0.0, ready=1, spec=1)
            clock.t_s += 900.0
            second = await stream.read()
            assert isinstance(second, IsActiveResponse) and not second.result
            stream.cancel()

    asyncio.run(scenario())


async def _code(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(aio.AioRpcError) as info:
        await call
    return info.value.code(), info.value.details() or ""


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"prometheusAddress": "prometheus:9090"}, "prometheusAddress"),
        ({"coldStart": "soon"}, "coldStart"),
        ({"itlp99": "100ms"}, "unknown scalerMetadata key 'itlp99'"),
        ({"maxReplicas": "0"}, "maxReplicas"),
        ({"minReplicas": "5", "maxReplicas": "2"}, "minReplicas 5 is above maxReplicas 2"),
        ({"settings": '{"headroom": 3}'}, "headroom"),
        ({"prefillTokensPerSecond": "-1"}, "prefillTokensPerSecond"),
        ({"role": "both"}, "role"),
    ],
)
def test_bad_metadata_is_invalid_argument(change: dict[str, str], words: str) -> None:
    async def scenario() -> None:
        async with running(Clock()) as (prom, keda, _):
            r = ref(metadata(prom.address, **change))
            for call in (keda.metric_spec(r), keda.metrics(r, "slo-replicas"), keda.is_active(r)):
                code, details = await _code(call)
                assert code is grpc.StatusCode.INVALID_ARGUMENT
                assert words in details

    asyncio.run(scenario())


def test_prometheus_down_is_unavailable_with_a_message() -> None:
    async def scenario() -> None:
        async with running(Clock()) as (prom, keda, _):
            r = ref(metadata("http://127.0.0.1:1", prometheusRetries="1"))
            code, details = await _code(keda.metrics(r, "slo-replicas"))
            assert code is grpc.StatusCode.UNAVAILABLE
            assert "prometheus at http://127.0.0.1:1 unavailable after 2 tries" in details
            assert "Traceback" not in details
            prom.status = 503
            code, details = await _code(keda.is_active(ref(metadata(prom.address))))
            assert code is grpc.StatusCode.UNAVAILABLE and "HTTP 503" in details

    asyncio.run(scenario())


def test_answers_that_are_not_one_number() -> None:
    async def scenario() -> None:
        async with running(Clock()) as (prom, keda, _):
            load(prom, rps=5.0, ready=1, spec=1)
            prom.answers[queries().waiting] = [1.0, 2.0]
            code, details = await _code(keda.is_active(ref(metadata(prom.address))))
            assert code is grpc.StatusCode.FAILED_PRECONDITION
            assert "returned multiple elements" in details
            load(prom, rps=5.0, ready=1, spec=1)
            prom.answers[replica_queries().spec] = None
            code, details = await _code(keda.is_active(ref(metadata(prom.address, role="decode"))))
            assert code is grpc.StatusCode.FAILED_PRECONDITION
            assert "kube-state-metrics" in details

    asyncio.run(scenario())


def test_unknown_metric_name_and_metric_spec_stream() -> None:
    async def scenario() -> None:
        async with running(Clock()) as (prom, keda, _):
            load(prom, rps=5.0, ready=1, spec=1)
            r = ref(metadata(prom.address))
            code, details = await _code(keda.metrics(r, "s0-other"))
            assert code is grpc.StatusCode.INVALID_ARGUMENT and "slo-replicas" in details
            with pytest.raises(aio.AioRpcError) as info:
                await keda.metric_spec_stream(r).read()
            assert info.value.code() is grpc.StatusCode.UNIMPLEMENTED

    asyncio.run(scenario())


def test_health_service_and_metrics_endpoint() -> None:
    async def scenario() -> None:
        prom = FakePrometheus()
        await prom.start()
        options = ServerOptions(listen="127.0.0.1:0", metrics_listen="127.0.0.1:0")
        scaler = await start(options, ScalerEngine(Clock()))
        try:
            async with aio.insecure_channel(f"127.0.0.1:{scaler.port}") as channel:
                check = channel.unary_unary(
                    "/grpc.health.v1.Health/Check",
                    request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                    response_deserializer=health_pb2.HealthCheckResponse.FromString,
                )
                answer = await check(
                    health_pb2.HealthCheckRequest(service="externalscaler.ExternalScaler")
                )
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
                load(prom, rps=5.0, ready=1, spec=1)
                await Keda(channel).is_active(ref(metadata(prom.address)))
            assert scaler.metrics_port is not None
            url = f"http://127.0.0.1:{scaler.metrics_port}/metrics"
            body = await asyncio.to_thread(lambda: urllib.request.urlopen(url).read().decode())
            assert 'gpuplane_scaler_grpc_calls_total{code="OK",method="IsActive"} 1.0' in body
            assert "gpuplane_scaler_grpc_latency_seconds_bucket" in body
        finally:
            await scaler.stop(0)
            await prom.stop()

    asyncio.run(scenario())


def test_tls(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost"),
        ],
        check=True,
        capture_output=True,
    )

    async def scenario() -> None:
        prom = FakePrometheus()
        await prom.start()
        options = ServerOptions(
            listen="127.0.0.1:0", metrics_listen=None, tls_cert=cert, tls_key=key
        )
        scaler = await start(options, ScalerEngine(Clock()))
        creds = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        target = f"127.0.0.1:{scaler.port}"
        options_ = (("grpc.ssl_target_name_override", "localhost"),)
        try:
            async with aio.secure_channel(target, creds, options_) as channel:
                spec = await Keda(channel).metric_spec(ref(metadata(prom.address)))
                assert spec.metricSpecs[0].metricName == "slo-replicas"
        finally:
            await scaler.stop(0)
            await prom.stop()

    asyncio.run(scenario())
