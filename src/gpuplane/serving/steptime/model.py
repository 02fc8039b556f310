"""The step-time model: one engine forward pass priced operator by operator on its real GPUs.

Each layer's kernels (norms, projections, rotary, attention, activation, residual add) get a
roofline time with calibrated efficiencies (``opcost``), the tensor-parallel all-reduces a ring
time over the pod's actual links (``interconnect``), and the step a CPU overhead per request.
Attention follows vLLM V1's chunked prefill: prompt chunks and decodes run in one step, prefill
attention's cost grows with the square of the chunk and linearly with the cached context, decode
attention reads the whole KV cache of every decoding request.

``RooflineStepTime`` implements ``serving.batch.StepTimeModel``; everything that does not depend
on the batch (shapes, efficiencies, peaks) is resolved once at construction.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuplane.core.errors import InputError
from gpuplane.serving.batch import BatchShape, StepTime
from gpuplane.serving.memory.dtypes import kv_dtype_bytes, resolve_dtype
from gpuplane.serving.memory.sharding import check_tensor_parallel
from gpuplane.serving.models.shape import DTYPE_BYTES, ModelShape
from gpuplane.serving.steptime.allreduce import allreduce_s
from gpuplane.serving.steptime.breakdown import StepBreakdown
from gpuplane.serving.steptime.calibration import (
    Calibration,
    GpuCalibration,
    default_calibration,
)
from gpuplane.serving.steptime.fast import FastRoofline
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.opcost import op_time
from gpuplane.serving.steptime.operators import (
    LayerDims,
    Op,
    Work,
    decode_attention_work,
    elementwise_work,
    gemm_work,
    moe_experts_work,
    prefill_attention_work,
)
from gpuplane.topology.catalog import GpuModel


def peak_flops(gpu: GpuModel, dtype: str) -> float:
    """Dense tensor-core FLOP/s for ``dtype`` (float32 runs as TF32, half the 16-bit rate)."""
    if dtype == "bfloat16" and gpu.bf16_dense_tflops is not None:
        return gpu.bf16_dense_tflops * 1e12
    if dtype == "float32":
        return gpu.fp16_dense_tflops * 1e12 / 2
    return gpu.fp16_dense_tflops * 1e12


class RooflineStepTime:
    """Step time of one engine (model, GPU model, TP degree, links) for any batch."""

    def __init__(
        self,
        model: ModelShape,
        gpu: GpuModel,
        tp: int = 1,
        *,
        interconnect: Interconnect | None = None,
        calibration: Calibration | GpuCalibration | None = None,
        dtype: str = "auto",
        kv_cache_dtype: str = "auto",
        cpu_overhead: bool = True,
    ) -> None:
        check_tensor_parallel(model, tp)
        self.model, self.gpu, self.tp = model, gpu, tp
        self.interconnect = interconnect or Interconnect.default_for(gpu.name, tp)
        if self.interconnect.num_gpus != tp:
            raise InputError(
                f"TP={tp} but the interconnect spans {self.interconnect.num_gpus} GPUs",
                expected=f"--gpus with {tp} GPU indices",
            )
        cal = calibration or default_calibration()
        self.cal = cal.for_gpu(gpu) if isinstance(cal, Calibration) else cal
        self.dtype = resolve_dtype(model, gpu, dtype)
        self.dtype_bytes = DTYPE_BYTES[self.dtype]
        self.dims = LayerDims.of(
            model, tp, self.dtype_bytes, kv_dtype_bytes(kv_cache_dtype, self.dtype)
        )
        self.peak = peak_flops(gpu, self.dtype)
        self.hbm = gpu.hbm_gbps * 1e9
        self.cpu_overhead = cpu_overhead
        self._collective = self.cal.collective(self.interconnect.link_kind)
        # Batch-independent parts priced once; only for the plain class (a subclass that
        # overrides the breakdown keeps its own arithmetic) and decoders (encoders: reference).
        plain = all(
            getattr(type(self), name) is getattr(RooflineStepTime, name)
            for name in ("breakdown", "_kernel", "_attention", "_lm_head", "_cpu_overhead_s")
        )
        self._fast = FastRoofline(self) if plain and model.is_decoder else None

    def step_time(self, batch: BatchShape) -> StepTime:
        fast = self._fast
        if fast is not None:
            out = fast.step_time(batch)
            if out is not None:
                return out
        return self.breakdown(batch).step_time()

    def reference_step_time(self, batch: BatchShape) -> StepTime:
        """``step_time`` through the full breakdown (what the fast path must equal)."""
        return self.breakdown(batch).step_time()

    def decode_run_times(
        self, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64]:
        """Durations of ``num_steps`` decode-only steps of ``num_decodes`` requests whose summed
        context starts at ``first_sum_context`` and grows by ``num_decodes`` per step.

        In a decode step only decode attention depends on the contexts, and only through their
        sum, so the rest of the step is priced once and attention over the whole run at once
        (the same as calling ``step_time`` step by step, up to float rounding).
        """
        if num_steps <= 0 or num_decodes <= 0:
            return np.zeros(max(num_steps, 0), dtype=np.float64)
        fast = self._fast
        rest = None if fast is None else fast.decode_run_rest(num_decodes, first_sum_context)
        if fast is None or rest is None:
            rest = self._decode_run_rest(num_decodes, first_sum_context)
        else:
            times = fast.decode_run_scalar(rest, num_decodes, first_sum_context, num_steps)
            if times is not None:
                return times
        return self._decode_run_attention(rest, num_decodes, first_sum_context, num_steps)

    def reference_decode_run_times(
        self, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64]:
        """``decode_run_times`` through the full breakdown (what the fast path must equal)."""
        if num_steps <= 0 or num_decodes <= 0:
            return np.zeros(max(num_steps, 0), dtype=np.float64)
        rest = self._decode_run_rest(num_decodes, first_sum_context)
        return self._decode_run_attention(rest, num_decodes, first_sum_context, num_steps)

    def _decode_run_rest(self, num_decodes: int, first_sum_context: int) -> float:
        """The run's first step without its decode attention."""
        contexts = (first_sum_context,) + (0,) * (num_decodes - 1)
        first = self.breakdown(BatchShape(decode_contexts=contexts))
        attention = first.operators.get(Op.ATTENTION_DECODE.value)
        return first.step_time().total_s - (attention.total_s if attention else 0.0)

    def _decode_run_attention(
        self, rest: float, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64]:
        """``rest`` plus the decode attention of every step of the run, priced as arrays."""
        sums = first_sum_context + num_decodes * np.arange(num_steps, dtype=np.float64)
        work = decode_attention_work(self.dims, float(num_decodes), sums)
        per_layer = op_time(self.cal.op(Op.ATTENTION_DECODE.value), work, self.peak, self.hbm)
        times: npt.NDArray[np.float64] = rest + self.model.num_layers * np.asarray(
            per_layer.total_s, dtype=np.float64
        )
        return times

    def breakdown(self, batch: BatchShape) -> StepBreakdown:
        out = StepBreakdown()
        tokens = float(batch.num_tokens)
        if batch.is_empty:
            return out
        if batch.decode_contexts and not self.model.is_decoder:
            raise InputError(
                f"{self.model.name} is an encoder-only (embedding) model: it has no decode steps",
                expected="prefill chunks only",
            )
        self._before_attention(out, tokens)
        self._attention(out, batch, self.model.num_layers)
        self._after_attention(out, tokens)
        requests = len(batch.prefills) + len(batch.decode_contexts)
        if self.model.is_decoder:
            self._lm_head(out, requests)
        if self.cpu_overhead:
            out.cpu_overhead_s = self._cpu_overhead_s(requests)
        return out

    # The parts of a step that depend only on its token count (or its request count) are split
    # out so that ``fast.FastRoofline`` can price them once per count and reuse them.
    def _before_attention(self, out: StepBreakdown, tokens: float) -> None:
        layers = self.model.num_layers
        self._kernel(out, Op.EMBEDDING, elementwise_work(Op.EMBEDDING, self.dims, tokens), 1)
        self._kernel(
            out,
            Op.NORM,
            elementwise_work(Op.NORM, self.dims, tokens),
            layers * self.model.norms_per_layer + int(self.model.final_norm),
        )
        for op in (Op.QKV_PROJ, Op.O_PROJ):
            k, n = self.dims.gemm_shapes()[op]
            self._kernel(out, op, gemm_work(tokens, k, n, self.dtype_bytes), layers)
        self._kernel(out, Op.ROPE, elementwise_work(Op.ROPE, self.dims, tokens), layers)

    def _after_attention(self, out: StepBreakdown, tokens: float) -> None:
        layers = self.model.num_layers
        moe_layers = self.model.num_moe_layers
        self._mlp(out, tokens, layers - moe_layers, moe_layers)
        self._kernel(
            out, Op.RESIDUAL_ADD, elementwise_work(Op.RESIDUAL_ADD, self.dims, tokens), layers
        )
        self._communication(out, tokens, layers)

    def _lm_head(self, out: StepBreakdown, requests: int) -> None:
        """Only the last position of each request is sampled."""
        lm = gemm_work(
            float(requests), self.model.hidden_size, self.dims.vocab_rows, self.dtype_bytes
        )
        self._kernel(out, Op.LM_HEAD, lm, 1)

    def _cpu_overhead_s(self, requests: int) -> float:
        over = self.cal.family.overhead
        return over.fixed_s + over.per_request_s * requests

    def _kernel(self, out: StepBreakdown, op: Op, work: Work, count: int) -> None:
        if count <= 0:
            return
        params = self.cal.op(op.value)
        t = op_time(params, work, self.peak, self.hbm)
        compute, memory = float(t.compute_s), float(t.memory_s)
        core, total = float(t.core_s), float(t.total_s)
        out.add(
            op.value,
            count=count,
            compute_s=core if compute >= memory else 0.0,
            memory_s=core if compute < memory else 0.0,
            fixed_s=total - core,
            extrapolated=self.cal.is_extrapolated(op.value),
        )

    def _attention(self, out: StepBreakdown, batch: BatchShape, layers: int) -> None:
        if batch.prefills:
            new = float(sum(p.new_tokens for p in batch.prefills))
            ctx = float(sum(p.context_tokens for p in batch.prefills))
            rect = float(sum(p.new_tokens * p.context_tokens for p in batch.prefills))
            tri = float(sum(p.new_tokens * (p.new_tokens + 1) / 2 for p in batch.prefills))
            if not self.model.is_decoder:
                # Encoders attend in both directions: every chunk is a full square of pairs.
                rect += float(sum(p.new_tokens**2 for p in batch.prefills))
                tri = 0.0
            work = prefill_attention_work(self.dims, new, ctx, rect=rect, tri=tri)
            self._kernel(out, Op.ATTENTION_PREFILL, work, layers)
        if batch.decode_contexts:
            num, ctx = float(len(batch.decode_contexts)), float(sum(batch.decode_contexts))
            self._kernel(
                out, Op.ATTENTION_DECODE, decode_attention_work(self.dims, num, ctx), layers
            )

    def _mlp(self, out: StepBreakdown, tokens: float, dense_layers: int, moe_layers: int) -> None:
        shapes = self.dims.gemm_shapes()
        for op in (Op.GATE_UP_PROJ, Op.DOWN_PROJ):
            k, n = shapes[op]
            self._kernel(out, op, gemm_work(tokens, k, n, self.dtype_bytes), dense_layers)
        self._kernel(out, Op.ACT, elementwise_work(Op.ACT, self.dims, tokens), dense_layers)
        moe = self.model.moe
        if moe is None or moe_layers == 0:
            return
        h = self.model.hidden_size
        router = gemm_work(tokens, h, moe.num_experts, self.dtype_bytes)
        self._kernel(out, Op.GEMM, router, moe_layers)
        experts = moe_experts_work(self.model, self.tp, tokens, self.dtype_bytes)
        self._kernel(out, Op.MOE_EXPERTS, experts, moe_layers)
        if moe.shared_intermediate_size:
            width = moe.shared_intermediate_size // self.tp
            self._kernel(
                out, Op.GATE_UP_PROJ, gemm_work(tokens, h, 2 * width, self.dtype_bytes), moe_layers
            )
            self._kernel(
                out, Op.DOWN_PROJ, gemm_work(tokens, width, h, self.dtype_bytes), moe_layers
            )

    def _communication(self, out: StepBreakdown, tokens: float, layers: int) -> None:
        if self.tp < 2:
            return
        message = tokens * self.model.hidden_size * self.dtype_bytes
        # Two all-reduces per layer (after O and after down) and one after the vocab-parallel
        # embedding lookup.
        link = self.interconnect
        t = float(allreduce_s(self._collective, link.num_gpus, link.bottleneck_gbps, message))
        out.add(
            "all_reduce",
            count=2 * layers + 1,
            communication_s=t,
            extrapolated=self.cal.extrapolated,
        )
