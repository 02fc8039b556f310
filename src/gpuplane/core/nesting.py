"""A bound on how deeply user JSON may nest, checked before anything parses it.

Python's ``json`` module, pydantic and every walker of the parsed data recurse once per level;
about a thousand levels (``[[[[...``) end in a RecursionError instead of a message. No file
gpuplane reads nests more than about 20 levels (a Kubernetes object, a hint case), so
:data:`MAX_JSON_DEPTH` leaves ample room while staying far below the interpreter's limit.
The scan skips string literals, so brackets inside strings do not count.
"""

from __future__ import annotations

import re

from gpuplane.core.errors import InputError, Location

MAX_JSON_DEPTH = 100

# A string literal (possibly unterminated: json.loads reports that one) or one bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def check_json_depth(text: str, source: str | None, *, limit: int = MAX_JSON_DEPTH) -> None:
    """InputError at the line and column of the first bracket nested deeper than ``limit``."""
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                at = match.start()
                line = text.count("\n", 0, at) + 1
                column = at - (text.rfind("\n", 0, at) + 1) + 1
                raise InputError(
                    f"JSON nested more than {limit} levels deep (column {column}, "
                    f"character {at + 1})",
                    expected=f"at most {limit} nested arrays and objects",
                    location=Location(source, line),
                )
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
