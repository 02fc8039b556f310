from __future__ import annotations

import numpy as np
import pytest

from gpuplane.core.errors import InputError
from gpuplane.serving.batch import BatchShape, PrefillChunk, StepTimeModel
from gpuplane.serving.models import resolve_model
from gpuplane.serving.steptime import (
    Interconnect,
    KvLink,
    RooflineStepTime,
    default_calibration,
    kv_transfer_bytes,
    kv_transfer_s,
)
from gpuplane.serving.steptime.calibrate import uncalibrated
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.presets import load_preset

H100 = get_gpu_model("H100")
A100 = get_gpu_model("A100-80GB")
LLAMA8 = resolve_model("Llama-3.1-8B")
LLAMA70 = resolve_model("Llama-3.1-70B")


def prefill(*lengths: int) -> BatchShape:
    return BatchShape(prefills=tuple(PrefillChunk(n) for n in lengths))


def decode(batch: int, context: int) -> BatchShape:
    return BatchShape(decode_contexts=(context,) * batch)


def test_implements_the_step_time_protocol() -> None:
    model: StepTimeModel = RooflineStepTime(LLAMA8, H100)
    assert model.step_time(decode(1, 100)).total_s > 0


def test_parts_add_up_and_empty_steps_are_free() -> None:
    engine = RooflineStepTime(LLAMA70, H100, 4)
    st = engine.step_time(BatchShape((PrefillChunk(300, 500),), (1000,) * 20))
    parts = st.compute_s + st.memory_s + st.communication_s + st.overhead_s
    assert st.total_s == pytest.approx(parts)
    assert min(st.compute_s, st.memory_s, st.communication_s, st.overhead_s) > 0
    assert engine.step_time(BatchShape()).total_s == 0


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_more_tokens_never_take_less_time(tp: int) -> None:
    engine = RooflineStepTime(LLAMA70 if tp > 1 else LLAMA8, H100, tp)
    lengths = [1, 8, 64, 100, 512, 1000, 2048, 4096, 8192, 16384]
    prefill_times = [engine.step_time(prefill(n)).total_s for n in lengths]
    assert prefill_times == sorted(prefill_times)
    batch_times = [engine.step_time(decode(b, 1024)).total_s for b in (1, 4, 16, 64, 256)]
    assert batch_times == sorted(batch_times)
    context_times = [engine.step_time(decode(32, c)).total_s for c in (0, 128, 2048, 32768)]
    assert context_times == sorted(context_times)


def test_prefill_attention_grows_with_the_square_of_the_chunk() -> None:
    engine = RooflineStepTime(LLAMA8, H100)

    def attention(batch: BatchShape) -> float:
        return engine.breakdown(batch).operators["attention_prefill"].total_s

    short, long = attention(prefill(4096)), attention(prefill(16384))
    assert long / short > 10  # 16x the pairs, minus fixed costs
    # Cached context makes a chunk cost more (a rectangle of pairs on top of the triangle).
    assert attention(BatchShape((PrefillChunk(512, 8192),))) > attention(prefill(512))


def test_small_decode_is_memory_bound_and_long_prefill_compute_bound() -> None:
    engine = RooflineStepTime(LLAMA8, H100)
    small = engine.breakdown(decode(1, 512))
    assert small.bottleneck == "memory"
    assert small.operators["gate_up_proj"].bound == "memory"
    long = engine.breakdown(prefill(8192))
    assert long.bottleneck == "compute"
    assert long.operators["gate_up_proj"].bound == "compute"
    # Batch-1 decode is no faster than reading the weights once at full HBM bandwidth.
    assert engine.step_time(decode(1, 512)).total_s > LLAMA8.weight_bytes() / (H100.hbm_gbps * 1e9)


def test_pcie_is_slower_than_nvlink_at_tp_above_one() -> None:
    nvlink = RooflineStepTime(LLAMA70, H100, 4)
    assert nvlink.interconnect.link_kind == "nvlink"
    pcie_link = Interconnect(4, 63.0, "pcie", "4 PCIe Gen5 GPUs")
    pcie = RooflineStepTime(LLAMA70, H100, 4, interconnect=pcie_link)
    for batch in (decode(64, 2048), prefill(2048)):
        fast, slow = nvlink.step_time(batch), pcie.step_time(batch)
        assert slow.communication_s > 2 * fast.communication_s
        assert slow.total_s > fast.total_s
        assert slow.compute_s == pytest.approx(fast.compute_s)


def test_the_gpus_the_pod_got_matter() -> None:
    seed = load_preset("seed-8gpu")  # NVLink meshes of 4, joined over PCIe/SYS
    inside = Interconnect.from_topology(seed, [0, 1, 2, 3])
    across = Interconnect.from_topology(seed, [0, 1, 4, 5])
    assert across.bottleneck_gbps < inside.bottleneck_gbps
    t_in = RooflineStepTime(LLAMA70, H100, 4, interconnect=inside).step_time(decode(32, 1024))
    t_x = RooflineStepTime(LLAMA70, H100, 4, interconnect=across).step_time(decode(32, 1024))
    assert t_x.communication_s > t_in.communication_s


def test_interconnect_must_match_tp() -> None:
    link = Interconnect.from_topology(load_preset("dgx-h100"), [0, 1])
    with pytest.raises(InputError, match="TP=4 but the interconnect spans 2 GPUs"):
        RooflineStepTime(LLAMA70, H100, 4, interconnect=link)


def test_unmeasured_gpus_are_extrapolated_on_their_own_peaks() -> None:
    h200 = get_gpu_model("H200")
    engine = RooflineStepTime(LLAMA70, h200, 8)
    assert engine.cal.extrapolated and engine.cal.family.gpu == "H100-80GB-SXM"
    on_h100 = RooflineStepTime(LLAMA70, H100, 8)
    assert not on_h100.cal.extrapolated
    # Same efficiencies, 4.8 vs 3.35 TB/s: a memory-bound decode step is faster on the H200.
    batch = decode(8, 1024)
    assert engine.step_time(batch).memory_s < on_h100.step_time(batch).memory_s
    b200 = RooflineStepTime(LLAMA8, get_gpu_model("B200"))
    assert b200.cal.extrapolated
    l40s = RooflineStepTime(LLAMA8, get_gpu_model("L40S"))
    assert l40s.cal.family.family == "a100"
    assert all(op.extrapolated for op in l40s.breakdown(batch).operators.values())


def test_attention_on_h100_is_flagged_as_borrowed() -> None:
    ops = RooflineStepTime(LLAMA8, H100).breakdown(decode(4, 100)).operators
    assert ops["attention_decode"].extrapolated
    assert not ops["qkv_proj"].extrapolated


def test_decode_run_matches_step_by_step() -> None:
    engine = RooflineStepTime(LLAMA70, A100, 8)
    contexts = [7, 900, 4000, 31]
    run = engine.decode_run_times(len(contexts), sum(contexts), 40)
    steps = [
        engine.step_time(BatchShape(decode_contexts=tuple(c + j for c in contexts))).total_s
        for j in range(40)
    ]
    np.testing.assert_allclose(run, steps, rtol=1e-12)
    assert list(engine.decode_run_times(3, 10, 0)) == []


def test_uncalibrated_roofline_is_a_lower_bound_for_big_kernels() -> None:
    cal = RooflineStepTime(LLAMA8, H100)
    pure = RooflineStepTime(LLAMA8, H100, calibration=uncalibrated(default_calibration()))
    for batch in (prefill(4096), decode(1, 1024)):
        assert pure.step_time(batch).total_s < cal.step_time(batch).total_s


def test_moe_model_reads_only_the_experts_it_uses() -> None:
    mixtral = resolve_model("Mixtral-8x7B")
    engine = RooflineStepTime(mixtral, H100, 2)
    one = engine.breakdown(decode(1, 100)).operators["moe_experts"].memory_s
    many = engine.breakdown(decode(64, 100)).operators["moe_experts"].memory_s
    assert many > 2 * one  # batch 1 touches 2 of 8 experts, batch 64 all of them


def test_kv_transfer_is_linear_in_the_prompt() -> None:
    model = resolve_model("Llama-3.1-70B")
    assert kv_transfer_bytes(1000, model) == 1000 * 327_680
    nic = KvLink.nic(400)
    one, two = kv_transfer_s(4096, model, nic), kv_transfer_s(8192, model, nic)
    assert two - nic.latency_s == pytest.approx(2 * (one - nic.latency_s))
    nvlink = KvLink.from_interconnect(Interconnect.from_topology(load_preset("dgx-h100"), [0, 1]))
    assert kv_transfer_s(4096, model, nvlink) < one
    assert kv_transfer_s(0, model, nic) == 0
    fp8 = kv_transfer_s(4096, model, nic, kv_dtype_bytes=1)
    assert fp8 < one
    with pytest.raises(InputError):
        kv_transfer_s(-1, model, nic)


def test_embedding_models_only_prefill() -> None:
    bge = RooflineStepTime(resolve_model("bge-large-en-v1.5"), A100)
    step = bge.breakdown(prefill(512, 128))
    assert "lm_head" not in step.operators and step.step_time().total_s > 0
    with pytest.raises(InputError, match="encoder-only"):
        bge.step_time(decode(1, 10))
