"""Which resource pools a node can allocate from (the allocator's GatherPools).

Following kubernetes ``dynamic-resource-allocation/structured`` (the 1.36 pool gathering):

- A slice is relevant when it carries shared counters (always needed to use its pool) or when
  its node selection (``nodeName``, ``allNodes``, ``nodeSelector``, or any device's own
  selection under ``perDeviceNodeSelection``) admits the node. A slice with none of these is
  skipped as an unknown future extension.
- Per pool only the highest generation among the relevant slices counts; older slices are
  ignored silently.
- The pool is complete when it has ``resourceSliceCount`` slices of that generation. If the
  relevant slices alone fall short, all slices of the pool are examined: a newer generation
  elsewhere means the driver is replacing the pool, which is then ignored; too few slices in
  total make the pool *incomplete* (ExactCount requests skip it, ``All`` requests fail).
- A complete pool is *invalid* when device names repeat, a counter set name repeats, a device
  consumes from an unknown counter set or counter, or (kubernetes #141117, fixed after 1.36;
  gpuplane takes the fix for determinism) its slices disagree on ``resourceSliceCount``.
- Pools are ordered by driver and pool name and the device slices of a pool by slice name
  (kubernetes #136641), so the first-fit search is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gpuplane.slicing.dra.devices import CounterSet, Device, ResourceSlice
from gpuplane.slicing.dra.node_selector import DraNode


@dataclass(frozen=True, slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    # Device slices the node may allocate from, sorted by slice name.
    slices: tuple[ResourceSlice, ...] = ()
    # Device slices of the same generation that do not target the node (their allocated
    # devices still consume the pool's counters).
    other_slices: tuple[ResourceSlice, ...] = ()
    counter_sets: Mapping[str, CounterSet] = field(default_factory=dict)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def device_targets(device: Device, node: DraNode) -> bool:
    if device.node_name:
        return device.node_name == node.name
    if device.all_nodes:
        return True
    return device.node_selector is not None and device.node_selector.matches(node)


def slice_targets(rslice: ResourceSlice, node: DraNode) -> bool:
    spec = rslice.spec
    if spec.node_name:
        return spec.node_name == node.name
    if spec.all_nodes:
        return True
    if spec.node_selector is not None:
        return spec.node_selector.matches(node)
    if spec.per_device_node_selection:
        return any(device_targets(d, node) for d in spec.devices)
    return False


def _relevant(
    slices: Iterable[ResourceSlice], node: DraNode
) -> dict[tuple[str, str], list[ResourceSlice]]:
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for rslice in slices:
        if not (rslice.spec.shared_counters or slice_targets(rslice, node)):
            continue
        key = (rslice.spec.driver, rslice.spec.pool.name)
        current = pools.get(key)
        gen = rslice.spec.pool.generation
        if current is None or gen > current[0].spec.pool.generation:
            pools[key] = [rslice]
        elif gen == current[0].spec.pool.generation:
            current.append(rslice)
    return pools


def gather_pools(slices: Sequence[ResourceSlice], node: DraNode) -> tuple[Pool, ...]:
    """The pools ``node`` can use, each marked incomplete or invalid where it is."""
    out: list[Pool] = []
    for (driver, name), relevant in sorted(_relevant(slices, node).items()):
        gen = relevant[0].spec.pool.generation
        same_pool = [s for s in slices if s.spec.driver == driver and s.spec.pool.name == name]
        at_gen = [s for s in same_pool if s.spec.pool.generation == gen]
        counts = {s.spec.pool.resource_slice_count for s in at_gen}
        if len(relevant) != relevant[0].spec.pool.resource_slice_count:
            if any(s.spec.pool.generation > gen for s in same_pool):
                continue  # being replaced by a newer generation
            if len(counts) == 1 and len(at_gen) != relevant[0].spec.pool.resource_slice_count:
                out.append(Pool(driver, name, gen, incomplete=True))
                continue
        if len(counts) > 1:
            reason = "the slices of the pool disagree on resourceSliceCount"
            out.append(Pool(driver, name, gen, invalid=True, invalid_reason=reason))
            continue
        out.append(_build(driver, name, gen, relevant, at_gen))
    return tuple(out)


def _build(
    driver: str,
    name: str,
    gen: int,
    relevant: list[ResourceSlice],
    at_gen: list[ResourceSlice],
) -> Pool:
    device_slices = sorted((s for s in relevant if not s.spec.shared_counters), key=_by_name)
    counter_slices = [s for s in relevant if s.spec.shared_counters]
    taken = {id(s) for s in relevant}
    others = sorted(
        (s for s in at_gen if id(s) not in taken and not s.spec.shared_counters), key=_by_name
    )
    reason = _duplicate_device(device_slices)
    sets: dict[str, CounterSet] = {}
    for rslice in counter_slices:
        for cset in rslice.spec.shared_counters:
            if cset.name in sets and not reason:
                reason = f"duplicate counter set name {cset.name}"
            sets[cset.name] = cset
    reason = reason or _bad_consumption(sets, [*device_slices, *others])
    if reason:
        return Pool(driver, name, gen, invalid=True, invalid_reason=reason)
    return Pool(
        driver,
        name,
        gen,
        slices=tuple(device_slices),
        other_slices=tuple(others),
        counter_sets=sets,
    )


def _by_name(rslice: ResourceSlice) -> str:
    return rslice.name


def _duplicate_device(slices: Sequence[ResourceSlice]) -> str:
    seen: set[str] = set()
    for rslice in slices:
        for device in rslice.spec.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _bad_consumption(sets: Mapping[str, CounterSet], slices: Sequence[ResourceSlice]) -> str:
    for rslice in slices:
        for device in rslice.spec.devices:
            for use in device.consumes_counters:
                cset = sets.get(use.counter_set)
                if cset is None:
                    return f"counter set {use.counter_set} not found"
                for counter in use.counters:
                    if counter not in cset.counters:
                        return f"counter {counter} not found in counter set {cset.name}"
    return ""
