"""The PromQL syntax tree. Every node knows its position and its value type, which the parser
checks the way Prometheus's ``checkAST`` does (a range vector only as a function argument,
aggregations over instant vectors, scalar comparisons only with ``bool``...)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gpuplane.autoscaler.promql.matchers import LabelMatcher


class ValueType(Enum):
    SCALAR = "scalar"
    VECTOR = "instant vector"
    MATRIX = "range vector"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class NumberLiteral:
    value: float
    pos: int

    @property
    def type(self) -> ValueType:
        return ValueType.SCALAR


@dataclass(frozen=True, slots=True)
class StringLiteral:
    value: str
    pos: int

    @property
    def type(self) -> ValueType:
        return ValueType.STRING


@dataclass(frozen=True, slots=True)
class VectorSelector:
    """``name{matchers}``; the name, if given, is also the first matcher (``__name__="name"``)."""

    name: str | None
    matchers: tuple[LabelMatcher, ...]
    pos: int

    @property
    def type(self) -> ValueType:
        return ValueType.VECTOR


@dataclass(frozen=True, slots=True)
class MatrixSelector:
    vector: VectorSelector
    range_s: float
    pos: int

    @property
    def type(self) -> ValueType:
        return ValueType.MATRIX


@dataclass(frozen=True, slots=True)
class Call:
    func: str
    args: tuple[Expr, ...]
    pos: int
    result: ValueType

    @property
    def type(self) -> ValueType:
        return self.result


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``op by (grouping) (expr)`` / ``op without (grouping) (expr)`` (either order)."""

    op: str
    expr: Expr
    grouping: tuple[str, ...]
    without: bool
    pos: int

    @property
    def type(self) -> ValueType:
        return ValueType.VECTOR


@dataclass(frozen=True, slots=True)
class VectorMatching:
    """``on(labels)`` (``on`` True) or ``ignoring(labels)``; absent means match on all labels."""

    on: bool
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    lhs: Expr
    rhs: Expr
    return_bool: bool
    matching: VectorMatching | None
    pos: int

    @property
    def type(self) -> ValueType:
        both_scalar = self.lhs.type is ValueType.SCALAR and self.rhs.type is ValueType.SCALAR
        return ValueType.SCALAR if both_scalar else ValueType.VECTOR


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "+" or "-"
    expr: Expr
    pos: int

    @property
    def type(self) -> ValueType:
        return self.expr.type


@dataclass(frozen=True, slots=True)
class Paren:
    expr: Expr
    pos: int

    @property
    def type(self) -> ValueType:
        return self.expr.type


Expr = (
    NumberLiteral
    | StringLiteral
    | VectorSelector
    | MatrixSelector
    | Call
    | Aggregate
    | Binary
    | Unary
    | Paren
)

COMPARISON_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
SET_OPS = frozenset({"and", "or", "unless"})
ARITHMETIC_OPS = frozenset({"+", "-", "*", "/", "%", "^"})
