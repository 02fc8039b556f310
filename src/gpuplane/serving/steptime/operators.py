"""What each operator of one forward pass computes and moves, on one tensor-parallel GPU.

A decoder layer runs: norm, the QKV projection, rotary embedding, attention (prefill chunks and
decodes), the O projection, an all-reduce, norm, the gate/up projection, the activation, the down
projection, an all-reduce and the residual add. Before the layers comes the embedding lookup,
after them the final norm and the LM head (only for the tokens that are sampled). Each operator's
*work* is its floating-point operations and the bytes it must read and write in GPU memory; the
roofline turns work into time. Column-parallel projections split their output width by TP,
row-parallel ones their input width; KV heads are replicated when there are fewer than ranks.

Functions take numbers or numpy arrays of token counts alike, so the same code prices one step and
fits thousands of measured points.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from gpuplane.serving.memory.vllm_defaults import padded_vocab
from gpuplane.serving.models.shape import MlpKind, ModelShape

Num = float | npt.NDArray[np.float64]


class Op(StrEnum):
    """Operator classes, each with its own calibrated efficiencies."""

    EMBEDDING = "embedding"
    NORM = "norm"
    QKV_PROJ = "qkv_proj"
    ROPE = "rope"
    ATTENTION_PREFILL = "attention_prefill"
    ATTENTION_DECODE = "attention_decode"
    O_PROJ = "o_proj"
    GATE_UP_PROJ = "gate_up_proj"
    ACT = "act"
    DOWN_PROJ = "down_proj"
    RESIDUAL_ADD = "residual_add"
    MOE_EXPERTS = "moe_experts"
    LM_HEAD = "lm_head"
    GEMM = "gemm"  # any other matrix multiply (pooled fit of the four projections)


@dataclass(frozen=True, slots=True)
class Work:
    """FLOPs and bytes of one kernel; ``causal_flops`` is attention's triangular part."""

    flops: float | npt.NDArray[np.float64]
    bytes: float | npt.NDArray[np.float64]
    causal_flops: float | npt.NDArray[np.float64] = 0.0


@dataclass(frozen=True, slots=True)
class LayerDims:
    """Per-GPU widths of one layer under tensor parallelism ``tp``."""

    hidden: int
    q_width: int
    kv_width: int
    mlp_width: int
    gated: bool
    head_dim: int
    q_heads: int
    vocab_rows: int
    dtype_bytes: float
    kv_dtype_bytes: float

    @classmethod
    def of(
        cls, model: ModelShape, tp: int, dtype_bytes: float, kv_dtype_bytes: float | None = None
    ) -> LayerDims:
        kv_heads = model.kv_heads_per_gpu(tp)
        return cls(
            hidden=model.hidden_size,
            q_width=model.q_size // tp,
            kv_width=kv_heads * model.head_dim,
            mlp_width=model.intermediate_size // tp,
            gated=model.mlp is MlpKind.GATED,
            head_dim=model.head_dim,
            q_heads=model.num_attention_heads // tp,
            vocab_rows=padded_vocab(model.vocab_size) // tp,
            dtype_bytes=dtype_bytes,
            kv_dtype_bytes=dtype_bytes if kv_dtype_bytes is None else kv_dtype_bytes,
        )

    def gemm_shapes(self) -> dict[Op, tuple[int, int]]:
        """(input width K, output width N) of the four projections on this GPU."""
        up = (2 if self.gated else 1) * self.mlp_width
        return {
            Op.QKV_PROJ: (self.hidden, self.q_width + 2 * self.kv_width),
            Op.O_PROJ: (self.q_width, self.hidden),
            Op.GATE_UP_PROJ: (self.hidden, up),
            Op.DOWN_PROJ: (self.mlp_width, self.hidden),
        }

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of one token in one layer on this GPU."""
        return 2 * self.kv_width * self.kv_dtype_bytes


def gemm_work(tokens: Num, k: int, n: int, dtype_bytes: float) -> Work:
    """``tokens x K`` times ``K x N``: 2 FLOPs per multiply-add; reads the weights once and the
    activations in, writes the activations out."""
    return Work(2.0 * tokens * k * n, (k * n + tokens * (k + n)) * dtype_bytes)


def elementwise_work(op: Op, dims: LayerDims, tokens: Num) -> Work:
    """Memory-bound operators: bytes read plus written per token."""
    b = dims.dtype_bytes
    per_token = {
        Op.EMBEDDING: 2 * dims.hidden,
        Op.NORM: 2 * dims.hidden,
        Op.RESIDUAL_ADD: 3 * dims.hidden,
        Op.ROPE: 2 * (dims.q_width + dims.kv_width),
        Op.ACT: (3 if dims.gated else 2) * dims.mlp_width,
    }[op]
    return Work(0.0, tokens * per_token * b)


def prefill_attention_work(
    dims: LayerDims, new_tokens: Num, context_tokens: Num, *, rect: Num, tri: Num
) -> Work:
    """Causal attention of prompt chunks: ``rect`` query-key pairs against cached context and
    ``tri`` pairs inside the chunks (c(c+1)/2 each), 4 FLOPs per pair per head dimension
    (QK^T and PV); reads every key/value once and the queries, writes the output."""
    per_pair = 4.0 * dims.head_dim * dims.q_heads
    moved = (context_tokens + new_tokens) * dims.kv_bytes_per_token
    moved = moved + 2 * new_tokens * dims.q_width * dims.dtype_bytes
    return Work(per_pair * rect, moved, per_pair * tri)


def decode_attention_work(dims: LayerDims, num_decodes: Num, context_tokens: Num) -> Work:
    """One new query per request against its whole context: bound by reading the KV cache."""
    flops = 4.0 * dims.head_dim * dims.q_heads * context_tokens
    moved = context_tokens * dims.kv_bytes_per_token
    moved = moved + 2 * num_decodes * dims.q_width * dims.dtype_bytes
    return Work(flops, moved)


def moe_experts_work(model: ModelShape, tp: int, tokens: Num, dtype_bytes: float) -> Work:
    """Routed experts of one MoE layer: each token runs ``experts_per_token`` expert MLPs; the
    weights of every expert that receives at least one token are read (expected count with
    uniform routing)."""
    assert model.moe is not None
    moe, h = model.moe, model.hidden_size
    width = moe.expert_intermediate_size // tp
    per_expert = 3 * h * width
    touched = moe.num_experts * (1.0 - (1.0 - moe.experts_per_token / moe.num_experts) ** tokens)
    routed = tokens * moe.experts_per_token
    flops = 2.0 * routed * per_expert
    moved = (touched * per_expert + routed * (2 * h + 3 * width)) * dtype_bytes
    return Work(flops, moved)
