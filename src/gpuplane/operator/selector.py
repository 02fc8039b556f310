"""Kubernetes label selectors in their string form (``app=x,tier!=db,env in (a,b),!legacy``).

The upgrade policy's ``podSelector`` fields are such strings; the controller hands them to
``metav1.ListOptions.LabelSelector``, which apimachinery ``pkg/labels/selector.go`` (Parse) reads.
Supported operators are the ones Parse accepts: ``=``, ``==``, ``!=``, ``in``, ``notin``, ``exists``
(a bare key), ``!key``, ``>`` and ``<`` (integer values). The parsed selector and its matching
are ``gpuplane.api.selectors``'.
"""

from __future__ import annotations

import re

from gpuplane.api.selectors import LabelSelector, Operator, Requirement

# Qualified names and label values as apimachinery validation defines them.
_NAME = r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY = re.compile(rf"^({_PREFIX}/)?{_NAME}$")
_VALUE = re.compile(rf"^{_NAME}?$")
_SET = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_BINARY = re.compile(r"^(?P<key>[^=!<>\s]+)\s*(?P<op>==|=|!=|<|>)\s*(?P<value>[^=!<>\s]*)$")


def _split_terms(text: str) -> list[str]:
    """Top-level comma-separated terms; commas inside ``( )`` belong to a set."""
    terms: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ')' in label selector {text!r}")
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"unbalanced '(' in label selector {text!r}")
    terms.append(text[start:])
    return [t.strip() for t in terms]


def _check_key(key: str, text: str) -> str:
    if not _KEY.match(key) or len(key.rpartition("/")[2]) > 63 or len(key) > 317:
        raise ValueError(f"invalid label key {key!r} in label selector {text!r}")
    return key


def _check_value(value: str, text: str) -> str:
    if not _VALUE.match(value):
        raise ValueError(f"invalid label value {value!r} in label selector {text!r}")
    return value


def _parse_term(term: str, text: str) -> Requirement:
    if not term:
        raise ValueError(f"empty requirement in label selector {text!r}")
    set_match = _SET.match(term)
    if set_match:
        values = [v.strip() for v in set_match["values"].split(",")]
        if values == [""]:
            raise ValueError(
                f"{set_match['op']} needs at least one value in label selector {text!r}"
            )
        checked = tuple(sorted(_check_value(v, text) for v in values))
        op: Operator = "in" if set_match["op"] == "in" else "notin"
        return Requirement(_check_key(set_match["key"], text), op, checked)
    binary = _BINARY.match(term)
    if binary:
        key, raw_op, value = binary["key"], binary["op"], binary["value"]
        if raw_op in ("<", ">"):
            if not re.fullmatch(r"[+-]?\d+", value):
                raise ValueError(f"{raw_op} needs an integer value in label selector {text!r}")
            return Requirement(_check_key(key, text), "gt" if raw_op == ">" else "lt", (value,))
        eq: Operator = "!=" if raw_op == "!=" else "="
        return Requirement(_check_key(key, text), eq, (_check_value(value, text),))
    if term.startswith("!"):
        return Requirement(_check_key(term[1:].strip(), text), "!exists")
    return Requirement(_check_key(term, text), "exists")


def parse_label_selector(text: str) -> LabelSelector:
    """The selector in ``text``; raises ValueError naming the bad part. ``""`` matches all."""
    if not text.strip():
        return LabelSelector(text)
    reqs = tuple(_parse_term(term, text) for term in _split_terms(text))
    return LabelSelector(text, reqs)


def join_selectors(*texts: str) -> str:
    """Selectors ANDed the way the gpu-operator appends its own (``a,b``), skipping empties."""
    return ",".join(t for t in texts if t.strip())
