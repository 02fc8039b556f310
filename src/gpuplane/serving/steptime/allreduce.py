"""Time of a ring all-reduce over a tensor-parallel group's slowest link."""

from __future__ import annotations

from gpuplane.serving.steptime.calibration import CollectiveParams
from gpuplane.serving.steptime.opcost import Value


def allreduce_s(
    params: CollectiveParams, num_gpus: Value, bottleneck_gbps: Value, message_bytes: Value
) -> Value:
    """Ring all-reduce of ``S`` bytes per GPU over ``n`` GPUs: ``2(n-1)`` steps, each sending
    ``S/n`` bytes through the slowest hop (at ``bw_eff`` of its nominal bandwidth), plus a fixed
    latency and a per-step latency. Works on numbers or numpy arrays."""
    steps = 2 * (num_gpus - 1)
    wire = steps / num_gpus * message_bytes / (params.bw_eff * bottleneck_gbps * 1e9)
    return params.latency_s + params.hop_latency_s * steps + wire
