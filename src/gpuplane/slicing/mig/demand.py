"""Demand for MIG instances: from a ``profile=count,...`` string or from pods' requests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from gpuplane.core.errors import InputError
from gpuplane.slicing.mig.profiles import MigGpu

_ITEM = re.compile(r"^\s*([^=\s]+)\s*=\s*(-?\d+)\s*$")


def _profile_name(models: Sequence[MigGpu], name: str, flag: str) -> str:
    for model in models:
        found = model.find_profile(name)
        if found is not None:
            return found.name
    valid = sorted({p.name for m in models for p in m.profiles})
    on = ", ".join(m.name for m in models)
    raise InputError(
        f"{flag}: profile {name!r} does not exist on {on}",
        expected=f"one of {', '.join(valid)}",
    )


def parse_demand(text: str, models: Sequence[MigGpu], *, flag: str = "--demand") -> dict[str, int]:
    """``'1g.10gb=7, 3g.40gb=2'`` -> ``{'1g.10gb': 7, '3g.40gb': 2}``. An empty string is no
    demand. Profile names are checked against ``models`` (``+me`` may be written ``.me``)."""
    out: dict[str, int] = {}
    if not text.strip():
        return out
    for item in text.split(","):
        match = _ITEM.match(item)
        if match is None:
            raise InputError(
                f"{flag}: {item.strip()!r} is not PROFILE=COUNT",
                expected="comma-separated PROFILE=COUNT items, e.g. '1g.10gb=7,3g.40gb=2'",
            )
        name = _profile_name(models, match.group(1), flag)
        count = int(match.group(2))
        if count < 0:
            raise InputError(f"{flag}: count {count} for {name}", expected="a count >= 0")
        if name in out:
            raise InputError(f"{flag}: profile {name} is named twice", expected="each profile once")
        out[name] = count
    return out


def demand_from_requests(requests: Iterable[str], models: Sequence[MigGpu]) -> dict[str, int]:
    """Pending pods' MIG requests (``nvidia.com/mig-3g.40gb``, ``mig-1g.10gb.me`` or a profile
    name), one instance each, counted per profile."""
    out: dict[str, int] = {}
    for request in requests:
        name = _profile_name(models, request, "request")
        out[name] = out.get(name, 0) + 1
    return out
