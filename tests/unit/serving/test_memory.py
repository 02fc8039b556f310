from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError
from gpuplane.core.units import GIB
from gpuplane.serving.memory import (
    EngineStartError,
    VllmMemorySettings,
    default_batch_limits,
    plan_memory,
    weight_bytes_per_gpu,
)
from gpuplane.serving.models import resolve_model
from gpuplane.topology.catalog import get_gpu_model

A100 = get_gpu_model("A100-80GB")
H100 = get_gpu_model("H100")


def gib(x: float) -> int:
    return int(x * GIB)


def test_worked_example_gives_exactly_7191_blocks() -> None:
    # GIE PR #550: Llama-2-7b-hf on A100-80GB, 79.19 GiB x 0.90, weights 12.55 GiB,
    # non-torch 0.16 GiB, activation peak 2.38 GiB -> "# cuda blocks: 7191".
    settings = VllmMemorySettings(
        gpu_memory_utilization=0.9,
        gpu_memory_bytes=gib(79.19),
        weights_bytes=gib(12.55),
        non_torch_bytes=gib(0.16),
        activation_bytes=gib(2.38),
    )
    plan = plan_memory(resolve_model("Llama-2-7B"), A100, 1, settings)
    assert plan.num_gpu_blocks == 7191
    assert plan.kv_bytes_per_token == 524_288
    assert plan.page_size_bytes == 16 * 2 * 32 * 128 * 2
    assert plan.kv_cache_tokens == 7191 * 16
    assert plan.kv_cache_bytes / GIB == pytest.approx(56.18, abs=0.005)
    assert plan.max_concurrency == pytest.approx(7191 / 256)
    assert "GPU KV cache size: 115,056 tokens" in plan.log_lines()
    assert "Maximum concurrency for 4,096 tokens per request: 28.09x" in plan.log_lines()


def test_weights_are_computed_per_tensor_parallel_rank() -> None:
    llama3 = resolve_model("Llama-3-8B")
    # vLLM logged 14.96 GiB at TP1 and 7.48 GiB at TP2 (PR #10511).
    assert weight_bytes_per_gpu(llama3, 1, 2) / GIB == pytest.approx(14.96, abs=0.005)
    assert weight_bytes_per_gpu(llama3, 2, 2) / GIB == pytest.approx(7.48, abs=0.005)
    # The default plan uses the computed figure and the logged CUDA total of an H100.
    plan = plan_memory(llama3, H100, 1)
    assert plan.weights_bytes == weight_bytes_per_gpu(llama3, 1, 2)
    assert plan.total_bytes == gib(79.22)


def test_tensor_parallel_splits_kv_heads_until_they_run_out() -> None:
    model = resolve_model("Llama-3.1-70B")  # 8 KV heads
    per_token = {tp: model.kv_bytes_per_token(tp) for tp in (1, 2, 4, 8, 16, 32)}
    assert per_token[1] == 327_680
    assert per_token[2] == per_token[1] // 2 and per_token[8] == per_token[1] // 8
    # More ranks than KV heads: each rank keeps one whole (replicated) head.
    assert per_token[16] == per_token[8] == per_token[32]


def test_tp_grows_the_cache_and_replication_stops_the_gain() -> None:
    model = resolve_model("Llama-3.1-70B")
    blocks = {
        tp: plan_memory(model, H100, tp, VllmMemorySettings(max_model_len=8192)).num_gpu_blocks
        for tp in (2, 4, 8)
    }
    assert blocks[2] < blocks[4] < blocks[8]


def test_fp8_kv_cache_holds_twice_the_tokens() -> None:
    model = resolve_model("Llama-3.1-8B")
    common = {
        "gpu_memory_bytes": gib(80),
        "weights_bytes": gib(15),
        "activation_bytes": gib(1),
        "non_torch_bytes": gib(0.5),
    }
    auto = plan_memory(model, H100, 1, VllmMemorySettings(**common))
    fp8 = plan_memory(model, H100, 1, VllmMemorySettings(kv_cache_dtype="fp8", **common))
    assert fp8.kv_bytes_per_token * 2 == auto.kv_bytes_per_token
    assert fp8.num_gpu_blocks in (2 * auto.num_gpu_blocks, 2 * auto.num_gpu_blocks + 1)
    assert fp8.kv_cache_dtype == "fp8" and auto.kv_cache_dtype == "bfloat16"


def test_weights_that_do_not_fit_refuse_to_start() -> None:
    with pytest.raises(EngineStartError, match="CUDA out of memory") as info:
        plan_memory(resolve_model("Llama-3.1-70B"), A100, 1)
    assert "larger --tp" in (info.value.expected or "")


def test_no_memory_left_for_the_cache() -> None:
    # 65.7B params in fp16 over 2 A100s: 61.2 GiB of weights per GPU; they load (the GPU has
    # 79.19 GiB) but exceed what 0.75 x 79.19 GiB leaves for the engine.
    settings = VllmMemorySettings(gpu_memory_utilization=0.75)
    with pytest.raises(EngineStartError) as info:
        plan_memory(resolve_model("OPT-66B"), A100, 2, settings)
    assert info.value.problem.startswith(
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        "when initializing the engine."
    )


def test_max_model_len_larger_than_the_cache() -> None:
    settings = VllmMemorySettings(gpu_memory_utilization=0.3)
    with pytest.raises(EngineStartError) as info:
        plan_memory(resolve_model("Llama-3.1-8B"), A100, 1, settings)
    problem = info.value.problem
    assert "To serve at least one request with the models's max seq len (131072)" in problem
    assert "which is larger than the available KV cache memory" in problem
    assert "the estimated maximum model length is" in problem
    longest = int(problem.split("estimated maximum model length is ")[1].split(".")[0])
    # The estimate is exactly what fits: it starts.
    fits = VllmMemorySettings(gpu_memory_utilization=0.3, max_model_len=longest)
    plan = plan_memory(resolve_model("Llama-3.1-8B"), A100, 1, fits)
    assert plan.kv_cache_tokens == longest
    with pytest.raises(EngineStartError):
        plan_memory(
            resolve_model("Llama-3.1-8B"),
            A100,
            1,
            VllmMemorySettings(gpu_memory_utilization=0.3, max_model_len=longest + 16),
        )


def test_max_model_len_above_the_config_is_refused() -> None:
    with pytest.raises(EngineStartError, match=r"User-specified max_model_len \(8192\)"):
        plan_memory(resolve_model("Llama-2-7B"), A100, 1, VllmMemorySettings(max_model_len=8192))


def test_concurrency_counts_whole_blocks_per_request() -> None:
    settings = VllmMemorySettings(max_model_len=4000)  # 250 blocks of 16
    plan = plan_memory(resolve_model("Llama-2-7B"), A100, 1, settings)
    assert plan.blocks_per_request == 250
    assert plan.max_concurrency == pytest.approx(plan.num_gpu_blocks / 250)
    odd = plan_memory(resolve_model("Llama-2-7B"), A100, 1, VllmMemorySettings(max_model_len=4001))
    assert odd.blocks_per_request == 251


def test_other_processes_holding_memory() -> None:
    settings = VllmMemorySettings(other_processes_bytes=gib(20))
    with pytest.raises(EngineStartError, match=r"Free memory on device \(59\.19/79\.19 GiB\)"):
        plan_memory(resolve_model("Llama-2-7B"), A100, 1, settings)


def test_tensor_parallel_must_divide_the_heads() -> None:
    with pytest.raises(InputError, match=r"attention heads \(28\) must be divisible .* \(8\)"):
        plan_memory(resolve_model("Qwen2.5-7B"), H100, 8)


def test_embedding_models_have_no_kv_cache() -> None:
    plan = plan_memory(resolve_model("bge-large-en-v1.5"), A100, 1)
    assert plan.num_gpu_blocks == 0 and plan.max_concurrency is None
    assert plan.dtype == "float16"  # a float32 pooling checkpoint is served in float16
    assert not any("KV cache size" in line for line in plan.log_lines())


def test_dtype_resolution_follows_the_gpu() -> None:
    v100 = get_gpu_model("V100-32GB")
    llama = resolve_model("Llama-3.1-8B")  # bfloat16 checkpoint
    assert plan_memory(llama, v100, 1, VllmMemorySettings(max_model_len=4096)).dtype == "float16"
    with pytest.raises(InputError, match="Bfloat16 is only supported"):
        plan_memory(llama, v100, 1, VllmMemorySettings(dtype="bfloat16"))


def test_batch_defaults_follow_vllm_serve() -> None:
    assert default_batch_limits(H100) == (8192, 1024)
    assert default_batch_limits(get_gpu_model("H200")) == (8192, 1024)
    assert default_batch_limits(A100) == (2048, 256)  # A100s keep the small budget
    assert default_batch_limits(get_gpu_model("L40S")) == (2048, 256)


def test_activation_estimate_is_close_to_the_logged_peak() -> None:
    settings = VllmMemorySettings(max_num_batched_tokens=8192, max_num_seqs=256)
    plan = plan_memory(resolve_model("Llama-3-8B"), H100, 1, settings)
    # vLLM logged 1.26 GiB for this configuration (PR #10511).
    assert plan.activation_bytes / GIB == pytest.approx(1.26, rel=0.1)
    assert plan.sources["activation"] == "estimate"
