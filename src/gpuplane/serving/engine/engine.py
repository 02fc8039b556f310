"""One LLM engine instance as an event-driven object: requests in, steps over time, records out.

The engine runs steps back to back while it has work; each step's duration comes from the
step-time model. A request added at time ``t`` waits for the next scheduling point (the end of
the step in progress, or ``t`` if idle), as in vLLM's engine-core busy loop.

Driving it (``ServingSimulation`` does this): ``advance(t)`` moves the engine to time ``t`` and
returns the requests that ended on the way; ``add_request(req, t)`` after ``advance(t)``;
``next_event_time()`` says when it next needs attention. Requests added at ``t`` are seen by a
step that starts at ``t``, so a driver should add all requests of an instant before asking.

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
from collections import deque
from itertools import accumulate

from gpuplane.serving.batch import StepTimeModel
from gpuplane.serving.engine import completion, sglang_policy, vllm_policy
from gpuplane.serving.engine.decode_set import DecodeSet
from gpuplane.serving.engine.kv_cache import KVCache
from gpuplane.serving.engine.kv_reference import ReferenceKVCache
from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.engine.plan import InFlight, Plan
from gpuplane.serving.engine.request import FinishReason, Request, RequestState
from gpuplane.serving.engine.settings import (
    SGLANG_CLIP_MAX_NEW_TOKENS,
    SGLANG_INIT_NEW_TOKEN_RATIO,
    SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR,
    SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS,
    EngineConfig,
)
from gpuplane.serving.engine.stats import EngineStats
from gpuplane.serving.engine.step_timer import decode_run_durations, run_timer


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
        self.decoders = DecodeSet(
            self.block_size, SGLANG_CLIP_MAX_NEW_TOKENS, track_reservation=config.kind == "sglang"
        )
        self.waiting: deque[LiveRequest] = deque()
        self.running: list[LiveRequest] = []
        self.partials: list[LiveRequest] = []  # vLLM: running requests still prefilling
        self.prefilling: dict[LiveRequest, None] = {}  # SGLang: admitted, prefill not done
        self.chunked: LiveRequest | None = None  # SGLang: the request being chunk-prefilled
        self.batch_is_full = False
        init = min(SGLANG_INIT_NEW_TOKEN_RATIO * config.schedule_conservativeness, 1.0)
        self.init_ratio = init
        self.min_ratio = min(init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.ratio_decay = (init - self.min_ratio) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
        self.new_token_ratio = init
        self.now_s = 0.0
        self._inflight: InFlight | None = None
        self._pending_at: float | None = None
        self.num_steps = 0
        # Bumped whenever the queue, the running set or the KV pool may have changed, so that a
        # router can reuse what it read from this engine while the number stays the same.
        self.state_version = 0

    # -- the driver's interface ------------------------------------------------------------
    def rejection(self, req: Request) -> str | None:
        """Why this engine can never serve ``req`` (vLLM rejects such a request up front)."""
        if req.prompt_tokens + 1 > self.config.max_model_len:
            return (
                f"prompt of {req.prompt_tokens} tokens leaves no room to generate within "
                f"max_model_len={self.config.max_model_len}"
            )
        return None

    def add_request(self, req: Request, t: float, external_kv_tokens: int = 0) -> None:
        """Queue ``req`` at time ``t``; call ``advance(t)`` first.

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
        self.waiting.append(live)
        self.state_version += 1
        fl = self._inflight
        if fl is not None and len(fl.ends) > fl.done + 1:
            fl.ends = fl.ends[: fl.done + 1]  # the run stops after the step in progress
        if fl is None and self._pending_at is None:
            self._pending_at = t

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
                out += completion.commit(self, fl, bisect_right(fl.ends, t))
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
        if fl is not None and fl.allocated < len(fl.ends) and fl.ends[fl.allocated - 1] < t:
            self.observe(t)  # (the same test observe starts with, without the call)
        return out

    def observe(self, t: float) -> None:
        """Bring the KV cache to time ``t`` without ending any step: every decode step of the
        run in progress that started before ``t`` has taken its blocks (as each step does when
        it starts), so what a router or a scrape reads equals the step-by-step engine."""
        fl = self._inflight
        if fl is None or fl.allocated >= len(fl.ends) or not fl.plan.uniform:
            return
        ends = fl.ends
        if ends[fl.allocated - 1] >= t:
            return  # the next step to allocate has not started (``started`` below)
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
        doomed = [*self.running, *self.prefilling, *self.waiting]
        self.running, self.partials, self.chunked = [], [], None
        self.prefilling.clear()
        self.waiting.clear()
        for r in doomed:
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
        return len(self.running)

    def num_waiting(self) -> int:
        return len(self.waiting)

    def num_in_flight(self) -> int:
        return len(self.waiting) + len(self.running) + len(self.prefilling)

    def kv_usage(self) -> float:
        return self.kv.usage()

    def is_idle(self) -> bool:
        return self.num_in_flight() == 0 and self._inflight is None

    # -- used by the scheduling policies ----------------------------------------------------
    def admission_tokens(self, r: LiveRequest) -> tuple[int, int]:
        """(locally cached tokens, tokens already computed) for a waiting request: the cached
        prefix, then KV transferred from a prefill engine for the rest of it."""
        hit = self.kv.match_blocks(r.content, r.num_tokens) * self.block_size
        return hit, max(hit, r.external)

    def start_running(self, r: LiveRequest, now: float, cached_tokens: int) -> None:
        """``r`` leaves the queue with ``cached_tokens`` prompt tokens found in the cache."""
        r.move(RequestState.RUNNING)
        if r.first_scheduled_s is None:
            r.first_scheduled_s = now
            self.stats.scheduled(r, now)
        if r.cached_tokens < 0:
            r.cached_tokens = cached_tokens
        if self.kind == "sglang":
            self.prefilling[r] = None

    def register_scheduled(self, r: LiveRequest, n: int) -> None:
        """vLLM records prompt blocks in the prefix cache as they are scheduled.

        Blocks filled while decoding are recorded when the request frees them (see
        docs/serving_engine.md): until then only the request itself could use them.
        """
        if r.kv is not None and not (n == 1 and r.num_output > 0):
            self.kv.register(r.kv, r.num_computed + n)

    def preempt(self, r: LiveRequest, now: float) -> None:
        """vLLM: free ``r``'s blocks and put it at the front of the waiting queue."""
        self.running.remove(r)
        if r in self.partials:
            self.partials.remove(r)
        self._evict(r)
        self.waiting.appendleft(r)

    def retract(self, r: LiveRequest, now: float) -> None:
        """SGLang: free ``r``'s blocks (its prefix stays cached) and queue it at the end."""
        self.running.remove(r)
        self._evict(r)
        self.batch_is_full = False
        self.waiting.append(r)

    def reservation(self) -> float:
        """SGLang: tokens the running batch may still generate, clipped per request."""
        clip = SGLANG_CLIP_MAX_NEW_TOKENS
        eager = 0
        if len(self.decoders) != len(self.running):
            for r in self.running:
                if r not in self.decoders:
                    eager += min(max(r.max_new - r.num_output, 0), clip)
        return self.decoders.reservation() + eager

    def _evict(self, r: LiveRequest) -> None:
        if r in self.decoders:
            self.decoders.remove(r)
        assert r.kv is not None
        self.kv.register(r.kv, r.num_computed)
        self.kv.release(r.kv)
        r.kv = None
        r.num_computed = 0
        r.external = 0  # transferred KV is gone with the blocks: recompute it
        r.move(RequestState.PREEMPTED)
        r.num_preemptions += 1
        self.stats.preemptions += 1

    # -- planning ---------------------------------------------------------------------------
    def _start(self, at: float) -> None:
        """Plan the step (or run of decode steps) that starts at ``at``."""
        self._pending_at = None
        self.state_version += 1
        plan = self._plan_vllm(at) if self.kind == "vllm" else self._plan_sglang(at)
        # Plan.is_empty and Plan.pure_decode, spelled out (this runs for every plan).
        if plan is None or (not plan.items and not (plan.uniform and plan.num_decodes)):
            self._inflight = None
            if self.kind == "sglang" and not self.running:
                self.new_token_ratio = self.init_ratio  # SGLang resets the ratio when idle
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

    def _plan_vllm(self, at: float) -> Plan | None:
        if self.lazy:
            plan = vllm_policy.plan_fast(self, at)
            if plan is not None:
                return plan
            self.decoders.drain()
        return vllm_policy.plan_exact(self, at)

    def _plan_sglang(self, at: float) -> Plan | None:
        plan = sglang_policy.plan_prefill(self, at)
        if plan is not None:
            return plan
        if not self.running:
            return None
        if not self.lazy:
            blocks = sum(1 for r in self.running if r.num_computed % self.block_size == 0)
            preempted = []
            if blocks > self.kv.num_free:
                preempted = sglang_policy.retract(self, list(self.running), at)
            plan = Plan(preempted=preempted, decode_batch=True)
            for r in self.running:
                assert r.kv is not None
                grown = self.kv.grow(r.kv, 1 if r.num_computed % self.block_size == 0 else 0)
                assert grown, "retraction left too few blocks"
                plan.items.append((r, 1))
            return plan
        dec = self.decoders
        preempted = []
        if dec.blocks_for_steps(1) > self.kv.num_free:
            batch = dec.drain()
            preempted = sglang_policy.retract(self, batch, at)
            for r in batch:
                if r not in preempted:
                    dec.add(r)
        self.kv.take_free(dec.blocks_for_steps(1))
        return Plan(uniform=True, num_decodes=len(dec), preempted=preempted)

    def _run_length(self, plan: Plan) -> int:
        """How many identical decode steps this plan can stand for."""
        if not self.lazy or not plan.pure_decode:
            return 1
        if self.kind == "sglang" and (self.chunked or (self.waiting and not self.batch_is_full)):
            return 1
        dec = self.decoders
        limit = self.max_run_steps
        to_finish = dec.steps_to_next_finish()
        if to_finish is not None:
            limit = min(limit, to_finish)
        return 1 + dec.max_steps_with(self.kv.num_free, limit - 1, start=1)
