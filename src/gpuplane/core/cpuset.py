"""Linux cpu-list syntax (``0-55,112-167``) as sysfs and ``nvidia-smi topo -m`` print it."""

from __future__ import annotations

import re

from gpuplane.core.errors import InputError

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """Parse ``"0-3,8,10-11"`` into sorted unique ids; raise InputError on anything else."""
    text = text.strip()
    if not text:
        return ()
    ids: set[int] = set()
    for part in text.split(","):
        m = _RANGE.match(part.strip())
        if m is None:
            raise InputError(
                f"{part.strip()!r} in {text!r} is not a number or range",
                expected="a list like 0-55,112-167",
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise InputError(
                f"range {part.strip()!r} in {text!r} runs backwards", expected="lo-hi with lo <= hi"
            )
        ids.update(range(lo, hi + 1))
    return tuple(sorted(ids))


def format_cpu_list(ids: tuple[int, ...] | list[int]) -> str:
    """The inverse of :func:`parse_cpu_list`: compress ids into ranges."""
    out: list[str] = []
    sorted_ids = sorted(set(ids))
    i = 0
    while i < len(sorted_ids):
        j = i
        while j + 1 < len(sorted_ids) and sorted_ids[j + 1] == sorted_ids[j] + 1:
            j += 1
        out.append(str(sorted_ids[i]) if i == j else f"{sorted_ids[i]}-{sorted_ids[j]}")
        i = j + 1
    return ",".join(out)
