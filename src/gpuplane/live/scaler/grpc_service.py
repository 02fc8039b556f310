"""``externalscaler.ExternalScaler`` on grpc.aio, the handlers written against the generated
messages (no generated servicer: its code is untyped).

Errors are gRPC statuses with a message, never a traceback: bad metadata INVALID_ARGUMENT (the
key and what was expected), Prometheus unreachable or failing UNAVAILABLE, a query Prometheus
rejects INVALID_ARGUMENT, an answer that is not one number FAILED_PRECONDITION, anything else
INTERNAL (logged with its traceback here). KEDA logs the message, counts a failure towards the
ScaledObject's ``fallback`` and sets ``Ready=False`` without one.

``StreamIsActive`` (trigger type ``external-push``) decides every ``stream_interval_s`` and
sends when the activity changes, and at least every ``heartbeat_s``. ``StreamMetricSpec`` is
UNIMPLEMENTED: KEDA (on main only) then falls back to ``GetMetricSpec``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from grpc import aio

from gpuplane.autoscaler.keda.replica_metric import TARGET_AVERAGE_VALUE
from gpuplane.live.scaler.engine import ScalerEngine
from gpuplane.live.scaler.keda_grpc.externalscaler_pb2 import (
    GetMetricSpecResponse,
    GetMetricsRequest,
    GetMetricsResponse,
    IsActiveResponse,
    MetricSpec,
    MetricValue,
    ScaledObjectRef,
)
from gpuplane.live.scaler.metadata import MetadataError
from gpuplane.live.scaler.prom_api import PromErrorKind, PrometheusError
from gpuplane.live.scaler.service_metrics import ScalerMetrics
from gpuplane.live.scaler.state import Evaluation

SERVICE = "externalscaler.ExternalScaler"
log = logging.getLogger("gpuplane.scaler")
Req = TypeVar("Req")
Resp = TypeVar("Resp")
Context = aio.ServicerContext[Any, Any]

_PROM_CODES = {
    PromErrorKind.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    PromErrorKind.BAD_QUERY: grpc.StatusCode.INVALID_ARGUMENT,
    PromErrorKind.BAD_RESULT: grpc.StatusCode.FAILED_PRECONDITION,
}


class RpcFailure(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class StreamSettings:
    interval_s: float = 5.0
    heartbeat_s: float = 30.0


class ExternalScalerService:
    def __init__(
        self,
        engine: ScalerEngine,
        metrics: ScalerMetrics | None = None,
        stream: StreamSettings | None = None,
    ) -> None:
        self.engine = engine
        self.metrics = metrics or ScalerMetrics()
        self.stream = stream or StreamSettings()

    async def _evaluate(self, ref: ScaledObjectRef) -> Evaluation:
        try:
            out = await self.engine.evaluate(ref.namespace, ref.name, dict(ref.scalerMetadata))
        except MetadataError as err:
            self.metrics.errors.labels("metadata").inc()
            raise RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, str(err)) from None
        except PrometheusError as err:
            self.metrics.errors.labels("prometheus").inc()
            raise RpcFailure(_PROM_CODES[err.kind], str(err)) from None
        self.metrics.desired.labels(ref.namespace, ref.name).set(out.desired)
        return out

    async def is_active(self, ref: ScaledObjectRef) -> IsActiveResponse:
        return IsActiveResponse(result=(await self._evaluate(ref)).active)

    async def get_metric_spec(self, ref: ScaledObjectRef) -> GetMetricSpecResponse:
        try:
            config = self.engine.config(ref.namespace, ref.name, dict(ref.scalerMetadata))
        except MetadataError as err:
            self.metrics.errors.labels("metadata").inc()
            raise RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, str(err)) from None
        spec = MetricSpec(
            metricName=config.metric_name,
            targetSize=round(TARGET_AVERAGE_VALUE),
            targetSizeFloat=TARGET_AVERAGE_VALUE,
        )
        return GetMetricSpecResponse(metricSpecs=[spec])

    async def get_metrics(self, req: GetMetricsRequest) -> GetMetricsResponse:
        ref = req.scaledObjectRef
        out = await self._evaluate(ref)
        name = self.engine.config(ref.namespace, ref.name, dict(ref.scalerMetadata)).metric_name
        if req.metricName and req.metricName != name:
            raise RpcFailure(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown metric {req.metricName!r}; this scaler answers {name!r}",
            )
        value = MetricValue(
            metricName=name,
            metricValue=out.desired,  # the deprecated int: ceil of the float, read only at 0
            metricValueFloat=out.metric_value,
        )
        return GetMetricsResponse(metricValues=[value])

    async def stream_is_active(self, ref: ScaledObjectRef) -> AsyncIterator[IsActiveResponse]:
        last: bool | None = None
        sent_at = 0.0
        while True:
            active = (await self._evaluate(ref)).active
            now = time.monotonic()
            if active != last or now - sent_at >= self.stream.heartbeat_s:
                yield IsActiveResponse(result=active)
                last, sent_at = active, now
            await asyncio.sleep(self.stream.interval_s)

    def handler(self) -> grpc.GenericRpcHandler:
        unary = grpc.unary_unary_rpc_method_handler
        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
            "IsActive": unary(
                self._unary("IsActive", self.is_active),
                ScaledObjectRef.FromString,
                IsActiveResponse.SerializeToString,
            ),
            "GetMetricSpec": unary(
                self._unary("GetMetricSpec", self.get_metric_spec),
                ScaledObjectRef.FromString,
                GetMetricSpecResponse.SerializeToString,
            ),
            "GetMetrics": unary(
                self._unary("GetMetrics", self.get_metrics),
                GetMetricsRequest.FromString,
                GetMetricsResponse.SerializeToString,
            ),
            "StreamIsActive": grpc.unary_stream_rpc_method_handler(
                self._stream, ScaledObjectRef.FromString, IsActiveResponse.SerializeToString
            ),
            "StreamMetricSpec": grpc.unary_stream_rpc_method_handler(
                self._no_metric_spec_stream,
                ScaledObjectRef.FromString,
                GetMetricSpecResponse.SerializeToString,
            ),
        }
        return grpc.method_handlers_generic_handler(SERVICE, handlers)

    def _unary(
        self, method: str, call: Callable[[Req], Awaitable[Resp]]
    ) -> Callable[[Req, Context], Awaitable[Resp]]:
        async def run(request: Req, context: Context) -> Resp:
            start = time.perf_counter()
            code = grpc.StatusCode.OK
            try:
                return await call(request)
            except RpcFailure as err:
                code = err.code
                await context.abort(err.code, str(err))
            except Exception as err:  # a bug: logged here, a status for KEDA
                code = grpc.StatusCode.INTERNAL
                self.metrics.errors.labels("internal").inc()
                log.exception("%s failed", method)
                await context.abort(code, f"{type(err).__name__}: {err}")
            finally:
                self.metrics.calls.labels(method, code.name).inc()
                self.metrics.latency.labels(method).observe(time.perf_counter() - start)

        return run

    async def _stream(
        self, ref: ScaledObjectRef, context: Context
    ) -> AsyncIterator[IsActiveResponse]:
        code = grpc.StatusCode.OK
        try:
            async for message in self.stream_is_active(ref):
                yield message
        except RpcFailure as err:
            code = err.code
            await context.abort(err.code, str(err))
        except Exception as err:
            code = grpc.StatusCode.INTERNAL
            self.metrics.errors.labels("internal").inc()
            log.exception("StreamIsActive failed")
            await context.abort(code, f"{type(err).__name__}: {err}")
        finally:
            self.metrics.calls.labels("StreamIsActive", code.name).inc()

    async def _no_metric_spec_stream(
        self, ref: ScaledObjectRef, context: Context
    ) -> AsyncIterator[GetMetricSpecResponse]:
        self.metrics.calls.labels("StreamMetricSpec", "UNIMPLEMENTED").inc()
        await context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            "StreamMetricSpec is not implemented: the metric spec is fixed (target 1); "
            "KEDA falls back to GetMetricSpec",
        )
        yield GetMetricSpecResponse()  # never reached: makes this an async generator
