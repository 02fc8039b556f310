"""PromQL lexing and parsing: precedence, type checks, and errors that name the construct."""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.promql import Scalar, evaluate, parse
from gpuplane.autoscaler.promql.ast import (
    Aggregate,
    Binary,
    Call,
    MatrixSelector,
    VectorSelector,
)
from gpuplane.autoscaler.promql.lexer import Tok, duration_seconds, tokenize
from gpuplane.autoscaler.promql.matchers import LabelMatcher, RegexError, compile_regex
from gpuplane.core.errors import InputError
from gpuplane.core.tsdb import SeriesStore


def scalar(q: str) -> float:
    value = evaluate(q, SeriesStore(), 0.0)
    assert isinstance(value, Scalar)
    return value.value


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("1 - 2 - 3", -4),
        ("10 / 2 / 5", 1),
        ("2 * 3 % 4", 2),
        ("2 ^ 3 ^ 2", 512),
        ("-2 ^ 2", -4),
        ("2 * -3", -6),
        ("1 + 1 == bool 2", 1),
        ("1 < bool 2 == bool 1", 1),
        ("0x10 + 1e1 + .5", 26.5),
        ("7 % -3", 1),
        ("-7 % 3", -1),
    ],
)
def test_precedence_and_arithmetic(query: str, want: float) -> None:
    assert scalar(query) == want


def test_ieee_division_and_special_numbers() -> None:
    assert scalar("1 / 0") == math.inf and scalar("-1 / 0") == -math.inf
    assert math.isnan(scalar("0 / 0")) and math.isnan(scalar("NaN"))
    assert scalar("Inf") == math.inf and math.isnan(scalar("5 % 0"))


def test_lexer_tokens_strings_and_durations() -> None:
    toks = tokenize('rate(x{a="b\\n",c=~`d.*`}[1h30m]) # comment')
    kinds = [t.kind for t in toks]
    assert Tok.DURATION in kinds and kinds[-1] is Tok.EOF
    strings = [t.text for t in toks if t.kind is Tok.STRING]
    assert strings == ["b\n", "d.*"]
    assert duration_seconds("1h30m") == 5400 and duration_seconds("250ms") == 0.25


def test_tree_shapes() -> None:
    node = parse('sum by (le) (rate(foo_bucket{job="api"}[5m]))')
    assert isinstance(node, Aggregate) and node.grouping == ("le",) and not node.without
    suffix = parse("sum(foo) without (pod, gpu)")
    assert isinstance(suffix, Aggregate) and suffix.without and suffix.grouping == ("pod", "gpu")
    sel = parse('{__name__=~"up|down", job!=""}')
    assert isinstance(sel, VectorSelector) and sel.name is None
    binop = parse("a / on(pod) b")
    assert isinstance(binop, Binary) and binop.matching is not None and binop.matching.on
    case_insensitive = parse("SUM BY (le) (foo)")
    assert isinstance(case_insensitive, Aggregate)


@pytest.mark.parametrize(
    ("query", "fragment", "column"),
    [
        ("foo offset 5m", "the offset modifier is not supported", 5),
        ("foo @ 100", "the @ modifier is not supported", 5),
        ("rate(foo[5m:1m])", "a subquery ([range:step]) is not supported", 9),
        ("topk(3, foo)", "the aggregation 'topk' is not supported", 1),
        (
            "label_replace(foo, 'a', 'b', 'c', 'd')",
            "the function 'label_replace' is not supported",
            1,
        ),
        ("a / on(x) group_left b", "group_left (many-to-one matching) is not supported", 11),
        ("a atan2 b", "the atan2 operator is not supported", 3),
        ("frobnicate(foo)", 'unknown function with name "frobnicate"', 1),
        (
            "rate(foo)",
            'expected type range vector in call to function "rate", got instant vector',
            6,
        ),
        ("sum(foo[5m])", "expected type instant vector in aggregation expression", 5),
        ("histogram_quantile(foo, bar)", "expected type scalar", 20),
        ("1 > 2", "comparisons between scalars must use BOOL modifier", 3),
        ("1 and foo", 'set operator "and" not allowed in binary scalar expression', 3),
        ("foo + bool bar", "bool modifier can only be used on comparison operators", 7),
        ('{job=~".*"}', "vector selector must contain at least one non-empty matcher", 1),
        ('foo{__name__="bar"}', 'metric name must not be set twice: "foo" or "bar"', 1),
        ("(foo + bar)[5m]", "ranges only allowed for vector selectors", 12),
        ("foo[0s]", "invalid range '0s': must be positive", 5),
        ("foo[5m]", "the query gives a range vector", 1),
        ("sum(foo", "unexpected end of query", 8),
        ('foo{a="b"', "unexpected end of query", 10),
        ('foo{a="unterminated}', "unterminated quoted string", 7),
        ("5min", "bad number or duration syntax", 1),
        ("", "empty query", 1),
        (
            "- 'str'",
            "unary expression only allowed on expressions of type scalar or instant vector",
            1,
        ),
        ('foo{a=~"(?=x)"}', "look-around assertions are not supported by RE2", 8),
        ('foo{a=~"(a)\\\\1"}', "back-references are not supported by RE2", 8),
    ],
)
def test_errors_name_the_construct_and_position(query: str, fragment: str, column: int) -> None:
    with pytest.raises(InputError) as err:
        evaluate(query, SeriesStore(), 0.0)
    assert fragment in str(err.value)
    assert f"column {column}" in str(err.value)


def test_an_escaped_backslash_is_not_a_back_reference() -> None:
    assert LabelMatcher.of("a", "=~", r"x\\1").matches("x\\1")


def test_error_location_has_the_line() -> None:
    with pytest.raises(InputError) as err:
        parse("sum(\n  foo offset 1m)", source="my.query")
    assert err.value.location.line == 2 and err.value.location.source == "my.query"


def test_regex_semantics_are_anchored_and_dotall() -> None:
    m = LabelMatcher.of("pod", "=~", "gpu")
    assert m.matches("gpu") and not m.matches("gpu-0")
    assert LabelMatcher.of("a", "=~", "a.b").matches("a\nb")
    assert LabelMatcher.of("a", "!~", "x|y").matches("z")
    assert LabelMatcher.of("a", "=~", "(?i)GPU").matches("gpu")
    assert LabelMatcher.of("a", "=~", "[[:digit:]]+").matches("42")
    assert LabelMatcher.of("a", "=~", r"\Qa.b\E").matches("a.b")
    assert not LabelMatcher.of("a", "=~", r"\Qa.b\E").matches("axb")
    for bad in ("(?<!x)y", "a++", r"(a)\1", "(?>a)", r"\pL"):
        with pytest.raises(RegexError):
            compile_regex(bad)


def test_matrix_selector_range() -> None:
    node = parse("rate(foo[90s])")
    assert isinstance(node, Call)
    arg = node.args[0]
    assert isinstance(arg, MatrixSelector) and arg.range_s == 90


ALPHABET = "abcxyz_:{}()[]<>=!~+-*/%^,\"'` 0123456789.#\nsumbyratelo@"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_fuzz_only_input_errors(text: str) -> None:
    """Any text either evaluates or is an InputError (never another exception)."""
    with contextlib.suppress(InputError):
        evaluate(text, SeriesStore(), 0.0)
