"""SGLang's scheduler (``python/sglang/srt/managers/scheduler.py`` and ``schedule_policy.py``).

Where it differs from vLLM V1:

- A step is a prefill batch *or* a decode batch, never both (without ``--enable-mixed-chunk``),
  and prefill goes first: ``get_next_batch_to_run`` tries ``get_new_batch_prefill`` and decodes
  only if that returns nothing. Decodes stall while long prompts are prefilled.
- Admission (``PrefillAdder``) budgets memory with an estimate of future output:
  ``rem_total = free + evictable - sum(min(max_new - output, 4096) x new_token_ratio)`` over
  the running batch. A request is refused (NO_TOKEN) when its uncached prompt plus
  ``min(max_new, 4096)`` reaches ``rem_total``; that, or ``max_running_requests``, marks the
  batch full and no admission is tried until the running batch shrinks. A batch holds at most
  ``max_prefill_tokens`` new prompt tokens (the first request is always allowed) and
  ``chunked_prefill_size`` per chunk; a longer prompt is split and its next chunk goes first in
  the next prefill batch.
- ``new_token_ratio`` starts at 0.7 x conservativeness, decays by (init - min) / 600 per decode
  step to 0.14 x init, returns to init when the engine goes idle, and after a retraction is set
  to ``min(1, (decoded + 20 x batch) / sum(max_new))``.
- Before a decode step the batch must have a free slot per request; if not, requests are
  *retracted* (SGLang's preemption), fewest output tokens first and among those the longest
  prompt, until the rest fit (at least one, never the last one). Retracted requests keep their
  computed prefix in the radix cache and go to the *end* of the waiting queue.
- ``--schedule-policy lpm`` orders the waiting queue by longest cached prefix (stable; plain
  FCFS above 128 waiting requests). Cache entries are added when a prefill chunk completes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from gpuplane.serving.engine.plan import Plan
from gpuplane.serving.engine.scheduler import (
    SchedulerParts,
    StepOutput,
    evict,
    new_blocks,
    start_running,
)
from gpuplane.serving.engine.settings import SGLANG_CLIP_MAX_NEW_TOKENS as CLIP
from gpuplane.serving.engine.settings import (
    SGLANG_INIT_NEW_TOKEN_RATIO,
    SGLANG_LPM_FALLBACK_QUEUE,
    SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR,
    SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS,
)

if TYPE_CHECKING:
    from gpuplane.serving.engine.live import LiveRequest

RETRACT_DECODE_STEPS = 20  # sglang global_config.retract_decode_steps


@dataclass(slots=True)
class _Budget:
    """``PrefillAdder``'s budgets for one prefill batch."""

    total: float  # rem_total_tokens: free + evictable - reserved for running requests
    prompt: int  # rem_input_tokens
    chunk: int | None  # rem_chunk_tokens (None: chunked prefill disabled)

    def take(self, tokens: int, reserve: float) -> None:
        self.total -= reserve
        self.prompt -= tokens
        if self.chunk is not None:
            self.chunk -= tokens


class SglangScheduler:
    """SGLang's scheduler (mutable owner of the waiting queue, prefill set and decode batch)."""

    kind: ClassVar[str] = "sglang"
    tracks_reservation: ClassVar[bool] = True
    caches_computed_prefill: ClassVar[bool] = True

    def __init__(self, parts: SchedulerParts) -> None:
        self.parts = parts
        config = self.config = parts.config
        self.kv = parts.kv
        self.decoders = parts.decoders
        self.stats = parts.stats
        self.lazy = parts.lazy
        self.block_size = config.page_tokens
        self.waiting: deque[LiveRequest] = deque()
        self.running: list[LiveRequest] = []  # the decode batch
        self.prefilling: dict[LiveRequest, None] = {}  # admitted, prefill not done
        self.chunked: LiveRequest | None = None  # the request being chunk-prefilled
        self.batch_is_full = False
        init = min(SGLANG_INIT_NEW_TOKEN_RATIO * config.schedule_conservativeness, 1.0)
        self.init_ratio = init
        self.min_ratio = min(init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.ratio_decay = (init - self.min_ratio) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
        self.new_token_ratio = init

    # -- the scheduler interface -----------------------------------------------------------
    def add_request(self, r: LiveRequest) -> None:
        self.waiting.append(r)

    def schedule(self, now: float) -> Plan | None:
        """``get_next_batch_to_run``: a prefill batch if there is one, else a decode batch."""
        plan = self.plan_prefill(now)
        if plan is None:
            plan = self._plan_decode(now) if self.running else None
        if (plan is None or plan.is_empty) and not self.running:
            self.new_token_ratio = self.init_ratio  # SGLang resets the ratio when idle
        return plan

    def update_from_output(self, plan: Plan, out: StepOutput) -> None:
        if not (plan.uniform or plan.decode_batch):
            return
        steps = out.num_steps - (1 if out.first and plan.preempted else 0)
        ratio, floor, decay = self.new_token_ratio, self.min_ratio, self.ratio_decay
        for _ in range(steps):
            if ratio <= floor:
                break
            ratio = max(ratio - decay, floor)
        self.new_token_ratio = ratio
        if not plan.preempted:
            self.stats.last_retracted = 0
        tokens = (out.num_decoders + out.generated) * out.num_steps
        self.stats.decode_steps(out.num_steps, tokens, out.end_s - out.start_s)

    def token_emitted(self, r: LiveRequest, finished: bool) -> None:
        if r in self.prefilling:
            del self.prefilling[r]
            if self.chunked is r:
                self.chunked = None
            if not finished:
                self.running.append(r)

    def remove_finished(self, r: LiveRequest) -> None:
        running = self.running
        if running and running[0] is r:
            del running[0]
        elif r in running:
            running.remove(r)
        self.prefilling.pop(r, None)
        if self.chunked is r:
            self.chunked = None
        self.batch_is_full = False

    def abort_all(self) -> list[LiveRequest]:
        doomed = [*self.running, *self.prefilling, *self.waiting]
        self.running, self.chunked = [], None
        self.prefilling.clear()
        self.waiting.clear()
        return doomed

    def can_extend_run(self) -> bool:
        # A new prefill batch may be formed at the next step: no run of decode steps.
        return not (self.chunked or (self.waiting and not self.batch_is_full))

    def num_waiting(self) -> int:
        return len(self.waiting)

    def num_running(self) -> int:
        return len(self.running)

    def get_num_unfinished_requests(self) -> int:
        return len(self.waiting) + len(self.running) + len(self.prefilling)

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running or self.prefilling)

    # -- prefill batches ---------------------------------------------------------------------
    def plan_prefill(self, now: float) -> Plan | None:
        """``get_new_batch_prefill``: the next prefill batch, or None."""
        if self.chunked is None and (self.batch_is_full or not self.waiting):
            return None
        cfg, kv = self.config, self.kv
        if len(self.running) >= cfg.max_num_seqs and self.chunked is None:
            self.batch_is_full = True
            return None
        if cfg.schedule_policy == "lpm" and len(self.waiting) <= SGLANG_LPM_FALLBACK_QUEUE:
            ordered = sorted(self.waiting, key=lambda r: -kv.match_blocks(r.content, r.num_tokens))
            self.waiting.clear()
            self.waiting.extend(ordered)
        budget = _Budget(
            kv.num_free * self.block_size - self.reservation() * self.new_token_ratio,
            cfg.max_prefill_tokens,
            cfg.chunked_prefill_size if cfg.chunked_prefill_size > 0 else None,
        )
        plan = Plan()
        chunked = self.chunked
        if chunked is not None:
            n = chunked.num_tokens - chunked.num_computed
            n = n if budget.chunk is None else min(n, budget.chunk)
            assert chunked.kv is not None
            if not kv.grow(chunked.kv, new_blocks(self.block_size, chunked, n)):
                return None
            plan.items.append((chunked, n))
            budget.take(n, n)
            self.chunked = chunked if chunked.num_computed + n < chunked.num_tokens else None
        hits = 0
        while self.waiting:
            if len(self.running) + len(plan.items) >= cfg.max_num_seqs:
                self.batch_is_full = True
                break
            hit = self._add_one(plan, budget, now)
            if hit is None:
                break
            hits += hit
            if budget.total <= 0:
                self.batch_is_full = True  # budget_state() == NO_TOKEN
                break
            if budget.prompt <= 0 or (budget.chunk is not None and budget.chunk <= 0):
                break  # budget_state() == OTHER
        if not plan.items:
            return None
        new = sum(n for _, n in plan.items)
        self.stats.last_hit_rate = hits / (hits + new) if hits + new else 0.0
        return plan

    def _add_one(self, plan: Plan, budget: _Budget, now: float) -> int | None:
        """``add_one_req`` for the head of the queue: its cached tokens, or None if refused."""
        kv, bs = self.kv, self.block_size
        r = self.waiting[0]
        hit = kv.match_blocks(r.content, r.num_tokens) * bs
        computed = max(hit, r.external)  # the cached prefix, then transferred KV
        extend = r.num_tokens - computed
        total = extend + min(max(r.max_new - r.num_output, 0), CLIP)
        alone = not plan.items and not self.running
        if total >= budget.total and not alone:
            self.batch_is_full = True  # AddReqResult.NO_TOKEN
            return None
        if extend >= budget.prompt and plan.items:
            return None  # AddReqResult.OTHER: the batch has enough prompt tokens
        n = extend if budget.chunk is None or extend <= budget.chunk else budget.chunk // bs * bs
        if n <= 0:
            return None
        admission = kv.plan_admission(r.content, r.num_tokens, computed - hit + n)
        if admission.blocks_needed > kv.num_free:
            self.batch_is_full = True
            return None
        self.waiting.popleft()
        resumed = r.num_preemptions > 0
        r.kv = kv.admit(r.content, admission)
        r.num_computed = computed
        start_running(self.parts, r, now, hit)
        self.prefilling[r] = None
        if not resumed:
            self.stats.prefix_queries += r.num_tokens
            self.stats.prefix_hits += hit
        plan.items.append((r, n))
        if n < extend:
            self.chunked = r
        budget.take(n, total if n == extend else n)
        return hit

    def reservation(self) -> float:
        """Tokens the running batch may still generate, clipped per request."""
        eager = 0
        dec = self.decoders
        if len(dec) != len(self.running):
            for r in self.running:
                if r not in dec:
                    eager += min(max(r.max_new - r.num_output, 0), CLIP)
        return dec.reservation() + eager

    # -- decode batches ----------------------------------------------------------------------
    def _plan_decode(self, now: float) -> Plan:
        """A decode step for the running batch, retracting requests if it lacks blocks."""
        bs, kv = self.block_size, self.kv
        if not self.lazy:
            blocks = sum(1 for r in self.running if r.num_computed % bs == 0)
            preempted = []
            if blocks > kv.num_free:
                preempted = self.retract(list(self.running), now)
            plan = Plan(preempted=preempted, decode_batch=True)
            for r in self.running:
                assert r.kv is not None
                grown = kv.grow(r.kv, 1 if r.num_computed % bs == 0 else 0)
                assert grown, "retraction left too few blocks"
                plan.items.append((r, 1))
            return plan
        dec = self.decoders
        preempted = []
        if dec.blocks_for_steps(1) > kv.num_free:
            batch = dec.drain()
            preempted = self.retract(batch, now)
            for r in batch:
                if r not in preempted:
                    dec.add(r)
        kv.take_free(dec.blocks_for_steps(1))
        return Plan(uniform=True, num_decodes=len(dec), preempted=preempted)

    def retract(self, batch: list[LiveRequest], now: float) -> list[LiveRequest]:
        """``retract_decode``: requests to put back so the rest of ``batch`` can decode."""
        order = sorted(batch, key=lambda r: (r.num_output, -r.prompt), reverse=True)
        retracted: list[LiveRequest] = []
        first = True
        while len(order) > 1 and (first or self._decode_blocks(order) > self.kv.num_free):
            first = False
            r = order.pop()
            self._retract_one(r)
            retracted.append(r)
        decoded = sum(r.num_output for r in order)
        max_new = sum(r.max_new for r in order)
        self.new_token_ratio = min(1.0, (decoded + RETRACT_DECODE_STEPS * len(order)) / max_new)
        self.stats.last_retracted = len(retracted)
        return retracted

    def _retract_one(self, r: LiveRequest) -> None:
        """Free ``r``'s blocks (its prefix stays cached) and queue it at the end."""
        self.running.remove(r)
        evict(self.parts, r)
        self.batch_is_full = False
        self.waiting.append(r)

    def _decode_blocks(self, batch: list[LiveRequest]) -> int:
        bs = self.block_size
        return sum(1 for r in batch if r.num_computed % bs == 0)
