"""vLLM V1's scheduler (``vllm/v1/core/sched/scheduler.py``, ``Scheduler.schedule``), one step.

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

:func:`plan_exact` follows this request by request. :func:`plan_fast` gives the same result for
the common case where every decoding request gets its token and its block (decoders are then
handled as one group); it returns None when that does not hold, and the engine falls back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.serving.engine.plan import Plan
from gpuplane.serving.engine.request import RequestState

if TYPE_CHECKING:
    from gpuplane.serving.engine.engine import Engine
    from gpuplane.serving.engine.live import LiveRequest


def _chunk(eng: Engine, r: LiveRequest, budget: int) -> int:
    n = r.num_tokens - r.num_computed
    threshold = eng.config.long_prefill_token_threshold
    if 0 < threshold < n:
        n = threshold
    return min(n, budget)


def _new_blocks(eng: Engine, r: LiveRequest, n: int) -> int:
    assert r.kv is not None
    return -(-(r.num_computed + n) // eng.block_size) - r.kv.num_blocks


def plan_exact(eng: Engine, now: float) -> Plan:
    """One step, request by request (every running request's state is written down)."""
    plan = Plan()
    budget = eng.config.max_num_batched_tokens
    running = eng.running
    i = 0
    while i < len(running) and budget > 0:
        r = running[i]
        n = _chunk(eng, r, budget)
        assert r.kv is not None
        need = _new_blocks(eng, r, n)
        scheduled = True
        while not eng.kv.grow(r.kv, need):
            victim = running[-1]
            eng.preempt(victim, now)
            plan.preempted.append(victim)
            if victim is r:
                scheduled = False
                break
        if not scheduled:
            break
        eng.register_scheduled(r, n)
        plan.items.append((r, n))
        budget -= n
        i += 1
    if not plan.preempted:
        admit_waiting(eng, plan, budget, now)
    return plan


def plan_fast(eng: Engine, now: float) -> Plan | None:
    """The step with decoders as a group, or None if some decoder would miss its token or block."""
    dec = eng.decoders
    n_dec = len(dec.members)
    budget = eng.config.max_num_batched_tokens
    chunks: list[tuple[LiveRequest, int, int]] = []
    blocks = decode_blocks = dec.blocks_for_steps(1)
    seen = 0
    if eng.partials:
        positions = sorted((eng.running.index(p), k) for k, p in enumerate(eng.partials))
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
            p = eng.partials[k]
            n = _chunk(eng, p, budget)
            need = _new_blocks(eng, p, n)
            chunks.append((p, n, need))
            blocks += need
            budget -= n
    trailing = n_dec - seen
    if trailing > budget or (trailing and budget == 0):
        return None
    budget -= trailing
    if blocks > eng.kv.num_free:
        return None
    plan = Plan([], True, False, n_dec, (), [])  # uniform: the decoders all decode
    eng.kv.take_free(decode_blocks)
    for p, n, need in chunks:
        assert p.kv is not None
        eng.kv.grow(p.kv, need)
        eng.register_scheduled(p, n)
        plan.items.append((p, n))
    admit_waiting(eng, plan, budget, now)
    return plan


def admit_waiting(eng: Engine, plan: Plan, budget: int, now: float) -> None:
    """Step 3: admit waiting requests while budget, ``max_num_seqs`` and free blocks allow."""
    kv, waiting = eng.kv, eng.waiting
    config, bs = eng.config, eng.block_size
    while waiting and budget > 0:
        if len(eng.running) >= config.max_num_seqs:
            break
        r = waiting[0]
        # Engine.admission_tokens, keeping the cache lookup for the admission plan.
        num_tokens = r.num_tokens
        hit_blocks = kv.match_blocks(r.content, num_tokens)
        hit = hit_blocks * bs
        computed = max(hit, r.external)
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
        eng.start_running(r, now, hit)
        if kv.enable_caching and not resumed:
            eng.stats.prefix_queries += r.num_tokens
            eng.stats.prefix_hits += hit
        eng.running.append(r)
        eng.partials.append(r)
        eng.register_scheduled(r, n)
        plan.items.append((r, n))
        budget -= n
