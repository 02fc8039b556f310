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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.serving.engine.plan import Plan
from gpuplane.serving.engine.settings import SGLANG_CLIP_MAX_NEW_TOKENS as CLIP
from gpuplane.serving.engine.settings import SGLANG_LPM_FALLBACK_QUEUE

if TYPE_CHECKING:
    from gpuplane.serving.engine.engine import Engine
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


def plan_prefill(eng: Engine, now: float) -> Plan | None:
    """``get_new_batch_prefill``: the next prefill batch, or None."""
    if eng.chunked is None and (eng.batch_is_full or not eng.waiting):
        return None
    cfg = eng.config
    if eng.num_running() >= cfg.max_num_seqs and eng.chunked is None:
        eng.batch_is_full = True
        return None
    if cfg.schedule_policy == "lpm" and len(eng.waiting) <= SGLANG_LPM_FALLBACK_QUEUE:
        ordered = sorted(eng.waiting, key=lambda r: -eng.kv.match_blocks(r.content, r.num_tokens))
        eng.waiting.clear()
        eng.waiting.extend(ordered)
    budget = _Budget(
        eng.kv.num_free * eng.block_size - eng.reservation() * eng.new_token_ratio,
        cfg.max_prefill_tokens,
        cfg.chunked_prefill_size if cfg.chunked_prefill_size > 0 else None,
    )
    plan = Plan()
    chunked = eng.chunked
    if chunked is not None:
        n = chunked.num_tokens - chunked.num_computed
        n = n if budget.chunk is None else min(n, budget.chunk)
        if not _allocate(eng, chunked, n):
            return None
        plan.items.append((chunked, n))
        budget.take(n, n)
        eng.chunked = chunked if chunked.num_computed + n < chunked.num_tokens else None
    hits = 0
    while eng.waiting:
        if eng.num_running() + len(plan.items) >= cfg.max_num_seqs:
            eng.batch_is_full = True
            break
        hit = _add_one(eng, plan, budget, now)
        if hit is None:
            break
        hits += hit
        if budget.total <= 0:
            eng.batch_is_full = True  # budget_state() == NO_TOKEN
            break
        if budget.prompt <= 0 or (budget.chunk is not None and budget.chunk <= 0):
            break  # budget_state() == OTHER
    if not plan.items:
        return None
    new = sum(n for _, n in plan.items)
    eng.stats.last_hit_rate = hits / (hits + new) if hits + new else 0.0
    return plan


def _add_one(eng: Engine, plan: Plan, budget: _Budget, now: float) -> int | None:
    """``add_one_req`` for the head of the queue: its cached tokens, or None if refused."""
    kv, bs = eng.kv, eng.block_size
    r = eng.waiting[0]
    hit, computed = eng.admission_tokens(r)
    extend = r.num_tokens - computed
    total = extend + min(max(r.max_new - r.num_output, 0), CLIP)
    alone = not plan.items and eng.num_running() == 0
    if total >= budget.total and not alone:
        eng.batch_is_full = True  # AddReqResult.NO_TOKEN
        return None
    if extend >= budget.prompt and plan.items:
        return None  # AddReqResult.OTHER: the batch has enough prompt tokens
    n = extend if budget.chunk is None or extend <= budget.chunk else budget.chunk // bs * bs
    if n <= 0:
        return None
    admission = kv.plan_admission(r.content, r.num_tokens, computed - hit + n)
    if admission.blocks_needed > kv.num_free:
        eng.batch_is_full = True
        return None
    eng.waiting.popleft()
    resumed = r.num_preemptions > 0
    r.kv = kv.admit(r.content, admission)
    r.num_computed = computed
    eng.start_running(r, now, hit)
    if not resumed:
        eng.stats.prefix_queries += r.num_tokens
        eng.stats.prefix_hits += hit
    plan.items.append((r, n))
    if n < extend:
        eng.chunked = r
    budget.take(n, total if n == extend else n)
    return hit


def _allocate(eng: Engine, r: LiveRequest, n: int) -> bool:
    assert r.kv is not None
    need = -(-(r.num_computed + n) // eng.block_size) - r.kv.num_blocks
    return eng.kv.grow(r.kv, need)


def retract(eng: Engine, batch: list[LiveRequest], now: float) -> list[LiveRequest]:
    """``retract_decode``: requests to put back so the rest of ``batch`` can decode one step."""
    order = sorted(batch, key=lambda r: (r.num_output, -r.prompt), reverse=True)
    retracted: list[LiveRequest] = []
    first = True
    while len(order) > 1 and (first or _decode_blocks(eng, order) > eng.kv.num_free):
        first = False
        r = order.pop()
        eng.retract(r, now)
        retracted.append(r)
    decoded = sum(r.num_output for r in order)
    max_new = sum(r.max_new for r in order)
    eng.new_token_ratio = min(1.0, (decoded + RETRACT_DECODE_STEPS * len(order)) / max_new)
    eng.stats.last_retracted = len(retracted)
    return retracted


def _decode_blocks(eng: Engine, batch: list[LiveRequest]) -> int:
    bs = eng.block_size
    return sum(1 for r in batch if r.num_computed % bs == 0)
