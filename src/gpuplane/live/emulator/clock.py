"""The emulator's clock: emulated seconds since start, ``scale`` times faster than the wall."""

from __future__ import annotations

import time


class ScaledClock:
    """A :class:`~gpuplane.core.clock.Clock` on ``time.monotonic`` (mutable only at start)."""

    def __init__(self, scale: float = 1.0) -> None:
        if scale <= 0:
            raise ValueError(f"time scale {scale} must be > 0")
        self.scale = scale
        self.origin = time.monotonic()

    def now_s(self) -> float:
        return (time.monotonic() - self.origin) * self.scale

    def wall_delay_s(self, t_s: float) -> float:
        """Wall seconds until the clock reads ``t_s`` (0 when it already has)."""
        return max(0.0, (t_s - self.now_s()) / self.scale)
