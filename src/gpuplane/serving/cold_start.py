"""A serving replica's cold start: image pull (once per node and image) + weight loading
(weights per GPU / storage bandwidth) + engine start-up (CUDA context, profiling run, CUDA graph
capture).

A value of the serving layer, so the twin's serving runtime, the SLO scaler's configuration and
the live services (the engine emulator, ``deploy render serving``) read the same defaults.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ColdStart:
    image_pull_s: float = 60.0  # a ~10 GB serving image at ~170 MB/s, once per node
    storage_gbps: float = 2.0  # weight loading from a local NVMe / cache volume, GB/s per pod
    init_s: float = 45.0  # CUDA init, memory profiling, CUDA graph capture
