"""The one list of router names: name -> factory (the CLI, scenario checks and benches use it).

A lookup of a name that is not here fails with the valid names, as a scheduler profile's plugin
lookup does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from gpuplane.core.errors import InputError
from gpuplane.serving.routing.basic import LeastOutstandingRouter, RoundRobinRouter
from gpuplane.serving.routing.router import Router
from gpuplane.serving.routing.scorers import KvCostRouter, WeightedScorerRouter
from gpuplane.serving.routing.session_affinity import SessionAffinityRouter

# The names as a type, for the scenario file's schema (its error message lists them).
RouterName = Literal["llm-d", "round-robin", "least-outstanding", "session-affinity", "kv-cost"]
ROUTER_NAMES: tuple[RouterName, ...] = get_args(RouterName)

# Keyed by str: a lookup takes any user text and answers with the valid names.
_FACTORIES: dict[str, Callable[[], Router]] = {
    "llm-d": WeightedScorerRouter,
    "round-robin": RoundRobinRouter,
    "least-outstanding": LeastOutstandingRouter,
    "session-affinity": SessionAffinityRouter,
    "kv-cost": KvCostRouter,
}

if tuple(_FACTORIES) != ROUTER_NAMES:
    raise AssertionError("every router name has one factory, in the order of RouterName")


def make_router(name: str) -> Router:
    """A new router of this name (``llm-d`` is the weighted-scorer endpoint picker)."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise InputError(f"unknown router {name!r}; valid routers: {', '.join(ROUTER_NAMES)}")
    return factory()
