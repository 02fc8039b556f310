"""The seam between an engine and its scheduler, after vLLM V1's ``SchedulerInterface``.

vLLM (``vllm/v1/core/sched/interface.py``) separates the engine core's busy loop from the policy
that decides what each forward pass computes: ``schedule() -> SchedulerOutput``, then
``update_from_output(scheduler_output, model_runner_output)`` once the pass ran, plus
``add_request``, ``finish_requests`` and the unfinished-request counts. The engine here keeps
the same split: :class:`~gpuplane.serving.engine.engine.Engine` owns time, the KV pool, the step
timer and the metrics, and asks its scheduler for a :class:`Plan` at every scheduling point.
A scheduler owns its queues and knobs and reaches the engine's pool through the
:class:`SchedulerParts` it was built with, never through the engine.

Between ``schedule`` and ``update_from_output`` the engine commits the tokens (``completion``),
telling the scheduler about each request that produced one (``token_emitted``) or ended
(``remove_finished``), since where a request goes then is the scheduler's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

from gpuplane.serving.request import RequestState

if TYPE_CHECKING:
    from collections import deque

    from gpuplane.serving.engine.decode_set import DecodeSet
    from gpuplane.serving.engine.kv_cache import KVCache
    from gpuplane.serving.engine.kv_reference import ReferenceKVCache
    from gpuplane.serving.engine.live import LiveRequest
    from gpuplane.serving.engine.plan import Plan
    from gpuplane.serving.engine.settings import EngineConfig
    from gpuplane.serving.engine.stats import EngineStats


@dataclass(frozen=True, slots=True)
class SchedulerParts:
    """What a scheduler works with, owned by the engine: the pool, the decode group, counters.

    ``lazy``: the engine runs in fast mode (decoders advanced as a group by ``decoders``).
    """

    config: EngineConfig
    kv: KVCache | ReferenceKVCache
    decoders: DecodeSet
    stats: EngineStats
    lazy: bool


class StepOutput(NamedTuple):
    """What the steps that just ended computed (``update_from_output``'s model output).

    A named tuple, not a frozen dataclass: one is made at every commit (the hot path).

    ``num_steps`` steps of ``plan`` ended at ``end_s`` (the first of them started at
    ``start_s``); ``first``: they include the plan's first step; ``num_decoders``: members of
    the decode group that decoded in each; ``first_prompts`` and ``generated``: prompt tokens of
    requests that got their first token, and tokens from requests handled one by one.
    """

    num_steps: int
    first: bool
    num_decoders: int
    first_prompts: int
    generated: int
    start_s: float
    end_s: float


class Scheduler(Protocol):
    """One engine's scheduling policy (mutable owner of its queues)."""

    kind: ClassVar[str]
    # The decode group keeps SGLang's clipped output reservation up to date.
    tracks_reservation: ClassVar[bool]
    # SGLang's radix cache takes a prefill chunk's tokens when the chunk completes (vLLM's
    # prefix cache takes them when they are scheduled).
    caches_computed_prefill: ClassVar[bool]
    # The queues, which the engine only reads (their lengths are the gauges a router reads at
    # every route, so read without a call): requests not admitted, and the running batch.
    waiting: deque[LiveRequest]
    running: list[LiveRequest]

    def add_request(self, r: LiveRequest) -> None:
        """Queue a request that arrived at the engine."""
        ...

    def schedule(self, now: float) -> Plan | None:
        """The forward pass that starts at ``now`` (None or an empty plan: nothing to do)."""
        ...

    def update_from_output(self, plan: Plan, out: StepOutput) -> None:
        """Steps of ``plan`` ended: move the scheduler's counters (after the tokens are in)."""
        ...

    def token_emitted(self, r: LiveRequest, finished: bool) -> None:
        """``r`` (handled one by one in the step) produced a token; ``finished``: its last."""
        ...

    def remove_finished(self, r: LiveRequest) -> None:
        """``r`` ended: take it out of the scheduler's queues (its blocks are the engine's)."""
        ...

    def abort_all(self) -> list[LiveRequest]:
        """Empty every queue; the requests that were in them (running first, then waiting)."""
        ...

    def can_extend_run(self) -> bool:
        """Whether a pure decode step may stand for a run of identical ones (fast mode)."""
        ...

    def num_waiting(self) -> int: ...

    def num_running(self) -> int:
        """vLLM: requests in the running list; SGLang: the decode (running) batch."""
        ...

    def get_num_unfinished_requests(self) -> int: ...

    def has_unfinished_requests(self) -> bool: ...


def start_running(parts: SchedulerParts, r: LiveRequest, now: float, cached_tokens: int) -> None:
    """``r`` leaves the queue with ``cached_tokens`` prompt tokens found in the cache."""
    r.move(RequestState.RUNNING)
    if r.first_scheduled_s is None:
        r.first_scheduled_s = now
        parts.stats.scheduled(r, now)
    if r.cached_tokens < 0:
        r.cached_tokens = cached_tokens


def evict(parts: SchedulerParts, r: LiveRequest) -> None:
    """Preemption by recomputation: free ``r``'s blocks (its prefix stays cached)."""
    if r in parts.decoders:
        parts.decoders.remove(r)
    assert r.kv is not None
    parts.kv.register(r.kv, r.num_computed)
    parts.kv.release(r.kv)
    r.kv = None
    r.num_computed = 0
    r.external = 0  # transferred KV is gone with the blocks: recompute it
    r.move(RequestState.PREEMPTED)
    r.num_preemptions += 1
    parts.stats.preemptions += 1


def new_blocks(block_size: int, r: LiveRequest, n: int) -> int:
    """Blocks ``r`` needs beyond those it holds to compute ``n`` more tokens."""
    assert r.kv is not None
    return -(-(r.num_computed + n) // block_size) - r.kv.num_blocks
