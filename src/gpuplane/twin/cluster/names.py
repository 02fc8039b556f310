"""Object names and uids, deterministic per run.

Kubernetes appends five random characters from a vowel-free alphabet to ``generateName``
(apimachinery ``util/rand.String``); the twin draws them from the run's ``names`` RNG stream, so
names look real and repeat exactly for the same seed. Uids are sequential per run.
"""

from __future__ import annotations

import numpy as np

# apimachinery util/rand: no vowels (avoid words) and no confusable 0/1/3.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class NameFactory:
    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._used: set[str] = set()
        self._uid = 0

    def suffix(self, length: int = 5) -> str:
        idx = self._rng.integers(0, len(_ALPHABET), size=length)
        return "".join(_ALPHABET[i] for i in idx)

    def generate(self, prefix: str) -> str:
        """``prefix`` + a 5-character suffix, unique in this run (``generateName`` semantics)."""
        while True:
            name = f"{prefix}{self.suffix()}"
            if name not in self._used:
                self._used.add(name)
                return name

    def reserve(self, name: str) -> bool:
        """Claim an explicit name; False if it is already taken."""
        if name in self._used:
            return False
        self._used.add(name)
        return True

    def uid(self) -> str:
        self._uid += 1
        return f"uid-{self._uid:08d}"
