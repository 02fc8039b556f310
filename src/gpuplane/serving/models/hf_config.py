"""Hugging Face ``config.json`` -> :class:`ModelShape`, family by family.

Field names differ between model families (``ffn_dim`` in OPT, ``kv_channels`` in the first Qwen,
``num_local_experts`` in Mixtral, ``num_experts`` in Qwen-MoE), and so do the parts that carry
parameters (biases, LayerNorm vs RMSNorm, learned position tables, tied LM heads). The families
below are read exactly; any other decoder is read as a Llama-style model and the parser says so in
``ModelShape.assumptions``. Multi-head latent attention (DeepSeek-V2/V3) is refused rather than
guessed, since its KV cache is not ``2 x heads x head_dim``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpuplane.serving.models.config_fields import ConfigFields
from gpuplane.serving.models.max_len import derived_max_model_len
from gpuplane.serving.models.quantization import quantized_weight_bits
from gpuplane.serving.models.shape import MlpKind, ModelShape, MoeShape, NormKind, PositionKind

ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta"})
POOLER_ARCHITECTURES = frozenset({"BertModel", "RobertaModel", "XLMRobertaModel"})
QKV_BIAS_TYPES = frozenset({"qwen", "qwen2", "qwen2_moe"})
LLAMA_LIKE_TYPES = frozenset(
    {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "internlm"}
    | {"internlm2", "qwen"}
)
DTYPE_NAMES = {
    "float32": "float32",
    "float": "float32",
    "bfloat16": "bfloat16",
    "float16": "float16",
    "half": "float16",
}


def shape_from_config(
    data: dict[str, Any], *, name: str, source: str, text: str = ""
) -> ModelShape:
    """The shape described by one parsed ``config.json``; mistakes are located InputErrors."""
    fields = ConfigFields(data, source=source, text=text)
    if not fields.has("num_hidden_layers") and fields.has("text_config"):
        # Multimodal wrappers keep the language model's numbers under text_config.
        fields = fields.nested("text_config")
    if fields.has("kv_lora_rank"):
        raise fields.error(
            "kv_lora_rank",
            "multi-head latent attention (DeepSeek-V2/V3 style) is not modelled",
            "a model with standard or grouped-query attention",
        )
    model_type = fields.get_str("model_type") or ""
    if model_type == "opt":
        shape = _opt(fields, name, source)
    elif model_type in ENCODER_TYPES:
        shape = _encoder(fields, name, source, model_type)
    elif model_type == "phi":
        shape = _phi(fields, name, source)
    else:
        shape = _llama_like(fields, name, source, model_type)
    shape = replace(shape, moe=_moe(fields, shape), weight_bits=quantized_weight_bits(fields))
    if shape.weight_bits is not None:
        method = fields.nested("quantization_config").get_str("quant_method")
        shape = replace(shape, quantization=method)
    _check_heads(fields, shape)
    return shape


def _common(fields: ConfigFields, name: str, source: str, model_type: str) -> dict[str, Any]:
    layers = fields.get_int("num_hidden_layers")
    hidden = fields.get_int("hidden_size")
    for key, value, limit in (
        ("num_hidden_layers", layers, 10_000),
        ("hidden_size", hidden, 10**6),
    ):
        if value > limit:
            raise fields.error(key, f"implausible value {value}", f"at most {limit:,}")
    heads = fields.get_int("num_attention_heads")
    head_dim = fields.get_int("head_dim") if fields.has("head_dim") else 0
    if not head_dim:
        if hidden % heads:
            raise fields.error(
                "num_attention_heads",
                f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}",
                "a head count that divides hidden_size, or an explicit head_dim",
            )
        head_dim = hidden // heads
    max_pos, derived = derived_max_model_len(fields)
    return {
        "name": name,
        "model_type": model_type or "unknown",
        "architectures": fields.str_list("architectures"),
        "num_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_kv_heads": fields.get_int("num_key_value_heads", default=heads),
        "head_dim": head_dim,
        "vocab_size": fields.get_int("vocab_size"),
        "config_dtype": _dtype(fields),
        "max_position_embeddings": max_pos,
        "derived_max_model_len": derived,
        "source": source,
    }


def _dtype(fields: ConfigFields) -> str:
    key = fields.first("torch_dtype", "dtype") or "torch_dtype"
    raw = fields.get_str(key, default="float32") or "float32"
    dtype = DTYPE_NAMES.get(raw.removeprefix("torch."))
    if dtype is None:
        raise fields.error(key, f"got {raw!r}", "float32, bfloat16 or float16")
    return dtype


def _llama_like(fields: ConfigFields, name: str, source: str, model_type: str) -> ModelShape:
    common = _common(fields, name, source, model_type)
    assumptions: tuple[str, ...] = ()
    if model_type not in LLAMA_LIKE_TYPES:
        assumptions = (
            f"model_type {model_type or '(none)'!r} is read as a Llama-style decoder: RMSNorm, "
            "gated MLP, rotary positions, no biases unless attention_bias/mlp_bias say so",
        )
    intermediate = fields.get_int("intermediate_size")
    if model_type == "qwen":
        # The first Qwen stores the sum of its two MLP branches; each is half of it.
        common["head_dim"] = fields.get_int("kv_channels", default=common["head_dim"])
        intermediate //= 2
    attention_bias = fields.get_bool("attention_bias", default=False)
    if model_type == "internlm":
        attention_bias = fields.get_bool("bias", default=True)
    return ModelShape(
        **common,
        intermediate_size=intermediate,
        tie_word_embeddings=fields.get_bool("tie_word_embeddings", default=False),
        qkv_bias=attention_bias or model_type in QKV_BIAS_TYPES,
        o_bias=attention_bias,
        mlp_bias=fields.get_bool("mlp_bias", default=False),
        qk_norm=model_type in ("qwen3", "qwen3_moe"),
        rotary_dim=common["head_dim"],
        assumptions=assumptions,
    )


def _opt(fields: ConfigFields, name: str, source: str) -> ModelShape:
    common = _common(fields, name, source, "opt")
    hidden = common["hidden_size"]
    proj = fields.get_int("word_embed_proj_dim", default=hidden)
    if proj != hidden:
        raise fields.error(
            "word_embed_proj_dim",
            f"word_embed_proj_dim {proj} differs from hidden_size {hidden} (OPT-350m layout)",
            "an OPT model whose embedding width equals hidden_size",
        )
    bias = fields.get_bool("enable_bias", default=True)
    pre_norm = fields.get_bool("do_layer_norm_before", default=True)
    removed = fields.get_bool("_remove_final_layer_norm", default=False)
    return ModelShape(
        **common,
        intermediate_size=fields.get_int("ffn_dim"),
        tie_word_embeddings=fields.get_bool("tie_word_embeddings", default=True),
        mlp=MlpKind.DENSE,
        norm=NormKind.LAYER,
        final_norm=pre_norm and not removed,
        qkv_bias=bias,
        o_bias=bias,
        mlp_bias=bias,
        position=PositionKind.LEARNED,
        # OPT's learned position table has 2 extra rows (an offset kept from fairseq).
        num_position_embeddings=common["max_position_embeddings"] + 2,
    )


def _encoder(fields: ConfigFields, name: str, source: str, model_type: str) -> ModelShape:
    common = _common(fields, name, source, model_type)
    archs = common["architectures"]
    return ModelShape(
        **common,
        intermediate_size=fields.get_int("intermediate_size"),
        mlp=MlpKind.DENSE,
        norm=NormKind.LAYER,
        final_norm=False,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        position=PositionKind.LEARNED,
        num_position_embeddings=common["max_position_embeddings"],
        token_type_vocab=fields.get_int("type_vocab_size", default=2),
        embedding_norm=True,
        pooler=any(a in POOLER_ARCHITECTURES for a in archs),
        is_decoder=False,
    )


def _phi(fields: ConfigFields, name: str, source: str) -> ModelShape:
    common = _common(fields, name, source, "phi")
    rotary = int(common["head_dim"] * fields.get_float("partial_rotary_factor", default=0.5))
    return ModelShape(
        **common,
        intermediate_size=fields.get_int("intermediate_size"),
        tie_word_embeddings=fields.get_bool("tie_word_embeddings", default=False),
        mlp=MlpKind.DENSE,
        norm=NormKind.LAYER,
        norms_per_layer=1,  # attention and MLP run in parallel off one LayerNorm
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        lm_head_bias=True,
        rotary_dim=rotary,
    )


def _moe(fields: ConfigFields, shape: ModelShape) -> MoeShape | None:
    key = fields.first("num_local_experts", "num_experts", "n_routed_experts")
    if key is None or fields.get_int(key, minimum=0) < 2:
        return None
    num_experts = fields.get_int(key)
    per_token = fields.get_int("num_experts_per_tok", default=2)
    if per_token > num_experts:
        raise fields.error(
            "num_experts_per_tok",
            f"{per_token} experts per token but only {num_experts} experts",
            f"at most {num_experts}",
        )
    width = fields.get_int("moe_intermediate_size", default=shape.intermediate_size)
    shared = fields.get_int("shared_expert_intermediate_size", default=0, minimum=0)
    if not shared and fields.has("n_shared_experts"):
        shared = fields.get_int("n_shared_experts", minimum=0) * width
    step = fields.get_int("decoder_sparse_step", default=1)
    dense_only = set(fields.int_list("mlp_only_layers"))
    first_dense = fields.get_int("first_k_dense_replace", default=0, minimum=0)
    dense = sum(
        1
        for i in range(shape.num_layers)
        if i in dense_only or (i + 1) % step != 0 or i < first_dense
    )
    return MoeShape(
        num_experts=num_experts,
        experts_per_token=per_token,
        expert_intermediate_size=width,
        shared_intermediate_size=shared,
        shared_expert_gate=shape.model_type == "qwen2_moe" and shared > 0,
        dense_layers=dense,
    )


def _check_heads(fields: ConfigFields, shape: ModelShape) -> None:
    if shape.num_kv_heads > shape.num_attention_heads or (
        shape.num_attention_heads % shape.num_kv_heads
    ):
        raise fields.error(
            "num_key_value_heads",
            f"{shape.num_kv_heads} KV heads for {shape.num_attention_heads} attention heads",
            "a number of KV heads that divides num_attention_heads",
        )
