"""``advanced.scalingModifiers.formula``: the expr-lang expression KEDA evaluates over the
triggers' current values (named by each trigger's ``name``) to build one composite metric.

This is the numeric part of expr-lang (github.com/expr-lang/expr) that scaling formulas use:
numbers, trigger names, ``+ - * / % ** ^``, comparisons, ``and or not && || !``, the ternary
``c ? a : b``, nil-coalescing ``a ?? b`` (a trigger left out by a ``triggerScoped`` fallback is
``nil``), parentheses and the functions ``abs ceil floor round max min int float``. Precedence,
lowest first: ``?:``; ``??``; ``or``; ``and``; comparisons; ``+ -``; ``* / %``; ``** ^``
(right-associative); unary. KEDA compiles the formula with the trigger names as its environment
and requires a number as the result, so an unknown name is an error at load time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpuplane.core.errors import InputError, Location

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|\?\?|&&|\|\||==|!=|<=|>=|[-+*/%^()<>?:!,]))"
)
_BINARY_LEVELS: list[tuple[str, ...]] = [
    ("??",),
    ("or", "||"),
    ("and", "&&"),
    ("==", "!=", "<", ">", "<=", ">="),
    ("+", "-"),
    ("*", "/", "%"),
]
_FUNCS: dict[str, Callable[..., float]] = {
    "abs": abs,
    # Go's math.Ceil/Floor/Round return ±Inf and NaN unchanged (Python's raise on them).
    "ceil": lambda x: float(math.ceil(x)) if math.isfinite(x) else x,
    "floor": lambda x: float(math.floor(x)) if math.isfinite(x) else x,
    "round": lambda x: (
        x
        if not math.isfinite(x)
        else float(math.floor(x + 0.5))
        if x >= 0
        else -float(math.floor(-x + 0.5))
    ),
    "max": max,
    "min": min,
    "int": lambda x: float(math.trunc(x)),
    "float": float,
}

Value = float | bool | None


@dataclass(frozen=True, slots=True)
class Lit:
    value: Value


@dataclass(frozen=True, slots=True)
class Var:
    name: str


@dataclass(frozen=True, slots=True)
class CallNode:
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Cond:
    cond: Node
    yes: Node
    no: Node


@dataclass(frozen=True, slots=True)
class UnaryOp:
    op: str  # "-", "+", "!"
    operand: Node


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str
    lhs: Node
    rhs: Node


Node = Lit | Var | CallNode | Cond | UnaryOp | BinOp


class FormulaError(ValueError):
    """A formula that does not compile or fails to evaluate (expr-lang's wording)."""


@dataclass(frozen=True, slots=True)
class Formula:
    text: str
    tree: Node
    names: frozenset[str]

    def evaluate(self, env: Mapping[str, float | None]) -> float:
        """The formula's value; every failure is a FormulaError, which KEDA reports as the
        composite metric's error, never an exception of another kind."""
        try:
            value = _eval(self.tree, env)
        except FormulaError:
            raise
        except (ArithmeticError, ValueError, RecursionError) as err:
            raise FormulaError(f"cannot evaluate the formula: {err}") from None
        if isinstance(value, bool) or value is None:
            raise FormulaError(f"expected float64, but got {_type(value)}")
        return float(value)


def _type(v: Value) -> str:
    return "nil" if v is None else "bool" if isinstance(v, bool) else "float64"


class _Parser:
    def __init__(self, text: str, names: frozenset[str]) -> None:
        self.text = text
        self.names = names
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise FormulaError(f"unexpected token {text[pos:].strip()[:1]!r} (1:{pos + 1})")
            kind = m.lastgroup or "op"
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self, want: str | None = None) -> tuple[str, str, int]:
        if self.i >= len(self.tokens):
            raise FormulaError(f"unexpected end of expression (1:{len(self.text) + 1})")
        tok = self.tokens[self.i]
        if want is not None and tok[1] != want:
            raise FormulaError(f"expected {want!r}, found {tok[1]!r} (1:{tok[2] + 1})")
        self.i += 1
        return tok

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            yes = self.ternary()
            self.take(":")
            return Cond(cond, yes, self.ternary())
        return cond

    def binary(self, level: int) -> Node:
        if level == len(_BINARY_LEVELS):
            return self.power()
        lhs = self.binary(level + 1)
        while self.peek() in _BINARY_LEVELS[level]:
            op = self.take()[1]
            lhs = BinOp(op, lhs, self.binary(level + 1))
        return lhs

    def power(self) -> Node:
        base = self.unary()
        if self.peek() in ("**", "^"):
            self.take()
            return BinOp("**", base, self.power())
        return base

    def unary(self) -> Node:
        # expr-lang binds a unary operator looser than ** / ^: -2 ^ 2 is -(2 ^ 2).
        if self.peek() in ("-", "+", "!", "not"):
            op = self.take()[1]
            return UnaryOp("!" if op == "not" else op, self.power())
        return self.primary()

    def primary(self) -> Node:
        kind, text, pos = self.take()
        if kind == "num":
            return Lit(float(text))
        if text == "(":
            inner = self.ternary()
            self.take(")")
            return inner
        if kind == "name":
            if text == "nil":
                return Lit(None)
            if text in ("true", "false"):
                return Lit(text == "true")
            if self.peek() == "(":
                return self.call(text, pos)
            if text not in self.names:
                raise FormulaError(f"unknown name {text} (1:{pos + 1})")
            return Var(text)
        raise FormulaError(f"unexpected token {text!r} (1:{pos + 1})")

    def call(self, name: str, pos: int) -> Node:
        if name not in _FUNCS:
            raise FormulaError(f"unknown func {name} (1:{pos + 1})")
        self.take("(")
        args: list[Node] = []
        while self.peek() != ")":
            args.append(self.ternary())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return CallNode(name, tuple(args))


def _num(v: Value, op: str) -> float:
    if v is None or isinstance(v, bool):
        raise FormulaError(f"invalid operation: {op} on {_type(v)}")
    return v


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b if b != 0 else (math.nan if a == 0 else math.copysign(math.inf, a))
    if op == "%":
        if b == 0:
            raise FormulaError("integer divide by zero")
        return math.fmod(a, b)
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):
        return math.inf if a > 0 else math.nan


def _logic(op: str, node: BinOp, env: Mapping[str, float | None]) -> Value:
    lhs = _eval(node.lhs, env)
    if not isinstance(lhs, bool):
        raise FormulaError(f"invalid operation: {op} ({_type(lhs)})")
    if (op in ("or", "||")) == lhs:
        return lhs
    rhs = _eval(node.rhs, env)
    if not isinstance(rhs, bool):
        raise FormulaError(f"invalid operation: {op} ({_type(rhs)})")
    return rhs


def _binary(node: BinOp, env: Mapping[str, float | None]) -> Value:
    op = node.op
    if op in ("or", "||", "and", "&&"):
        return _logic(op, node, env)
    lhs = _eval(node.lhs, env)
    if op == "??":
        return lhs if lhs is not None else _eval(node.rhs, env)
    rhs = _eval(node.rhs, env)
    if op in ("==", "!="):
        return (lhs == rhs) == (op == "==")
    a, b = _num(lhs, op), _num(rhs, op)
    if op in ("<", ">", "<=", ">="):
        return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
    return _arith(op, a, b)


def _eval(node: Node, env: Mapping[str, float | None]) -> Value:
    if isinstance(node, Lit):
        return node.value
    if isinstance(node, Var):
        return env.get(node.name)
    if isinstance(node, CallNode):
        args = [_num(_eval(a, env), node.name) for a in node.args]
        try:
            return float(_FUNCS[node.name](*args))
        except (TypeError, ValueError):
            raise FormulaError(f"invalid number of arguments to {node.name}") from None
    if isinstance(node, Cond):
        cond = _eval(node.cond, env)
        if not isinstance(cond, bool):
            raise FormulaError(f"non-bool expression (type {_type(cond)}) used as condition")
        return _eval(node.yes if cond else node.no, env)
    if isinstance(node, UnaryOp):
        v = _eval(node.operand, env)
        if node.op == "!":
            if not isinstance(v, bool):
                raise FormulaError(f"invalid operation: ! ({_type(v)})")
            return not v
        return -_num(v, "-") if node.op == "-" else _num(v, "+")
    return _binary(node, env)


def compile_formula(text: str, names: frozenset[str]) -> Formula:
    """Parse ``text`` with ``names`` as the only variables; FormulaError if it does not compile."""
    parser = _Parser(text, names)
    if not parser.tokens:
        raise FormulaError("formula is empty")
    tree = parser.ternary()
    if parser.i != len(parser.tokens):
        _, token, pos = parser.tokens[parser.i]
        raise FormulaError(f"unexpected token {token!r} (1:{pos + 1})")
    return Formula(text, tree, names)


def formula_input_error(err: FormulaError, field: str) -> InputError:
    return InputError(
        f"error compiling formula: {err}",
        expected="an expression over the triggers' names, e.g. (queue + backlog) / 2",
        location=Location(field=field),
    )
