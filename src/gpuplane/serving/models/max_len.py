"""The default context length (``max_model_len``) an engine derives from a model's config.

vLLM looks for the context length under several names, because families store it differently
(``max_position_embeddings``, ``n_positions``, ``seq_length`` ...), and takes the smallest one
present. RoPE scaling then stretches it: YaRN from ``original_max_position_embeddings``, dynamic
and linear scaling by ``factor``; Llama-3.1's ``llama3`` scaling and Phi-3's ``su``/``longrope``
already state the stretched length in ``max_position_embeddings``, so they are left alone.
(vllm: config ``_get_and_verify_max_len``.)
"""

from __future__ import annotations

from gpuplane.serving.models.config_fields import ConfigFields

MAX_LEN_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
UNSCALED_ROPE_TYPES = frozenset({"su", "longrope", "llama3", "default", "mrope"})


def derived_max_model_len(fields: ConfigFields) -> tuple[int, int]:
    """(``max_position_embeddings`` as stated, the derived default ``max_model_len``)."""
    present = [(key, fields.get_int(key)) for key in MAX_LEN_KEYS if fields.has(key)]
    if not present:
        raise fields.error(
            "max_position_embeddings",
            "the config states no context length",
            f"one of {', '.join(MAX_LEN_KEYS)}",
        )
    stated = dict(present).get("max_position_embeddings", present[0][1])
    derived = min(value for _, value in present)
    if fields.has("rope_scaling"):
        rope = fields.nested("rope_scaling")
        rope_type = rope.get_str("rope_type") or rope.get_str("type") or "default"
        if rope_type not in UNSCALED_ROPE_TYPES:
            factor = rope.get_float("factor", default=1.0)
            if rope_type == "yarn" and rope.has("original_max_position_embeddings"):
                derived = rope.get_int("original_max_position_embeddings")
            derived = int(derived * factor)
    return stated, derived
