"""vLLM V1's scheduler (``vllm/v1/core/sched/scheduler.py``, ``Scheduler.schedule``).

There is no separate prefill or decode phase: each request has tokens computed and tokens known,
and a step gives requests tokens out of one budget (``max_num_batched_tokens``):

1. Running requests first, in the order they were admitted: each asks for all its uncomputed
   tokens (one for a decoding request; the rest of the prompt for a partial prefill, capped by
   ``long_prefill_token_threshold``) limited by the budget left; the loop stops when the budget
   is spent, so a long chunk can starve the decodes behind it.
2. Each needs KV slots for its new tokens. If the pool has too few free blocks, the *last*
   running request is preempted (FCFS policy): its blocks are freed, its computed tokens reset to
   zero and it goes back to the *front* of the waiting queue. This repeats until the allocation
   fits or the request preempted itself.
3. Only if nobody was preempted this step: waiting requests in queue order, while budget is left
   and fewer than ``max_num_seqs`` are running. Each looks up its cached prefix, asks for the rest
   (capped as above), and is admitted only if its blocks fit; the first that does not fit stops
   the loop (head-of-line). Admitted requests join the end of the running list.

Blocks are registered in the prefix cache when they are scheduled (vLLM caches up to the tokens
being computed), so a request admitted later in the same step can hit them.

:meth:`VllmScheduler.plan_exact` follows this request by request. :meth:`~VllmScheduler.plan_fast`
gives the same result for the common case where every decoding request gets its token and its
block (decoders are then handled as one group); it returns None when that does not hold, and the
scheduler falls back.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, ClassVar

from gpuplane.serving.engine.plan import Plan
from gpuplane.serving.engine.scheduler import (
    SchedulerParts,
    StepOutput,
    evict,
    new_blocks,
    start_running,
)
from gpuplane.serving.request import RequestState

if TYPE_CHECKING:
    from gpuplane.serving.engine.live import LiveRequest


class VllmScheduler:
    """vLLM V1's FCFS scheduler (mutable owner of the waiting queue and the running list)."""

    kind: ClassVar[str] = "vllm"
    tracks_reservation: ClassVar[bool] = False
    caches_computed_prefill: ClassVar[bool] = False

    def __init__(self, parts: SchedulerParts) -> None:
        self.parts = parts
        self.config = parts.config
        self.kv = parts.kv
        self.decoders = parts.decoders
        self.stats = parts.stats
        self.lazy = parts.lazy
        self.block_size = parts.config.page_tokens
        self.waiting: deque[LiveRequest] = deque()
        self.running: list[LiveRequest] = []
        self.partials: list[LiveRequest] = []  # running requests still prefilling

    # -- the scheduler interface -----------------------------------------------------------
    def add_request(self, r: LiveRequest) -> None:
        self.waiting.append(r)

    def schedule(self, now: float) -> Plan | None:
        if self.lazy:
            plan = self.plan_fast(now)
            if plan is not None:
                return plan
            self.decoders.drain()
        return self.plan_exact(now)

    def update_from_output(self, plan: Plan, out: StepOutput) -> None:
        steps = out.num_steps
        if plan.items or steps == 1:
            tokens = out.first_prompts + out.generated + out.num_decoders
            self.stats.iteration_tokens.observe(float(tokens))
        else:
            self.stats.iteration_tokens.observe(float(out.num_decoders), weight=steps)
        if self.lazy and not plan.uniform:
            self._regroup()

    def token_emitted(self, r: LiveRequest, finished: bool) -> None:
        if not finished and r in self.partials:
            self.partials.remove(r)

    def remove_finished(self, r: LiveRequest) -> None:
        running = self.running
        # Finishing requests are usually among the oldest: look from the front.
        if running and running[0] is r:
            del running[0]
        elif r in running:
            running.remove(r)
        if self.partials and r in self.partials:
            self.partials.remove(r)

    def abort_all(self) -> list[LiveRequest]:
        doomed = [*self.running, *self.waiting]
        self.running, self.partials = [], []
        self.waiting.clear()
        return doomed

    def can_extend_run(self) -> bool:
        return True

    def num_waiting(self) -> int:
        return len(self.waiting)

    def num_running(self) -> int:
        return len(self.running)

    def get_num_unfinished_requests(self) -> int:
        return len(self.waiting) + len(self.running)

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    # -- one step ------------------------------------------------------------------------------
    def _chunk(self, r: LiveRequest, budget: int) -> int:
        n = r.num_tokens - r.num_computed
        threshold = self.config.long_prefill_token_threshold
        if 0 < threshold < n:
            n = threshold
        return min(n, budget)

    def plan_exact(self, now: float) -> Plan:
        """One step, request by request (every running request's state is written down)."""
        plan = Plan()
        budget = self.config.max_num_batched_tokens
        running = self.running
        i = 0
        while i < len(running) and budget > 0:
            r = running[i]
            n = self._chunk(r, budget)
            assert r.kv is not None
            need = new_blocks(self.block_size, r, n)
            scheduled = True
            while not self.kv.grow(r.kv, need):
                victim = running[-1]
                self.preempt(victim)
                plan.preempted.append(victim)
                if victim is r:
                    scheduled = False
                    break
            if not scheduled:
                break
            self.register_scheduled(r, n)
            plan.items.append((r, n))
            budget -= n
            i += 1
        if not plan.preempted:
            self.admit_waiting(plan, budget, now)
        return plan

    def plan_fast(self, now: float) -> Plan | None:
        """The step with decoders as a group, or None if a decoder would miss its token or block."""
        dec = self.decoders
        n_dec = len(dec.members)
        budget = self.config.max_num_batched_tokens
        chunks: list[tuple[LiveRequest, int, int]] = []
        blocks = decode_blocks = dec.blocks_for_steps(1)
        seen = 0
        partials = self.partials
        if partials:
            positions = sorted((self.running.index(p), k) for k, p in enumerate(partials))
            prev = -1
            for pos, k in positions:
                between = pos - prev - 1
                prev = pos
                if between > budget:
                    return None
                budget -= between
                seen += between
                if budget == 0:
                    break
                p = partials[k]
                n = self._chunk(p, budget)
                need = new_blocks(self.block_size, p, n)
                chunks.append((p, n, need))
                blocks += need
                budget -= n
        trailing = n_dec - seen
        if trailing > budget or (trailing and budget == 0):
            return None
        budget -= trailing
        if blocks > self.kv.num_free:
            return None
        plan = Plan([], True, False, n_dec, (), [])  # uniform: the decoders all decode
        self.kv.take_free(decode_blocks)
        for p, n, need in chunks:
            assert p.kv is not None
            self.kv.grow(p.kv, need)
            self.register_scheduled(p, n)
            plan.items.append((p, n))
        self.admit_waiting(plan, budget, now)
        return plan

    def admit_waiting(self, plan: Plan, budget: int, now: float) -> None:
        """Step 3: admit waiting requests while budget, ``max_num_seqs`` and free blocks allow."""
        kv, waiting, running = self.kv, self.waiting, self.running
        config, bs = self.config, self.block_size
        while waiting and budget > 0:
            if len(running) >= config.max_num_seqs:
                break
            r = waiting[0]
            num_tokens = r.num_tokens
            hit_blocks = kv.match_blocks(r.content, num_tokens)
            hit = hit_blocks * bs
            computed = max(hit, r.external)  # the cached prefix, then transferred KV
            n = num_tokens - computed
            threshold = config.long_prefill_token_threshold
            if 0 < threshold < n:
                n = threshold
            n = min(n, budget)
            admission = kv.plan_admission(r.content, num_tokens, computed - hit + n, hit_blocks)
            if admission.blocks_needed > kv.num_free:
                break
            waiting.popleft()
            resumed = r.state is RequestState.PREEMPTED
            r.kv = kv.admit(r.content, admission)
            r.num_computed = computed
            start_running(self.parts, r, now, hit)
            if kv.enable_caching and not resumed:
                self.stats.prefix_queries += r.num_tokens
                self.stats.prefix_hits += hit
            running.append(r)
            self.partials.append(r)
            self.register_scheduled(r, n)
            plan.items.append((r, n))
            budget -= n

    def register_scheduled(self, r: LiveRequest, n: int) -> None:
        """vLLM records prompt blocks in the prefix cache as they are scheduled.

        Blocks filled while decoding are recorded when the request frees them (see
        docs/serving_engine.md): until then only the request itself could use them.
        """
        if r.kv is not None and not (n == 1 and r.num_output > 0):
            self.kv.register(r.kv, r.num_computed + n)

    def preempt(self, r: LiveRequest) -> None:
        """Free ``r``'s blocks and put it at the front of the waiting queue."""
        self.running.remove(r)
        if r in self.partials:
            self.partials.remove(r)
        evict(self.parts, r)
        self.waiting.appendleft(r)

    def _regroup(self) -> None:
        """After an exact step: decoding requests that were not scheduled rejoin the group."""
        partials = set(self.partials)
        dec = self.decoders
        for r in self.running:
            if r not in partials and r not in dec:
                dec.add(r)
