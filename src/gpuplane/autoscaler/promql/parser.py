"""A recursive-descent PromQL parser with Prometheus's operator precedence and type checks.

Precedence, lowest first (``promql/parser/generated_parser.y``): ``or``; ``and``, ``unless``;
``== != <= < >= >``; ``+ -``; ``* / %``; ``^`` (right-associative). A unary ``-``/``+`` binds like
``*``, so ``-2 ^ 2`` is ``-(2 ^ 2)``. Constructs outside the subset (``offset``, ``@``, subqueries,
``group_left``/``group_right``, functions and aggregations not implemented) are rejected with an
error that names the construct and where it is.
"""

from __future__ import annotations

import math
import re

from gpuplane.autoscaler.promql.ast import (
    COMPARISON_OPS,
    SET_OPS,
    Aggregate,
    Binary,
    Call,
    Expr,
    MatrixSelector,
    NumberLiteral,
    Paren,
    StringLiteral,
    Unary,
    ValueType,
    VectorMatching,
    VectorSelector,
)
from gpuplane.autoscaler.promql.errors import query_error, unsupported
from gpuplane.autoscaler.promql.lexer import Tok, Token, duration_seconds, number_value, tokenize
from gpuplane.autoscaler.promql.matchers import LabelMatcher, RegexError
from gpuplane.autoscaler.promql.signatures import (
    AGGREGATIONS,
    FUNCTIONS,
    KEYWORDS,
    UNSUPPORTED_AGGREGATIONS,
    UNSUPPORTED_FUNCTIONS,
)
from gpuplane.core.errors import InputError, Location

_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "unless": 2,
    **dict.fromkeys(COMPARISON_OPS, 3),
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "%": 5,
    "atan2": 5,
    "^": 6,
}
_SYMBOL_OPS = {
    Tok.ADD: "+",
    Tok.SUB: "-",
    Tok.MUL: "*",
    Tok.DIV: "/",
    Tok.MOD: "%",
    Tok.POW: "^",
    Tok.EQL: "==",
    Tok.NEQ: "!=",
    Tok.LSS: "<",
    Tok.LTE: "<=",
    Tok.GTR: ">",
    Tok.GTE: ">=",
}
_MATCH_OPS = {Tok.ASSIGN: "=", Tok.NEQ: "!=", Tok.REGEX: "=~", Tok.NREGEX: "!~"}
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_SCALAR_OR_VECTOR = (ValueType.SCALAR, ValueType.VECTOR)


class _Parser:
    def __init__(self, query: str, source: str | None) -> None:
        self.query = query
        self.source = source
        try:
            self.tokens = tokenize(query)
        except InputError as err:
            # The lexer does not know the query's name; its errors get it here.
            loc = err.location
            if source is not None:
                loc = Location(source, loc.line, loc.field)
            raise InputError(err.problem, expected=err.expected, location=loc) from None
        self.i = 0

    # -- token helpers -------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def error(self, tok: Token | int, problem: str, expected: str | None = None) -> InputError:
        pos = tok if isinstance(tok, int) else tok.pos
        return query_error(self.query, pos, problem, expected, self.source)

    def expect(self, kind: Tok, what: str) -> Token:
        tok = self.next()
        if tok.kind is not kind:
            found = "end of query" if tok.kind is Tok.EOF else repr(tok.text)
            raise self.error(tok, f"unexpected {found}", expected=what)
        return tok

    # -- expressions ---------------------------------------------------------------------
    def binary_op(self) -> str | None:
        tok = self.peek()
        if tok.kind in _SYMBOL_OPS:
            return _SYMBOL_OPS[tok.kind]
        if tok.keyword() in ("and", "or", "unless", "atan2"):
            return tok.keyword()
        return None

    def expr(self, min_prec: int = 1) -> Expr:
        lhs = self.unary()
        while True:
            op = self.binary_op()
            if op is None or _PRECEDENCE[op] < min_prec:
                return lhs
            op_tok = self.next()
            if op == "atan2":
                raise unsupported(self.query, op_tok.pos, "the atan2 operator", self.source)
            return_bool, matching = self.modifiers(op, op_tok)
            prec = _PRECEDENCE[op]
            rhs = self.expr(prec if op == "^" else prec + 1)
            lhs = self.check_binary(Binary(op, lhs, rhs, return_bool, matching, op_tok.pos))

    def modifiers(self, op: str, op_tok: Token) -> tuple[bool, VectorMatching | None]:
        return_bool = False
        if self.peek().keyword() == "bool":
            if op not in COMPARISON_OPS:
                raise self.error(
                    self.peek(), "bool modifier can only be used on comparison operators"
                )
            self.next()
            return_bool = True
        matching = None
        if self.peek().keyword() in ("on", "ignoring"):
            on = self.next().keyword() == "on"
            matching = VectorMatching(on, self.label_list())
        kw = self.peek().keyword()
        if kw in ("group_left", "group_right"):
            raise unsupported(
                self.query, self.peek().pos, f"{kw} (many-to-one matching)", self.source
            )
        return return_bool, matching

    def check_binary(self, node: Binary) -> Binary:
        lt, rt = node.lhs.type, node.rhs.type
        if lt not in _SCALAR_OR_VECTOR or rt not in _SCALAR_OR_VECTOR:
            raise self.error(
                node.pos, "binary expression must contain only scalar and instant vector types"
            )
        if node.op in SET_OPS and (lt is ValueType.SCALAR or rt is ValueType.SCALAR):
            raise self.error(
                node.pos, f'set operator "{node.op}" not allowed in binary scalar expression'
            )
        if node.op in COMPARISON_OPS and not node.return_bool and lt is rt is ValueType.SCALAR:
            raise self.error(node.pos, "comparisons between scalars must use BOOL modifier")
        if node.matching is not None and (lt is ValueType.SCALAR or rt is ValueType.SCALAR):
            raise self.error(node.pos, "vector matching only allowed between instant vectors")
        return node

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.kind in (Tok.ADD, Tok.SUB):
            self.next()
            operand = self.expr(_PRECEDENCE["^"])
            if operand.type not in _SCALAR_OR_VECTOR:
                raise self.error(
                    tok,
                    "unary expression only allowed on expressions of type scalar or instant "
                    f'vector, got "{operand.type.value}"',
                )
            if isinstance(operand, NumberLiteral):  # Prometheus folds a signed number literal
                value = operand.value if tok.kind is Tok.ADD else -operand.value
                return NumberLiteral(value, tok.pos)
            return Unary(tok.text, operand, tok.pos)
        return self.postfix(self.primary())

    def postfix(self, node: Expr) -> Expr:
        tok = self.peek()
        if tok.kind is Tok.LBRACKET:
            if self.peek(1).kind is Tok.DURATION and self.peek(2).kind is Tok.RBRACKET:
                if not isinstance(node, VectorSelector):
                    raise self.error(tok, "ranges only allowed for vector selectors")
                self.next()
                dur = self.next()
                self.next()
                seconds = duration_seconds(dur.text)
                if seconds <= 0:
                    raise self.error(dur, f"invalid range {dur.text!r}: must be positive")
                node = MatrixSelector(node, seconds, node.pos)
                tok = self.peek()
            else:
                raise unsupported(self.query, tok.pos, "a subquery ([range:step])", self.source)
        if tok.keyword() == "offset":
            raise unsupported(self.query, tok.pos, "the offset modifier", self.source)
        if tok.kind is Tok.AT:
            raise unsupported(self.query, tok.pos, "the @ modifier", self.source)
        return node

    def primary(self) -> Expr:
        tok = self.peek()
        if tok.kind is Tok.NUMBER:
            self.next()
            value = number_value(tok.text)
            if isinstance(value, str):
                raise self.error(tok, f"error parsing number: {value}")
            return NumberLiteral(value, tok.pos)
        if tok.kind is Tok.STRING:
            self.next()
            return StringLiteral(tok.text, tok.pos)
        if tok.kind is Tok.DURATION:
            raise self.error(
                tok, f"unexpected duration {tok.text!r}", expected="a number or an expression"
            )
        if tok.kind is Tok.LPAREN:
            self.next()
            inner = self.expr()
            self.expect(Tok.RPAREN, "')'")
            return Paren(inner, tok.pos)
        if tok.kind is Tok.LBRACE:
            return self.selector(None, tok.pos)
        if tok.kind is Tok.IDENT:
            return self.identifier(tok)
        found = "end of query" if tok.kind is Tok.EOF else repr(tok.text)
        raise self.error(
            tok, f"unexpected {found}", expected="a number, string, selector or function"
        )

    def identifier(self, tok: Token) -> Expr:
        word, kw = tok.text, tok.keyword()
        if kw in ("inf", "nan"):
            self.next()
            return NumberLiteral(math.inf if kw == "inf" else math.nan, tok.pos)
        if kw in AGGREGATIONS or kw in UNSUPPORTED_AGGREGATIONS:
            if kw in UNSUPPORTED_AGGREGATIONS:
                raise unsupported(self.query, tok.pos, f"the aggregation {kw!r}", self.source)
            return self.aggregation()
        if kw in KEYWORDS:
            raise self.error(tok, f"unexpected keyword {word!r}")
        if self.peek(1).kind is Tok.LPAREN:
            return self.call()
        self.next()
        return self.selector(word, tok.pos)

    def call(self) -> Call:
        tok = self.next()
        name = tok.text
        if name not in FUNCTIONS:
            if name in UNSUPPORTED_FUNCTIONS:
                raise unsupported(self.query, tok.pos, f"the function {name!r}", self.source)
            raise self.error(
                tok, f'unknown function with name "{name}"', expected=", ".join(FUNCTIONS)
            )
        self.expect(Tok.LPAREN, "'('")
        args: list[Expr] = []
        while self.peek().kind is not Tok.RPAREN:
            args.append(self.expr())
            if self.peek().kind is Tok.COMMA:
                self.next()
            elif self.peek().kind is not Tok.RPAREN:
                self.expect(Tok.RPAREN, "',' or ')'")
        self.next()
        sig = FUNCTIONS[name]
        if not len(sig.args) - sig.optional <= len(args) <= len(sig.args):
            raise self.error(
                tok, f'expected {len(sig.args)} argument(s) in call to "{name}", got {len(args)}'
            )
        for want, arg in zip(sig.args, args, strict=False):
            if arg.type is not want:
                raise self.error(
                    arg.pos,
                    f'expected type {want.value} in call to function "{name}", '
                    f"got {arg.type.value}",
                )
        return Call(name, tuple(args), tok.pos, sig.result)

    def aggregation(self) -> Aggregate:
        tok = self.next()
        op = tok.keyword()
        grouping: tuple[str, ...] = ()
        without = False
        has_grouping = self.peek().keyword() in ("by", "without")
        if has_grouping:
            without = self.next().keyword() == "without"
            grouping = self.label_list()
        self.expect(Tok.LPAREN, "'(' after the aggregation")
        inner = self.expr()
        if self.peek().kind is Tok.COMMA:
            raise self.error(self.peek(), f"aggregation {op!r} takes one argument")
        self.expect(Tok.RPAREN, "')'")
        if not has_grouping and self.peek().keyword() in ("by", "without"):
            without = self.next().keyword() == "without"
            grouping = self.label_list()
        if inner.type is not ValueType.VECTOR:
            raise self.error(
                inner.pos,
                f"expected type instant vector in aggregation expression, got {inner.type.value}",
            )
        return Aggregate(op, inner, grouping, without, tok.pos)

    def label_list(self) -> tuple[str, ...]:
        self.expect(Tok.LPAREN, "'(' and a list of label names")
        names: list[str] = []
        while self.peek().kind is not Tok.RPAREN:
            tok = self.next()
            if tok.kind is Tok.STRING or (
                tok.kind is Tok.IDENT and _LABEL_NAME.fullmatch(tok.text)
            ):
                names.append(tok.text)
            else:
                raise self.error(
                    tok,
                    f"unexpected {tok.text or 'end of query'!r} in grouping",
                    expected="label names",
                )
            if self.peek().kind is Tok.COMMA:
                self.next()
            elif self.peek().kind is not Tok.RPAREN:
                self.expect(Tok.RPAREN, "',' or ')'")
        self.next()
        return tuple(names)

    def selector(self, name: str | None, pos: int) -> VectorSelector:
        matchers: list[LabelMatcher] = []
        if self.peek().kind is Tok.LBRACE:
            self.next()
            while self.peek().kind is not Tok.RBRACE:
                m, quoted_name = self.matcher()
                if quoted_name is not None:
                    if name is not None:
                        raise self.error(
                            pos, f'metric name must not be set twice: "{name}" or "{quoted_name}"'
                        )
                    name = quoted_name
                else:
                    assert m is not None
                    matchers.append(m)
                if self.peek().kind is Tok.COMMA:
                    self.next()
                elif self.peek().kind is not Tok.RBRACE:
                    self.expect(Tok.RBRACE, "',' or '}'")
            self.next()
        for m in matchers:
            if m.name == "__name__" and name is not None and m.op == "=":
                raise self.error(pos, f'metric name must not be set twice: "{name}" or "{m.value}"')
        if name is not None:
            matchers.insert(0, LabelMatcher.of("__name__", "=", name))
        if not any(not m.matches("") for m in matchers):
            raise self.error(pos, "vector selector must contain at least one non-empty matcher")
        return VectorSelector(name, tuple(matchers), pos)

    def matcher(self) -> tuple[LabelMatcher | None, str | None]:
        tok = self.next()
        if tok.kind is Tok.STRING and self.peek().kind in (Tok.COMMA, Tok.RBRACE):
            return None, tok.text  # Prometheus 3: {"metric.name"} names the metric
        if tok.kind is not Tok.STRING and not (
            tok.kind is Tok.IDENT and _LABEL_NAME.fullmatch(tok.text)
        ):
            raise self.error(
                tok,
                f"unexpected {tok.text or 'end of query'!r} in label matching",
                expected="a label name",
            )
        op_tok = self.next()
        if op_tok.kind not in _MATCH_OPS:
            raise self.error(
                op_tok,
                f"unexpected {op_tok.text or 'end of query'!r} in label matching",
                expected="=, !=, =~ or !~",
            )
        value = self.expect(Tok.STRING, "a quoted label value")
        try:
            return LabelMatcher.of(tok.text, _MATCH_OPS[op_tok.kind], value.text), None
        except RegexError as err:
            raise self.error(value, f"invalid regular expression {value.text!r}: {err}") from None


def parse(query: str, source: str | None = None) -> Expr:
    """The syntax tree of ``query``; any mistake is an InputError naming where it is."""
    p = _Parser(query, source)
    if p.peek().kind is Tok.EOF:
        raise p.error(0, "empty query", expected="a PromQL expression")
    try:
        node = p.expr()
    except RecursionError:
        raise p.error(0, "the expression is nested too deeply to parse") from None
    tok = p.peek()
    if tok.kind is not Tok.EOF:
        if tok.keyword() == "offset":
            raise unsupported(query, tok.pos, "the offset modifier", source)
        raise p.error(
            tok, f"unexpected {tok.text!r}", expected="an operator or the end of the query"
        )
    return node


def parse_query(query: str, source: str | None = None) -> Expr:
    """``parse`` for a query that must give a scalar or an instant vector (what KEDA reads)."""
    node = parse(query, source)
    if node.type not in _SCALAR_OR_VECTOR:
        raise query_error(
            query,
            node.pos,
            f"the query gives a {node.type.value}",
            expected="a scalar or an instant vector (wrap a range selector in rate(), "
            "increase() or *_over_time())",
            source=source,
        )
    return node
