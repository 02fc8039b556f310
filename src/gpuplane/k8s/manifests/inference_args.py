"""Recognise a vLLM or SGLang server in a container spec and read its serving flags.

vLLM: the ``vllm/vllm-openai`` image (entrypoint ``vllm serve`` / the OpenAI API server) with
``--model`` in args, or a command/args containing ``vllm serve MODEL`` or
``vllm.entrypoints.openai.api_server``. Flags read: ``--model`` (or the positional model of
``vllm serve``), ``--served-model-name``, ``--tensor-parallel-size``/``-tp``,
``--gpu-memory-utilization``, ``--max-num-seqs``, ``--max-num-batched-tokens``,
``--max-model-len``, ``--enable-prefix-caching``/``--no-enable-prefix-caching``,
``--kv-cache-dtype``, ``--dtype``. Both ``--flag value`` and ``--flag=value`` forms.

SGLang: the ``lmsysorg/sglang`` image or ``sglang.launch_server`` in command/args; flags
``--model-path``/``--model``, ``--served-model-name``, ``--tp-size``/``--tp``,
``--mem-fraction-static`` (its gpu_memory_utilization), ``--max-running-requests``,
``--chunked-prefill-size``, ``--context-length``, ``--disable-radix-cache``, ``--kv-cache-dtype``.

A malformed value (``--tensor-parallel-size four``) is a located error; unknown flags are left
alone (the real servers have hundreds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.k8s.field_errors import fail
from gpuplane.serving.inference_server import InferenceServerSpec

ROLE_LABELS = ("llm-d.ai/role", "gpuplane.io/serving-role")
_VLLM_INT = {
    "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size",
    "--max-num-seqs": "max_num_seqs",
    "--max-num-batched-tokens": "max_num_batched_tokens",
    "--max-model-len": "max_model_len",
}
_SGLANG_INT = {
    "--tp-size": "tensor_parallel_size",
    "--tp": "tensor_parallel_size",
    "--max-running-requests": "max_num_seqs",
    "--chunked-prefill-size": "max_num_batched_tokens",
    "--context-length": "max_model_len",
}


def _tokens(command: object, args: object) -> list[str]:
    out: list[str] = []
    for part in (command, args):
        if isinstance(part, list):
            for item in part:
                text = str(item)
                # `sh -c "vllm serve ..."`: split shell strings on spaces.
                out.extend(text.split() if " " in text else [text])
    return out


def _kind(image: str, tokens: Sequence[str]) -> str | None:
    joined = " ".join(tokens)
    if "sglang" in image or "sglang.launch_server" in joined:
        return "sglang"
    if "vllm" in image or "vllm.entrypoints" in joined or "vllm serve" in joined:
        return "vllm"
    return None


def _flags(tokens: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``--flag value`` / ``--flag=value`` pairs (bare flags map to ``""``) and positionals."""
    flags: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("-"):
            if "=" in tok:
                key, value = tok.split("=", 1)
                flags[key] = value
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                flags[tok] = tokens[i + 1]
                i += 1
            else:
                flags[tok] = ""
        else:
            positional.append(tok)
        i += 1
    return flags, positional


def _int(flags: Mapping[str, str], key: str, field: str) -> int:
    try:
        value = int(flags[key])
    except ValueError:
        raise fail(f"{key} {flags[key]!r} is not an integer", field, "a positive integer") from None
    if value <= 0:
        raise fail(f"{key} {value}", field, "a positive integer")
    return value


def _utilisation(flags: Mapping[str, str], key: str, field: str) -> float | None:
    if key not in flags:
        return None
    try:
        value = float(flags[key])
    except ValueError:
        raise fail(f"{key} {flags[key]!r} is not a number", field, "a fraction in (0, 1]") from None
    if not 0 < value <= 1:
        raise fail(f"{key} {value}", field, "a fraction in (0, 1]")
    return value


def _model(kind: str, flags: Mapping[str, str], positional: list[str]) -> str | None:
    if kind == "sglang":
        return flags.get("--model-path") or flags.get("--model")
    if "--model" in flags:
        return flags["--model"]
    if "serve" in positional:
        rest = positional[positional.index("serve") + 1 :]
        return rest[0] if rest else None
    return None


def inference_server(
    container_name: str,
    image: object,
    command: object,
    args: object,
    labels: Mapping[str, str],
    field: str,
) -> InferenceServerSpec | None:
    """The server a container runs, or None when it is not vLLM or SGLang (or names no model,
    e.g. one set through environment variables: see :func:`looks_like_server`)."""
    tokens = _tokens(command, args)
    kind = _kind(str(image or ""), tokens)
    if kind is None:
        return None
    flags, positional = _flags(tokens)
    model = _model(kind, flags, positional)
    if not model:
        return None  # the caller warns: no engine can be modelled without a model
    ints = _SGLANG_INT if kind == "sglang" else _VLLM_INT
    values: dict[str, int] = {}
    for key, name in ints.items():
        if key in flags:
            values[name] = _int(flags, key, f"{field}.args")
    mem_key = "--mem-fraction-static" if kind == "sglang" else "--gpu-memory-utilization"
    prefix = (
        "--disable-radix-cache" not in flags
        if kind == "sglang"
        else "--no-enable-prefix-caching" not in flags
    )
    role = next((labels[k] for k in ROLE_LABELS if k in labels), "both")
    if role not in ("both", "prefill", "decode"):
        raise fail(f"serving role {role!r}", "metadata.labels", "prefill, decode or both")
    return InferenceServerSpec(
        kind=kind,
        model=model,
        served_model_name=flags.get("--served-model-name") or model,
        tensor_parallel_size=values.get("tensor_parallel_size", 1),
        gpu_memory_utilization=_utilisation(flags, mem_key, f"{field}.args"),
        max_num_seqs=values.get("max_num_seqs"),
        max_num_batched_tokens=values.get("max_num_batched_tokens"),
        max_model_len=values.get("max_model_len"),
        enable_prefix_caching=prefix,
        kv_cache_dtype=flags.get("--kv-cache-dtype", "auto"),
        dtype=flags.get("--dtype", "auto"),
        role=role,
        container=container_name,
        image=str(image or ""),
    )


def looks_like_server(image: object, command: object, args: object) -> str | None:
    """``vllm``/``sglang`` when the container runs one of them, whatever its flags."""
    return _kind(str(image or ""), _tokens(command, args))
