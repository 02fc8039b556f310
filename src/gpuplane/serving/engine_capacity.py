"""A replica's capacity figures in the SLO scaler's terms, read off one built engine.

The figures are the serving layer's (they come from its step-time model and memory plan); the
SLO scaler's model takes them through ``autoscaler.slo.analytic.AnalyticCapacity.from_figures``,
so neither sibling imports the other. The twin's serving runtime
(``ServingRuntime.capacity_model``) and ``deploy render serving`` (the trigger's metadata) fit the
same engine the same way.

``AnalyticCapacity`` needs a few figures of one replica: what a prompt's
tokens add to a step, the decode step time of an empty batch and its growth per KV token read,
the KV capacity and the engine's batch limits. They are read off the calibrated step-time model
(``RooflineStepTime``) and vLLM's memory plan of the engines the twin actually built:

- prefill: the time a chunk adds to a one-sequence decode step at 1k and 4k tokens and at the
  full ``max_num_batched_tokens``, fitted by least squares as ``P / tps + q·P²`` (the linear
  part is the weights' matmuls, the square attention over the chunk);
- decode: the step over 64 sequences at two context lengths gives the cost per resident KV
  token, against a one-sequence step the cost of each sequence's own work, and the rest is the
  base (the weights read once per step);
- limits: ``max_num_seqs``, ``max_num_batched_tokens`` and the KV cache in tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.memory.budget import MemoryPlan
from gpuplane.serving.steptime.model import RooflineStepTime

_PROMPTS = (1024, 4096)
_CONTEXT = (128,)


@dataclass(frozen=True, slots=True)
class EngineCapacity:
    """One replica's figures, named as ``AnalyticCapacity``'s fields (which documents them)."""

    prefill_tokens_per_s: float
    decode_base_step_s: float
    decode_step_per_kv_token_s: float
    decode_step_per_seq_s: float
    max_num_seqs: int
    kv_capacity_tokens: float
    # The SLO scaler's allowance for ITL tails above the mean step this fit gives.
    itl_tail_factor: float
    max_num_batched_tokens: int
    prefill_s_per_token_squared: float


def _added_by_prefill(model: RooflineStepTime, tokens: int) -> float:
    with_chunk = BatchShape(prefills=(PrefillChunk(tokens, 0),), decode_contexts=_CONTEXT)
    alone = model.step_time(BatchShape(decode_contexts=_CONTEXT)).total_s
    return model.step_time(with_chunk).total_s - alone


def prefill_fit(model: RooflineStepTime, budget: int) -> tuple[float, float]:
    """(seconds per prompt token, seconds per prompt token squared), least squares through
    the origin over chunk sizes up to ``budget`` (the square term dropped if it comes out
    negative)."""
    sizes = sorted({min(p, budget) for p in _PROMPTS} | {budget})
    k = np.array(sizes, dtype=np.float64)
    t = np.array([_added_by_prefill(model, int(s)) for s in sizes])
    if len(sizes) >= 2:
        linear, square = np.linalg.lstsq(np.vstack([k, k * k]).T, t, rcond=None)[0]
        if square >= 0 and linear > 0:
            return float(linear), float(square)
    return float(np.dot(k, t) / np.dot(k, k)), 0.0


def capacity_from_engine(model: RooflineStepTime, plan: MemoryPlan) -> EngineCapacity:
    per_token, per_token_sq = prefill_fit(model, max(plan.max_num_batched_tokens, 1))
    one = model.step_time(BatchShape(decode_contexts=_CONTEXT)).total_s
    batch = 64
    lo = model.step_time(BatchShape(decode_contexts=(1024,) * batch)).total_s
    hi = model.step_time(BatchShape(decode_contexts=(4096,) * batch)).total_s
    per_kv_token = max((hi - lo) / (batch * (4096 - 1024)), 0.0)
    per_seq = max((lo - one - per_kv_token * (batch * 1024 - _CONTEXT[0])) / (batch - 1), 0.0)
    base = max(one - per_seq - per_kv_token * _CONTEXT[0], 1e-5)
    return EngineCapacity(
        prefill_tokens_per_s=1.0 / max(per_token, 1e-12),
        decode_base_step_s=base,
        decode_step_per_kv_token_s=per_kv_token,
        decode_step_per_seq_s=per_seq,
        max_num_seqs=plan.max_num_seqs,
        kv_capacity_tokens=float(plan.num_gpu_blocks * plan.block_size),
        itl_tail_factor=1.5,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        prefill_s_per_token_squared=per_token_sq,
    )
