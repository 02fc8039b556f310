"""Routers as the ``Router`` protocol, for tests that hand one to ``ServingSimulation``."""

from __future__ import annotations

from typing import cast

from gpuplane.serving.routing.router import Router


def as_router(router: object) -> Router:
    """``router`` typed as a ``Router``.

    The protocol declares ``name`` and ``needs`` as settable attributes while the routers are
    frozen dataclasses, so mypy will not match them structurally; ``twin.serving.runtime``'s
    ``make_router`` casts the same way.
    """
    return cast(Router, router)
