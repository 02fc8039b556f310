"""What a serving run is configured with (router queue, reroutes, scrapes, seed, P/D split)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.serving.routing.pd import PDSettings

DEFAULT_PD = PDSettings()


@dataclass(frozen=True)
class SimulationSettings:
    router_queue_limit: int = 0  # requests held while no engine is ready (0: reject at once)
    max_reroutes: int = 3
    scrape_interval_s: float | None = None  # record every engine's /metrics this often
    seed: int = 0
    pd: PDSettings = DEFAULT_PD
