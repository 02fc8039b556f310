from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from gpuplane.serving.models import default_catalog, load_config_file, resolve_model
from gpuplane.serving.models.shape import MlpKind, NormKind

CATALOG = default_catalog()


@pytest.mark.parametrize("name", CATALOG.names())
def test_parameter_count_matches_the_published_size(name: str) -> None:
    entry = CATALOG.entries[name]
    shape = CATALOG.shape(entry)
    assert shape.num_params / 1e9 == pytest.approx(entry.published_params_b, rel=0.005)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("Llama-2-7B", 6_738_415_616),  # the count HF reports for meta-llama/Llama-2-7b-hf
        ("Llama-3.1-8B", 8_030_261_248),
        ("Llama-3.1-70B", 70_553_706_496),
        ("Qwen2.5-7B", 7_615_616_512),
        ("Qwen2.5-72B", 72_706_203_648),
    ],
)
def test_exact_parameter_counts(name: str, params: int) -> None:
    assert resolve_model(name).num_params == params


@pytest.mark.parametrize(
    ("name", "kv_bytes"),
    # llm-serving.md section 1.3: bf16 bytes per token of the whole model.
    [
        ("Llama-2-7B", 524_288),
        ("Llama-3.1-8B", 131_072),
        ("Llama-3.1-70B", 327_680),
        ("Qwen2.5-7B", 57_344),
    ],
)
def test_kv_bytes_per_token(name: str, kv_bytes: int) -> None:
    assert resolve_model(name).kv_bytes_per_token() == kv_bytes


@pytest.mark.parametrize(
    "ref",
    [
        "Qwen/Qwen2.5-72B-Instruct",
        "qwen2.5-72b-instruct",
        "Qwen2.5 72B Instruct",
        "QWEN/QWEN2.5-72B-INSTRUCT",
    ],
)
def test_names_aliases_and_hf_ids_resolve(ref: str) -> None:
    assert resolve_model(ref).name == "Qwen2.5-72B-Instruct"


def test_instruct_and_base_differ_only_where_published() -> None:
    base, instruct = resolve_model("Qwen2.5-7B"), resolve_model("Qwen2.5-7B-Instruct")
    assert base.num_params == instruct.num_params
    assert (base.derived_max_model_len, instruct.derived_max_model_len) == (131072, 32768)


def test_family_specifics() -> None:
    opt = resolve_model("OPT-13B")
    assert opt.mlp is MlpKind.DENSE and opt.norm is NormKind.LAYER
    assert opt.num_position_embeddings == 2050 and opt.tie_word_embeddings
    qwen1 = resolve_model("Qwen-72B")
    assert qwen1.intermediate_size == 24576 and qwen1.qkv_bias and qwen1.head_dim == 128
    assert qwen1.derived_max_model_len == 32768
    phi = resolve_model("phi-2")
    assert phi.norms_per_layer == 1 and phi.lm_head_bias and phi.rotary_dim == 32
    llama31 = resolve_model("Llama-3.1-8B-Instruct")
    assert llama31.derived_max_model_len == 131072  # llama3 RoPE scaling is already folded in


def test_embedding_model_has_no_kv_cache() -> None:
    bge = resolve_model("BAAI/bge-large-en-v1.5")
    assert not bge.is_decoder and bge.pooler and bge.architectures == ("BertModel",)
    assert bge.kv_bytes_per_token() == 0 and bge.derived_max_model_len == 512


def test_mixture_of_experts_shapes() -> None:
    mixtral = resolve_model("Mixtral-8x7B")
    assert mixtral.moe is not None and mixtral.moe.num_experts == 8
    assert mixtral.num_active_params / 1e9 == pytest.approx(12.9, rel=0.01)
    qwen_moe = resolve_model("Qwen1.5-MoE-A2.7B")
    assert qwen_moe.moe is not None
    assert qwen_moe.moe.shared_intermediate_size == 5632 and qwen_moe.moe.shared_expert_gate
    assert qwen_moe.num_active_params / 1e9 == pytest.approx(2.7, rel=0.01)


def test_config_path_and_directory(tmp_path: Path) -> None:
    packaged = resources.files("gpuplane.serving").joinpath(
        "data/models/meta-llama--Llama-2-7b-hf.json"
    )
    model_dir = tmp_path / "my-llama"
    model_dir.mkdir()
    (model_dir / "config.json").write_text(packaged.read_text("utf-8"))
    by_dir = resolve_model(str(model_dir))
    by_file = load_config_file(model_dir / "config.json")
    assert by_dir.name == by_file.name == "my-llama"
    assert by_dir.num_params == resolve_model("Llama-2-7B").num_params


def test_quantized_checkpoint_weighs_less(tmp_path: Path) -> None:
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 8192,
        "intermediate_size": 29696,
        "num_attention_heads": 64,
        "num_hidden_layers": 80,
        "num_key_value_heads": 8,
        "max_position_embeddings": 32768,
        "vocab_size": 152064,
        "torch_dtype": "float16",
        "quantization_config": {
            "bits": 4,
            "group_size": 128,
            "quant_method": "awq",
            "zero_point": True,
        },
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    shape = load_config_file(path)
    assert shape.quantization == "awq"
    assert shape.weight_bits == pytest.approx(4 + 20 / 128)
    # About a quarter of the fp16 size, plus the unquantized embedding and LM head.
    assert 0.27 < shape.weight_bytes() / (shape.num_params * 2) < 0.32
