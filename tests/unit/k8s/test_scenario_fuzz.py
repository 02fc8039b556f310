"""Fuzz the scenario loader and the manifest reader: only InputError may ever escape."""

from __future__ import annotations

import contextlib
import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.parse import parse_manifest
from gpuplane.k8s.scenario.loader import load_scenario_spec
from tests.unit.k8s.test_manifests import PYTORCH_JOB, VLLM
from tests.unit.k8s.test_scenario_loader import BATCH, CHAT, FINETUNE, FIXTURES, SCENARIO

JUNK = "abcXYZ0123456789 :-,.{}[]#&*!|>'\"%@`\t/\\_=+eEiKMGTmnu"


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "cut", "junk", "swap", "indent", "char"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))] + "\n"
        elif op == "junk":
            lines[i] = draw(st.text(alphabet=JUNK, max_size=40)) + "\n"
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["", "  ", "    ", "\t"])) + lines[i].lstrip(" ")
        else:
            k = draw(st.integers(0, max(0, len(lines[i]) - 1)))
            lines[i] = lines[i][:k] + draw(st.sampled_from(JUNK)) + lines[i][k + 1 :]
    return "".join(lines)


def _write_scenario(root: Path, scenario: str, finetune: str) -> Path:
    (root / "manifests").mkdir(exist_ok=True)
    (root / "traces").mkdir(exist_ok=True)
    (root / "scenario.yaml").write_text(scenario)
    (root / "manifests/finetune.yaml").write_text(finetune)
    (root / "manifests/batch.yaml").write_text(BATCH)
    (root / "manifests/chat.yaml").write_text(CHAT)
    (root / "cluster-policy.yaml").write_text("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\n")
    topo = Path(__file__).resolve().parents[3] / "examples/topologies/h100-della-topo-m.txt"
    shutil.copy(topo, root / "topo-m.txt")
    for name in ("batch_jobs.csv", "llm_requests.csv"):
        shutil.copy(FIXTURES / name, root / "traces" / name)
    return root / "scenario.yaml"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scenario=mutated_text(SCENARIO), finetune=mutated_text(FINETUNE) | st.just(FINETUNE))
def test_mutated_scenarios_raise_only_input_errors(
    scenario: str, finetune: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = _write_scenario(tmp_path_factory.mktemp("fuzz"), scenario, finetune)
    try:
        load_scenario_spec(path)
    except InputError as err:
        assert err.location.source is not None, err  # every error says which file


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=JUNK, max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet=JUNK, max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated_manifest(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(yaml.safe_load(draw(st.sampled_from([VLLM, PYTORCH_JOB]))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            return draw(values)
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = draw(values)
    return doc


@settings(max_examples=300, deadline=None)
@given(doc=mutated_manifest())
def test_mutated_manifests_raise_only_input_errors(doc: Any) -> None:
    with contextlib.suppress(InputError):
        parse_manifest(doc)
