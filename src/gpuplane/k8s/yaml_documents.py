"""Multi-document YAML files (``---`` separated manifests) read with ``core.yamlio.parse_yaml``.

YAML forbids a line that starts with ``---`` or ``...`` followed by a space or the line end
inside any content (the spec's "c-forbidden" production), so such a line always marks a document
boundary and the text can be cut there. Each piece is then parsed by the one YAML reader
(duplicate keys, dates kept as text, located syntax errors), padded with the newlines before it so
that every line number still counts from the top of the file. Empty documents are skipped, as
kubectl skips them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuplane.core.yamlio import LazyLineIndex, LineIndex, load_fast, parse_yaml

_START = re.compile(r"^---(?:[ \t].*)?$")
_END = re.compile(r"^\.\.\.(?:[ \t].*)?$")


@dataclass(frozen=True, slots=True)
class YamlDocument:
    data: Any
    index: LineIndex | LazyLineIndex
    first_line: int  # 1-based line where the document starts

    def line_of(self, field: str) -> int | None:
        return self.index.line_of(field)


def _pieces(text: str) -> list[tuple[int, str]]:
    """(0-based start line, text) of each document-sized piece of ``text``."""
    lines = text.splitlines(keepends=True)
    pieces: list[tuple[int, list[str]]] = [(0, [])]
    for i, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        current = pieces[-1][1]
        if _START.match(bare):
            # Directives (%YAML) and comments before the marker belong to the next document.
            if any(x.strip() and not x.lstrip().startswith(("%", "#")) for x in current):
                pieces.append((i, [line]))
            else:
                current.append(line)
        elif _END.match(bare):
            current.append(line)
            pieces.append((i + 1, []))
        else:
            current.append(line)
    return [(start, "".join(body)) for start, body in pieces if "".join(body).strip()]


def read_documents(text: str, source: str) -> list[YamlDocument]:
    """Every non-empty document of ``text``; a YAML error is a located InputError."""
    out: list[YamlDocument] = []
    for start, piece in _pieces(text):
        node, data = parse_yaml("\n" * start + piece, source)
        if node is None or data is None:
            continue
        out.append(YamlDocument(data=data, index=LineIndex(node, source), first_line=start + 1))
    return out


def read_documents_fast(text: str, source: str) -> list[YamlDocument]:
    """:func:`read_documents` for large dumps: parsed by libyaml or ``json``, lines looked up
    only when a message needs one (same errors, same lines)."""
    out: list[YamlDocument] = []
    for start, piece in _pieces(text):
        data = load_fast(piece, source, first_line=start + 1)
        if data is None:
            continue
        index = LazyLineIndex(piece, source, first_line=start + 1)
        out.append(YamlDocument(data=data, index=index, first_line=start + 1))
    return out
