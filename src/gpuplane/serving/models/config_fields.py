"""Typed reads of a parsed Hugging Face ``config.json`` with located errors.

A ``config.json`` is a flat JSON object whose keys vary by model family, so it is read key by key
rather than through one schema: each read says which type it needs and, when the value is wrong or
missing, the error names the file, the line of the key and the key's path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import check_json_depth


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def parse_json_object(text: str, source: str) -> dict[str, Any]:
    """The top-level JSON object of ``text``; syntax errors and duplicate keys are InputErrors."""
    check_json_depth(text, source)
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg}",
            expected="a Hugging Face config.json (a JSON object)",
            location=Location(source, err.lineno),
        ) from None
    except ValueError as err:  # a duplicate key
        key = str(err).split("'")[1] if "'" in str(err) else None
        raise InputError(
            str(err),
            expected="each key once",
            location=Location(source, line_of(text, key) if key else None, key),
        ) from None
    except RecursionError:
        raise InputError(
            "JSON nested too deeply", expected="a config.json", location=Location(source)
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            f"the top level is a {type(data).__name__}",
            expected="a JSON object with keys such as num_hidden_layers and hidden_size",
            location=Location(source, 1),
        )
    return data


def line_of(text: str, path: str | None) -> int | None:
    """1-based line of ``"a.b"``'s key: the first ``"b":`` after the first ``"a":``."""
    if not path:
        return None
    pos = 0
    for part in path.split("."):
        match = re.compile(rf'"{re.escape(part)}"\s*:').search(text, pos)
        if match is None:
            return None
        pos = match.start()
    return text.count("\n", 0, pos) + 1


class ConfigFields:
    """Reads of one config object (the whole file, or a nested ``text_config``)."""

    def __init__(
        self, data: Mapping[str, Any], *, source: str, text: str = "", prefix: str = ""
    ) -> None:
        self.data = data
        self.source = source
        self.text = text
        self.prefix = prefix

    def nested(self, key: str) -> ConfigFields:
        value = self.data[key]
        if not isinstance(value, dict):
            raise self.error(key, f"got {type(value).__name__}", "a JSON object")
        return ConfigFields(value, source=self.source, text=self.text, prefix=self.path(key))

    def path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, problem: str, expected: str) -> InputError:
        path = self.path(key)
        loc = Location(self.source, line_of(self.text, path), path)
        return InputError(problem, expected=expected, location=loc)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def first(self, *keys: str) -> str | None:
        """The first of ``keys`` present with a non-null value."""
        return next((k for k in keys if self.has(k)), None)

    def get_int(self, key: str, *, default: int | None = None, minimum: int = 1) -> int:
        value = self.data.get(key)
        if value is None:
            if default is not None:
                return default
            raise self.error(key, f"required key {key!r} is missing", f"{key}: an integer")
        if isinstance(value, bool) or not isinstance(value, int):
            # Some exporters write whole numbers as floats (4096.0); accept those exactly.
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self.error(key, f"got {value!r}", "an integer")
        if value < minimum:
            raise self.error(key, f"got {value}", f"an integer >= {minimum}")
        return value

    def get_float(self, key: str, *, default: float) -> float:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"got {value!r}", "a number")
        return float(value)

    def get_bool(self, key: str, *, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"got {value!r}", "true or false")
        return value

    def get_str(self, key: str, *, default: str | None = None) -> str | None:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.error(key, f"got {value!r}", "a string")
        return value

    def str_list(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, f"got {value!r}", "a list of class names")
        return tuple(value)

    def int_list(self, key: str) -> tuple[int, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.error(key, f"got {value!r}", "a list of integers")
        return tuple(value)
