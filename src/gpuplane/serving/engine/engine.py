"""One LLM engine instance as an event-driven object: requests in, steps over time, records out.

The engine runs steps back to back while it has work; each step's duration comes from the
step-time model. A request added at time ``t`` waits for the next scheduling point (the end of
the step in progress, or ``t`` if idle), as in vLLM's engine-core busy loop.

Driving it (``ServingSimulation`` does this at its event times, ``wall_clock.ClockDriver`` at
what a clock reads): ``advance(t)`` moves the engine to time ``t`` and returns the requests that
ended on the way; ``add_request(req, t)`` after ``advance(t)``; ``next_event_time()`` says when
it next needs attention. Requests added at ``t`` are seen by a step that starts at ``t``, so a
driver should add all requests of an instant before asking. The engine reads no clock.

What each step computes is its :class:`~gpuplane.serving.engine.scheduler.Scheduler`'s choice
(one class per engine kind); the engine owns time, the KV pool, the step timer and the metrics.

Fast mode (default) does not step token by token when nothing changes: decoding requests are
advanced as a group (:mod:`decode_set`) and a run of identical decode steps is priced at once,
until the next finish, the step where blocks run out, or an external event (a new request
truncates the run after the step in progress). ``fast=False`` is the reference: every step and
every request one at a time; with ``reference_kv=True`` it also uses the per-block KV cache.
Both give the same results (tests compare them).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from gpuplane.serving.batch import StepTimeModel
from gpuplane.serving.engine import completion
from gpuplane.serving.engine.decode_set import DecodeSet
from gpuplane.serving.engine.kv_cache import KVCache, KVHolding
from gpuplane.serving.engine.kv_reference import ReferenceKVCache
from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.engine.plan import InFlight, Plan
from gpuplane.serving.engine.scheduler import Scheduler, SchedulerParts
from gpuplane.serving.engine.settings import SGLANG_CLIP_MAX_NEW_TOKENS, EngineConfig
from gpuplane.serving.engine.sglang_scheduler import SglangScheduler
from gpuplane.serving.engine.stats import EngineStats
from gpuplane.serving.engine.step_timer import decode_run_durations, run_timer
from gpuplane.serving.engine.view import EngineLoad
from gpuplane.serving.engine.vllm_scheduler import VllmScheduler
from gpuplane.serving.request import FinishReason, Request, RequestState, Segment

# The scheduler of each engine kind (EngineConfig.kind).
SCHEDULERS: dict[str, type[VllmScheduler] | type[SglangScheduler]] = {
    VllmScheduler.kind: VllmScheduler,
    SglangScheduler.kind: SglangScheduler,
}


class Engine:
    """A vLLM-V1-like or SGLang-like engine (mutable owner of its requests and KV cache)."""

    def __init__(
        self,
        config: EngineConfig,
        step_model: StepTimeModel,
        engine_id: str = "engine-0",
        *,
        fast: bool = True,
        reference_kv: bool = False,
        record_token_times: bool = False,
        keep_itl: bool = True,
        max_run_steps: int = 4096,
    ) -> None:
        self.config = config
        self.step_model = step_model
        self._timer = run_timer(step_model)
        self.engine_id = engine_id
        self.kind = config.kind
        self.block_size = config.page_tokens
        self.lazy = fast
        self.max_run_steps = max_run_steps
        self.record = record_token_times
        cls = ReferenceKVCache if reference_kv else KVCache
        self.kv: KVCache | ReferenceKVCache = cls(
            config.num_gpu_blocks, self.block_size, config.enable_prefix_caching
        )
        if reference_kv and fast:
            raise ValueError("the per-block KV cache is for the reference mode (fast=False)")
        self.stats = EngineStats(config.kind, config.max_model_len, keep_itl)
        sched_cls = SCHEDULERS[config.kind]
        self.decoders = DecodeSet(
            self.block_size,
            SGLANG_CLIP_MAX_NEW_TOKENS,
            track_reservation=sched_cls.tracks_reservation,
        )
        parts = SchedulerParts(config, self.kv, self.decoders, self.stats, fast)
        self.scheduler: Scheduler = sched_cls(parts)
        # Read at every committed prefill chunk (completion), so kept as a plain attribute.
        self.caches_computed_prefill = sched_cls.caches_computed_prefill
        self.now_s = 0.0
        self._inflight: InFlight | None = None
        self._pending_at: float | None = None
        self.num_steps = 0
        # Seconds of committed steps that computed a prompt chunk / that only decoded (the GPU's
        # busy time: the emulator's DCGM endpoint derives utilisation and power from it).
        self.busy_prefill_s = 0.0
        self.busy_decode_s = 0.0
        # Bumped whenever the queue, the running set or the KV pool may have changed, so that a
        # router can reuse what it read from this engine while the number stays the same.
        self.state_version = 0
        # P/D with vLLM's NixlConnector: requests whose blocks stay taken when they finish capped
        # by length (``hold_on_finish``), and the blocks so held until the decode engine has
        # read them (``release_held``); see ``completion.finish``.
        self.hold_on_finish: set[str] = set()
        self.held: dict[str, KVHolding] = {}

    # -- the driver's interface ------------------------------------------------------------
    def rejection(self, req: Request) -> str | None:
        """Why this engine can never serve ``req`` (vLLM rejects such a request up front)."""
        if req.prompt_tokens + 1 > self.config.max_model_len:
            return (
                f"prompt of {req.prompt_tokens} tokens leaves no room to generate within "
                f"max_model_len={self.config.max_model_len}"
            )
        return None

    def add_request(self, req: Request, t: float, external_kv_tokens: int = 0) -> LiveRequest:
        """Queue ``req`` at time ``t``; call ``advance(t)`` first. Returns the request's live
        state (its ``token_times`` grow as steps commit when ``record_token_times`` is on).

        ``external_kv_tokens``: leading prompt tokens whose KV cache was computed by a prefill
        engine and transferred here (P/D disaggregation); at most the prompt minus one, since
        the last prompt token is computed here to produce the first output token.
        """
        if t != self.now_s:
            raise ValueError(f"add_request at t={t} but the engine is at {self.now_s}")
        reason = self.rejection(req)
        if reason is not None:
            raise ValueError(f"{self.engine_id} cannot serve {req.request_id}: {reason}")
        live = LiveRequest(req, t, self.config.max_model_len, self.record, external_kv_tokens)
        self.scheduler.add_request(live)
        self.state_version += 1
        fl = self._inflight
        if fl is not None and len(fl.ends) > fl.done + 1:
            fl.ends = fl.ends[: fl.done + 1]  # the run stops after the step in progress
        if fl is None and self._pending_at is None:
            self._pending_at = t
        return live

    def fail_request(self, req: Request, queued_s: float, t: float) -> RequestRecord:
        """``req``, queued at ``queued_s``, ends at ``t`` with an error before it was scheduled
        (vLLM's FINISHED_ERROR: its KV load failed under ``kv_load_failure_policy=fail``);
        counted as finished with reason ``error``. Call ``advance(t)`` first."""
        if t != self.now_s:
            raise ValueError(f"fail_request at t={t} but the engine is at {self.now_s}")
        live = LiveRequest(req, queued_s, self.config.max_model_len, self.record)
        live.move(RequestState.ABORTED)
        self.stats.finished(live, t, FinishReason.ERROR)
        return live.record(self.engine_id, t, FinishReason.ERROR)

    def release_held(self, request_id: str, t: float) -> int:
        """Free the blocks held for ``request_id`` (read by its decode engine, or its hold
        expired); how many. Call ``advance(t)`` first: a request waiting for blocks is then
        planned at ``t``."""
        if t != self.now_s:
            raise ValueError(f"release_held at t={t} but the engine is at {self.now_s}")
        self.hold_on_finish.discard(request_id)
        holding = self.held.pop(request_id, None)
        if holding is None:
            return 0
        freed = holding.num_blocks
        self.kv.release(holding)
        self.state_version += 1
        if self._inflight is None and self._pending_at is None:
            self._pending_at = t
        return freed

    def num_held_blocks(self) -> int:
        return sum(h.num_blocks for h in self.held.values())

    def advance(self, t: float) -> list[RequestRecord]:
        """Run every step that ends by ``t``; the records of requests that ended."""
        if t < self.now_s:
            raise ValueError(f"advance to t={t} but the engine is at {self.now_s}")
        out: list[RequestRecord] = []
        while True:
            fl = self._inflight
            if fl is not None:
                if fl.ends[fl.done] > t:
                    break
                k = bisect_right(fl.ends, t)
                self._count_busy(fl, k)
                out += completion.commit(self, fl, k)
                self.state_version += 1
                if fl.done < len(fl.ends):
                    break
                self._inflight = None
                self._pending_at = fl.ends[-1]
            at = self._pending_at
            if at is None or at >= t:
                break
            self._start(at)
        self.now_s = t
        fl = self._inflight
        if (
            fl is not None
            and fl.allocated < len(fl.ends)
            and fl.ends[fl.allocated - 1] < t
            and fl.plan.uniform
        ):
            self._take_started(fl, t)  # ``observe(t)``, its tests done here
        return out

    def _count_busy(self, fl: InFlight, k: int) -> None:
        """Add the time of steps ``fl.done .. k-1`` (about to be committed) to the busy time."""
        ends = fl.ends
        dt = ends[k - 1] - (ends[fl.done - 1] if fl.done else fl.start_s)
        if fl.plan.items:
            self.busy_prefill_s += dt
        else:
            self.busy_decode_s += dt

    def busy_seconds(self, t: float) -> tuple[float, float]:
        """(prefill, decode) seconds a step was running by ``t`` (``t`` >= the engine's time):
        committed steps plus the elapsed part of the step in progress."""
        prefill, decode = self.busy_prefill_s, self.busy_decode_s
        fl = self._inflight
        if fl is not None:
            began = fl.ends[fl.done - 1] if fl.done else fl.start_s
            running = max(0.0, min(t, fl.ends[-1]) - began)
            if fl.plan.items:
                prefill += running
            else:
                decode += running
        return prefill, decode

    def observe(self, t: float) -> None:
        """Bring the KV cache to time ``t`` without ending any step: every decode step of the
        run in progress that started before ``t`` has taken its blocks (as each step does when
        it starts), so what a router or a scrape reads equals the step-by-step engine."""
        fl = self._inflight
        if fl is None or fl.allocated >= len(fl.ends) or not fl.plan.uniform:
            return
        if fl.ends[fl.allocated - 1] >= t:
            return  # the next step to allocate has not started (``started`` below)
        self._take_started(fl, t)

    def _take_started(self, fl: InFlight, t: float) -> None:
        """``observe`` once its tests passed: the decode steps started before ``t`` take blocks."""
        ends = fl.ends
        started = min(len(ends), bisect_left(ends, t) + 1)
        if started > fl.allocated:
            need = self.decoders.blocks_for_steps(started - fl.allocated, fl.allocated - fl.done)
            self.kv.take_free(need)
            fl.allocated = started
            self.state_version += 1

    def next_event_time(self) -> float:
        """When the engine next needs ``advance`` (``inf`` when idle)."""
        if self._pending_at is not None and self._inflight is None:
            self._start(self._pending_at)
        fl = self._inflight
        return fl.ends[-1] if fl is not None else math.inf

    def next_step_end_s(self) -> float:
        """When the next step ends (``inf`` when idle): inside a run of decode steps, the end of
        the step in progress, not of the run (a live driver sends each step's tokens then)."""
        self.next_event_time()
        fl = self._inflight
        return fl.ends[fl.done] if fl is not None else math.inf

    def abort_all(self, t: float) -> list[RequestRecord]:
        """Abort every request on the engine (it is being removed); call ``advance(t)`` first."""
        out: list[RequestRecord] = []
        self.state_version += 1
        fl = self._inflight
        # Decode steps that started took their blocks for the group; give each decoder its share
        # (the slots of those steps) so that releasing it frees them.
        ahead = fl.allocated - fl.done if fl is not None and fl.plan.uniform else 0
        for r in self.decoders.drain():
            if ahead > 0 and r.kv is not None:
                r.kv.num_blocks = -(-(r.num_computed + ahead) // self.block_size)
        self._inflight = None
        self._pending_at = None
        self.hold_on_finish.clear()
        for holding in self.held.values():
            self.kv.release(holding)
        self.held.clear()
        for r in self.scheduler.abort_all():
            if r in self.decoders:
                self.decoders.remove(r)
            if r.kv is not None:
                self.kv.release(r.kv)
                r.kv = None
            r.move(RequestState.ABORTED)
            self.stats.finished(r, t, FinishReason.ABORT)
            out.append(r.record(self.engine_id, t, FinishReason.ABORT))
        return out

    # -- gauges -----------------------------------------------------------------------------
    def num_running(self) -> int:
        """vLLM: requests in the running list; SGLang: the decode (running) batch."""
        return self.scheduler.num_running()

    def num_waiting(self) -> int:
        return self.scheduler.num_waiting()

    def num_in_flight(self) -> int:
        return self.scheduler.get_num_unfinished_requests()

    def kv_usage(self) -> float:
        return self.kv.usage()

    def is_idle(self) -> bool:
        return self._inflight is None and not self.scheduler.has_unfinished_requests()

    def cached_prefix_tokens(self, content: Sequence[Segment], num_tokens: int) -> int:
        """Leading tokens of a prompt this engine's prefix cache holds now."""
        return self.kv.match_blocks(content, num_tokens) * self.block_size

    def view(self, now: float) -> EngineLoad:
        """What a router reads of this engine at ``now`` (after ``advance`` to at most ``now``).

        A decode step of the run in progress that started by ``now`` has taken its blocks
        (``observe``); ``valid_until_s``: until the next one starts, the load stays the same
        while ``state_version`` does.
        """
        due = math.inf
        fl = self._inflight
        if fl is not None:
            ends = fl.ends
            if fl.allocated < len(ends):
                if ends[fl.allocated - 1] < now and fl.plan.uniform:
                    self._take_started(fl, now)  # ``observe(now)``, its tests done here
                if fl.allocated < len(ends):
                    due = ends[fl.allocated - 1]
        kv, sched = self.kv, self.scheduler
        # tuple.__new__: without the named tuple's Python-level __new__ (made for every route).
        return tuple.__new__(
            EngineLoad,
            (
                len(sched.waiting),
                len(sched.running),
                kv.num_blocks - kv.num_free,
                kv.num_blocks,
                self.block_size,
                due,
            ),
        )

    # -- planning ---------------------------------------------------------------------------
    def _start(self, at: float) -> None:
        """Plan the step (or run of decode steps) that starts at ``at``."""
        self._pending_at = None
        self.state_version += 1
        plan = self.scheduler.schedule(at)
        # Plan.is_empty, spelled out (this runs for every plan).
        if plan is None or (not plan.items and not (plan.uniform and plan.num_decodes)):
            self._inflight = None
            return
        dec = self.decoders
        if plan.uniform and not plan.items and not plan.preempted:
            steps = self._run_length(plan)
            durs = decode_run_durations(
                self.step_model,
                self._timer,
                plan.num_decodes,
                dec.sum_context(),
                dec.contexts,
                steps,
            )
            # Sequential sums, as step by step: ((at + d0) + d1) + ...
            ends = list(accumulate(durs.tolist(), initial=at))
            del ends[0]
        else:
            if plan.uniform:
                plan.decode_contexts = tuple(dec.contexts())
            ends = [at + self.step_model.step_time(plan.shape()).total_s]
        self._inflight = InFlight(plan, ends, at)

    def _run_length(self, plan: Plan) -> int:
        """How many identical decode steps this plan can stand for."""
        if not self.lazy or not plan.pure_decode:
            return 1
        if not self.scheduler.can_extend_run():
            return 1
        dec = self.decoders
        limit = self.max_run_steps
        to_finish = dec.steps_to_next_finish()
        if to_finish is not None:
            limit = min(limit, to_finish)
        return 1 + dec.max_steps_with(self.kv.num_free, limit - 1, start=1)
