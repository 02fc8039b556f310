"""Tokens of CEL expressions (the cel-spec lexical grammar, for the subset gpuplane evaluates).

Recognised: decimal and hex integers, single- and double-quoted strings with the common escapes
(and ``r"..."`` raw strings), identifiers, ``//`` comments and the punctuation of the operators.
Floating point, unsigned (``1u``), bytes and triple-quoted literals are recognised only to be
reported as unsupported at their column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuplane.core.errors import InputError

SUPPORTED = (
    'device.driver, device.attributes["domain"].name / ["name"], '
    'device.capacity["domain"].name, string/int/bool literals, lists, ==, !=, <, <=, >, >=, '
    "in, &&, ||, !, parentheses, has(), quantity(), isQuantity(), semver(), isSemver(), "
    ".compareTo(), .isGreaterThan(), .isLessThan(), .major(), .minor(), .patch(), "
    ".asInteger(), .startsWith(), .endsWith(), .contains()"
)

_PUNCT = (
    ".?",
    "&&",
    "||",
    "==",
    "!=",
    "<=",
    ">=",
    "<",
    ">",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ".",
    ",",
    "?",
    ":",
    "+",
    "-",
    "*",
    "/",
    "%",
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "`": "`", "?": "?"}
_ESCAPES |= {"a": "\a", "b": "\b", "f": "\f", "v": "\v"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "int", "string", "ident", "punct", "eof"
    text: str
    value: int | str
    col: int  # 1-based


def cel_error(problem: str, col: int, expected: str | None = SUPPORTED) -> InputError:
    return InputError(f"CEL: {problem} at column {col}", expected=expected)


def unsupported(what: str, col: int) -> InputError:
    return cel_error(f"unsupported {what}", col, expected=f"what gpuplane supports: {SUPPORTED}")


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
        elif text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif ch in "\"'" or (ch in "rRbB" and pos + 1 < len(text) and text[pos + 1] in "\"'"):
            token, pos = _string(text, pos)
            tokens.append(token)
        elif ch.isdigit() or (ch == "." and pos + 1 < len(text) and text[pos + 1].isdigit()):
            token, pos = _number(text, pos)
            tokens.append(token)
        elif _IDENT.match(text, pos):
            match = _IDENT.match(text, pos)
            assert match is not None
            tokens.append(Token("ident", match.group(0), match.group(0), pos + 1))
            pos = match.end()
        else:
            punct = next((p for p in _PUNCT if text.startswith(p, pos)), None)
            if punct is None:
                raise cel_error(f"unexpected character {ch!r}", pos + 1, expected=None)
            tokens.append(Token("punct", punct, punct, pos + 1))
            pos += len(punct)
    tokens.append(Token("eof", "", "", len(text) + 1))
    return tokens


def _number(text: str, pos: int) -> tuple[Token, int]:
    match = _NUMBER.match(text, pos)
    assert match is not None
    literal = match.group(0)
    end = match.end()
    if end < len(text) and text[end] in "uU":
        raise unsupported("unsigned integer literal", pos + 1)
    if literal.lower().startswith("0x"):
        return Token("int", literal, int(literal, 16), pos + 1), end
    if any(c in literal for c in ".eE"):
        raise unsupported("floating-point literal", pos + 1)
    return Token("int", literal, int(literal), pos + 1), end


def _string(text: str, pos: int) -> tuple[Token, int]:
    start = pos
    raw = False
    if text[pos] in "bB":
        raise unsupported("bytes literal", pos + 1)
    if text[pos] in "rR":
        raw = True
        pos += 1
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        raise unsupported("triple-quoted string", start + 1)
    pos += 1
    out: list[str] = []
    while pos < len(text) and text[pos] != quote:
        ch = text[pos]
        if ch == "\n":
            break
        if ch == "\\" and not raw:
            pos += 1
            esc = text[pos] if pos < len(text) else ""
            if esc not in _ESCAPES:
                raise cel_error(f"invalid escape sequence '\\{esc}'", pos, expected=None)
            out.append(_ESCAPES[esc])
        else:
            out.append(ch)
        pos += 1
    if pos >= len(text) or text[pos] != quote:
        raise cel_error("unterminated string literal", start + 1, expected=None)
    return Token("string", text[start : pos + 1], "".join(out), start + 1), pos + 1
