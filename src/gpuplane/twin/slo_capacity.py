"""The SLO scaler's per-replica capacity, from the serving engine model of the service's pods.

``autoscaler.slo.analytic.AnalyticCapacity`` needs four figures of one replica: prefill
throughput, the decode step time of an empty batch and its growth per KV token read, and the KV
capacity. They are read off the calibrated step-time model (``RooflineStepTime``) and vLLM's
memory plan of the engines the twin actually built: prefill throughput from a full
``max_num_batched_tokens`` chunk, the decode line from two batch shapes.
"""

from __future__ import annotations

from gpuplane.autoscaler.slo.analytic import AnalyticCapacity
from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.memory.budget import MemoryPlan
from gpuplane.serving.steptime.model import RooflineStepTime


def capacity_from_engine(model: RooflineStepTime, plan: MemoryPlan) -> AnalyticCapacity:
    chunk = max(plan.max_num_batched_tokens, 512)
    prefill = model.step_time(BatchShape(prefills=(PrefillChunk(chunk, 0),))).total_s
    small = model.step_time(BatchShape(decode_contexts=(128,))).total_s
    batch = 64
    short = model.step_time(BatchShape(decode_contexts=(1024,) * batch)).total_s
    long = model.step_time(BatchShape(decode_contexts=(4096,) * batch)).total_s
    per_kv_token = max((long - short) / (batch * (4096 - 1024)), 0.0)
    base = max(small - per_kv_token * 128, 1e-5)
    kv_tokens = plan.num_gpu_blocks * plan.block_size
    return AnalyticCapacity(
        prefill_tokens_per_s=chunk / prefill,
        decode_base_step_s=base,
        decode_step_per_kv_token_s=per_kv_token,
        max_num_seqs=plan.max_num_seqs,
        kv_capacity_tokens=float(kv_tokens),
        itl_tail_factor=1.5,
    )
