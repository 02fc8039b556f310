"""The Chrome trace of a run follows the Trace Event Format's rules."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from gpuplane.cli.report import write_trace
from gpuplane.report.chrome_trace import chrome_trace, lanes
from gpuplane.report.html.run_data import read_run
from gpuplane.report.timeline import build_timeline
from tests.unit.report.report_run import write_small_run

# The Trace Event Format (Google, "Trace Event Format" document): every event has ph, pid, tid,
# name; all but metadata have ts in microseconds; X has a non-negative dur; B and E pair up per
# thread, E after its B; instants have scope g, p or t; metadata names are the known ones with
# their args; counters carry numeric args.
_META_ARGS = {
    "process_name": "name",
    "thread_name": "name",
    "process_sort_index": "sort_index",
    "thread_sort_index": "sort_index",
}
_PHASES = {"X", "B", "E", "i", "I", "M", "C"}


def _check_event(e: Mapping[str, Any]) -> list[str]:
    problems = []
    ph = e.get("ph")
    if ph not in _PHASES:
        return [f"unknown phase {ph!r}"]
    for key, kind in (("pid", int), ("tid", int), ("name", str)):
        if not isinstance(e.get(key), kind):
            problems.append(f"{ph} event without an {kind.__name__} {key}")
    if ph == "M":
        wanted = _META_ARGS.get(str(e.get("name")))
        if wanted is None or wanted not in e.get("args", {}):
            problems.append(f"metadata {e.get('name')!r} without args.{wanted}")
        return problems
    ts = e.get("ts")
    if not isinstance(ts, int | float) or ts < 0:
        problems.append(f"{ph} event with ts {ts!r}")
    if ph == "X" and not (isinstance(e.get("dur"), int | float) and e["dur"] >= 0):
        problems.append(f"X event with dur {e.get('dur')!r}")
    if ph in ("i", "I") and e.get("s", "t") not in ("g", "p", "t"):
        problems.append(f"instant with scope {e.get('s')!r}")
    if ph == "C" and not all(isinstance(v, int | float) for v in e.get("args", {}).values()):
        problems.append("counter with a non-numeric value")
    return problems


def validate(trace: Mapping[str, Any]) -> list[str]:
    events: Sequence[Mapping[str, Any]] = trace.get("traceEvents", ())
    problems = [p for e in events for p in _check_event(e)]
    open_b: dict[tuple[int, int], list[float]] = {}
    for e in sorted((e for e in events if e.get("ph") in ("B", "E")), key=lambda e: e["ts"]):
        stack = open_b.setdefault((e["pid"], e["tid"]), [])
        if e["ph"] == "B":
            stack.append(e["ts"])
        elif not stack:
            problems.append(f"E without B on {e['pid']}/{e['tid']}")
        else:
            stack.pop()
    problems += [f"B without E on {k}" for k, v in open_b.items() if v]
    return problems


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    run_dir = write_small_run(tmp_path_factory.mktemp("run"))
    write_trace(read_run(run_dir), run_dir / "trace.json")
    data: dict[str, Any] = json.loads((run_dir / "trace.json").read_text())
    return data


def test_the_trace_follows_the_format(trace: dict[str, Any]) -> None:
    assert isinstance(trace["traceEvents"], list) and trace["traceEvents"]
    assert validate(trace) == []


def test_a_track_per_node_with_pods_as_slices(trace: dict[str, Any]) -> None:
    events = trace["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert {"cluster", "node pool-0", "node pool-1"} <= names
    pods = [e for e in events if e["ph"] == "X" and e["cat"] == "pod"]
    assert len(pods) == 4  # five 4-GPU pods on two 8-GPU nodes: one stays pending
    assert any(e["ph"] == "i" and e["name"] == "FailedScheduling" for e in events)
    # Slices on one thread never overlap (Chrome nests or breaks overlapping ones).
    by_thread: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for e in events:
        if e["ph"] == "X":
            by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_the_validator_catches_broken_events() -> None:
    bad = {
        "traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 5, "dur": -1},
            {"ph": "B", "pid": 1, "tid": 1, "name": "b", "ts": 1},
        ]
    }
    assert len(validate(bad)) == 2


def test_lanes_reuse_a_free_lane() -> None:
    assert lanes([(0.0, 10.0), (1.0, 2.0), (2.0, 3.0), (10.0, 11.0)]) == [1, 2, 2, 1]


def test_the_same_events_give_the_same_trace() -> None:
    events = [
        {
            "t_s": 1.0,
            "object": "Pod/ns/p-abc12-xyz34",
            "type": "Normal",
            "reason": "Scheduled",
            "message": "Successfully assigned ns/p-abc12-xyz34 to n-0 (GPUs [0, 1])",
        }
    ]
    one = chrome_trace(build_timeline(events, 10.0))
    assert one == chrome_trace(build_timeline(events, 10.0))
    pod = next(e for e in one["traceEvents"] if e["ph"] == "X")
    assert pod["ts"] == 1_000_000 and pod["dur"] == 9_000_000 and pod["args"]["gpus"] == [0, 1]
