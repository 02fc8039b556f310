"""How tensor parallelism splits a model's weights over GPUs, as vLLM's parallel layers do.

Column-parallel layers (Q/K/V, gate/up, fc1) and row-parallel layers (O, down, fc2) split their
matrices by ``tp``; norms, row-parallel biases, learned position tables and MoE routers are
replicated on every rank. Vocabulary tables are padded to a multiple of 64 rows and then split.
When a model has fewer KV heads than ranks, each rank keeps a whole copy of one KV head, so the
K/V projections (and the KV cache) do not shrink past that point.
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.serving.memory.vllm_defaults import padded_vocab
from gpuplane.serving.models.shape import MlpKind, ModelShape, NormKind


def check_tensor_parallel(model: ModelShape, tp: int) -> None:
    """Refuse a TP degree the model's heads and widths cannot be split by (vLLM's checks)."""
    if tp < 1:
        raise InputError(f"--tp {tp}", expected="a tensor-parallel size >= 1")
    if model.num_attention_heads % tp:
        raise InputError(
            f"Total number of attention heads ({model.num_attention_heads}) must be divisible "
            f"by tensor parallel size ({tp}).",
            expected=f"a --tp that divides {model.num_attention_heads}",
        )
    kv = model.num_kv_heads
    if (tp >= kv and tp % kv) or (tp < kv and kv % tp):
        raise InputError(
            f"{kv} KV heads cannot be split over or replicated across {tp} ranks",
            expected="a --tp that divides the KV heads or is a multiple of them",
        )
    widths = [model.intermediate_size]
    if model.moe is not None:
        widths += [model.moe.expert_intermediate_size, model.moe.shared_intermediate_size]
    for width in widths:
        if width % tp:
            raise InputError(
                f"MLP width {width} is not divisible by tensor parallel size {tp}",
                expected="a --tp that divides the MLP width",
            )


def _norm(model: ModelShape) -> int:
    return model.hidden_size * (2 if model.norm is NormKind.LAYER else 1)


def layer_matrix_params_per_gpu(model: ModelShape, tp: int, *, moe_layer: bool) -> int:
    """One layer's projection parameters (with biases) held by one rank."""
    h, d = model.hidden_size, model.head_dim
    q = model.q_size // tp
    kv = model.kv_heads_per_gpu(tp) * d
    params = h * (q + 2 * kv) + q * h
    params += (q + 2 * kv) if model.qkv_bias else 0
    params += h if model.o_bias else 0
    if moe_layer and model.moe is not None:
        moe = model.moe
        params += h * moe.num_experts  # router, replicated
        params += moe.num_experts * 3 * h * (moe.expert_intermediate_size // tp)
        params += 3 * h * (moe.shared_intermediate_size // tp)
        params += h if moe.shared_expert_gate else 0
        return params
    width = model.intermediate_size // tp
    if model.mlp is MlpKind.GATED:
        params += 3 * h * width + ((2 * width + h) if model.mlp_bias else 0)
    else:
        params += 2 * h * width + ((width + h) if model.mlp_bias else 0)
    return params


def weight_bytes_per_gpu(model: ModelShape, tp: int, dtype_bytes: float) -> int:
    """Bytes of weights one tensor-parallel rank loads ("Model loading took ... GiB")."""
    h = model.hidden_size
    vocab_rows = padded_vocab(model.vocab_size) // tp
    moe_layers = model.num_moe_layers
    matrices = (model.num_layers - moe_layers) * layer_matrix_params_per_gpu(
        model, tp, moe_layer=False
    )
    if moe_layers:
        matrices += moe_layers * layer_matrix_params_per_gpu(model, tp, moe_layer=True)
    other = model.num_layers * (model.norms_per_layer * _norm(model))
    other += model.num_layers * (2 * model.head_dim if model.qk_norm else 0)
    other += vocab_rows * h + (model.num_position_embeddings + model.token_type_vocab) * h
    other += _norm(model) if model.embedding_norm else 0
    other += _norm(model) if model.final_norm else 0
    if model.is_decoder and not model.tie_word_embeddings:
        other += vocab_rows * h + (vocab_rows if model.lm_head_bias else 0)
    if model.pooler:
        other += h * h + h
    matrix_bytes = dtype_bytes if model.weight_bits is None else model.weight_bits / 8
    return int(matrices * matrix_bytes + other * dtype_bytes)
