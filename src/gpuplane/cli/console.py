"""Shared rich consoles: results to stdout, diagnostics to stderr."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    """Plain JSON on stdout (no colour codes), stable key order, for other tools to read."""
    print(json.dumps(data, indent=2, sort_keys=True))
