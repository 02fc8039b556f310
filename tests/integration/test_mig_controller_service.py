"""The controller as a service on loopback: /healthz, /readyz after a round, /metrics, stop."""

from __future__ import annotations

import asyncio
import threading
import urllib.request

import pytest

from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.live.migctl.round import ConfigMapTarget, RoundInputs
from gpuplane.live.migctl.service import Controller, serve
from gpuplane.slicing.mig.controller_types import ControlSettings
from tests.integration.waiting import PATIENCE_S, wait_until

pytestmark = pytest.mark.integration


def _inputs() -> RoundInputs:
    snap = ClusterSnapshot("test", "2026-01-01T00:00:00Z", None, {}, (), {})
    return RoundInputs(snap, (), None)


def test_service_answers_and_stops() -> None:
    lines: list[str] = []
    controller = Controller(
        _inputs,
        ControlSettings(),
        NodeDefaults(),
        ConfigMapTarget(),
        None,
        lambda: "2026-01-01T00:00:00Z",
        lines.append,
    )
    ports: list[int] = []
    listening = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def on_listening(port: int) -> None:
        ports.append(port)
        listening.set()

    async def main() -> None:
        await serve(
            controller,
            interval_s=0.05,
            host="127.0.0.1",
            port=0,
            stop=stop,
            on_listening=on_listening,
        )

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()))
    thread.start()
    try:
        assert listening.wait(PATIENCE_S)
        base = f"http://127.0.0.1:{ports[0]}"
        with urllib.request.urlopen(f"{base}/healthz", timeout=5) as r:
            assert r.status == 200
        wait_until(lambda: controller.ready, "the controller ready")
        with urllib.request.urlopen(f"{base}/readyz", timeout=5) as r:
            assert r.status == 200
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as r:
            text = r.read().decode()
        assert "gpuplane_mig_controller_rounds_total" in text
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        loop.close()
    assert not thread.is_alive()
    assert lines and '"action": "round"' in lines[0]
