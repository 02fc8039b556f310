"""Pod (anti-)affinity terms read from a pod's raw ``spec.affinity`` (kube-scheduler v1.31
framework/types.go: AffinityTerm, WeightedAffinityTerm, getNamespacesFromPodAffinityTerm), and
how a term matches a pod.

- ``labelSelector`` left out is nil and matches no pod; ``{}`` matches every pod.
- Namespaces: the ones listed, else (no ``namespaceSelector`` either) the term owner's own. A
  ``namespaceSelector`` of ``{}`` selects every namespace; a non-empty one selects by namespace
  labels. For the incoming pod's own terms it is resolved once into namespace names, over the
  namespaces the snapshot knows (mergeAffinityTermNamespacesIfNotEmpty). Existing pods' terms are
  checked against the incoming pod's namespace labels. gpuplane's rule: a namespace whose labels
  the snapshot does not give is selected by no non-empty ``namespaceSelector`` (kube would read
  the namespace from its lister); a known one carries ``kubernetes.io/metadata.name`` as the API
  server sets it.
- ``matchLabelKeys`` and ``mismatchLabelKeys`` (MatchLabelKeysInPodAffinity, beta and on in v1.31)
  add ``key In (value)`` and ``key NotIn (value)`` for the owner's labels, as the API server does
  when the pod is created; nothing is added to a nil selector.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from gpuplane.api.selectors import LabelSelector, Requirement, from_meta
from gpuplane.scheduler.framework.pod_index import AnyPod, has_pod_affinity
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot

METADATA_NAME_LABEL = "kubernetes.io/metadata.name"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str
    weight: int = 0

    @property
    def all_namespaces(self) -> bool:
        return self.namespace_selector is not None and self.namespace_selector.is_empty

    def selects_namespace(self, namespace: str, labels: Mapping[str, str] | None) -> bool:
        if namespace in self.namespaces or self.all_namespaces:
            return True
        sel = self.namespace_selector
        return sel is not None and labels is not None and sel.matches(labels)

    def matches(
        self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str] | None
    ) -> bool:
        """AffinityTerm.Matches: the pod is in a selected namespace and the selector matches."""
        return (
            self.selects_namespace(namespace, namespace_labels)
            and self.selector is not None
            and self.selector.matches(labels)
        )


@dataclass(frozen=True, slots=True)
class PodTerms:
    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti: tuple[AffinityTerm, ...] = ()


NO_TERMS = PodTerms()


def _entries(section: object, kind: str) -> list[Mapping[str, object]]:
    raw = section.get(kind) if isinstance(section, Mapping) else None
    return [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []


def _strings(raw: object) -> list[str]:
    return [str(v) for v in raw] if isinstance(raw, list) else []


def _with_label_keys(
    selector: LabelSelector | None, raw: Mapping[str, object], labels: Mapping[str, str]
) -> LabelSelector | None:
    if selector is None:
        return None
    added = [Requirement(k, "in", (labels[k],)) for k in _strings(raw.get("matchLabelKeys"))]
    added += [Requirement(k, "notin", (labels[k],)) for k in _strings(raw.get("mismatchLabelKeys"))]
    added = [r for r in added if r.key in labels]
    if not added:
        return selector
    return LabelSelector(selector.text, (*selector.requirements, *added))


def parse_term(
    raw: Mapping[str, object], namespace: str, labels: Mapping[str, str], weight: int = 0
) -> AffinityTerm:
    """One PodAffinityTerm of a pod in ``namespace`` with ``labels``."""
    selector = _with_label_keys(from_meta(raw.get("labelSelector")), raw, labels)
    listed = _strings(raw.get("namespaces"))
    ns_selector = from_meta(raw.get("namespaceSelector"))
    namespaces = frozenset(listed) if listed or ns_selector is not None else frozenset({namespace})
    return AffinityTerm(selector, namespaces, ns_selector, str(raw.get("topologyKey", "")), weight)


def _weighted(section: object, namespace: str, labels: Mapping[str, str]) -> Iterator[AffinityTerm]:
    for entry in _entries(section, PREFERRED):
        term, weight = entry.get("podAffinityTerm"), entry.get("weight", 0)
        if isinstance(term, Mapping) and isinstance(weight, int):
            yield parse_term(term, namespace, labels, weight)


def pod_terms(
    namespace: str, labels: Mapping[str, str], affinity: Mapping[str, object] | None
) -> PodTerms:
    if not affinity or not has_pod_affinity(affinity):
        return NO_TERMS
    pos, neg = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
    return PodTerms(
        required_affinity=tuple(parse_term(t, namespace, labels) for t in _entries(pos, REQUIRED)),
        required_anti=tuple(parse_term(t, namespace, labels) for t in _entries(neg, REQUIRED)),
        preferred_affinity=tuple(_weighted(pos, namespace, labels)),
        preferred_anti=tuple(_weighted(neg, namespace, labels)),
    )


class TermCache:
    """Owner of parsed terms per pod uid (a pod's namespace, labels and affinity never change;
    the objects are compared by identity, as PodInfo values are rebuilt by the caller)."""

    def __init__(self) -> None:
        self._by_uid: dict[str, tuple[object, object, PodTerms]] = {}

    def get(self, pod: AnyPod) -> PodTerms:
        if not pod.affinity:
            return NO_TERMS
        cached = self._by_uid.get(pod.uid)
        if cached is not None and cached[0] is pod.affinity and cached[1] is pod.labels:
            return cached[2]
        if len(self._by_uid) > 100_000:
            self._by_uid.clear()
        terms = pod_terms(pod.namespace, pod.labels, pod.affinity)
        self._by_uid[pod.uid] = (pod.affinity, pod.labels, terms)
        return terms


def namespace_labels(snap: ClusterSnapshot, namespace: str) -> Mapping[str, str] | None:
    """A namespace's labels as the snapshot gives them (None: not known)."""
    labels = snap.namespace_labels.get(namespace)
    if labels is None:
        return None
    return {**labels, METADATA_NAME_LABEL: namespace}


def merge_namespaces(term: AffinityTerm, snap: ClusterSnapshot) -> AffinityTerm:
    """The incoming pod's term with a non-empty namespaceSelector turned into the names of the
    namespaces it selects (mergeAffinityTermNamespacesIfNotEmpty)."""
    sel = term.namespace_selector
    if sel is None or sel.is_empty:
        return term
    chosen = {ns for ns in snap.namespace_labels if sel.matches(namespace_labels(snap, ns) or {})}
    return replace(term, namespaces=term.namespaces | chosen, namespace_selector=None)


def incoming_terms(terms: PodTerms, snap: ClusterSnapshot) -> PodTerms:
    """The incoming pod's terms with their namespaces merged (when no namespace is known, a
    non-empty namespaceSelector selects none: nothing to merge)."""
    if terms is NO_TERMS or not snap.namespace_labels:
        return terms

    def merged(ts: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        return tuple(merge_namespaces(t, snap) for t in ts)

    return PodTerms(
        merged(terms.required_affinity),
        merged(terms.required_anti),
        merged(terms.preferred_affinity),
        merged(terms.preferred_anti),
    )
