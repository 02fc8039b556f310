"""User text read as bytes and decoded as UTF-8 explicitly, whatever the locale says.

``Path.read_text`` and ``sys.stdin`` decode with whatever encoding they were given or the locale
chose (``PYTHONIOENCODING=utf-8:strict``, ``LANG=C``), and a bad byte then surfaces as a
UnicodeDecodeError traceback. Every file and stream a user hands gpuplane enters through here:
bytes first, then UTF-8, and a bad byte is an InputError naming its line and byte offset.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

from gpuplane.core.errors import InputError, Location

STDIN = "<stdin>"


def decode_text(data: bytes, source: str | None) -> str:
    """``data`` as UTF-8; InputError at the line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise InputError(
            f"not UTF-8: byte 0x{data[err.start]:02x} at byte offset {err.start} "
            f"(column {column}) {err.reason}",
            expected="UTF-8 text",
            location=Location(source, line),
        ) from None


def read_user_text(path: Path) -> str:
    """The text of a user's file. OSError propagates (callers word it); bad UTF-8 is located.

    A name with a NUL byte (ValueError from the OS layer) is an OSError like any unopenable name.
    """
    try:
        data = path.read_bytes()
    except ValueError as err:
        raise OSError(errno.EINVAL, f"cannot open this file name ({err})", str(path)) from None
    return decode_text(data, str(path))


def read_named_file(path: Path, what: str) -> str:
    """:func:`read_user_text`, with a missing or unreadable file a located InputError that
    names what the file should have been (``what``: "scenario YAML file")."""
    try:
        return read_user_text(path)
    except FileNotFoundError:
        raise InputError(
            "file not found", expected=f"a {what}", location=Location(str(path))
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read the file ({err})",
            expected=f"a UTF-8 {what}",
            location=Location(str(path)),
        ) from None


# A user's file name may be longer than the file system allows (ENAMETOOLONG) or unreadable
# (EACCES on a folder above it): pathlib's checks raise OSError there, where a missing file is
# just False. These answer False instead, so the caller's "not found" message is what the user
# sees, never a traceback.
def is_file(path: Path) -> bool:
    """``path.is_file()``, False where the OS cannot even look the name up."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where the OS cannot even look the name up."""
    try:
        return path.is_dir()
    except OSError:
        return False


def exists(path: Path) -> bool:
    """``path.exists()``, False where the OS cannot even look the name up."""
    try:
        return path.exists()
    except OSError:
        return False


def read_stdin() -> str:
    """All of standard input as UTF-8 whatever the locale (tests may swap in a StringIO).

    A process started with standard input closed (``<&-``, some schedulers) has ``sys.stdin``
    None: an InputError saying so, not an AttributeError traceback.
    """
    if sys.stdin is None:
        raise InputError(
            "standard input is closed",
            expected="the input on standard input (e.g. `< case.json`)",
            location=Location(STDIN),
        )
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read()
    data: bytes = buffer.read()
    return decode_text(data, STDIN)
