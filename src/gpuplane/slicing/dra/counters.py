"""Shared counters of partitionable devices (KEP 4815, ``DRAPartitionableDevices``, beta and on
by default in Kubernetes 1.36).

A pool's counter sets say how much of each counter exists (for a MIG-capable GPU: its memory,
its multiprocessors and one counter per memory slice). Each partition consumes part of them, so
allocating the full GPU takes everything and allocating ``3g.40gb`` at memory slices 0-3 leaves
slices 4-7 for the other partitions; two partitions over the same memory slice can never both be
allocated. What is available is the counter sets minus what the already-allocated devices of the
pool consume (all of its slices, also those not visible to the node); what the search is trying
is added on top and taken back when it backtracks. As the allocator does, a device fits only if,
after adding it, no counter of any set of its pool is over its value.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from fractions import Fraction

from gpuplane.slicing.dra.devices import Device, DeviceID
from gpuplane.slicing.dra.pools import Pool

Counts = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount


class CounterTracker:
    def __init__(self, allocated: AbstractSet[DeviceID]) -> None:
        self.allocated = allocated
        self._available: dict[str, Counts] = {}
        self._consumed: dict[str, Counts] = {}

    def available(self, pool: Pool) -> Counts:
        key = pool.pool_id
        if key not in self._available:
            counts: Counts = {
                name: {c: q.value for c, q in cset.counters.items()}
                for name, cset in pool.counter_sets.items()
            }
            for rslice in (*pool.slices, *pool.other_slices):
                for device in rslice.spec.devices:
                    if rslice.device_id(device) in self.allocated:
                        _apply(counts, device, -1)
            self._available[key] = counts
        return self._available[key]

    def try_consume(self, pool: Pool, device: Device) -> bool:
        available = self.available(pool)
        consumed = self._consumed.setdefault(pool.pool_id, {})
        _apply(consumed, device, 1)
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            if any(value < used.get(name, 0) for name, value in counters.items()):
                _apply(consumed, device, -1)
                return False
        return True

    def release(self, pool: Pool, device: Device) -> None:
        _apply(self._consumed.setdefault(pool.pool_id, {}), device, -1)


def _apply(counts: Counts, device: Device, sign: int) -> None:
    for use in device.consumes_counters:
        target = counts.setdefault(use.counter_set, {})
        for name, quantity in use.counters.items():
            target[name] = target.get(name, Fraction(0)) + sign * quantity.value
