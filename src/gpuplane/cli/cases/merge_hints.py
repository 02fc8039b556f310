"""The JSON case format of ``gpuplane kubelet merge-hints`` (the ``merge_cases`` of
shared/reference/topology-manager-examples.json): parse, run, answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.cli.cases.case_json import parse_case_json
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import ProviderHints, TopologyHint
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo
from gpuplane.kubelet.topology_manager.policy import (
    MergeResult,
    PolicyName,
    merge_hints,
    parse_policy_options,
)


class HintIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    affinity: list[int] | None = Field(description="NUMA node ids, or null for any.")
    preferred: bool


class MergeCase(BaseModel):
    model_config = ConfigDict(extra="ignore")  # cases carry id, source, expected
    policy: PolicyName
    policy_options: dict[str, str | bool | int] = Field(default_factory=dict)
    numa_nodes: list[int] = Field(min_length=1)
    numa_distances: dict[str, list[int]] | None = None
    providers_hints: list[dict[str, list[HintIn] | None] | None] = Field(default_factory=list)


def _provider(raw: dict[str, list[HintIn] | None] | None) -> ProviderHints:
    if raw is None:
        return None
    return {
        name: None
        if hints is None
        else [
            TopologyHint(None if h.affinity is None else BitMask.of(h.affinity), h.preferred)
            for h in hints
        ]
        for name, hints in raw.items()
    }


def run_case(case: MergeCase) -> MergeResult:
    options = parse_policy_options(
        {
            k: (str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in case.policy_options.items()
        }
    )
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
    return merge_hints(case.policy, numa, [_provider(p) for p in case.providers_hints], options)


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
