"""Shared rich consoles: results to stdout, diagnostics to stderr."""

from __future__ import annotations

import json
import os
import re
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


# A message may quote the user's value back; a megabyte of it helps no one and takes rich
# seconds to wrap. Longer runs without a space keep their head and tail.
MAX_WORD_CHARS = 200
_LONG_WORD = re.compile(r"\S{" + str(MAX_WORD_CHARS + 1) + ",}")


def clip_long_words(text: str) -> str:
    """``text`` with every run of more than MAX_WORD_CHARS non-blank characters shortened."""

    def clip(match: re.Match[str]) -> str:
        word = match.group()
        return f"{word[:120]}...({len(word) - 160} characters)...{word[-40:]}"

    return _LONG_WORD.sub(clip, text)


def print_json(data: Any) -> None:
    """Plain JSON on stdout (no colour codes), stable key order, for other tools to read."""
    print(json.dumps(data, indent=2, sort_keys=True))
