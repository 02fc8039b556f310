"""Property checks of the allocator on small random inputs: what it returns is valid, it is
deterministic, and (being an exhaustive search) it finds a solution whenever one exists."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.devices import Device
from gpuplane.slicing.dra.outcome import OutcomeKind
from tests.unit.slicing.test_dra_support import DRIVER, claim, dev, match, req, rslice, run

KIND = 'device.attributes["gpu.nvidia.com"].kind == "{}"'


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Device], list[ResourceClaim], list[str]]:
    n = draw(st.integers(1, 5))
    devices = [
        dev(f"d{i}", kind=draw(st.sampled_from("ab")), numa=draw(st.integers(0, 1)))
        for i in range(n)
    ]
    claims = []
    for c in range(draw(st.integers(1, 2))):
        requests = [
            req(
                f"r{r}",
                draw(st.integers(1, 2)),
                selectors=[KIND.format(k)] if (k := draw(st.sampled_from(["", "a", "b"]))) else [],
            )
            for r in range(draw(st.integers(1, 2)))
        ]
        constraints = [match(f"{DRIVER}/numa")] if draw(st.booleans()) else []
        claims.append(claim(f"c{c}", *requests, constraints=constraints))
    taken = draw(st.lists(st.sampled_from([d.name for d in devices]), max_size=2, unique=True))
    return devices, claims, taken


def _slots(claims: list[ResourceClaim]) -> list[tuple[int, str | None]]:
    """(claim index, required kind) for every device the claims need."""
    out = []
    for ci, c in enumerate(claims):
        for r in c.spec.devices.requests:
            assert r.exactly is not None
            kind = r.exactly.selectors[0].split('"')[-2] if r.exactly.selectors else None
            out += [(ci, kind)] * r.exactly.count
    return out


def _feasible(devices: list[Device], claims: list[ResourceClaim], taken: list[str]) -> bool:
    free = [d for d in devices if d.name not in taken]
    slots = _slots(claims)
    for pick in itertools.permutations(free, len(slots)):
        if any(
            k is not None and d.attributes["kind"] != k
            for (_, k), d in zip(slots, pick, strict=True)
        ):
            continue
        ok = True
        for ci, c in enumerate(claims):
            if c.spec.devices.constraints:
                mine = {
                    d.attributes["numa"] for (i, _), d in zip(slots, pick, strict=True) if i == ci
                }
                ok = ok and len(mine) <= 1
        if ok:
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_allocator_is_valid_deterministic_and_complete(
    case: tuple[list[Device], list[ResourceClaim], list[str]],
) -> None:
    devices, claims, taken = case
    slices = [rslice("s", devices)]
    out = run(claims, slices, allocated=[("n0", t) for t in taken])
    assert out == run(claims, slices, allocated=[("n0", t) for t in taken])
    assert out.kind in (OutcomeKind.ALLOCATED, OutcomeKind.NO_SOLUTION)
    assert out.ok == _feasible(devices, claims, taken)
    if not out.ok:
        return
    by_name = {d.name: d for d in devices}
    used = [r.device for a in out.results for r in a.devices.results]
    assert len(used) == len(set(used)) == len(_slots(claims))
    assert not set(used) & set(taken)
    for c, allocation in zip(claims, out.results, strict=True):
        numas = {by_name[r.device].attributes["numa"] for r in allocation.devices.results}
        assert len(numas) == 1 or not c.spec.devices.constraints
