"""The one reader of a case's JSON text for the case commands (hpa-check, merge-hints)."""

from __future__ import annotations

import json
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import check_json_depth


def parse_case_json(text: str, source: str) -> Any:
    """The JSON value of ``text``; bad or too deeply nested JSON is an input error at its line."""
    check_json_depth(text, source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg}",
            expected="one JSON object",
            location=Location(source=source, line=err.lineno),
        ) from None
