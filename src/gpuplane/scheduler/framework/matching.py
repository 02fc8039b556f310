"""Kubernetes matching rules the filter and score plugins share.

Tolerations are matched by ``gpuplane.api.taints`` (core/v1 ToleratesTaint).

Node selectors (component-helpers scheduling/corev1/nodeaffinity): the terms of
``nodeSelectorTerms`` are ORed, the requirements of a term ANDed; a term with no requirement
matches nothing; operators In, NotIn, Exists, DoesNotExist, Gt, Lt (integer compare);
``matchFields`` supports ``metadata.name`` (the only field the API allows).
"""

from __future__ import annotations

from collections.abc import Mapping


def _values(expr: Mapping[str, object]) -> list[str]:
    raw = expr.get("values") or []
    return [str(v) for v in raw] if isinstance(raw, list) else []


def requirement_matches(expr: Mapping[str, object], labels: Mapping[str, str]) -> bool:
    key = str(expr.get("key", ""))
    op = expr.get("operator")
    values = _values(expr)
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


def term_matches(term: object, labels: Mapping[str, str], node_name: str) -> bool:
    """One NodeSelectorTerm: every matchExpressions and matchFields requirement holds."""
    if not isinstance(term, Mapping):
        return False
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields, list) or not (exprs or fields):
        return False
    node_fields = {"metadata.name": node_name}
    return all(isinstance(e, Mapping) and requirement_matches(e, labels) for e in exprs) and all(
        isinstance(f, Mapping) and requirement_matches(f, node_fields) for f in fields
    )


def node_affinity(affinity: Mapping[str, object] | None) -> Mapping[str, object]:
    if not affinity:
        return {}
    node_aff = affinity.get("nodeAffinity")
    return node_aff if isinstance(node_aff, Mapping) else {}


def required_matches(
    affinity: Mapping[str, object] | None, labels: Mapping[str, str], node_name: str
) -> bool:
    required = node_affinity(affinity).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return True
    terms = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list) or not terms:
        return False
    return any(term_matches(t, labels, node_name) for t in terms)


def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def preferred_terms(affinity: Mapping[str, object] | None) -> list[tuple[int, object]]:
    """(weight, preference) of preferredDuringSchedulingIgnoredDuringExecution."""
    preferred = node_affinity(affinity).get("preferredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(preferred, list):
        return []
    out: list[tuple[int, object]] = []
    for entry in preferred:
        if isinstance(entry, Mapping):
            weight = entry.get("weight", 0)
            if isinstance(weight, int) and weight:
                out.append((weight, entry.get("preference")))
    return out


def preferred_score(
    terms: list[tuple[int, object]], labels: Mapping[str, str], node_name: str
) -> int:
    return sum(w for w, term in terms if term_matches(term, labels, node_name))


def required_node_names(affinity: Mapping[str, object] | None) -> set[str] | None:
    """The node names a required node affinity confines the pod to, when every term names some
    (nodeaffinity PreFilter: a term's ``metadata.name In`` requirements intersected, the terms
    united); None when any term names none, so every node stays a candidate. An empty set: the
    terms conflict."""
    required = node_affinity(affinity).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return None
    terms = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list) or not terms:
        return None
    names: set[str] = set()
    for term in terms:
        fields = term.get("matchFields") if isinstance(term, Mapping) else None
        term_names: set[str] | None = None
        for f in fields if isinstance(fields, list) else []:
            if (
                isinstance(f, Mapping)
                and f.get("key") == "metadata.name"
                and f.get("operator") == "In"
            ):
                values = set(_values(f))
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return names
