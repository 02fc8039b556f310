"""Errors that carry where a user's mistake is, so the CLI can print it without a traceback."""

from __future__ import annotations

from dataclasses import dataclass


class GpuplaneError(Exception):
    """Base class of every error gpuplane raises on purpose."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where in the user's input a problem is: a file, a 1-based line, a field path."""

    source: str | None = None
    line: int | None = None
    field: str | None = None

    def render(self) -> str:
        parts: list[str] = []
        if self.source is not None:
            parts.append(self.source if self.line is None else f"{self.source}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.field:
            parts.append(self.field)
        return ": ".join(parts)


class InputError(GpuplaneError):
    """A user mistake in a file, flag or value: says where, what was found and what was expected."""

    def __init__(
        self, problem: str, *, expected: str | None = None, location: Location | None = None
    ):
        self.problem = problem
        self.expected = expected
        self.location = location or Location()
        super().__init__(self.render())

    def render(self) -> str:
        where = self.location.render()
        text = f"{where}: {self.problem}" if where else self.problem
        if self.expected:
            text += f"; expected {self.expected}"
        return text

    def located(self, source: str) -> InputError:
        """The same error with ``source`` filled in, for callers that know the file name."""
        if self.location.source is not None:
            return self
        loc = Location(source=source, line=self.location.line, field=self.location.field)
        return InputError(self.problem, expected=self.expected, location=loc)


class UnavailableError(GpuplaneError):
    """Something the command needs is not on this machine (a driver, a library, a server)."""


class InputErrors(GpuplaneError):
    """Several located mistakes found in one pass (``gpuplane validate``, ``--dry-run``)."""

    def __init__(self, errors: list[InputError]):
        self.errors = list(errors)
        super().__init__("\n".join(e.render() for e in self.errors))
