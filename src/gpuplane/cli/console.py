"""Shared rich consoles: results to stdout, diagnostics to stderr."""

from __future__ import annotations

import json
import os
from typing import Any

from rich.console import Console

# emoji=False: user text such as "file.yaml:100: field" must not become "file.yaml💯 field".
out = Console(highlight=False, soft_wrap=False, emoji=False)
if not out.is_terminal and "COLUMNS" not in os.environ:
    # Piped or captured output (make demo in CI, tests): rich would assume 80 columns and squeeze
    # the tables; 120 keeps them readable in a log.
    out.width = 120
# Soft wrap: an error message stays one paragraph that the terminal wraps, so it can be grepped.
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def print_json(data: Any) -> None:
    """Plain JSON on stdout (no colour codes), stable key order, for other tools to read."""
    print(json.dumps(data, indent=2, sort_keys=True))
