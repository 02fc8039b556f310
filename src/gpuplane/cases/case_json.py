"""The one reader of a case's JSON text for the case commands (hpa-check, merge-hints)."""

from __future__ import annotations

import json
import re
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import check_json_depth
from gpuplane.core.yamlio import DuplicateKeyError, unique_pairs


def _line_of_second(text: str, key: str) -> int | None:
    """The line of the key's second occurrence as an object key (best effort)."""
    found = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, found[1]) + 1 if len(found) > 1 else None


def parse_case_json(text: str, source: str) -> Any:
    """The JSON value of ``text``; bad or too deeply nested JSON is an input error at its line."""
    check_json_depth(text, source)
    try:
        return json.loads(text, object_pairs_hook=unique_pairs)
    except DuplicateKeyError as dup:
        raise InputError(
            f"duplicate key {dup.key!r}",
            expected="each key once per object (JSON readers keep only one of them)",
            location=Location(source=source, line=_line_of_second(text, dup.key)),
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg}",
            expected="one JSON object",
            location=Location(source=source, line=err.lineno),
        ) from None
