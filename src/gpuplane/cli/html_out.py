"""Writing an ``--html FILE`` page: a located error when the path cannot be written."""

from __future__ import annotations

from pathlib import Path

from gpuplane.cli.console import err
from gpuplane.core.errors import InputError, Location


def write_text_file(path: Path, text: str, option: str) -> None:
    """Write ``text`` (UTF-8) to the file an option named; a located error when it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot write {path}: {exc.strerror or exc}",
            expected="a path gpuplane may create and write",
            location=Location(source=str(path), field=option),
        ) from None


def write_html(path: Path, text: str, option: str = "--html") -> None:
    """Write the page and say so on stderr, so stdout stays the chosen output."""
    write_text_file(path, text, option)
    err.print(f"wrote {path} ({len(text.encode('utf-8')):,} bytes)")
