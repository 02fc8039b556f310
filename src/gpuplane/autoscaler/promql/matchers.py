"""Label matchers (``=``, ``!=``, ``=~``, ``!~``) with Prometheus's regular-expression semantics.

Prometheus compiles a matcher's regex with Go's RE2 as ``^(?s:<regex>)$``: the match is always
anchored at both ends (``=~"gpu"`` does not match ``gpu-0``) and ``.`` also matches a newline
(Prometheus 3). A label a series does not have is the empty string, so ``{team=""}`` selects the
series *without* a ``team`` label and ``{team!=""}`` those with one.

Python's ``re`` is close to RE2 but not equal. RE2-only syntax is translated (``\\z``,
``\\Q...\\E``, ``(?<name>...)``, POSIX classes such as ``[[:digit:]]``, flags at the start), and
what RE2 rejects is rejected here too (look-arounds, back-references, atomic groups, possessive
quantifiers), so a query that works in gpuplane also works on a real Prometheus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_REJECTED = [
    (re.compile(r"\(\?<?[=!]"), "look-around assertions"),
    (re.compile(r"\(\?>"), "atomic groups"),
    (re.compile(r"\(\?\("), "conditional groups"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "back-references"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers"),
    (re.compile(r"\\[pP]"), "Unicode class escapes (\\p)"),
]


class RegexError(ValueError):
    """A regex Prometheus (RE2) would not accept, or one Python cannot run the same way."""


def _translate(regex: str) -> str:
    out = re.sub(r"\\Q(.*?)(?:\\E|$)", lambda m: re.escape(m.group(1)), regex, flags=re.S)
    out = re.sub(r"\[:(\^?)([a-z]+):\]", _posix, out)
    out = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", out)
    out = re.sub(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", out)
    lead = re.match(r"\(\?([imsU]+)\)", out)
    if lead:
        if "U" in lead.group(1):
            raise RegexError("the ungreedy flag (?U) is not supported")
        out = f"(?{lead.group(1)}:{out[lead.end() :]})"
    return out


def _posix(m: re.Match[str]) -> str:
    negate, name = m.group(1), m.group(2)
    if name not in _POSIX:
        raise RegexError(f"invalid character class range: [:{name}:]")
    if negate:
        raise RegexError(f"negated POSIX class [:^{name}:] is not supported")
    return _POSIX[name]


def compile_regex(regex: str) -> re.Pattern[str]:
    """The anchored, dot-matches-newline pattern Prometheus would build for ``regex``."""
    for pattern, what in _REJECTED:
        if pattern.search(regex):
            raise RegexError(f"{what} are not supported by RE2")
    translated = _translate(regex)
    try:
        return re.compile(f"(?s:{translated})")
    except re.error as err:
        raise RegexError(str(err)) from None
    except (OverflowError, RecursionError) as err:  # a{5000000000}; thousands of nested groups
        raise RegexError(f"invalid regular expression: {err or 'nested too deeply'}") from None


@dataclass(frozen=True, slots=True)
class LabelMatcher:
    name: str
    op: str  # "=", "!=", "=~", "!~"
    value: str
    pattern: re.Pattern[str] | None = None

    @staticmethod
    def of(name: str, op: str, value: str) -> LabelMatcher:
        pattern = compile_regex(value) if op in ("=~", "!~") else None
        return LabelMatcher(name, op, value, pattern)

    def matches(self, value: str) -> bool:
        if self.op == "=":
            return value == self.value
        if self.op == "!=":
            return value != self.value
        assert self.pattern is not None
        found = self.pattern.fullmatch(value) is not None
        return found if self.op == "=~" else not found

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.value!r}"
