"""One validator for gpuplane's own numeric options: finite, and within the option's bounds.

The option parser takes ``nan``, ``inf`` and ``1e999`` as floats, and NaN passes every ``min=``
and ``max=`` comparison; a NaN then reaches the models as "nan ms", an infinity as an
OverflowError or a ValueError deep in a computation. Every float option is declared with
``callback=finite(...)``: the error names the option and exits with 2, without a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import typer

from gpuplane.core.errors import InputError, Location


def _name(param: typer.CallbackParam) -> str:
    opts = [o for o in param.opts if o.startswith("--")] or list(param.opts) or [param.name or ""]
    return opts[0]


def finite(
    *, minimum: float | None = None, above: float | None = None, maximum: float | None = None
) -> Callable[[typer.CallbackParam, float | None], float | None]:
    """A callback refusing NaN, the infinities, values below ``minimum``, at or below ``above``,
    or above ``maximum``; None (an option not given) passes."""

    def check(param: typer.CallbackParam, value: float | None) -> float | None:
        if value is None:
            return None
        name = _name(param)
        bounds = []
        if minimum is not None:
            bounds.append(f">= {minimum:.12g}")
        if above is not None:
            bounds.append(f"> {above:.12g}")
        if maximum is not None:
            bounds.append(f"<= {maximum:.12g}")
        expected = "a finite number" + (f" {' and '.join(bounds)}" if bounds else "")
        bad = (
            not math.isfinite(value)
            or (minimum is not None and value < minimum)
            or (above is not None and value <= above)
            or (maximum is not None and value > maximum)
        )
        if bad:
            raise InputError(
                f"{value:.12g} is out of range",
                expected=f"{expected} for {name}",
                location=Location(field=name),
            )
        return value

    return check
