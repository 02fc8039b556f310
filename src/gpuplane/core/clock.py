"""The clock seam: decisions never read the wall clock; the twin and live adapters pass time in."""

from __future__ import annotations

from typing import Protocol


class Clock(Protocol):
    def now_s(self) -> float:
        """Seconds since the start of the run (twin) or since the epoch (live)."""
        ...


class FixedClock:
    """A clock that reads a time set by its owner (the twin's event loop, or a test)."""

    def __init__(self, t_s: float = 0.0) -> None:
        self.t_s = t_s

    def now_s(self) -> float:
        return self.t_s
