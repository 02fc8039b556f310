from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.serving.models import load_config_file, resolve_model
from gpuplane.serving.models.config_fields import parse_json_object
from gpuplane.serving.models.hf_config import shape_from_config

GOOD: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 8192,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}


def write(tmp_path: Path, data: dict[str, Any] | str) -> Path:
    path = tmp_path / "config.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def test_good_config_parses(tmp_path: Path) -> None:
    shape = load_config_file(write(tmp_path, GOOD))
    assert shape.num_params == resolve_model("Llama-3-8B").num_params


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        ({"num_hidden_layers": None}, "num_hidden_layers", "required key 'num_hidden_layers'"),
        ({"hidden_size": "4096"}, "hidden_size", "got '4096'"),
        ({"hidden_size": True}, "hidden_size", "got True"),
        ({"num_attention_heads": 0}, "num_attention_heads", "got 0"),
        ({"num_key_value_heads": 7}, "num_key_value_heads", "7 KV heads for 32"),
        ({"num_attention_heads": 30}, "num_attention_heads", "not a multiple"),
        ({"torch_dtype": "int8"}, "torch_dtype", "'int8'"),
        ({"kv_lora_rank": 512}, "kv_lora_rank", "latent attention"),
        ({"max_position_embeddings": None}, "max_position_embeddings", "no context length"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings", "got 'no'"),
        (
            {"quantization_config": {"quant_method": "hqq"}},
            "quantization_config.quant_method",
            "'hqq' is not modelled",
        ),
        (
            {"num_local_experts": 8, "num_experts_per_tok": 9},
            "num_experts_per_tok",
            "9 experts per token",
        ),
    ],
)
def test_mistakes_name_file_line_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, needle: str
) -> None:
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_config_file(path)
    err = info.value
    assert needle in err.problem
    assert err.location.source == str(path)
    assert err.location.field == field
    if field.split(".")[0] in data:
        line = next(
            i + 1
            for i, text in enumerate(path.read_text().splitlines())
            if f'"{field.split(".")[-1]}"' in text
        )
        assert err.location.line == line


def test_syntax_error_has_a_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "hidden_size": 4096,\n  "vocab_size": \n}\n')
    with pytest.raises(InputError, match="not valid JSON") as info:
        load_config_file(path)
    assert info.value.location.line == 4


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "hidden_size": 4096,\n  "hidden_size": 5120\n}\n')
    with pytest.raises(InputError, match="duplicate key 'hidden_size'") as info:
        load_config_file(path)
    assert info.value.location.line == 2


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="top level is a list"):
        load_config_file(write(tmp_path, "[1, 2]"))


def test_missing_file_and_unknown_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_config_file(tmp_path / "nope.json")
    with pytest.raises(InputError, match="unknown model 'Llama-9-1B'") as info:
        resolve_model("Llama-9-1B")
    assert "Llama-3.1-8B" in (info.value.expected or "")


def test_unknown_model_type_is_read_with_a_stated_assumption(tmp_path: Path) -> None:
    shape = load_config_file(write(tmp_path, {**GOOD, "model_type": "granite"}))
    assert shape.assumptions and "granite" in shape.assumptions[0]


def test_text_config_of_multimodal_wrappers(tmp_path: Path) -> None:
    wrapped = {"architectures": ["LlavaForConditionalGeneration"], "text_config": GOOD}
    assert load_config_file(write(tmp_path, wrapped)).num_layers == 32
    broken = {"text_config": {**GOOD, "hidden_size": -1}}
    with pytest.raises(InputError) as info:
        load_config_file(write(tmp_path, broken))
    assert info.value.location.field == "text_config.hidden_size"


EXTRA_KEYS = ["head_dim", "rope_scaling", "ffn_dim", "num_experts", "quantization_config"]
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.lists(st.integers(0, 5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from([*sorted(GOOD), *EXTRA_KEYS, "text_config"]), values),
    st.sampled_from(["llama", "opt", "bert", "phi", "qwen", "qwen2_moe", "x"]),
)
def test_fuzzed_configs_give_a_shape_or_an_input_error(data: dict[str, Any], kind: str) -> None:
    config = {**GOOD, **data, "model_type": kind}
    try:
        shape = shape_from_config(config, name="fuzz", source="fuzz.json")
    except InputError:
        return
    assert shape.num_params > 0 and shape.kv_bytes_per_token() >= 0


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_fuzzed_text_never_crashes_the_reader(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_json_object(text, "fuzz.json")
