"""Node filters shared by the placement hook: taints/tolerations, nodeSelector, required node
affinity, each worded like the kube-scheduler plugin that owns it.

Semantics (k8s.io/api core/v1 toleration.go ToleratesTaint, component-helpers nodeaffinity):
- a toleration with an empty effect matches every effect; an empty key with ``Exists`` matches
  every taint; ``Exists`` ignores the value; ``Equal`` (the default) compares values;
- the TaintToleration filter only considers NoSchedule and NoExecute taints;
- required node affinity: the terms are ORed, the expressions of a term ANDed; operators In,
  NotIn, Exists, DoesNotExist, Gt, Lt (integer compare).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.twin.spec import Taint, Toleration

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
UNREACHABLE_TAINT = Taint("node.kubernetes.io/unreachable", "", "NoExecute")


def tolerates(tol: Toleration, taint: Taint) -> bool:
    if tol.effect is not None and tol.effect != taint.effect:
        return False
    if tol.key is not None and tol.key != "" and tol.key != taint.key:
        return False
    if tol.operator == "Exists":
        return True
    if not tol.key:
        return False  # an empty key is only valid with Exists
    return (tol.value or "") == taint.value


def untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    for taint in taints:
        if taint.effect == "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _expr_matches(expr: Mapping[str, object], labels: Mapping[str, str]) -> bool:
    key = str(expr.get("key", ""))
    op = expr.get("operator")
    raw_values = expr.get("values") or []
    values = [str(v) for v in raw_values] if isinstance(raw_values, list) else []
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def matches_affinity(affinity: Mapping[str, object] | None, labels: Mapping[str, str]) -> bool:
    if not affinity:
        return True
    node_aff = affinity.get("nodeAffinity")
    if not isinstance(node_aff, Mapping):
        return True
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return True
    terms = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list) or not terms:
        return False  # an empty term list matches no node
    for term in terms:
        if not isinstance(term, Mapping):
            continue
        exprs = term.get("matchExpressions") or []
        if (
            isinstance(exprs, list)
            and exprs
            and all(isinstance(e, Mapping) and _expr_matches(e, labels) for e in exprs)
        ):
            return True
    return False


def matches_selector(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())
