"""Kubernetes quantities: golden cases from apimachinery quantity_test.go, plus properties."""

from __future__ import annotations

import contextlib
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.api.quantity import INT64_MAX, Quantity, QuantityFormat, parse_quantity
from gpuplane.core.errors import InputError

NANO = Fraction(1, 10**9)


def value(q: Quantity) -> Fraction:
    return Fraction(q.mantissa) * Fraction(10) ** q.exp10


# (input, exact value) from TestQuantityParse in apimachinery pkg/api/resource/quantity_test.go.
GOLDEN = [
    ("0", 0),
    ("0n", 0),
    ("0Ki", 0),
    ("1", 1),
    ("1Ki", 1024),
    ("7Mi", 7 * 2**20),
    ("3Ei", 3 * 2**60),
    ("5n", Fraction(5, 10**9)),
    ("4u", Fraction(4, 10**6)),
    ("3m", Fraction(3, 1000)),
    ("50k", 50_000),
    ("1E", 10**18),
    ("1E-3", Fraction(1, 1000)),
    ("1e3", 1000),
    ("1.3E+6", 1_300_000),
    ("0.5e-2", Fraction(5, 1000)),
    ("100.035k", 100_035),
    ("0.0005k", Fraction(1, 2)),
    ("7.123456M", 7_123_456),
    ("1.01E", 101 * 10**16),
    # Things that saturate or round (to the next nano, away from zero).
    ("3.001n", 4 * NANO),
    ("1.1E-9", 2 * NANO),
    ("0.0000000001", NANO),
    ("0.9n", NANO),
    ("0.00000012345", 124 * NANO),
    ("9Ei", INT64_MAX),
    ("9223372036854775807Ki", INT64_MAX),
    ("12E", 12 * 10**18),
    ("100.035Ki", Fraction(10243584, 100)),
    ("0.5Mi", 2**19),
    ("0.025Ti", Fraction(274877906944, 10)),
    # "Things written by trolls".
    ("0.000000000001Ki", 2 * NANO),
    (".001", Fraction(1, 1000)),
    (".0001k", Fraction(1, 10)),
    ("1.", 1),
    ("1.G", 10**9),
    (".", 0),
    ("+", 0),
    ("-.", 0),
]
INVALID = ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-"]
INVALID += [" 1", "1 ", "", "1K", "1e", "1 Gi", "1Gi ", "1e99999999999999999999", "١"]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_golden_values(text: str, expected: int | Fraction) -> None:
    assert value(parse_quantity(text)) == expected
    if text[0] not in "+-":
        assert value(parse_quantity("+" + text)) == expected
        assert value(parse_quantity("-" + text)) == -expected


@pytest.mark.parametrize("text", INVALID)
def test_invalid_quantities(text: str) -> None:
    with pytest.raises(InputError, match=r"quantities must match|unable to parse|too many"):
        parse_quantity(text)


def test_formats() -> None:
    assert parse_quantity("1Gi").format is QuantityFormat.BINARY_SI
    assert parse_quantity("1e3").format is QuantityFormat.DECIMAL_EXPONENT
    assert parse_quantity("500m").format is QuantityFormat.DECIMAL_SI
    # A binary value below one is kept as decimal (quantity.go, "avoids rounding").
    assert parse_quantity("0.000000000001Ki").format is QuantityFormat.DECIMAL_SI


def test_milli_value_rounds_up() -> None:
    assert parse_quantity("0.0001").milli_value() == 1  # 0.0001 cpu is 1 millicore
    assert parse_quantity("1.0001").milli_value() == 1001
    assert parse_quantity("250m").milli_value() == 250
    assert parse_quantity("1.5").value() == 2
    assert parse_quantity("8Ei").value() == INT64_MAX
    with pytest.raises(ValueError, match="64-bit"):
        parse_quantity("1e30").value()


def test_exponent_wraps_like_go_int32() -> None:
    # suffix.go keeps int32(parsed): 2^31 becomes -2^31, a value far below a nano -> 1n.
    assert value(parse_quantity("1e2147483648")) == NANO
    assert parse_quantity("1e-2147483648").milli_value() == 1


def test_the_values_kubernetes_gives() -> None:
    assert parse_quantity("1e3").value() == 1000
    assert parse_quantity("1Ki").value() == 1024
    assert parse_quantity("1E").value() == 10**18
    assert parse_quantity("0.1").milli_value() == 100
    assert parse_quantity("-1").value() == -1
    assert parse_quantity("-1").milli_value() == -1000
    assert parse_quantity("0.1m").milli_value() == 1  # rounded up to a whole milli
    assert parse_quantity(str(INT64_MAX)).value() == INT64_MAX
    with pytest.raises(ValueError, match="64-bit"):
        parse_quantity(str(INT64_MAX + 1)).value()
    with pytest.raises(ValueError, match="64-bit"):
        parse_quantity("9223372036854775807").milli_value()


# ----- properties against an independent reading of the grammar -----

_SUFFIX_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
_BIN_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_REF = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$")


def reference(text: str) -> Fraction:
    """The value the Go parser gives, computed the obvious way with exact fractions."""
    m = _REF.match(text)
    assert m is not None
    sign, whole, frac, suffix = m.groups()
    amount = Fraction(int(whole or "0")) + (
        Fraction(int(frac), 10 ** len(frac)) if frac else Fraction(0)
    )
    binary = suffix in _BIN_EXP
    if binary:
        amount *= 2 ** _BIN_EXP[suffix]
    elif suffix in _SUFFIX_EXP:
        amount *= Fraction(10) ** _SUFFIX_EXP[suffix]
    else:
        amount *= Fraction(10) ** int(suffix[1:])
    if amount and amount % NANO:
        amount = (amount // NANO + 1) * NANO
    if binary:
        amount = min(amount, Fraction(INT64_MAX))
    return -amount if sign == "-" else amount


numbers = st.builds(
    lambda whole, frac: whole + (f".{frac}" if frac is not None else ""),
    st.text("0123456789", min_size=1, max_size=22),
    st.none() | st.text("0123456789", max_size=14),
)
suffixes = st.sampled_from([*_SUFFIX_EXP, *_BIN_EXP]) | st.builds(
    lambda e, sign: f"e{sign}{e}", st.integers(0, 40), st.sampled_from(["", "+", "-"])
)


@given(sign=st.sampled_from(["", "+", "-"]), number=numbers, suffix=suffixes)
def test_parse_matches_reference(sign: str, number: str, suffix: str) -> None:
    text = sign + number + suffix
    assert value(parse_quantity(text)) == reference(text)


@given(number=numbers, suffix=suffixes)
def test_milli_value_is_ceiling(number: str, suffix: str) -> None:
    q = parse_quantity(number + suffix)
    exact = value(q) * 1000
    if exact <= INT64_MAX:
        ceiling = -((-exact.numerator) // exact.denominator)
        assert q.milli_value() == ceiling


@given(n=st.integers(0, 2**40), suffix=st.sampled_from(sorted(_BIN_EXP)))
def test_binary_suffixes(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}").value() == min(n * 2 ** _BIN_EXP[suffix], INT64_MAX)


@given(a=numbers, b=numbers)
def test_cmp_agrees_with_values(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert qa.cmp(qb) == (value(qa) > value(qb)) - (value(qa) < value(qb))


@given(st.text(max_size=30))
def test_anything_else_is_an_input_error(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_quantity(text)
