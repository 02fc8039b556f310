"""Field types shared by the scenario's sections."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError


def _seconds(value: object) -> float:
    try:
        return parse_duration_s(value)
    except InputError as err:
        raise ValueError(err.render()) from None


Seconds = Annotated[float, BeforeValidator(_seconds)]
"""A duration: seconds as a number, or text such as ``30s``, ``5m``, ``1h30m``."""
