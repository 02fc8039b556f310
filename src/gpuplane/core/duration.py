"""Durations as users write them (``90``, ``"30s"``, ``"5m"``, ``"1h30m"``, ``"2d"``) -> seconds."""

from __future__ import annotations

import re

from gpuplane.core.errors import InputError

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
EXPECTED = "a number of seconds or a duration like 90s, 5m, 1h30m, 2d"


def parse_duration_s(value: object) -> float:
    """Seconds in ``value``; InputError (no location) for anything else or a negative value."""
    if isinstance(value, bool):
        raise InputError(f"{value!r} is not a duration", expected=EXPECTED)
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        else:
            parts = _PART.findall(text)
            if not parts or "".join(n + u for n, u in parts) != text:
                raise InputError(f"{value!r} is not a duration", expected=EXPECTED)
            seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    else:
        raise InputError(f"{value!r} is not a duration", expected=EXPECTED)
    if seconds < 0 or seconds != seconds or seconds == float("inf"):
        raise InputError(f"{value!r} is not a finite duration >= 0", expected=EXPECTED)
    return seconds


def format_duration(seconds: float) -> str:
    """Compact human form: ``3725`` -> ``1h2m5s``."""
    if seconds < 60:
        return f"{seconds:g}s"
    rest = round(seconds)
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if rest >= size:
            out += f"{rest // size}{unit}"
            rest %= size
    return out
