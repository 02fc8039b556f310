"""Named, seeded random streams: one ``numpy.random.Generator`` per name, all from one seed.

A stream's sequence depends only on (seed, name), never on which other streams exist or in which
order they were first asked for, so adding a new random consumer does not shift existing ones.
"""

from __future__ import annotations

import zlib

import numpy as np


class RngStreams:
    """Owner of the run's random generators (mutable: each generator advances as it is used)."""

    def __init__(self, seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        self.seed = seed
        self._streams: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> np.random.Generator:
        gen = self._streams.get(name)
        if gen is None:
            key = zlib.crc32(name.encode("utf-8"))
            gen = np.random.default_rng(np.random.SeedSequence([self.seed, key]))
            self._streams[name] = gen
        return gen
