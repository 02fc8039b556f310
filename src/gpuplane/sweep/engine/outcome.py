"""What a worker sends back for one point, and the function every worker runs."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from gpuplane.core.errors import InputError
from gpuplane.sweep.engine.base import SweepBase
from gpuplane.sweep.engine.point import Cell, Point


@dataclass(frozen=True, slots=True)
class Outcome:
    """A point's figures, or why it failed: ``input_error`` for a user's mistake found only when
    the point ran (the message then says where), else the worker's traceback."""

    point: Point
    figures: dict[str, Cell] | None
    error: str | None = None
    input_error: bool = False


def evaluate_point(base: SweepBase, figures: tuple[str, ...], point: Point) -> Outcome:
    """Run one point; never raises, so one bad point is reported rather than lost in a pool."""
    try:
        return Outcome(point, base.evaluate(point, figures))
    except InputError as exc:
        return Outcome(point, None, exc.render(), input_error=True)
    except Exception:
        return Outcome(point, None, traceback.format_exc())
