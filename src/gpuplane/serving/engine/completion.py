"""What happens when steps end: tokens appear, requests finish, counters move."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.engine.plan import InFlight, Plan
from gpuplane.serving.engine.scheduler import StepOutput
from gpuplane.serving.request import FinishReason, RequestState

if TYPE_CHECKING:
    from gpuplane.serving.engine.engine import Engine


def commit(eng: Engine, fl: InFlight, upto: int) -> list[RequestRecord]:
    """Steps ``fl.done .. upto-1`` of the in-flight work have ended."""
    plan = fl.plan
    a, b = fl.done, upto
    all_ends = fl.ends
    ends = all_ends if a == 0 and b == len(all_ends) else all_ends[a:b]
    t = ends[-1]
    start = fl.start_s if a == 0 else all_ends[a - 1]
    out: list[RequestRecord] = []
    dec = eng.decoders
    uniform = plan.uniform
    n = len(dec.members) if uniform else 0
    if uniform:
        # Steps take their blocks when they start: the first when planned, others maybe when
        # a router looked at the engine (Engine.observe); the rest now.
        first = max(a, fl.allocated)
        if b > first:
            eng.kv.take_free(dec.blocks_for_steps(b - first, start=first - a))
            fl.allocated = b
        ended = dec.advance(ends, eng.stats, eng.record)
        if ended:
            out = [finish(eng, r, t) for r in ended]
    fl.done = b
    eng.num_steps += b - a
    first_prompts, generated = complete_items(eng, plan, t, out) if plan.items else (0, 0)
    # tuple.__new__: StepOutput(...) without the named tuple's Python-level __new__.
    step_out = tuple.__new__(StepOutput, (b - a, a == 0, n, first_prompts, generated, start, t))
    eng.scheduler.update_from_output(plan, step_out)
    return out


def complete_items(eng: Engine, plan: Plan, t: float, out: list[RequestRecord]) -> tuple[int, int]:
    """Requests handled one by one in a single step; (prompt tokens at first token, tokens)."""
    stats, sched = eng.stats, eng.scheduler
    radix = eng.caches_computed_prefill
    first_prompts = generated = 0
    for r, n in plan.items:
        if r.state is not RequestState.RUNNING:
            continue
        prefill = not (n == 1 and r.num_output > 0)
        r.num_computed += n
        if radix and prefill and r.kv is not None:
            eng.kv.register(r.kv, r.num_computed)  # the radix cache takes the computed prefix
        if r.num_computed < r.prompt + r.num_output:  # LiveRequest.num_tokens
            continue  # a prefill chunk: no token yet
        generated += 1
        r.num_output += 1
        if r.num_output == 1:
            r.first_token_s = t
            stats.first_token(r, t)
            first_prompts += r.prompt
        else:
            stats.itl_one(t - r.last_token_s)
        r.last_token_s = t
        if r.token_times is not None:
            r.token_times.append(t)
        done = r.num_output >= r.target
        sched.token_emitted(r, done)
        if done:
            out.append(finish(eng, r, t))
            continue
        if eng.lazy and r not in eng.decoders.members:
            eng.decoders.add(r)
    stats.generation_tokens += generated
    return first_prompts, generated


def finish(eng: Engine, r: LiveRequest, t: float) -> RequestRecord:
    """``r`` produced its last token at ``t``: free its blocks and write its record."""
    reason = r.finish_reason()
    dec = eng.decoders
    if r in dec.members:
        dec.remove(r)
    eng.scheduler.remove_finished(r)
    assert r.kv is not None
    eng.kv.register(r.kv, r.num_computed)
    if eng.hold_on_finish and _holds(eng, r, reason):
        eng.held[r.req.request_id] = r.kv  # freed by Engine.release_held
    else:
        eng.kv.release(r.kv)
    r.kv = None
    r.move(RequestState.FINISHED)
    eng.stats.finished(r, t, reason)
    return r.record(eng.engine_id, t, reason)


def _holds(eng: Engine, r: LiveRequest, reason: FinishReason) -> bool:
    """vLLM's NixlConnector (``request_finished``): a request for a remote decode keeps all its
    blocks when it ends capped by length (any other ending frees them at once)."""
    rid = r.req.request_id
    if rid not in eng.hold_on_finish:
        return False
    eng.hold_on_finish.discard(rid)
    return reason is FinishReason.LENGTH and r.kv is not None and r.kv.num_blocks > 0
