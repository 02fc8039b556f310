from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.core.cpuset import format_cpu_list, parse_cpu_list
from gpuplane.core.errors import InputError


def test_parse_ranges_and_singles() -> None:
    assert parse_cpu_list("0-3,8,10-11") == (0, 1, 2, 3, 8, 10, 11)
    assert parse_cpu_list("") == ()
    assert len(parse_cpu_list("0-55,112-167")) == 112


@pytest.mark.parametrize("bad", ["a", "1-", "3-1", "1,,2", "0-3,x"])
def test_bad_lists_are_input_errors(bad: str) -> None:
    with pytest.raises(InputError, match="expected"):
        parse_cpu_list(bad)


@given(st.sets(st.integers(min_value=0, max_value=512), max_size=64))
def test_format_parse_round_trip(ids: set[int]) -> None:
    text = format_cpu_list(sorted(ids))
    assert parse_cpu_list(text) == tuple(sorted(ids))
