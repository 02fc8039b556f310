"""The roofline step time without building a breakdown: the same arithmetic, a fraction of the cost.

An engine simulation asks for a step time about once per request and per decode run, so the
cost of ``RooflineStepTime.breakdown`` (a dataclass per operator, enum lookups, a roofline per
kernel) dominated a long run. Most of a step depends only on how many tokens it computes
(embedding, norms, projections, rotary, MLP, residual add, all-reduce) or how many requests it
samples (LM head); only attention depends on the contexts. So the per-operator totals of the
token-count parts are priced once per count, by the reference code itself, and kept; a step then
prices its attention kernels inline and sums the columns.

Every float operation is the reference's, in the reference's order (the same sums over the same
sequence of operator totals, the same roofline expressions), so results are bit-identical to
``breakdown(batch).step_time()`` and to the reference ``decode_run_times``; tests check it on
random batches across models, GPUs and TP degrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpuplane.serving.batch import BatchShape, StepTime
from gpuplane.serving.steptime.breakdown import StepBreakdown
from gpuplane.serving.steptime.opcost import OpParams, combine
from gpuplane.serving.steptime.operators import Op

if TYPE_CHECKING:
    from gpuplane.serving.steptime.model import RooflineStepTime

MAX_CACHED_COUNTS = 1 << 15
"""Token and request counts priced and kept per model (a few hundred bytes each)."""

SCALAR_RUN_STEPS = 64
"""Decode runs up to this many steps are priced with Python floats; longer ones with numpy
(the same IEEE operations either way)."""

Cols = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class _Parts:
    """Per-operator totals of one group of operators, as four columns in breakdown order."""

    compute: Cols
    memory: Cols
    communication: Cols
    fixed: Cols

    @classmethod
    def of(cls, out: StepBreakdown) -> _Parts:
        ops = out.operators.values()
        return cls(
            tuple(o.compute_s for o in ops),
            tuple(o.memory_s for o in ops),
            tuple(o.communication_s for o in ops),
            tuple(o.fixed_s for o in ops),
        )


class _Kernel:
    """One attention kernel's calibrated roofline, with its denominators resolved."""

    __slots__ = (
        "causal_div",
        "compute_div",
        "fixed_s",
        "fixed_sharpness",
        "inverse_sharp",
        "memory_div",
        "sharp",
    )

    def __init__(self, params: OpParams, peak: float, hbm: float) -> None:
        self.compute_div = peak * params.mfu
        causal = params.mfu_causal if params.mfu_causal is not None else params.mfu
        self.causal_div = peak * causal
        self.memory_div = hbm * params.bw_eff
        self.sharp = params.sharpness
        self.inverse_sharp = 1.0 if params.sharpness is None else 1 / params.sharpness
        self.fixed_s = params.fixed_s
        self.fixed_sharpness = params.fixed_sharpness

    def totals(self, flops: float, moved: float, causal: float, count: int) -> Cols:
        """``opcost.op_time`` then ``StepBreakdown.add`` for ``count`` kernels: the operator's
        (compute, memory, communication, fixed) totals."""
        compute = flops / self.compute_div
        if causal != 0.0:
            compute = compute + causal / self.causal_div
        memory = moved / self.memory_div
        peak = memory if memory > compute else compute  # max(compute, memory)
        sharp = self.sharp
        if sharp is None or peak <= 0:
            core = peak
        else:  # opcost.combine's p-norm, the same operations
            core = peak * float(
                ((compute / peak) ** sharp + (memory / peak) ** sharp) ** self.inverse_sharp
            )
        if self.fixed_sharpness is None:
            total = core + self.fixed_s
        else:
            total = float(combine(core, self.fixed_s, self.fixed_sharpness))
        if compute >= memory:
            return (core * count, 0.0, 0.0, (total - core) * count)
        return (0.0, core * count, 0.0, (total - core) * count)


class FastRoofline:
    """``RooflineStepTime``'s step time and decode-run pricing, from cached per-count parts."""

    def __init__(self, engine: RooflineStepTime) -> None:
        self.engine = engine
        dims = engine.dims
        self.layers = engine.model.num_layers
        self.per_pair = 4.0 * dims.head_dim * dims.q_heads
        self.kv_per_token = dims.kv_bytes_per_token
        self.q_width = dims.q_width
        self.act_bytes = dims.dtype_bytes
        cal, peak, hbm = engine.cal, engine.peak, engine.hbm
        self.prefill = _Kernel(cal.op(Op.ATTENTION_PREFILL.value), peak, hbm)
        self.decode = _Kernel(cal.op(Op.ATTENTION_DECODE.value), peak, hbm)
        over = cal.family.overhead  # RooflineStepTime._cpu_overhead_s's terms
        self.overhead_fixed_s, self.overhead_per_request_s = over.fixed_s, over.per_request_s
        # Decode attention reads far more bytes per FLOP than the GPU's ridge point: with a
        # margin of 2x, no rounding can make its compute bound the larger one, so a decode
        # run needs only the memory bound (the maximum the reference takes is that one).
        self.decode_memory_bound = (
            2 * self.per_pair / self.decode.compute_div < self.kv_per_token / self.decode.memory_div
        )
        self._tokens: dict[int, tuple[_Parts, _Parts] | None] = {}
        self._requests: dict[int, Cols] = {}

    # -- cached parts ---------------------------------------------------------------------------
    def _token_parts(self, tokens: int) -> tuple[_Parts, _Parts] | None:
        """Operators before and after attention for ``tokens`` tokens (None: they share an
        operator name, so their totals would merge; the caller falls back)."""
        try:
            return self._tokens[tokens]
        except KeyError:
            pass
        before, after = StepBreakdown(), StepBreakdown()
        self.engine._before_attention(before, float(tokens))
        self.engine._after_attention(after, float(tokens))
        parts: tuple[_Parts, _Parts] | None = (_Parts.of(before), _Parts.of(after))
        if before.operators.keys() & after.operators.keys():
            parts = None
        if len(self._tokens) < MAX_CACHED_COUNTS:
            self._tokens[tokens] = parts
        return parts

    def _lm_parts(self, requests: int) -> Cols:
        hit = self._requests.get(requests)
        if hit is not None:
            return hit
        out = StepBreakdown()
        self.engine._lm_head(out, requests)
        (o,) = out.operators.values()
        cols = (o.compute_s, o.memory_s, o.communication_s, o.fixed_s)
        if len(self._requests) < MAX_CACHED_COUNTS:
            self._requests[requests] = cols
        return cols

    # -- attention ------------------------------------------------------------------------------
    def _prefill_attention(self, batch: BatchShape) -> Cols:
        """``RooflineStepTime._attention``'s prefill kernel (decoder: causal chunks)."""
        ps = batch.prefills
        if len(ps) == 1:
            p = ps[0]
            new, ctx = float(p.new_tokens), float(p.context_tokens)
            rect = float(p.new_tokens * p.context_tokens)
            tri = float(p.new_tokens * (p.new_tokens + 1) / 2)
        else:
            new = float(sum(p.new_tokens for p in ps))
            ctx = float(sum(p.context_tokens for p in ps))
            rect = float(sum(p.new_tokens * p.context_tokens for p in ps))
            tri = float(sum(p.new_tokens * (p.new_tokens + 1) / 2 for p in ps))
        moved = (ctx + new) * self.kv_per_token
        moved = moved + 2 * new * self.q_width * self.act_bytes
        return self.prefill.totals(self.per_pair * rect, moved, self.per_pair * tri, self.layers)

    def _decode_attention(self, num: float, ctx: float) -> Cols:
        moved = ctx * self.kv_per_token
        moved = moved + 2 * num * self.q_width * self.act_bytes
        return self.decode.totals(self.per_pair * ctx, moved, 0.0, self.layers)

    # -- the step -------------------------------------------------------------------------------
    def step_time(self, batch: BatchShape) -> StepTime | None:
        """``breakdown(batch).step_time()``; None where only the reference applies (an empty
        batch, or operators shared before and after attention)."""
        decodes, prefills = batch.decode_contexts, batch.prefills
        # BatchShape.num_tokens (the same integer sum), without the generator for one chunk.
        tokens = prefills[0].new_tokens + len(decodes) if len(prefills) == 1 else batch.num_tokens
        requests = len(prefills) + len(decodes)
        if requests == 0:
            return None
        parts = self._token_parts(tokens)
        if parts is None:
            return None
        att: list[Cols] = []
        if batch.prefills:
            att.append(self._prefill_attention(batch))
        if decodes:
            att.append(self._decode_attention(float(len(decodes)), float(sum(decodes))))
        compute, memory, comm, fixed = self._sums(parts, att, self._lm_parts(requests))
        overhead = fixed + (self._cpu_overhead_s(requests) if self.engine.cpu_overhead else 0.0)
        return StepTime(
            total_s=compute + memory + comm + overhead,
            compute_s=compute,
            memory_s=memory,
            communication_s=comm,
            overhead_s=overhead,
        )

    @staticmethod
    def _sums(parts: tuple[_Parts, _Parts], att: list[Cols], lm: Cols) -> Cols:
        """``StepBreakdown.step_time``'s four sums over the operators in breakdown order:
        compute, memory, communication, fixed."""
        before, after = parts
        if len(att) == 1:
            (a,) = att
            return (
                sum((*before.compute, a[0], *after.compute, lm[0])),
                sum((*before.memory, a[1], *after.memory, lm[1])),
                sum((*before.communication, a[2], *after.communication, lm[2])),
                sum((*before.fixed, a[3], *after.fixed, lm[3])),
            )
        if len(att) == 2:  # prefill and decode attention: a mixed step
            p, d = att
            return (
                sum((*before.compute, p[0], d[0], *after.compute, lm[0])),
                sum((*before.memory, p[1], d[1], *after.memory, lm[1])),
                sum((*before.communication, p[2], d[2], *after.communication, lm[2])),
                sum((*before.fixed, p[3], d[3], *after.fixed, lm[3])),
            )
        return (
            sum((*before.compute, *(a[0] for a in att), *after.compute, lm[0])),
            sum((*before.memory, *(a[1] for a in att), *after.memory, lm[1])),
            sum((*before.communication, *(a[2] for a in att), *after.communication, lm[2])),
            sum((*before.fixed, *(a[3] for a in att), *after.fixed, lm[3])),
        )

    def _cpu_overhead_s(self, requests: int) -> float:
        return self.overhead_fixed_s + self.overhead_per_request_s * requests

    # -- decode runs ----------------------------------------------------------------------------
    def decode_run_rest(self, num_decodes: int, first_sum_context: int) -> float | None:
        """The first step of a decode run without its attention kernel (None: use the
        reference), exactly as ``RooflineStepTime.decode_run_times`` derives it."""
        parts = self._token_parts(num_decodes)
        if parts is None:
            return None
        att = self._decode_attention(float(num_decodes), float(first_sum_context))
        compute, memory, comm, fixed = self._sums(parts, [att], self._lm_parts(num_decodes))
        overhead = fixed + (self._cpu_overhead_s(num_decodes) if self.engine.cpu_overhead else 0.0)
        total = compute + memory + comm + overhead  # StepTime.total_s
        return total - (att[0] + att[1] + att[2] + att[3])

    def decode_run_scalar(
        self, rest: float, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64] | None:
        """The run's step durations with Python floats (None: the attention kernel has a p-norm,
        whose power numpy may round differently, or the run is long: use numpy).

        Contexts are whole numbers far below 2**53, so stepping them as floats is exact."""
        k = self.decode
        if k.sharp is not None or k.fixed_sharpness is not None or num_steps > SCALAR_RUN_STEPS:
            return None
        kv, layers = self.kv_per_token, float(self.layers)
        queries = 2 * float(num_decodes) * self.q_width * self.act_bytes
        mdiv, fixed = k.memory_div, k.fixed_s
        ctx, grow = float(first_sum_context), float(num_decodes)
        out = []
        if self.decode_memory_bound:
            for _ in range(num_steps):
                out.append(rest + layers * ((ctx * kv + queries) / mdiv + fixed))
                ctx += grow
        else:
            per_pair, cdiv = self.per_pair, k.compute_div
            for _ in range(num_steps):
                c = per_pair * ctx / cdiv
                m = (ctx * kv + queries) / mdiv
                out.append(rest + layers * ((c if c >= m else m) + fixed))
                ctx += grow
        return np.array(out, dtype=np.float64)
