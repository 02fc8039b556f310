"""Quantities as manifests hold them (``Quantity.UnmarshalJSON``); the parser's own cases are in
tests/unit/api/test_quantity.py."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity
from tests.unit.api.test_quantity import reference, value


def test_manifest_values_are_trimmed_and_numbers_accepted() -> None:
    assert value(parse_manifest_quantity(" 1 ")) == 1  # Quantity.UnmarshalJSON trims
    assert value(parse_manifest_quantity(2)) == 2
    assert value(parse_manifest_quantity(0.5)) == Fraction(1, 2)
    assert value(parse_manifest_quantity(1e21)) == 10**21
    assert value(parse_manifest_quantity(None)) == 0  # JSON null is a zero quantity
    for bad in (True, [1], {"a": 1}, float("nan"), float("inf")):
        with pytest.raises(InputError):
            parse_manifest_quantity(bad)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e18))
def test_yaml_floats_read_as_their_decimal_text(x: float) -> None:
    assert value(parse_manifest_quantity(x)) == reference(repr(x).replace("e+", "e"))
