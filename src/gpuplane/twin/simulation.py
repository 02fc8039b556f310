"""Run a twin: start its components, run the event loop, collect their summary sections.

``Simulation(cluster, components).run(until_s)`` returns a ``RunResult`` and writes nothing; the
CLI writes the files. ``twin.build`` makes the cluster and the components from a scenario. The
same scenario and seed give the same result, event for event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from gpuplane.core.kernel import EventHandle
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.events import Event
from gpuplane.twin.component import EventObserver, TwinComponent
from gpuplane.twin.metrics import MetricsSampler
from gpuplane.twin.series import SeriesRow, SeriesSource, merged
from gpuplane.twin.summary import RunSummary, build_summary

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunResult:
    seed: int
    until_s: float
    num_events: int
    summary: RunSummary
    events: tuple[Event, ...]
    timeseries: tuple[dict[str, Any], ...]
    # The tidy series per file name (``twin.series``): pools, serving, autoscaling.
    series: dict[str, tuple[SeriesRow, ...]] = field(default_factory=dict)
    # Stopped early by ``should_stop``: ``until_s`` is the simulated time reached.
    interrupted: bool = False


class Simulation:
    def __init__(
        self,
        cluster: Cluster,
        components: Sequence[TwinComponent],
        *,
        name: str,
        placement: str,
    ) -> None:
        self.cluster = cluster
        self.components = tuple(components)
        self.name = name
        self.placement_name = placement

    def component(self, kind: type[T]) -> T:
        """The run's component of type ``kind`` (the first, if there are several)."""
        for part in self.components:
            if isinstance(part, kind):
                return part
        raise LookupError(f"this twin has no {kind.__name__}")

    def run(
        self,
        until_s: float,
        progress: Callable[[float], None] | None = None,
        steps: int = 100,
        should_stop: Callable[[], bool] | None = None,
    ) -> RunResult:
        """Run to ``until_s``; ``progress(t)`` is called ``steps`` times along the way.

        ``should_stop()`` is asked after each step; when it answers True the run ends there, at
        a step boundary (every event up to that time processed, none after), and the result
        covers the time reached, flagged ``interrupted``. Asking never changes the run itself.
        """
        c = self.cluster
        for part in self.components:
            part.start(until_s)
        on_event = _after_each_event([p for p in self.components if isinstance(p, EventObserver)])
        step = until_s / steps if steps else until_s
        t = 0.0
        while t < until_s:
            t = min(until_s, t + step)
            c.loop.run(t, on_event)
            if progress is not None:
                progress(t)
            if t < until_s and should_stop is not None and should_stop():
                break
        interrupted = t < until_s
        for part in self.components:
            part.stop(t)
        sections = [s for s in (p.summary() for p in self.components) if s is not None]
        summary = build_summary(
            c, name=self.name, placement=self.placement_name, until_s=t, sections=sections
        )
        if interrupted:
            summary = replace(summary, interrupted=True, requested_until_s=until_s)
        samplers = [p for p in self.components if isinstance(p, MetricsSampler)]
        grid = tuple(float(r["t_s"]) for r in samplers[0].rows) if samplers else ()
        series = merged(p.series(grid) for p in self.components if isinstance(p, SeriesSource))
        return RunResult(
            seed=c.seed,
            until_s=t,
            num_events=c.loop.num_processed,
            summary=summary,
            events=tuple(c.events.events),
            timeseries=tuple(samplers[0].rows) if samplers else (),
            series=series,
            interrupted=interrupted,
        )


def _after_each_event(
    observers: list[EventObserver],
) -> Callable[[EventHandle], None] | None:
    if not observers:
        return None  # the kernel's fast path
    if len(observers) == 1:
        return observers[0].after_event

    def each(handle: EventHandle) -> None:
        for o in observers:
            o.after_event(handle)

    return each
