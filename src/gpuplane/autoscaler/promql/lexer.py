"""PromQL tokens, following Prometheus's lexer (``promql/parser/lex.go``).

Identifiers are ``[a-zA-Z_:][a-zA-Z0-9_:]*``; keywords (``by``, ``bool``, ``and`` ...) and the
aggregation names are matched case-insensitively, function names are not. Numbers are decimal,
hexadecimal (``0x1f``), with an exponent, or ``Inf``/``NaN``; a number directly followed by a unit
is a duration (``5m``, ``1h30m``, ``250ms``). Strings are single-, double-quoted (with Go escapes)
or back-quoted (raw). ``#`` starts a comment to the end of the line.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from enum import Enum

from gpuplane.autoscaler.promql.errors import query_error


class Tok(Enum):
    IDENT = "identifier"
    NUMBER = "number"
    DURATION = "duration"
    STRING = "string"
    LPAREN = "("
    RPAREN = ")"
    LBRACE = "{"
    RBRACE = "}"
    LBRACKET = "["
    RBRACKET = "]"
    COMMA = ","
    COLON = ":"
    AT = "@"
    ASSIGN = "="
    EQL = "=="
    NEQ = "!="
    REGEX = "=~"
    NREGEX = "!~"
    LSS = "<"
    LTE = "<="
    GTR = ">"
    GTE = ">="
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    POW = "^"
    EOF = "end of query"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Tok
    text: str
    pos: int  # offset of the token's first character

    def keyword(self) -> str:
        return self.text.lower() if self.kind is Tok.IDENT else ""


_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_WORD_CHAR = re.compile(r"[a-zA-Z0-9_]")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DURATION = re.compile(r"(?:[0-9]+(?:ms|s|m|h|d|w|y))+")
_DURATION_UNIT_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
    "y": 31_536_000_000,
}
_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w|y)")
_OPERATORS = sorted(
    [t for t in Tok if t not in (Tok.IDENT, Tok.NUMBER, Tok.DURATION, Tok.STRING, Tok.EOF)],
    key=lambda t: -len(t.value),
)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


_INT64_MAX = 2**63 - 1


def number_value(text: str) -> float | str:
    """A NUMBER token's value as Prometheus's parser reads it, or Go's error text.

    ``strconv.ParseInt(text, 0, 64)`` comes first, so ``0x1f`` is 31 and a leading zero means
    octal (``010`` is 8); then ``strconv.ParseFloat``, which takes ``08`` or ``1e3`` as decimal,
    refuses a hexadecimal number too large for int64 (it would need a ``p`` exponent) and
    reports an overflow (``1e999``) as out of range instead of returning +Inf.
    """
    if text[:2].lower() == "0x":
        n = int(text[2:], 16)
        if n > _INT64_MAX:
            return f'strconv.ParseFloat: parsing "{text}": invalid syntax'
        return float(n)
    if text.isdigit():
        octal = len(text) > 1 and text[0] == "0"
        if not octal or all(c in "01234567" for c in text):
            n = int(text, 8 if octal else 10)
            if n <= _INT64_MAX:
                return float(n)
    value = float(text)
    if math.isinf(value):
        return f'strconv.ParseFloat: parsing "{text}": value out of range'
    return value


def duration_ms(text: str) -> int:
    """Milliseconds in a PromQL duration (``1h30m`` -> 5400000), exactly."""
    return sum(int(n) * _DURATION_UNIT_MS[u] for n, u in _DURATION_PART.findall(text))


def duration_seconds(text: str) -> float:
    """Seconds in a PromQL duration (``1h30m`` -> 5400); units must not repeat or go upward, and
    the tokenizer has refused any longer than int64 milliseconds."""
    return duration_ms(text) / 1000


def _duration_ordered(text: str) -> bool:
    order = list(_DURATION_UNIT_MS)[::-1]  # y w d h m s ms
    ranks = [order.index(u) for _, u in _DURATION_PART.findall(text)]
    return all(a < b for a, b in itertools.pairwise(ranks))


def _read_string(query: str, pos: int) -> tuple[str, int]:
    """(value, end) of the string literal starting at ``pos``."""
    quote = query[pos]
    i = pos + 1
    if quote == "`":
        end = query.find("`", i)
        if end < 0:
            raise query_error(query, pos, "unterminated raw string")
        return query[i:end], end + 1
    out: list[str] = []
    while i < len(query):
        c = query[i]
        if c == quote:
            return "".join(out), i + 1
        if c == "\n":
            break
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(query):
            break
        e = query[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in ("\\", "'", '"'):
            out.append(e)
            i += 1
        elif e in "xuU" or e in "01234567":
            width = {"x": 2, "u": 4, "U": 8}.get(e, 3)
            start = i + (0 if e in "01234567" else 1)
            digits = query[start : start + width]
            base = 8 if e in "01234567" else 16
            try:
                out.append(chr(int(digits, base)))
            except ValueError:
                raise query_error(query, i - 1, f"invalid escape sequence \\{e}{digits}") from None
            i = start + width
        else:
            raise query_error(query, i - 1, f"unknown escape sequence \\{e}")
    raise query_error(query, pos, "unterminated quoted string")


def tokenize(query: str) -> list[Token]:
    """All tokens of ``query``, ending with an EOF token."""
    tokens: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
            continue
        if c == "#":
            end = query.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "\"'`":
            value, end = _read_string(query, i)
            tokens.append(Token(Tok.STRING, value, i))
            i = end
            continue
        if c.isdigit() or (c == "." and i + 1 < n and query[i + 1].isdigit()):
            dur = _DURATION.match(query, i)
            if dur and not _WORD_CHAR.match(query, dur.end()):
                if not _duration_ordered(dur.group()):
                    raise query_error(query, i, f"not a valid duration string: {dur.group()!r}")
                if duration_ms(dur.group()) > _INT64_MAX:  # model.ParseDuration's limit
                    raise query_error(query, i, f"duration out of range: {dur.group()!r}")
                tokens.append(Token(Tok.DURATION, dur.group(), i))
                i = dur.end()
                continue
            num = _NUMBER.match(query, i)
            assert num is not None  # a digit or ".digit" always starts a number
            if _WORD_CHAR.match(query, num.end()):
                bad = query[i : num.end() + 1]
                raise query_error(query, i, f"bad number or duration syntax: {bad!r}")
            tokens.append(Token(Tok.NUMBER, num.group(), i))
            i = num.end()
            continue
        ident = _IDENT.match(query, i)
        if ident:
            tokens.append(Token(Tok.IDENT, ident.group(), i))
            i = ident.end()
            continue
        for op in _OPERATORS:
            if query.startswith(op.value, i):
                tokens.append(Token(op, op.value, i))
                i += len(op.value)
                break
        else:
            raise query_error(query, i, f"unexpected character {c!r}")
    tokens.append(Token(Tok.EOF, "", n))
    return tokens
