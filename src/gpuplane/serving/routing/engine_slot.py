"""An engine as the request path holds it: its role, readiness, and the router's cached view."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.routing.dispatch import EngineState
from gpuplane.serving.routing.router import EngineView, Role


@dataclass(slots=True)
class EngineSlot:
    engine: Engine
    role: Role
    ready: bool = False
    accepting: bool = True
    draining: bool = False
    outstanding: int = 0
    wake_s: float = math.inf
    # The engine as the router last saw it (request-independent fields), and the engine's
    # state_version then: reused while neither the engine nor ``outstanding`` changed and no
    # decode step started since (one that did would take its KV blocks).
    view: EngineView | None = None
    view_version: int = -1
    view_due: float = math.inf  # the view stays valid for t <= view_due
    # ``view`` as the dispatcher takes it (ready, with this engine's role and context), reused
    # with the view for every request the engine holds none of.
    state: EngineState | None = None

    @property
    def routable(self) -> bool:
        return self.ready and self.accepting
