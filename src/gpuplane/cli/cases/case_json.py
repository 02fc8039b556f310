"""The one reader of a case's JSON text for the case commands (hpa-check, merge-hints)."""

from __future__ import annotations

import json
from typing import Any

from gpuplane.core.errors import InputError, Location


def parse_case_json(text: str, source: str) -> Any:
    """The JSON value of ``text``; bad JSON is an input error located at its line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg}",
            expected="one JSON object",
            location=Location(source=source, line=err.lineno),
        ) from None
