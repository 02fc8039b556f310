"""One extender call: the request body in, (HTTP status, JSON body) out, never an exception.

kube-scheduler treats any status but 200 as an error ("failed <verb> with extender at URL
<url>, code <n>") and shows the ``Error`` field of a filter or bind result as the reason, so:

- filter and bind answer every failure with 200 and their ``Error`` field (the scheduler's
  events then carry gpuplane's words);
- prioritize and preempt results have no error field: a failure is a 4xx/5xx with a JSON body
  ``{"Error": "..."}`` (kube ignores prioritize errors, and fails or skips preemption).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuplane.live.extender.binder import Binder, BindError
from gpuplane.live.extender.state import ExtenderState, NotReady
from gpuplane.live.extender.wire import (
    WireError,
    binding_args,
    decode,
    encode,
    filter_error,
    filter_result,
    preemption_args,
    preemption_result,
    priority_json,
    read_extender_args,
)

VERBS = ("filter", "prioritize", "preempt", "bind")
log = logging.getLogger("gpuplane.extender")


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: Any  # JSON-able, or bytes already encoded as JSON
    error: str = ""  # the failure kind for metrics and logs ("" when it worked)
    detail: str = ""  # what to log besides the status


def _filter(state: ExtenderState, body: bytes, now_s: float, binder: Binder | None) -> Reply:
    args = read_extender_args(body)
    decision = state.filter(args, now_s)
    detail = f"{len(args.names)} offered, {len(decision.kept)} kept"
    if decision.unknown:
        detail += f", {len(decision.unknown)} unknown"
    return Reply(200, encode(filter_result(decision, args)), detail=detail)


def _prioritize(state: ExtenderState, body: bytes, now_s: float, binder: Binder | None) -> Reply:
    args = read_extender_args(body)
    scores = state.prioritize(args, now_s)
    return Reply(200, priority_json(scores), detail=f"{len(scores)} scored")


def _preempt(state: ExtenderState, body: bytes, now_s: float, binder: Binder | None) -> Reply:
    args = preemption_args(decode(body))
    kept = state.preempt(args, now_s)
    return Reply(200, preemption_result(kept), detail=f"{len(args.victims)} in, {len(kept)} kept")


def _bind(state: ExtenderState, body: bytes, now_s: float, binder: Binder | None) -> Reply:
    args = binding_args(decode(body))
    if binder is None:
        raise WireError("bind is not enabled: serve with --kubeconfig and --bind")
    problem = state.bind_check(args, now_s)
    if problem:
        return Reply(200, {"Error": problem}, error="bind-check", detail=problem)
    try:
        binder.bind(args.pod_namespace, args.pod_name, args.pod_uid, args.node)
    except BindError as exc:
        return Reply(200, {"Error": str(exc)}, error="bind")
    state.bound(args, now_s)
    return Reply(200, {"Error": ""}, detail=f"{args.pod_namespace}/{args.pod_name} -> {args.node}")


_HANDLERS: dict[str, Callable[[ExtenderState, bytes, float, Binder | None], Reply]] = {
    "filter": _filter,
    "prioritize": _prioritize,
    "preempt": _preempt,
    "bind": _bind,
}


def error_reply(verb: str, status: int, kind: str, message: str) -> Reply:
    """The protocol's error form for ``verb``."""
    if verb == "filter":
        return Reply(200, filter_error(message), error=kind, detail=message)
    if verb == "bind":
        return Reply(200, {"Error": message}, error=kind, detail=message)
    return Reply(status, {"Error": message}, error=kind, detail=message)


def handle(
    state: ExtenderState, verb: str, body: bytes, now_s: float, binder: Binder | None = None
) -> Reply:
    try:
        return _HANDLERS[verb](state, body, now_s, binder)
    except WireError as exc:
        return error_reply(verb, 400, "bad-request", str(exc))
    except NotReady as exc:
        return error_reply(verb, 503, "not-ready", str(exc))
    except Exception as exc:  # the service must answer, whatever went wrong inside
        log.exception("internal error in %s", verb)
        return error_reply(verb, 500, "internal", f"gpuplane extender: {type(exc).__name__}: {exc}")
