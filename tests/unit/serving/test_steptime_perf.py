"""The fast roofline (``steptime.fast``) against the reference breakdown: bit-identical results."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuplane.serving.batch import BatchShape, PrefillChunk, StepTime
from gpuplane.serving.models import resolve_model
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.steptime import RooflineStepTime, default_calibration
from gpuplane.serving.steptime import fast as fast_module
from gpuplane.serving.steptime.breakdown import StepBreakdown
from gpuplane.serving.steptime.calibrate import uncalibrated
from gpuplane.serving.steptime.calibration import GpuCalibration
from gpuplane.serving.steptime.opcost import OpParams
from gpuplane.topology.catalog import GpuModel, get_gpu_model

H100 = get_gpu_model("H100")
A100 = get_gpu_model("A100-80GB")

DEPLOYMENTS = [
    ("Llama-3.1-8B", "H100", 1),  # the benchmark's deployment
    ("Llama-3.1-70B", "H100", 4),  # tensor parallel: all-reduces
    ("Llama-3.1-70B", "A100-80GB", 8),
    ("Mixtral-8x7B", "H100", 2),  # MoE: router GEMM and routed experts
    ("Qwen/Qwen1.5-MoE-A2.7B", "A100-80GB", 1),  # MoE with shared experts (gate_up added twice)
    ("microsoft/phi-2", "H200-141GB", 1),  # dense (non-gated) MLP, layer norm
]


def random_batch(rng: np.random.Generator) -> BatchShape:
    prefills = tuple(
        PrefillChunk(int(rng.integers(1, 6000)), int(rng.integers(0, 20000)))
        for _ in range(int(rng.integers(0, 4)))
    )
    decodes = tuple(int(c) for c in rng.integers(1, 30000, int(rng.integers(0, 80))))
    return BatchShape(prefills, decodes)


def exact(a: StepTime, b: StepTime) -> bool:
    """Equal bit for bit, and of the same types (the reference may hold ints)."""
    fields = [f.name for f in dataclasses.fields(StepTime)]
    return all(
        type(getattr(a, f)) is type(getattr(b, f)) and getattr(a, f) == getattr(b, f)
        for f in fields
    )


@pytest.mark.parametrize(("model", "gpu", "tp"), DEPLOYMENTS)
@pytest.mark.parametrize("cpu_overhead", [True, False])
def test_step_time_equals_the_breakdown_bit_for_bit(
    model: str, gpu: str, tp: int, cpu_overhead: bool
) -> None:
    engine = RooflineStepTime(
        resolve_model(model), get_gpu_model(gpu), tp, cpu_overhead=cpu_overhead
    )
    assert engine._fast is not None
    rng = np.random.default_rng(tp * 7 + len(model))
    for _ in range(150):
        batch = random_batch(rng)
        assert exact(engine.step_time(batch), engine.reference_step_time(batch)), batch
    # The same token count again: served from the per-count cache, still exact.
    batch = BatchShape((PrefillChunk(512, 64),), (100, 200))
    first = engine.step_time(batch)
    assert exact(engine.step_time(batch), first)
    assert exact(first, engine.reference_step_time(batch))


@pytest.mark.parametrize(("model", "gpu", "tp"), DEPLOYMENTS)
def test_decode_runs_equal_the_reference_bit_for_bit(model: str, gpu: str, tp: int) -> None:
    engine = RooflineStepTime(resolve_model(model), get_gpu_model(gpu), tp)
    rng = np.random.default_rng(tp)
    # Short runs go through the Python-float loop, long ones through numpy.
    for steps in (1, 2, 17, fast_module.SCALAR_RUN_STEPS, fast_module.SCALAR_RUN_STEPS + 1, 700):
        num = int(rng.integers(1, 300))
        first = int(rng.integers(num, 400_000))
        got = engine.decode_run_times(num, first, steps)
        want = engine.reference_decode_run_times(num, first, steps)
        assert got.dtype == want.dtype == np.float64
        assert got.tolist() == want.tolist()
    assert engine.decode_run_times(4, 100, 0).tolist() == []
    assert engine.decode_run_times(0, 100, 3).tolist() == [0.0, 0.0, 0.0]


def with_decode_attention(cal: GpuCalibration, params: OpParams) -> GpuCalibration:
    family = dataclasses.replace(
        cal.family, operators={**cal.family.operators, "attention_decode": params}
    )
    return dataclasses.replace(cal, family=family)


def test_decode_runs_with_a_p_norm_or_a_compute_bound_attention_kernel() -> None:
    """A decode-attention kernel with a p-norm goes to numpy (whose power may round differently
    from Python's); a kernel that is not surely memory-bound takes the full maximum."""
    shape = resolve_model("Llama-3.1-8B")
    cal = default_calibration().for_gpu(H100)
    p_norm = with_decode_attention(cal, OpParams(0.4, 0.7, 1e-5, 1.6, None, 1.9))
    engine = RooflineStepTime(shape, H100, calibration=p_norm)
    got = engine.decode_run_times(32, 40_000, 12)
    assert got.tolist() == engine.reference_decode_run_times(32, 40_000, 12).tolist()
    batch = BatchShape((PrefillChunk(300),), (1000,) * 8)
    assert exact(engine.step_time(batch), engine.reference_step_time(batch))

    # A slow enough compute path that the bytes no longer surely dominate.
    slow = with_decode_attention(cal, OpParams(mfu=1e-6, bw_eff=0.8, fixed_s=2e-6))
    engine = RooflineStepTime(shape, H100, calibration=slow)
    assert engine._fast is not None and not engine._fast.decode_memory_bound
    for first in (10, 5_000, 900_000):
        got = engine.decode_run_times(16, first, 20)
        assert got.tolist() == engine.reference_decode_run_times(16, first, 20).tolist()


def test_uncalibrated_roofline_is_exact_too() -> None:
    """No fixed costs, hard maxima everywhere, no CPU overhead."""
    engine = RooflineStepTime(
        resolve_model("Llama-3.1-70B"), H100, 4, calibration=uncalibrated(default_calibration())
    )
    rng = np.random.default_rng(5)
    for _ in range(60):
        batch = random_batch(rng)
        assert exact(engine.step_time(batch), engine.reference_step_time(batch))
    run = engine.decode_run_times(8, 8000, 30).tolist()
    assert run == engine.reference_decode_run_times(8, 8000, 30).tolist()


def test_empty_batches_and_encoders_use_the_reference() -> None:
    engine = RooflineStepTime(resolve_model("Llama-3.1-8B"), H100)
    assert exact(engine.step_time(BatchShape()), StepBreakdown().step_time())
    bge = RooflineStepTime(resolve_model("bge-large-en-v1.5"), A100)
    assert bge._fast is None
    batch = BatchShape((PrefillChunk(200), PrefillChunk(77, 10)))
    assert exact(bge.step_time(batch), bge.breakdown(batch).step_time())


def test_cpu_overhead_switched_off_later_is_honoured() -> None:
    engine = RooflineStepTime(resolve_model("Llama-3.1-8B"), H100)
    batch = BatchShape((PrefillChunk(100),), (500, 600))
    with_overhead = engine.step_time(batch)
    engine.cpu_overhead = False
    without = engine.step_time(batch)
    assert without.overhead_s < with_overhead.overhead_s
    assert exact(without, engine.reference_step_time(batch))


class Doubled(RooflineStepTime):
    """A subclass with its own breakdown keeps its own arithmetic (no fast path)."""

    def breakdown(self, batch: BatchShape) -> StepBreakdown:
        out = super().breakdown(batch)
        out.cpu_overhead_s *= 2
        return out


def test_subclasses_that_override_the_breakdown_are_respected() -> None:
    shape: ModelShape = resolve_model("Llama-3.1-8B")
    gpu: GpuModel = H100
    engine = Doubled(shape, gpu)
    assert engine._fast is None
    batch = BatchShape(decode_contexts=(100, 200))
    assert (
        engine.step_time(batch).overhead_s
        > RooflineStepTime(shape, gpu).step_time(batch).overhead_s
    )


def test_the_per_count_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_module, "MAX_CACHED_COUNTS", 5)
    engine = RooflineStepTime(resolve_model("Llama-3.1-8B"), H100)
    assert engine._fast is not None
    for n in range(1, 40):
        batch = BatchShape(decode_contexts=(1000,) * n)
        assert exact(engine.step_time(batch), engine.reference_step_time(batch))
    assert len(engine._fast._tokens) == 5
    assert len(engine._fast._requests) == 5
