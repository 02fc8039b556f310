"""The NVIDIA device plugin's strategy names (k8s-device-plugin ``api/config/v1``).

``MigStrategy``: how MIG devices are advertised (``none``: whole GPUs only; ``single``: every MIG
device as ``nvidia.com/gpu``; ``mixed``: one ``nvidia.com/mig-<profile>`` resource per profile);
the GPU Operator's ClusterPolicy ``mig.strategy`` takes the same names. ``SharingStrategy``: the
value of the ``nvidia.com/gpu.sharing-strategy`` label (``none``, ``time-slicing``, ``mps``).
"""

from __future__ import annotations

from enum import StrEnum


class MigStrategy(StrEnum):
    NONE = "none"
    SINGLE = "single"
    MIXED = "mixed"


class SharingStrategy(StrEnum):
    NONE = "none"
    TIME_SLICING = "time-slicing"
    MPS = "mps"
