from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.operator.selector import join_selectors, parse_label_selector


@pytest.mark.parametrize(
    ("text", "labels", "match"),
    [
        ("", {}, True),
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {}, True),  # != matches a missing key, as in apimachinery
        ("app in (web, api)", {"app": "api"}, True),
        ("app notin (web,api)", {}, True),
        ("app notin (web,api)", {"app": "web"}, False),
        ("batch", {"batch": ""}, True),
        ("!batch", {"batch": "x"}, False),
        ("gen>3", {"gen": "4"}, True),
        ("gen<3", {"gen": "x"}, False),
        ("a=1,b in (2,3),!c", {"a": "1", "b": "3"}, True),
        ("nvidia.com/gpu-driver-upgrade-drain.skip!=true", {"x": "y"}, True),
    ],
)
def test_matching(text: str, labels: dict[str, str], match: bool) -> None:
    assert parse_label_selector(text).matches(labels) is match


@pytest.mark.parametrize("text", ["a in (", "a in ()", "=x", "a=b=c", "a b", "a,,b", "-a=1", "a>x"])
def test_malformed_selectors_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError, match="label selector"):
        parse_label_selector(text)


def test_join() -> None:
    assert join_selectors("", "a!=true") == "a!=true"
    assert join_selectors("x=1", "a!=true") == "x=1,a!=true"


@given(st.text(max_size=30))
def test_parser_only_raises_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_label_selector(text)
