"""The shape of a transformer model: what its weights are and how big its KV cache is per token.

Everything an engine's memory budget and step time depend on follows from a handful of numbers in
the model's Hugging Face ``config.json``: layers, hidden size, attention heads (query and key/value,
which differ under grouped-query attention), head size, MLP width, vocabulary, dtype, and for
mixture-of-experts models the number of experts, how many each token visits and their width.
The parameter count is computed here from those numbers, tensor by tensor, the way the model code
builds them (biases, norms, tied or separate LM head, learned position tables), so it matches the
published sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

DTYPE_BYTES: dict[str, float] = {"float32": 4, "bfloat16": 2, "float16": 2}


class MlpKind(StrEnum):
    GATED = "gated"  # SwiGLU / GeGLU: gate and up projections, an activation-and-multiply, down
    DENSE = "dense"  # fc1, activation, fc2 (OPT, BERT, phi)


class NormKind(StrEnum):
    RMS = "rms"  # weight only
    LAYER = "layer"  # weight and bias


class PositionKind(StrEnum):
    ROTARY = "rotary"  # no parameters
    LEARNED = "learned"  # a table of position embeddings (OPT, BERT)


@dataclass(frozen=True, slots=True)
class MoeShape:
    """A mixture-of-experts MLP: ``num_experts`` experts, each token sent to ``experts_per_token``.

    ``shared_intermediate_size`` is the total width of the always-on shared expert(s) (Qwen2-MoE:
    one shared expert of that width with a sigmoid gate; DeepSeek: n_shared_experts x width).
    """

    num_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_intermediate_size: int = 0
    shared_expert_gate: bool = False
    dense_layers: int = 0
    """Layers that keep a dense MLP of the model's ``intermediate_size`` (sparse-step patterns)."""


@dataclass(frozen=True, slots=True)
class ModelShape:
    """One model's architecture, as the numbers that size its weights, compute and KV cache."""

    name: str
    model_type: str
    architectures: tuple[str, ...]
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    config_dtype: str
    """``torch_dtype`` of the checkpoint (float32, bfloat16 or float16)."""
    max_position_embeddings: int
    derived_max_model_len: int
    """The longest context the engine accepts by default (vLLM derives it from the config)."""
    tie_word_embeddings: bool = False
    mlp: MlpKind = MlpKind.GATED
    norm: NormKind = NormKind.RMS
    norms_per_layer: int = 2
    final_norm: bool = True
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    """Per-head RMSNorm on queries and keys (Qwen3)."""
    mlp_bias: bool = False
    lm_head_bias: bool = False
    position: PositionKind = PositionKind.ROTARY
    num_position_embeddings: int = 0
    token_type_vocab: int = 0
    embedding_norm: bool = False
    pooler: bool = False
    is_decoder: bool = True
    rotary_dim: int = 0
    moe: MoeShape | None = None
    weight_bits: float | None = None
    """Bits per weight of a quantized checkpoint (None: the dtype's own width)."""
    quantization: str | None = None
    source: str = ""
    assumptions: tuple[str, ...] = ()
    """What the parser had to assume because the config did not say (shown to the user)."""

    # -- attention ---------------------------------------------------------------------------

    @property
    def q_size(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def has_kv_cache(self) -> bool:
        """Encoder-only (embedding) models attend within one request and keep no KV cache."""
        return self.is_decoder

    def kv_heads_per_gpu(self, tp: int) -> int:
        """KV heads each tensor-parallel rank holds: split when there are enough, else replicated.

        vLLM gives each rank ``max(1, num_kv_heads // tp)`` heads: with fewer KV heads than ranks,
        every rank keeps a full copy of one head (GQA replication).
        """
        return max(1, self.num_kv_heads // tp)

    def kv_bytes_per_token(self, tp: int = 1, kv_dtype_bytes: float | None = None) -> int:
        """KV-cache bytes one token takes on one GPU: K and V, every layer, this rank's heads."""
        if not self.has_kv_cache:
            return 0
        width = self.dtype_bytes if kv_dtype_bytes is None else kv_dtype_bytes
        return int(2 * self.num_layers * self.kv_heads_per_gpu(tp) * self.head_dim * width)

    # -- weights -----------------------------------------------------------------------------

    @property
    def dtype_bytes(self) -> float:
        return DTYPE_BYTES[self.config_dtype]

    @property
    def num_moe_layers(self) -> int:
        return 0 if self.moe is None else self.num_layers - self.moe.dense_layers

    def _norm_params(self) -> int:
        return self.hidden_size * (2 if self.norm is NormKind.LAYER else 1)

    def attention_params(self) -> int:
        h, q, kv = self.hidden_size, self.q_size, self.kv_size
        params = h * (q + 2 * kv) + q * h
        if self.qkv_bias:
            params += q + 2 * kv
        if self.o_bias:
            params += h
        if self.qk_norm:
            params += 2 * self.head_dim
        return params

    def dense_mlp_params(self, width: int | None = None) -> int:
        h, i = self.hidden_size, self.intermediate_size if width is None else width
        if self.mlp is MlpKind.GATED:
            return 3 * h * i + ((2 * i + h) if self.mlp_bias else 0)
        return 2 * h * i + ((i + h) if self.mlp_bias else 0)

    def moe_mlp_params(self) -> int:
        """One MoE layer: router, every expert, and the shared expert(s) with their gate."""
        assert self.moe is not None
        moe, h = self.moe, self.hidden_size
        params = h * moe.num_experts + moe.num_experts * 3 * h * moe.expert_intermediate_size
        if moe.shared_intermediate_size:
            params += 3 * h * moe.shared_intermediate_size
        if moe.shared_expert_gate:
            params += h
        return params

    def active_mlp_params(self) -> int:
        """MLP parameters one token touches in one MoE layer (router, its experts, shared)."""
        assert self.moe is not None
        moe, h = self.moe, self.hidden_size
        per_expert = 3 * h * moe.expert_intermediate_size
        shared = 3 * h * moe.shared_intermediate_size + (h if moe.shared_expert_gate else 0)
        return h * moe.num_experts + moe.experts_per_token * per_expert + shared

    def layer_params(self, moe_layer: bool) -> int:
        mlp = self.moe_mlp_params() if moe_layer else self.dense_mlp_params()
        return self.attention_params() + mlp + self.norms_per_layer * self._norm_params()

    def embedding_params(self) -> int:
        h = self.hidden_size
        params = self.vocab_size * h + self.num_position_embeddings * h + self.token_type_vocab * h
        if self.embedding_norm:
            params += self._norm_params()
        return params

    def head_params(self) -> int:
        """Final norm, LM head (unless tied to the embedding) or the BERT pooler."""
        h = self.hidden_size
        params = self._norm_params() if self.final_norm else 0
        if self.is_decoder and not self.tie_word_embeddings:
            params += self.vocab_size * h + (self.vocab_size if self.lm_head_bias else 0)
        if self.pooler:
            params += h * h + h
        return params

    @property
    def num_params(self) -> int:
        dense_layers = self.num_layers - self.num_moe_layers
        total = self.embedding_params() + self.head_params()
        total += dense_layers * self.layer_params(moe_layer=False)
        if self.num_moe_layers:
            total += self.num_moe_layers * self.layer_params(moe_layer=True)
        return total

    @property
    def num_active_params(self) -> int:
        """Parameters one token uses (equal to ``num_params`` for dense models)."""
        if self.moe is None:
            return self.num_params
        inactive = self.moe_mlp_params() - self.active_mlp_params()
        return self.num_params - self.num_moe_layers * inactive

    def layer_matrix_params(self) -> int:
        """Parameters of the transformer layers' projections (what quantization compresses)."""
        dense_layers = self.num_layers - self.num_moe_layers
        params = self.num_layers * self.attention_params()
        params += dense_layers * self.dense_mlp_params()
        if self.moe is not None:
            params += self.num_moe_layers * self.moe_mlp_params()
        return params

    def weight_bytes(self, dtype_bytes: float | None = None) -> int:
        """Bytes of all weights; a quantized checkpoint has ``weight_bits`` per layer weight."""
        width = self.dtype_bytes if dtype_bytes is None else dtype_bytes
        if self.weight_bits is None:
            return int(self.num_params * width)
        matrices = self.layer_matrix_params()
        return int(matrices * self.weight_bits / 8 + (self.num_params - matrices) * width)

    # -- per-token compute -------------------------------------------------------------------

    def linear_flops_per_token(self) -> int:
        """Matrix-multiply FLOPs of one token through every layer and the LM head (2 per MAC)."""
        h = self.hidden_size
        attn = 2 * (h * (self.q_size + 2 * self.kv_size) + self.q_size * h)
        if self.moe is None:
            mlp_params = self.dense_mlp_params()
            per_layer = attn + 2 * mlp_params
            total = self.num_layers * per_layer
        else:
            dense = self.num_layers - self.num_moe_layers
            total = dense * (attn + 2 * self.dense_mlp_params())
            total += self.num_moe_layers * (attn + 2 * self.active_mlp_params())
        if self.is_decoder:
            total += 2 * h * self.vocab_size
        return total
