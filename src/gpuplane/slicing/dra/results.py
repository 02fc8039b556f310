"""Turn the devices the search chose for one claim into its ``status.allocation``.

As the allocator builds it: one result per device in the order chosen, naming the request (or
``request/subrequest``) and carrying ``adminAccess`` and the request's tolerations; the configs of
each device class used, once per class with the requests that used it (``FromClass``); the
claim's own configs that apply to the requests or the chosen subrequests (``FromClaim``; gpuplane
adds each once, where the Go code appends one copy per matching request); ``requests`` cleared on
a config that covers every request; and the node selector of the devices: a node-local device
pins the claim to that node (``metadata.name`` field selector), a slice's node selector is merged
in, devices for all nodes add nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.allocation import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    OpaqueDeviceConfiguration,
)
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.node_selector import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    node_name_selector,
)
from gpuplane.slicing.dra.requests import Candidate, RequestData, RequestKey


@dataclass(frozen=True, slots=True)
class Chosen:
    data: RequestData
    cand: Candidate


def build_result(
    claim: ResourceClaim,
    chosen: Sequence[Chosen],
    selected: Mapping[tuple[int, int], int],
    ci: int,
    data: Mapping[RequestKey, RequestData],
) -> AllocationResult:
    results = tuple(
        DeviceRequestAllocationResult(
            request=c.data.full_name,
            driver=c.cand.id.driver,
            pool=c.cand.id.pool,
            device=c.cand.id.device,
            admin_access=True if c.data.admin_access else None,
            tolerations=c.data.tolerations,
        )
        for c in chosen
    )
    used = [
        data[(ci, ri, selected.get((ci, ri), 0))] for ri in range(len(claim.spec.devices.requests))
    ]
    config = _configs(claim, used)
    return AllocationResult(
        devices=DeviceAllocationResult(results, config), node_selector=_node_selector(chosen)
    )


def _configs(
    claim: ResourceClaim, used: list[RequestData]
) -> tuple[DeviceAllocationConfiguration, ...]:
    by_class: dict[str, list[int]] = {}
    out: list[tuple[str, list[str], OpaqueDeviceConfiguration | None]] = []
    for item in used:
        positions = by_class.get(item.device_class.name)
        if positions is not None:
            for pos in positions:
                out[pos][1].append(item.full_name)
            continue
        by_class[item.device_class.name] = []
        for opaque in item.device_class.spec.config:
            by_class[item.device_class.name].append(len(out))
            out.append((limits.CONFIG_FROM_CLASS, [item.full_name], opaque))
    chosen_names = {item.full_name for item in used} | {item.request_name for item in used}
    for cfg in claim.spec.devices.config:
        if not cfg.requests or chosen_names & set(cfg.requests):
            out.append((limits.CONFIG_FROM_CLAIM, list(cfg.requests), cfg.opaque))
    num_requests = len(claim.spec.devices.requests)
    return tuple(
        DeviceAllocationConfiguration(
            source=source,
            requests=() if len(requests) == num_requests else tuple(requests),
            opaque=opaque,
        )
        for source, requests, opaque in out
    )


def _node_selector(chosen: Sequence[Chosen]) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for c in chosen:
        spec = c.cand.rslice.spec
        per_device = spec.per_device_node_selection
        node_name = c.cand.device.node_name if per_device else spec.node_name
        selector = c.cand.device.node_selector if per_device else spec.node_selector
        if node_name:
            return node_name_selector(node_name)
        if selector is not None and len(selector.node_selector_terms) == 1:
            term = selector.node_selector_terms[0]
            _merge(term.match_fields, fields)
            _merge(term.match_expressions, expressions)
    if not fields and not expressions:
        return None
    return NodeSelector((NodeSelectorTerm(tuple(expressions), tuple(fields)),))


def _merge(source: Sequence[NodeSelectorRequirement], into: list[NodeSelectorRequirement]) -> None:
    for req in source:
        if not any(
            r.key == req.key and r.operator == req.operator and set(r.values) == set(req.values)
            for r in into
        ):
            into.append(req)
