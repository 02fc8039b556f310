"""The controller as a service: rounds on an interval, health, readiness and metrics over HTTP.

- ``Controller.round()`` runs one round (blocking: the lists and writes are plain HTTP calls)
  through the loop the twin runs too (:func:`gpuplane.slicing.mig.controller_loop.run_round`)
  and writes its JSON lines to the output it was given;
- ``serve()`` runs rounds every ``interval_s`` in a worker thread and answers, with aiohttp's
  web server, ``/healthz`` (the process is up), ``/readyz`` (the last round succeeded) and
  ``/metrics`` (Prometheus text: rounds, actions by kind, skips by reason, failed rounds). On
  SIGTERM or SIGINT it finishes the round in flight, stops the server and returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_writer import ApiWriter
from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.live.http.aiohttp_serve import serve_app
from gpuplane.live.migctl.apply import ApiMigWriter, write_records
from gpuplane.live.migctl.round import (
    ConfigMapTarget,
    LiveSource,
    RoundInputs,
    RoundResult,
    records,
)
from gpuplane.slicing.mig.controller_loop import run_round
from gpuplane.slicing.mig.controller_types import ControlSettings, MigControllerDecision


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        prefix = "gpuplane_mig_controller"
        self.rounds = Counter(f"{prefix}_rounds", "Rounds run.", registry=self.registry)
        self.failed = Counter(
            f"{prefix}_failed_rounds", "Rounds that failed.", registry=self.registry
        )
        self.actions = Counter(
            f"{prefix}_actions", "Actions decided, by kind.", ["action"], registry=self.registry
        )
        self.skips = Counter(
            f"{prefix}_skips", "Actions skipped, by reason.", ["reason"], registry=self.registry
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


@dataclass
class Controller:
    read: Callable[[], RoundInputs]
    settings: ControlSettings
    defaults: NodeDefaults
    target: ConfigMapTarget
    writer: ApiWriter | None  # None: dry-run, nothing is written
    clock: Callable[[], str]  # RFC 3339 now, for event timestamps
    out: Callable[[str], None]
    metrics: Metrics = field(default_factory=Metrics)
    rounds: int = 0
    ready: bool = False

    def _emit(self, record: dict[str, Any]) -> None:
        self.out(json.dumps(record, sort_keys=False))

    def round(self) -> None:
        self.rounds += 1
        mode = "dry-run" if self.writer is None else "apply"
        try:
            inputs = self.read()
            writer = (
                None
                if self.writer is None
                else ApiMigWriter(self.writer, inputs, self.target, self.clock)
            )

            def decided(decision: MigControllerDecision, notes: tuple[str, ...]) -> None:
                # Logged before any write, so the plan is kept even when a write fails.
                result = RoundResult(decision, notes)
                for record in records(result, round_no=self.rounds, mode=mode):
                    self._emit(record)
                if decision.changes:
                    self.metrics.actions.labels("relabel").inc(len(decision.changes))
                for skip in decision.skipped:
                    self.metrics.skips.labels(str(skip.reason)).inc()

            source = LiveSource(inputs, self.defaults)
            outcome = run_round(source, self.settings, writer, decided)
            for done in write_records(outcome.writes, self.target):
                self._emit({"round": self.rounds, "mode": mode, **done})
        except GpuplaneError as exc:
            self.metrics.failed.inc()
            self.ready = False
            self._emit({"round": self.rounds, "mode": mode, "action": "error", "error": str(exc)})
            raise
        finally:
            self.metrics.rounds.inc()
        self.ready = True


def _app(controller: Controller) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(_: web.Request) -> web.Response:
        ok = controller.ready
        return web.Response(text="ok\n" if ok else "not ready\n", status=200 if ok else 503)

    async def metrics(_: web.Request) -> web.Response:
        body = controller.metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


async def serve(
    controller: Controller,
    *,
    interval_s: float,
    host: str,
    port: int,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Rounds every ``interval_s`` until ``stop`` is set (SIGTERM/SIGINT set it)."""

    async def rounds(stop: asyncio.Event) -> None:
        while not stop.is_set():
            # A failed round is logged as a JSON line; readiness is off until one succeeds.
            with contextlib.suppress(GpuplaneError):
                await asyncio.to_thread(controller.round)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=interval_s)

    await serve_app(
        _app(controller), host, port, stop=stop, on_listening=on_listening, background=rounds
    )
