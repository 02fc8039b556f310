"""The one routing decision the twin's request path and the live router both make.

``dispatch(request, engines, book, policy) -> Route`` is pure: the request, a view of every
engine (role, readiness, ``max_model_len``, load and this request's cached-prefix figures), the
routing state the caller keeps (offered as a frozen :class:`DispatchBook`) and the policy (the
routers and the P/D settings) in; a frozen :class:`Route` out. The twin's
:class:`~gpuplane.serving.routing.request_path.RequestPath` builds the views from its engines,
the live router (``live.router.picker``) from its backends' scraped ``/metrics`` and its own
prefix index; both then apply the route to their state with
:class:`~gpuplane.serving.routing.dispatch_state.DispatchState`.

The steps, as llm-d's inference scheduler takes them:

1. P/D mode when any engine (ready or not) has the ``prefill`` or ``decode`` role; the
   candidates are then the ready ``decode`` and ``both`` engines, else the ready ``both`` ones.
2. Candidates whose ``max_model_len`` leaves no room for the request are dropped, as vLLM would
   refuse it (``prompt + max_tokens > max_model_len``, ``max_tokens`` 1 when not given: room for
   one output token). None ready: refused ``NO_READY_ENGINE``; none long enough:
   ``PROMPT_TOO_LONG``, with the longest ``max_model_len`` among them (the live router answers
   vLLM's 400 with it).
3. The policy's router picks among the candidates.
4. P/D: llm-d's ``prefix-based-pd-decider`` splits the request when the prompt tokens the
   chosen engine does not hold reach ``PDSettings.non_cached_tokens`` and a ready prefill
   engine can take the prompt; the prefill router then picks the prefill engine for the
   prefill half (``pd.prefill_request``), seeing the state as it is once the decode choice is
   recorded (the round-robin counter one further, the session on the decode engine).

What an engine holds of the prompt (``EngineView.cached_tokens``) is the caller's best
knowledge: the twin reads the engine's prefix cache; the live router, which has no KV-event
feed, estimates it from its prefix index (what it sent where). Each engine's prefix figures are
for the request as that engine would receive it: prefill engines see the prefill half.

Tie breaks: a decision draws one number from the caller's seeded stream, a split a second;
``book.tie_breaks`` offers the next two and ``Route.num_tie_breaks`` says how many were used,
so the caller's stream advances exactly as if each decision had drawn its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from gpuplane.serving.request import Request
from gpuplane.serving.routing.pd import PDSettings, prefill_request, should_disaggregate
from gpuplane.serving.routing.router import (
    EngineView,
    Role,
    Router,
    RoutingDecision,
    RoutingSnapshot,
)

WHOLE: tuple[Role, ...] = ("both",)
DECODE: tuple[Role, ...] = ("decode", "both")
PREFILL: tuple[Role, ...] = ("prefill",)
NO_READY = "no ready engine"
DEFAULT_PD = PDSettings()


class Refusal(StrEnum):
    """Why no engine takes a request (the live router's answer: 503, 400)."""

    NO_READY_ENGINE = "no-ready-engine"
    PROMPT_TOO_LONG = "prompt-too-long"


class EngineState(NamedTuple):
    """One engine as the dispatcher sees it (a tuple, as ``EngineView``: made per decision)."""

    view: EngineView  # load figures and this request's prefix figures
    role: Role
    max_model_len: int
    ready: bool = True  # ready and accepting new requests

    @property
    def engine_id(self) -> str:
        return self.view[0]


class DispatchBook(NamedTuple):
    """The routing state the caller keeps, as this decision reads it (a named tuple, as
    ``EngineView``: one is made for every request)."""

    now_s: float
    rr_counter: int = 0
    session_engine: str | None = None
    total_blocks: int = 0  # the request's blocks in the prefix index (0: the router needs none)
    prefill_total_blocks: int = 0  # the same for the prefill router
    tie_breaks: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True, slots=True)
class DispatchPolicy:
    """The routers and the P/D split (the prefill router picks among prefill engines)."""

    router: Router
    prefill_router: Router
    pd: PDSettings = DEFAULT_PD
    # What each router reads (a router's needs do not change), taken once: they are asked for
    # every request, and a router's ``needs`` may build its set anew each time.
    needs: frozenset[str] = field(init=False, default=frozenset())
    prefill_needs: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        object.__setattr__(self, "needs", self.router.needs)
        object.__setattr__(self, "prefill_needs", self.prefill_router.needs)


class Route(NamedTuple):
    """Where a request goes: ``engine_id`` serves it (whole, or its decode half after
    ``prefill_engine_id`` computed its prompt); ``engine_id`` None with ``refusal`` and
    ``reason`` when nowhere. ``cached_tokens``: what the decode engine holds of the prompt
    (the split's figure; 0 unless the caller gave it). A named tuple, as ``EngineView``: one is
    made for every request."""

    engine_id: str | None
    reason: str = ""
    prefill_engine_id: str | None = None
    cached_tokens: int = 0
    refusal: Refusal | None = None
    max_model_len: int = 0  # refused as too long: the longest context of the candidates
    num_tie_breaks: int = 0


def room_needed(req: Request) -> int:
    """Context a request needs: its prompt and ``max_tokens`` (vLLM's check), or one output
    token when ``max_tokens`` is not given (the engine's own check, ``Engine.rejection``)."""
    return req.prompt_tokens + (req.max_tokens or 1)


def too_long_reason(req: Request, max_model_len: int) -> str:
    if req.max_tokens is None or req.max_tokens == 1:
        return (
            f"prompt of {req.prompt_tokens} tokens leaves no room to generate within "
            f"max_model_len={max_model_len}"
        )
    return (
        f"prompt of {req.prompt_tokens} tokens and max_tokens={req.max_tokens} exceed "
        f"max_model_len={max_model_len}"
    )


def candidates(
    engines: tuple[EngineState, ...], roles: tuple[Role, ...], need: int
) -> list[EngineState]:
    """The ready engines of these roles with room for ``need`` tokens."""
    # Index access and one pass: this runs for every request over every engine.
    return [e for e in engines if e[3] and need <= e[2] and e[1] in roles]


def ready_of(engines: tuple[EngineState, ...], roles: tuple[Role, ...]) -> list[EngineState]:
    """The ready engines of these roles (asked only when none has room)."""
    return [e for e in engines if e[3] and e[1] in roles]


def _refused(req: Request, ready: list[EngineState]) -> Route:
    if not ready:
        return Route(None, NO_READY, refusal=Refusal.NO_READY_ENGINE)
    # The first candidate's limit names the reason (the engines of one model share it).
    longest = max(e.max_model_len for e in ready)
    reason = too_long_reason(req, ready[0].max_model_len)
    return Route(None, reason, refusal=Refusal.PROMPT_TOO_LONG, max_model_len=longest)


def _decide(
    router: Router, req: Request, views: list[EngineState], book: DispatchBook, k: int
) -> RoutingDecision:
    snap = RoutingSnapshot(
        book.now_s,
        req,
        tuple([e[0] for e in views]),
        book.rr_counter + k,
        book.session_engine,
        book.total_blocks if k == 0 else book.prefill_total_blocks,
        book.tie_breaks[k],
    )
    return router.decide(snap)


def dispatch(
    req: Request, engines: tuple[EngineState, ...], book: DispatchBook, policy: DispatchPolicy
) -> Route:
    """Where ``req`` goes (``engines`` sorted by id; see the module docstring)."""
    pd = any([e[1] != "both" for e in engines])  # a list: cheaper than a generator here
    roles = DECODE if pd else WHOLE
    fit = candidates(engines, roles, room_needed(req))
    if not fit:
        return _refused(req, ready_of(engines, roles))
    decision = _decide(policy.router, req, fit, book, 0)
    chosen = decision.engine_id
    if chosen is None:
        return Route(None, decision.reason, refusal=Refusal.NO_READY_ENGINE, num_tie_breaks=1)
    cached = next(e[0][8] for e in fit if e[0][0] == chosen)  # the view's cached_tokens
    whole = Route(chosen, decision.reason, cached_tokens=cached, num_tie_breaks=1)
    if not pd:
        return whole
    # The prefill half generates one token: room for the prompt and one more.
    prefills = candidates(engines, PREFILL, req.prompt_tokens + 1)
    if not prefills or not should_disaggregate(req.prompt_tokens, cached, policy.pd):
        return whole
    # The prefill router sees the session recorded on the decode engine (as the caller's
    # state has it once the decode choice is applied).
    seen = DispatchBook(
        book.now_s,
        book.rr_counter,
        chosen if req.session_id else None,
        book.total_blocks,
        book.prefill_total_blocks,
        book.tie_breaks,
    )
    pre = _decide(policy.prefill_router, prefill_request(req), prefills, seen, 1)
    if pre.engine_id is None:
        return Route(chosen, decision.reason, cached_tokens=cached, num_tie_breaks=2)
    return Route(
        chosen,
        decision.reason,
        prefill_engine_id=pre.engine_id,
        cached_tokens=cached,
        num_tie_breaks=2,
    )
