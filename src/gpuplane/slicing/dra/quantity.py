"""Device capacities and counters as exact quantities (apimachinery ``resource.Quantity``).

The slicing layer cannot use the manifest reader's parser (``gpuplane.k8s`` is for the CLI
only), so this is the same grammar kept small: an optional sign, digits with an optional ``.``,
then a binary suffix (``Ki`` .. ``Ei``), a decimal suffix (``n u m k M G T P E`` or none) or a
decimal exponent (``e3``, ``E-2``). Values are exact fractions, so ``40Gi`` and
``42949672960`` compare equal, which is how ``Quantity.Cmp`` and CEL's ``compareTo`` see them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import total_ordering

from gpuplane.core.errors import InputError

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_SUFFIX = "unable to parse quantity's suffix"
EXPECTED = "a Kubernetes quantity such as 40Gi, 1, 500m or 1e3"

_SPLIT = re.compile(SPLIT_RE)
_NUMBER = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?$")
_EXPONENT = re.compile(r"^[eE]([+-]?\d+)$")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
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
    match = _SPLIT.match(text)
    if not text or match is None:
        raise InputError(f"{text!r}: {ERR_FORMAT}", expected=EXPECTED)
    number, suffix = match.group(1), match.group(2)
    parts = _NUMBER.match(number)
    if parts is None:
        raise InputError(f"{text!r}: {ERR_FORMAT}", expected=EXPECTED)
    whole, frac = parts.group(1) or "0", parts.group(2) or ""
    value = Fraction(int(whole + frac or "0"), 10 ** len(frac))
    if number.startswith("-"):
        value = -value
    return DeviceQuantity(value * _multiplier(suffix, text), text)


def _multiplier(suffix: str, text: str) -> Fraction:
    if suffix in _DECIMAL:
        return Fraction(10) ** _DECIMAL[suffix]
    if suffix in _BINARY:
        return Fraction(2) ** _BINARY[suffix]
    exponent = _EXPONENT.match(suffix)
    if exponent is not None and abs(int(exponent.group(1))) <= 1000:
        return Fraction(10) ** int(exponent.group(1))
    raise InputError(f"{text!r}: {ERR_SUFFIX}", expected=EXPECTED)
