"""``core/v1`` NodeSelector as DRA uses it: in ResourceSlices (which nodes see a pool or a
device) and in ``status.allocation.nodeSelector`` (where an allocated claim can be used).

Matching follows component-helpers ``scheduling/corev1/nodeaffinity``: terms are ORed, the
requirements of one term ANDed, and a term without requirements matches nothing.
``matchExpressions`` read node labels (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``,
``Lt``; ``NotIn`` and ``DoesNotExist`` also match a node without the label); ``matchFields``
supports only ``metadata.name`` with ``In``/``NotIn`` and one value, which is how the allocator
pins a claim to the node it was allocated on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
NODE_NAME_FIELD = "metadata.name"


@dataclass(frozen=True, slots=True)
class DraNode:
    """What DRA reads of a node: its name and labels."""

    name: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt") and present and len(self.values) == 1:
            try:
                have, want = int(value), int(self.values[0])
            except ValueError:
                return False
            return have > want if self.operator == "Gt" else have < want
        return False

    def matches_field(self, node_name: str) -> bool:
        if self.key != NODE_NAME_FIELD or len(self.values) != 1:
            return False
        if self.operator == "In":
            return node_name == self.values[0]
        if self.operator == "NotIn":
            return node_name != self.values[0]
        return False


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    def matches(self, node: DraNode) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        return all(r.matches_labels(node.labels) for r in self.match_expressions) and all(
            r.matches_field(node.name) for r in self.match_fields
        )


@dataclass(frozen=True, slots=True)
class NodeSelector:
    node_selector_terms: tuple[NodeSelectorTerm, ...]

    def matches(self, node: DraNode) -> bool:
        return any(term.matches(node) for term in self.node_selector_terms)

    def to_dict(self) -> dict[str, object]:
        terms = []
        for term in self.node_selector_terms:
            item: dict[str, object] = {}
            if term.match_expressions:
                item["matchExpressions"] = [_req_dict(r) for r in term.match_expressions]
            if term.match_fields:
                item["matchFields"] = [_req_dict(r) for r in term.match_fields]
            terms.append(item)
        return {"nodeSelectorTerms": terms}


def _req_dict(req: NodeSelectorRequirement) -> dict[str, object]:
    out: dict[str, object] = {"key": req.key, "operator": req.operator}
    if req.values:
        out["values"] = list(req.values)
    return out


def node_name_selector(node_name: str) -> NodeSelector:
    """The selector the allocator writes for a node-local allocation."""
    field = NodeSelectorRequirement(NODE_NAME_FIELD, "In", (node_name,))
    return NodeSelector((NodeSelectorTerm(match_fields=(field,)),))
