"""Semantic versions (semver.org 2.0.0) for ``version`` device attributes and CEL's ``semver()``.

The API server accepts a version attribute only in strict semver 2.0.0 form (no leading zeros,
no ``v`` prefix); the CEL library (blang/semver) orders versions by major, minor, patch and then
pre-release identifiers, ignoring build metadata, and calls two versions equal when that order
says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from gpuplane.core.errors import InputError

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
SEMVER_MSG = "must be a string compatible with semver.org spec 2.0.0"


def _pre_key(ident: str) -> tuple[int, int, str]:
    # Numeric identifiers sort below alphanumeric ones and compare numerically.
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        # A version without pre-release identifiers sorts after any with them.
        return (
            self.major,
            self.minor,
            self.patch,
            0 if self.pre else 1,
            tuple(_pre_key(p) for p in self.pre),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def compare(self, other: Version) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def is_semver(text: str) -> bool:
    return _SEMVER.match(text) is not None


def parse_version(text: str) -> Version:
    """A strict semver 2.0.0 version; InputError (without a location) otherwise."""
    match = _SEMVER.match(text)
    if match is None:
        raise InputError(f"{text!r}: {SEMVER_MSG}", expected="a version like 12.0.0 or 9.0.0")
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    build = tuple(match.group(5).split(".")) if match.group(5) else ()
    return Version(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre, build)


def loose_version(text: str) -> Version:
    """``Masterminds/semver.MustParse`` as the NVIDIA driver uses it for ``580.82.07`` or
    ``9.0``: missing parts are zero and leading zeros are dropped, so the attribute it publishes
    (``.String()``) is strict semver."""
    parts = text.strip().lstrip("v").split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise InputError(f"{text!r} is not a version", expected="digits like 580.82.07 or 9.0")
    nums = [int(p) for p in parts] + [0] * (3 - len(parts))
    return Version(nums[0], nums[1], nums[2])
