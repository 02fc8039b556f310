"""Bits per weight of a quantized checkpoint, from its ``quantization_config``.

Only the transformer layers' projection matrices are quantized; embeddings, LM head and norms stay
in the model dtype (``ModelShape.weight_bytes`` applies the bits to the layer matrices only).
Group-wise integer formats (GPTQ, AWQ) also store one 16-bit scale, and for asymmetric formats a
zero point of the same width as the weights, per ``group_size`` weights.
"""

from __future__ import annotations

from gpuplane.serving.models.config_fields import ConfigFields

SUPPORTED_METHODS = ("fp8", "gptq", "awq", "bitsandbytes")


def quantized_weight_bits(fields: ConfigFields) -> float | None:
    """Effective bits per layer weight, or None when the checkpoint is not quantized."""
    if not fields.has("quantization_config"):
        return None
    quant = fields.nested("quantization_config")
    method = quant.get_str("quant_method")
    if method == "fp8":
        return 8.0
    if method in ("gptq", "awq"):
        bits = quant.get_int("bits", default=4)
        group = quant.get_int("group_size", default=128, minimum=-1)
        if group <= 0:  # -1: one scale per output channel
            return float(bits)
        zero_point = quant.get_bool("zero_point", default=not quant.get_bool("sym", default=True))
        return bits + (16 + (bits if zero_point else 0)) / group
    if method == "bitsandbytes":
        if quant.get_bool("load_in_4bit", default=False):
            return 4.0 + 32 / quant.get_int("bnb_4bit_blocksize", default=64)
        return 8.0
    raise quant.error(
        "quant_method",
        f"quantization method {method!r} is not modelled",
        f"one of {', '.join(SUPPORTED_METHODS)} (or a checkpoint without quantization_config)",
    )
