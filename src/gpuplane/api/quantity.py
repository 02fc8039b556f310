"""Kubernetes resource quantities, parsed exactly as apimachinery ``resource.ParseQuantity`` does.

Checked against kubernetes/apimachinery ``pkg/api/resource/quantity.go`` and ``suffix.go``
@ 357557a6 (read through the code index), and the golden tables of ``quantity_test.go``:

- grammar: optional sign, digits with an optional ``.`` (``1.``, ``.5`` and even a bare ``.``,
  ``+`` or ``-`` are accepted and mean 0), then a suffix: ``Ki Mi Gi Ti Pi Ei`` (binary),
  ``n u m k M G T P E`` or none (decimal), or ``e``/``E`` followed by a signed int64 exponent
  (which Go truncates to int32). Whitespace anywhere is an error for ParseQuantity
  (``Quantity.UnmarshalJSON``, which trims it first, is the manifest reader's:
  ``k8s.manifests.quantity``).
- a non-zero value finer than 1n is rounded away from zero to the next nano (``0.9n`` -> 1n);
  a binary-suffixed value above 2^63-1 is silently capped there (``8Ei`` -> 2^63-1).
- ``MilliValue`` and ``Value`` round up (``0.0001`` cpu is 1 millicore); the API server calls an
  integer resource whole when ``MilliValue() % 1000 == 0``.

Values are kept exact as ``mantissa * 10**exp10`` so huge exponents cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpuplane.core.errors import InputError

# The errors ParseQuantity returns (apimachinery quantity.go), word for word.
SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_SUFFIX = "unable to parse quantity's suffix"
EXPECTED = "a Kubernetes quantity such as 500m, 2, 1.5, 16Gi, 100M or 1e3"

INT64_MAX = 2**63 - 1
_NANO = -9
# Significant digits accepted (Python's int() refuses more than 4300); no real quantity comes close.
_MAX_DIGITS = 1000
_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIX = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIX |= {"P": 15, "E": 18}
_BINARY_SUFFIX = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


class QuantityRangeError(InputError, ValueError):
    """A quantity too large for the 64-bit integer the API server keeps (``Value``/``MilliValue``).

    An InputError so an unlocated one still reaches the user as a message; a ValueError so the
    callers that catch it to add the field keep working.
    """


class QuantityFormat(StrEnum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity: ``mantissa * 10**exp10``, as written in ``text``."""

    mantissa: int
    exp10: int
    format: QuantityFormat
    text: str

    def sign(self) -> int:
        return (self.mantissa > 0) - (self.mantissa < 0)

    def is_zero(self) -> bool:
        return self.mantissa == 0

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 like ``Quantity.Cmp``."""
        diff = _sub(self, other)
        return (diff > 0) - (diff < 0)

    def scaled_value(self, scale: int) -> int:
        """``ceil(q / 10**scale)`` (``Quantity.ScaledValue``); QuantityRangeError beyond int64."""
        if self.mantissa == 0:
            return 0
        shift = self.exp10 - scale
        magnitude = abs(self.mantissa)
        if shift >= 0:
            if _num_digits(magnitude) + shift > 19:
                raise self._range_error()
            result = self.mantissa * _pow10(shift)
        elif -shift > _num_digits(magnitude):
            # |q| < 10**scale: the ceiling is 1 for a positive and 0 for a negative value.
            result = 1 if self.mantissa > 0 else 0
        else:
            result = -((-self.mantissa) // _pow10(-shift))
        if not -INT64_MAX - 1 <= result <= INT64_MAX:
            raise self._range_error()
        return result

    def _range_error(self) -> QuantityRangeError:
        return QuantityRangeError(
            f"{self.text!r} does not fit a 64-bit integer",
            expected=f"at most {INT64_MAX} (in the resource's unit)",
        )

    def milli_value(self) -> int:
        """``Quantity.MilliValue``: thousandths, rounded up (``0.0001`` -> 1)."""
        return self.scaled_value(-3)

    def value(self) -> int:
        """``Quantity.Value``: the integer value, rounded up."""
        return self.scaled_value(0)


def _pow10(n: int) -> int:
    """10**n for n >= 0, typed as int (``int ** int`` is ``Any`` to mypy)."""
    result: int = 10**n
    return result


def _num_digits(n: int) -> int:
    return len(str(abs(n)))


def _sub(a: Quantity, b: Quantity) -> int:
    """The sign-preserving difference a - b, scaled to an integer (only the sign is used)."""
    low = min(a.exp10, b.exp10)
    if max(a.exp10, b.exp10) - low > 2 * _MAX_DIGITS:
        # Different by more magnitudes than any mantissa has digits: the larger exponent wins
        # unless its mantissa is zero.
        big, small, flip = (a, b, 1) if a.exp10 > b.exp10 else (b, a, -1)
        return flip * (big.sign() if big.mantissa else -small.sign())
    return a.mantissa * _pow10(a.exp10 - low) - b.mantissa * _pow10(b.exp10 - low)


@dataclass(frozen=True, slots=True)
class _Parts:
    positive: bool
    num: str
    denom: str
    suffix: str


def _scan(text: str) -> _Parts:
    """The scanner of ``parseQuantityString``: sign, numerator, denominator, suffix."""
    pos, end, positive = 0, len(text), True
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos == end:
        return _Parts(positive, "0", "", "")
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise InputError(f"{text!r}: {ERR_FORMAT}", expected=EXPECTED)
    return _Parts(positive, num, denom, text[suffix_start:])


def _interpret(suffix: str, text: str) -> tuple[int, int, QuantityFormat]:
    """(base, exponent, format) of a suffix, like ``suffixHandler.interpret``."""
    if suffix in _DECIMAL_SUFFIX:
        return 10, _DECIMAL_SUFFIX[suffix], QuantityFormat.DECIMAL_SI
    if suffix in _BINARY_SUFFIX:
        return 2, _BINARY_SUFFIX[suffix], QuantityFormat.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        # strconv.ParseInt(suffix[1:], 10, 64): one optional sign, then decimal digits.
        sign = suffix[1] if suffix[1] in "+-" else ""
        digits = suffix[1 + len(sign) :]
        if digits and set(digits) <= _DIGITS and len(digits.lstrip("0")) <= 19:
            parsed = int(sign + digits)
            if -(2**63) <= parsed <= INT64_MAX:
                # Go keeps int32(parsed): a too-large exponent silently wraps around.
                wrapped = (parsed + 2**31) % 2**32 - 2**31
                return 10, wrapped, QuantityFormat.DECIMAL_EXPONENT
    raise InputError(f"{text!r}: {ERR_SUFFIX}", expected=EXPECTED)


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` exactly as ``resource.ParseQuantity``; InputError (no location) if invalid."""
    if not text:
        raise InputError(f"{text!r}: {ERR_FORMAT}", expected=EXPECTED)
    parts = _scan(text)
    base, exponent, fmt = _interpret(parts.suffix, text)
    denom = parts.denom.rstrip("0")  # trailing zeros do not change the value
    if len(parts.num) + len(denom) > _MAX_DIGITS:
        raise InputError(f"{text!r} has too many digits", expected=EXPECTED)
    mantissa, exp10 = int(parts.num + denom), -len(denom)
    if base == 10:
        exp10 += exponent
    else:
        mantissa <<= exponent
    if mantissa and exp10 < _NANO:
        # Round a non-zero value away from zero up to the next nano unit.
        shift = _NANO - exp10
        mantissa = 1 if shift > _num_digits(mantissa) else -(-mantissa // _pow10(shift))
        exp10 = _NANO
    if fmt is QuantityFormat.BINARY_SI:
        # Here exp10 is in [-9, 0]: the binary exponent is positive, the denominator short.
        if mantissa > INT64_MAX * _pow10(-exp10):
            mantissa, exp10 = INT64_MAX, 0
        elif mantissa > 0 and exp10 < 0 and mantissa < _pow10(-exp10):
            fmt = QuantityFormat.DECIMAL_SI  # a binary value below 1 is kept as decimal
    return Quantity(mantissa if parts.positive else -mantissa, exp10, fmt, text)
