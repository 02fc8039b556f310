"""A quantity as a manifest holds it (apimachinery ``Quantity.UnmarshalJSON``): the JSON/YAML
side of ``gpuplane.api.quantity``, whose parser it calls."""

from __future__ import annotations

from gpuplane.api.quantity import EXPECTED, Quantity, QuantityFormat, parse_quantity
from gpuplane.core.errors import InputError


def parse_manifest_quantity(value: object) -> Quantity:
    """A quantity as a manifest holds it: ``Quantity.UnmarshalJSON`` trims a string, takes a
    number as its decimal text and reads null as zero."""
    if value is None:
        return Quantity(0, 0, QuantityFormat.DECIMAL_SI, "0")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(f"got {value!r}", expected=EXPECTED)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"got {value!r}", expected=EXPECTED)
        # repr is the shortest text that round-trips, the same digits Go's JSON encoder writes.
        return parse_quantity(repr(value))
    if isinstance(value, int):
        return parse_quantity(str(value))
    return parse_quantity(value.strip())
