"""PromQL errors: a user's query is user input, so every problem is a located InputError."""

from __future__ import annotations

from gpuplane.core.errors import InputError, Location

SUBSET = (
    "the PromQL subset of docs/autoscaling.md: selectors and [range], sum/avg/min/max/count "
    "by/without, rate/increase/irate/delta/*_over_time/histogram_quantile and a few math "
    "functions, arithmetic, comparisons (bool), and/or/unless, on/ignoring"
)


def query_error(
    query: str, pos: int, problem: str, expected: str | None = None, source: str | None = None
) -> InputError:
    """An InputError that says where in ``query`` (line and column, 1-based) the problem is."""
    pos = max(0, min(pos, len(query)))
    line = query.count("\n", 0, pos) + 1
    column = pos - (query.rfind("\n", 0, pos) + 1) + 1
    excerpt = query[pos : pos + 20].split("\n", 1)[0]
    where = f"column {column}" + (f" near {excerpt!r}" if excerpt else " (end of query)")
    return InputError(
        f"PromQL: {problem} at {where}",
        expected=expected,
        location=Location(source=source or "query", line=line),
    )


def unsupported(query: str, pos: int, construct: str, source: str | None = None) -> InputError:
    return query_error(query, pos, f"{construct} is not supported", expected=SUBSET, source=source)
