"""Parse and check a DRA selector in gpuplane's CEL subset.

Precedence as in cel-spec: ``||`` < ``&&`` < relations (``== != < <= > >= in``) < ``!`` <
member access (``.field``, ``[index]``, ``.method(...)``) < primaries. Anything outside the subset
(arithmetic, the conditional operator, optional selection ``.?``, maps, macros such as ``all`` or
``exists``, ``cel.bind``, ``matches``...) is an InputError naming the construct and its column,
never silently misread. The checks the real compiler makes that matter here are made too: the
only variable is ``device`` with fields ``driver``, ``attributes`` and ``capacity``; functions
take the right number of arguments; the expression must be boolean (or of unknown type).
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra.cel.ast_nodes import (
    Binary,
    Call,
    Has,
    Ident,
    Index,
    ListLit,
    Lit,
    Node,
    Not,
)
from gpuplane.slicing.dra.cel.ast_nodes import Select as Sel
from gpuplane.slicing.dra.cel.lexer import Token, cel_error, tokenize, unsupported
from gpuplane.slicing.dra.cel.semver import is_semver
from gpuplane.slicing.dra.quantity import parse_quantity

RELATIONS = ("==", "!=", "<", "<=", ">", ">=")
DEVICE_FIELDS = {"driver": "string", "attributes": "map", "capacity": "map"}
# name -> (number of arguments, result type)
GLOBAL_FUNCTIONS = {
    "quantity": (1, "quantity"),
    "isQuantity": (1, "bool"),
    "semver": (1, "semver"),
    "isSemver": (1, "bool"),
}
MEMBER_FUNCTIONS = {
    "compareTo": (1, "int"),
    "isGreaterThan": (1, "bool"),
    "isLessThan": (1, "bool"),
    "major": (0, "int"),
    "minor": (0, "int"),
    "patch": (0, "int"),
    "asInteger": (0, "int"),
    "startsWith": (1, "bool"),
    "endsWith": (1, "bool"),
    "contains": (1, "bool"),
}
_MACROS = ("all", "exists", "exists_one", "map", "filter", "optMap", "optFlatMap")
# How deeply sub-expressions (parentheses, list items, arguments, indexes, '!') may nest.
# cel-go's parser stops at 250 ("expression recursion limit exceeded", parser.MaxRecursionDepth
# default, which the API server keeps); this recursive-descent parser spends several Python frames
# a level and the checker and evaluator recurse again, so gpuplane stops earlier, at 100: far above
# any real selector, and far below Python's recursion limit.
MAX_DEPTH = 100


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0

    def enter(self, col: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise cel_error(
                f"expression recursion limit exceeded: {MAX_DEPTH}",
                col,
                expected=f"sub-expressions nested at most {MAX_DEPTH} deep",
            )

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def take(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == text

    def expect(self, text: str) -> Token:
        if not self.at(text):
            found = self.tok.text or "end of expression"
            raise cel_error(f"expected {text!r} but found {found!r}", self.tok.col, expected=None)
        return self.take()

    def parse(self) -> Node:
        node = self.expr()
        if self.tok.kind != "eof":
            raise cel_error(f"unexpected {self.tok.text!r}", self.tok.col, expected=None)
        return node

    def expr(self) -> Node:
        self.enter(self.tok.col)
        node = self.binary(0)
        if self.at("?"):
            raise unsupported("conditional operator '?:'", self.tok.col)
        self.depth -= 1
        return node

    def binary(self, level: int) -> Node:
        ops = (("||",), ("&&",), (*RELATIONS, "in"))
        if level == len(ops):
            return self.unary()
        node = self.binary(level + 1)
        while (self.tok.kind == "punct" and self.tok.text in ops[level]) or (
            level == 2 and self.tok.kind == "ident" and self.tok.text == "in"
        ):
            op = self.take()
            node = Binary(op.text, node, self.binary(level + 1), op.col)
        return node

    def unary(self) -> Node:
        if self.at("!"):
            col = self.take().col
            self.enter(col)
            node: Node = Not(self.unary(), col)
            self.depth -= 1
            return node
        if self.at("-"):
            col = self.take().col
            if self.tok.kind == "int":
                return Lit(-int(self.take().value), col)
            raise unsupported("operator '-'", col)
        node = self.member()
        if self.tok.kind == "punct" and self.tok.text in "+-*/%":
            raise unsupported(f"operator '{self.tok.text}'", self.tok.col)
        return node

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.at(".?"):
                raise unsupported("optional field selection '.?'", self.tok.col)
            if self.at("."):
                self.take()
                name = self.take()
                if name.kind != "ident":
                    raise cel_error("expected a field name after '.'", name.col, expected=None)
                node = self.call(node, name) if self.at("(") else Sel(node, name.text, name.col)
            elif self.at("["):
                col = self.take().col
                index = self.expr()
                self.expect("]")
                node = Index(node, index, col)
            else:
                return node

    def args(self) -> tuple[Node, ...]:
        self.expect("(")
        items: list[Node] = []
        while not self.at(")"):
            items.append(self.expr())
            if not self.at(")"):
                self.expect(",")
        self.take()
        return tuple(items)

    def call(self, target: Node | None, name: Token) -> Node:
        if target is not None and name.text in _MACROS:
            raise unsupported(f"macro '{name.text}'", name.col)
        if isinstance(target, Ident) and target.name == "cel":
            raise unsupported(f"macro 'cel.{name.text}'", target.col)
        args = self.args()
        if target is None and name.text == "has":
            if len(args) != 1 or not isinstance(args[0], Sel):
                raise cel_error("invalid argument to has() macro", name.col, expected=None)
            return Has(args[0], name.col)
        return Call(target, name.text, args, name.col)

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind == "int":
            return Lit(int(tok.value), tok.col)
        if tok.kind == "string":
            return Lit(str(tok.value), tok.col)
        if tok.kind == "ident":
            if tok.text in ("true", "false"):
                return Lit(tok.text == "true", tok.col)
            if tok.text == "null":
                raise unsupported("null literal", tok.col)
            if self.at("("):
                return self.call(None, tok)
            return Ident(tok.text, tok.col)
        if tok.text == "(":
            node = self.expr()
            self.expect(")")
            return node
        if tok.text == "[":
            return self.list_literal(tok.col)
        if tok.text == "{":
            raise unsupported("map literal", tok.col)
        found = tok.text or "end of expression"
        raise cel_error(f"unexpected {found!r}", tok.col, expected=None)

    def list_literal(self, col: int) -> Node:
        items: list[Node] = []
        while not self.at("]"):
            items.append(self.expr())
            if not self.at("]"):
                self.expect(",")
        self.take()
        return ListLit(tuple(items), col)


def static_type(node: Node) -> str:
    """The type the checker can tell (``dyn`` when it depends on a device's attributes), and
    the checks of names, fields and arities on the way."""
    if isinstance(node, Lit):
        return {bool: "bool", int: "int", str: "string"}[type(node.value)]
    if isinstance(node, Ident):
        if node.name != "device":
            raise cel_error(f"undeclared reference to '{node.name}'", node.col, expected="device")
        return "device"
    if isinstance(node, Sel):
        return _select_type(node)
    if isinstance(node, Index):
        static_type(node.operand)
        static_type(node.index)
        return "dyn"
    if isinstance(node, Call):
        return _call_type(node)
    if isinstance(node, ListLit):
        for item in node.items:
            static_type(item)
        return "list"
    if isinstance(node, Not):
        _want_bool(node.operand, "!")
        return "bool"
    if isinstance(node, Has):
        static_type(node.select.operand)
        return "bool"
    if node.op in ("&&", "||"):
        _want_bool(node.left, node.op)
        _want_bool(node.right, node.op)
        return "bool"
    static_type(node.left)
    right = static_type(node.right)
    if node.op == "in" and right not in ("list", "map", "dyn"):
        raise cel_error("the right side of 'in' must be a list", _col(node.right), None)
    return "bool"


def _want_bool(node: Node, op: str) -> None:
    kind = static_type(node)
    if kind not in ("bool", "dyn"):
        raise cel_error(f"operator '{op}' needs a bool operand, not {kind}", _col(node), None)


def _col(node: Node) -> int:
    return node.col


def _select_type(node: Sel) -> str:
    base = static_type(node.operand)
    if base == "device":
        if node.field not in DEVICE_FIELDS:
            fields = ", ".join(DEVICE_FIELDS)
            raise cel_error(f"undefined field '{node.field}'", node.col, expected=fields)
        return DEVICE_FIELDS[node.field]
    return "dyn"


def _call_type(node: Call) -> str:
    table = GLOBAL_FUNCTIONS if node.target is None else MEMBER_FUNCTIONS
    if node.name not in table:
        raise unsupported(f"function '{node.name}'", node.col)
    arity, result = table[node.name]
    if len(node.args) != arity:
        raise cel_error(
            f"'{node.name}' takes {arity} argument(s), got {len(node.args)}", node.col, None
        )
    if node.target is not None:
        static_type(node.target)
    for arg in node.args:
        static_type(arg)
    _check_literal_argument(node)
    return result


def _check_literal_argument(node: Call) -> None:
    """A literal passed to quantity()/semver() is checked now, like the Kubernetes CEL
    libraries' compile-time validation of literal arguments."""
    if node.target is not None or node.name not in ("quantity", "semver"):
        return
    arg = node.args[0]
    if not isinstance(arg, Lit):
        return
    if not isinstance(arg.value, str) or isinstance(arg.value, bool):
        raise cel_error(f"{node.name}() takes a string", arg.col, expected=None)
    if node.name == "semver" and not is_semver(arg.value):
        raise cel_error(f"invalid semver {arg.value!r}", arg.col, expected="a version like 1.2.3")
    if node.name == "quantity":
        try:
            parse_quantity(arg.value)
        except InputError as err:
            raise cel_error(err.problem, arg.col, expected=err.expected) from None


def parse_cel(expression: str) -> Node:
    """The checked syntax tree of a selector; InputError naming the construct and column."""
    node = _Parser(expression).parse()
    kind = static_type(node)
    if kind not in ("bool", "dyn"):
        raise cel_error(f"must evaluate to bool or the unknown type, not {kind}", 1, None)
    return node
