"""Device capacities and counters as exact quantities (apimachinery ``resource.Quantity``).

Parsing is ``gpuplane.api.quantity``'s (``resource.ParseQuantity``); this is DRA's view of the
result: an exact fraction with arithmetic, so ``40Gi`` and ``42949672960`` compare equal, which
is how ``Quantity.Cmp`` and CEL's ``compareTo`` see them. A decimal exponent beyond +-1000 is
refused here (as a suffix error): the fraction would be needlessly huge for a device quantity.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import total_ordering

from gpuplane.api.quantity import ERR_SUFFIX
from gpuplane.api.quantity import parse_quantity as parse_exact
from gpuplane.core.errors import InputError

EXPECTED = "a Kubernetes quantity such as 40Gi, 1, 500m or 1e3"
_MAX_EXPONENT = 1000
_BINARY_NAMES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@total_ordering
@dataclass(frozen=True, slots=True)
class DeviceQuantity:
    """An exact quantity and the text it was written as (kept for output)."""

    value: Fraction
    text: str

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceQuantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: DeviceQuantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def cmp(self, other: DeviceQuantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def __str__(self) -> str:
        return self.text

    def __add__(self, other: DeviceQuantity) -> DeviceQuantity:
        return DeviceQuantity.of(self.value + other.value)

    def __sub__(self, other: DeviceQuantity) -> DeviceQuantity:
        return DeviceQuantity.of(self.value - other.value)

    @classmethod
    def of(cls, value: Fraction | int) -> DeviceQuantity:
        """A quantity for a computed value, printed in canonical decimal form."""
        frac = Fraction(value)
        return cls(frac, _format_decimal(frac))

    def as_integer(self) -> int:
        """``Quantity.Value()`` rounded up, as CEL's ``asInteger`` needs an exact integer."""
        return -((-self.value.numerator) // self.value.denominator)


def binary_quantity(num_bytes: int) -> DeviceQuantity:
    """``resource.NewQuantity(n, resource.BinarySI)``: ``80Gi``, ``9728Mi``, ``14``."""
    exponent = 0
    mantissa = num_bytes
    while mantissa and mantissa % 1024 == 0 and exponent < len(_BINARY_NAMES) - 1:
        mantissa //= 1024
        exponent += 1
    return DeviceQuantity(Fraction(num_bytes), f"{mantissa}{_BINARY_NAMES[exponent]}")


def int_quantity(value: int) -> DeviceQuantity:
    return DeviceQuantity(Fraction(value), str(value))


def _format_decimal(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    for suffix, exp in (("m", 3), ("u", 6), ("n", 9)):
        scaled = value * 10**exp
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    scaled = value * 10**9
    return f"{-((-scaled.numerator) // scaled.denominator)}n"


def parse_quantity(text: str) -> DeviceQuantity:
    """Parse like ``resource.ParseQuantity``; InputError (without a location) when invalid."""
    try:
        quantity = parse_exact(text)
    except InputError as err:
        raise InputError(err.problem, expected=EXPECTED) from None
    if abs(quantity.exp10) > _MAX_EXPONENT:
        raise InputError(f"{text!r}: {ERR_SUFFIX}", expected=EXPECTED)
    return DeviceQuantity(Fraction(quantity.mantissa) * Fraction(10) ** quantity.exp10, text)
