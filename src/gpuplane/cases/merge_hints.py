"""The JSON case format of ``gpuplane kubelet merge-hints`` (the ``merge_cases`` of
shared/reference/topology-manager-examples.json): parse, run, answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.cases.case_json import parse_case_json
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import ProviderHints, TopologyHint
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo
from gpuplane.kubelet.topology_manager.policy import (
    MergeResult,
    PolicyName,
    PolicyOptions,
    merge_hints,
    parse_policy_options,
)


class HintIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    affinity: list[int] | None = Field(description="NUMA node ids, or null for any.")
    preferred: bool


class MergeCase(BaseModel):
    # Unknown keys are refused (a misspelt one would be dropped silently); the reference cases'
    # own keys (id, source, note, expected) are accepted and not read.
    model_config = ConfigDict(extra="forbid")
    id: object = None
    source: object = None
    note: object = None
    expected: object = None
    policy: PolicyName
    policy_options: dict[str, str | bool | int] = Field(default_factory=dict)
    numa_nodes: list[int] = Field(min_length=1)
    numa_distances: dict[str, list[int]] | None = None
    providers_hints: list[dict[str, list[HintIn] | None] | None] = Field(default_factory=list)


def _at(field: str, err: InputError) -> InputError:
    return InputError(err.problem, expected=err.expected, location=Location(field=field))


def _hint(h: HintIn, field: str) -> TopologyHint:
    try:
        return TopologyHint(None if h.affinity is None else BitMask.of(h.affinity), h.preferred)
    except InputError as err:
        raise _at(f"{field}.affinity", err) from None


def _provider(raw: dict[str, list[HintIn] | None] | None, field: str) -> ProviderHints:
    if raw is None:
        return None
    return {
        name: None
        if hints is None
        else [_hint(h, f"{field}.{name}[{j}]") for j, h in enumerate(hints)]
        for name, hints in raw.items()
    }


def _options(raw: dict[str, str | bool | int]) -> PolicyOptions:
    text = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in raw.items()}
    for name, value in text.items():
        try:
            parse_policy_options({name: value})
        except InputError as err:
            raise _at(f"policy_options.{name}", err) from None
    return parse_policy_options(text)


def _merge_field(err: InputError) -> str:
    """Which input a merge_hints refusal is about (its checks are on these three)."""
    if "NUMA Nodes" in err.problem:
        return "numa_nodes"
    if "distances" in err.problem:
        return "numa_distances"
    return "providers_hints"


def run_case(case: MergeCase) -> MergeResult:
    options = _options(case.policy_options)
    distances = None
    if case.numa_distances is not None:
        distances = {}
        for key, values in case.numa_distances.items():
            if not key.strip().isdigit():
                raise InputError(
                    f"NUMA node {key!r} is not a number",
                    expected='rows keyed by NUMA node id, e.g. "0"',
                    location=Location(field=f"numa_distances.{key}"),
                )
            distances[int(key)] = values
        for node in case.numa_nodes:
            row = distances.get(node)
            if row is None or len(row) != len(case.numa_nodes):
                raise InputError(
                    f"no distance row of {len(case.numa_nodes)} entries for NUMA node {node}",
                    expected="one row per NUMA node, one distance per NUMA node",
                    location=Location(field=f"numa_distances.{node}"),
                )
    numa = NumaInfo(tuple(case.numa_nodes), distances)
    providers = [_provider(p, f"providers_hints[{i}]") for i, p in enumerate(case.providers_hints)]
    try:
        return merge_hints(case.policy, numa, providers, options)
    except InputError as err:
        raise _at(_merge_field(err), err) from None


def answer(result: MergeResult) -> dict[str, Any]:
    affinity = result.hint.affinity
    return {
        "affinity": None if affinity is None else affinity.nodes(),
        "preferred": result.hint.preferred,
        "admit": result.admit,
    }


def run_json(text: str, source: str = "<stdin>") -> dict[str, Any]:
    data = parse_case_json(text, source)
    try:
        case = validate_model(MergeCase, data)
    except InputError as err:
        raise err.located(source) from None
    try:
        return answer(run_case(case))
    except InputError as err:
        raise err.located(source) from None
