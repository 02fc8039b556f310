from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.api.strategies import MigStrategy
from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.k8s.scenario.cluster_policy import parse_cluster_policy, parse_cluster_policy_yaml

FULL = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
  namespace: gpu-operator
spec:
  operator:
    defaultRuntime: containerd
  daemonsets:
    priorityClassName: system-node-critical
  driver:
    enabled: true
    repository: nvcr.io/nvidia
    image: driver
    version: "550.54.15"
    usePrecompiled: false
    kernelModuleType: open
    imagePullPolicy: IfNotPresent
    env: [{name: A, value: b}]
    upgradePolicy:
      autoUpgrade: true
      maxParallelUpgrades: 2
      maxUnavailable: 50%
      waitForCompletion:
        timeoutSeconds: 600
        podSelector: "batch=yes"
      podDeletion:
        force: true
        timeoutSeconds: 120
        deleteEmptyDir: true
      drain:
        enable: true
        force: false
        podSelector: "tier notin (infra)"
        timeoutSeconds: 900
        deleteEmptyDir: false
  toolkit:
    enabled: false
  devicePlugin:
    config:
      name: time-slicing-config
      default: any
  dcgmExporter:
    enabled: false
    serviceMonitor: {enabled: true}
  dcgm:
    enabled: false
  gfd:
    enabled: true
  mig:
    strategy: mixed
  migManager:
    enabled: false
  validator:
    plugin:
      env: [{name: WITH_WORKLOAD, value: "false"}]
"""

MINIMAL = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\n"


def load(text: str) -> tuple[Any, list[str]]:
    return parse_cluster_policy_yaml(text, "cp.yaml")


def test_real_field_names_are_read() -> None:
    policy, warnings = load(FULL)
    assert warnings == []
    assert policy.name == "cluster-policy"
    d = policy.driver
    assert (d.enabled, d.version, d.repository, d.image) == (
        True,
        "550.54.15",
        "nvcr.io/nvidia",
        "driver",
    )
    assert d.kernel_module_type == "open" and not d.use_precompiled
    up = d.upgrade_policy
    assert up is not None and up.auto_upgrade and up.max_parallel_upgrades == 2
    assert up.max_unavailable == "50%"
    assert up.wait_for_completion is not None and up.wait_for_completion.timeout_s == 600
    assert up.wait_for_completion.pod_selector == "batch=yes"
    assert (
        up.pod_deletion is not None and up.pod_deletion.force and up.pod_deletion.timeout_s == 120
    )
    assert up.drain is not None and up.drain.enable and up.drain.timeout_s == 900
    assert not policy.toolkit.enabled and not policy.dcgm_exporter.enabled
    assert policy.device_plugin.config_name == "time-slicing-config"
    assert policy.device_plugin.config_default == "any"
    assert policy.mig_strategy is MigStrategy.MIXED and not policy.mig_manager.enabled
    assert policy.auto_upgrade


def test_defaults_of_an_empty_spec() -> None:
    policy, warnings = load(MINIMAL)
    assert warnings == []
    assert policy.driver.enabled and policy.toolkit.enabled and policy.device_plugin.enabled
    assert policy.dcgm_exporter.enabled and policy.gfd.enabled and policy.mig_manager.enabled
    assert policy.driver.upgrade_policy is None and not policy.auto_upgrade
    assert policy.mig_strategy is MigStrategy.NONE


def test_crd_defaults_inside_a_present_upgrade_policy() -> None:
    text = (
        MINIMAL + "spec:\n  driver:\n    upgradePolicy:\n      podDeletion: {}\n      drain: {}\n"
    )
    policy, warnings = load(text)
    up = policy.driver.upgrade_policy
    assert up is not None and warnings == []
    assert (up.auto_upgrade, up.max_parallel_upgrades, up.max_unavailable) == (False, 1, "25%")
    assert up.pod_deletion is not None and up.pod_deletion.timeout_s == 300
    assert not up.pod_deletion.force and not up.pod_deletion.delete_empty_dir
    assert up.drain is not None and not up.drain.enable and up.drain.timeout_s == 300


def test_unknown_fields_warn_with_file_line_and_path() -> None:
    text = FULL.replace(
        "      podDeletion:", "      gpuPodDeletion: {force: true}\n      podDeletion:"
    )
    text = text.replace("  gfd:\n", "  gfd:\n    enabeld: false\n")
    _, warnings = load(text)
    assert len(warnings) == 2
    assert warnings[0].startswith(
        "cp.yaml:27: spec.driver.upgradePolicy.gpuPodDeletion: unknown field"
    )
    assert "is the field podDeletion" in warnings[0]
    assert "spec.gfd.enabeld" in warnings[1]


def test_an_upgrade_policy_the_real_controller_trips_on_warns() -> None:
    text = MINIMAL + "spec:\n  driver:\n    upgradePolicy:\n      autoUpgrade: true\n"
    _, warnings = load(text)
    assert len(warnings) == 2
    assert (
        "drain is not set" in warnings[0] and "cp.yaml:5: spec.driver.upgradePolicy" in warnings[0]
    )
    assert "podDeletion is not set" in warnings[1]


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "fragment"),
    [
        (
            "maxParallelUpgrades: 2",
            'maxParallelUpgrades: "2"',
            22,
            "maxParallelUpgrades",
            "integer",
        ),
        (
            "maxParallelUpgrades: 2",
            "maxParallelUpgrades: -1",
            22,
            "maxParallelUpgrades",
            "greater than or equal to 0",
        ),
        ("maxUnavailable: 50%", 'maxUnavailable: "5"', 23, "maxUnavailable", "percentage"),
        ("timeoutSeconds: 120", "timeoutSeconds: 1.5", 29, "podDeletion.timeoutSeconds", "integer"),
        ("autoUpgrade: true", "autoUpgrade: 'true'", 21, "autoUpgrade", "boolean"),
        ("force: true", "force: 1", 28, "podDeletion.force", "boolean"),
        (
            'podSelector: "batch=yes"',
            'podSelector: "batch in ("',
            26,
            "waitForCompletion.podSelector",
            "selector",
        ),
    ],
)
def test_wrong_types_are_located_input_errors(
    old: str, new: str, line: int, field: str, fragment: str
) -> None:
    with pytest.raises(InputError) as info:
        load(FULL.replace(old, new, 1))
    loc = info.value.location
    assert loc.source == "cp.yaml" and loc.line == line
    assert loc.field == f"spec.driver.upgradePolicy.{field}"
    assert fragment in info.value.render()


def test_unquoted_version_number_is_not_a_string() -> None:
    with pytest.raises(
        InputError, match=r"spec.driver.version: got 550.54; expected a valid string"
    ):
        load(FULL.replace('version: "550.54.15"', "version: 550.54"))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("apiVersion: nvidia.com/v1alpha1\nkind: ClusterPolicy\n", "cp.yaml:1: apiVersion: got"),
        ("apiVersion: nvidia.com/v1\nkind: NVIDIADriver\n", "cp.yaml:2: kind: got 'NVIDIADriver'"),
        ("kind: ClusterPolicy\n", "required key 'apiVersion' is missing"),
        ("- a\n", "expected a ClusterPolicy manifest"),
        ("", "the file is empty"),
    ],
)
def test_wrong_kind_is_an_input_error(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        load(text)


def test_prefix_locates_errors_inside_a_scenario() -> None:
    scenario = "name: s\ncluster_policy:\n" + "".join(f"  {line}\n" for line in FULL.splitlines())
    node, data = parse_yaml(
        scenario.replace("maxParallelUpgrades: 2", "maxParallelUpgrades: x"), "s.yaml"
    )
    assert node is not None
    index = LineIndex(node, "s.yaml")
    with pytest.raises(InputError) as info:
        parse_cluster_policy(data["cluster_policy"], "s.yaml", index.line_of, "cluster_policy")
    assert (
        info.value.location.field == "cluster_policy.spec.driver.upgradePolicy.maxParallelUpgrades"
    )
    assert info.value.location.line == 24
    node, data = parse_yaml(scenario.replace("    gfd:\n", "    gfd:\n      extra: 1\n"), "s.yaml")
    assert node is not None
    _, warnings = parse_cluster_policy(
        data["cluster_policy"], "s.yaml", LineIndex(node, "s.yaml").line_of, "cluster_policy."
    )
    assert warnings and warnings[0].startswith("s.yaml:51: cluster_policy.spec.gfd.extra")


# ----- fuzzing: malformed policies give InputError and nothing else -----

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), inner, max_size=3),
    ),
    max_leaves=8,
)
BASE = parse_yaml(FULL, "cp.yaml")[1]


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


PATHS = _paths(BASE)[1:]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
def test_fuzzed_policies_raise_input_error_only(edits: list[tuple[tuple[Any, ...], Any]]) -> None:
    doc = copy.deepcopy(BASE)
    for path, value in edits:
        target = doc
        try:
            for part in path[:-1]:
                target = target[part]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced the parent
    try:
        policy, warnings = parse_cluster_policy(doc, "cp.yaml", lambda _path: 1, "cp")
    except InputError as err:
        assert err.location.source == "cp.yaml"
        assert err.render()
        return
    assert all(w.startswith("cp.yaml:1: cp") for w in warnings)
    assert policy.name


@settings(max_examples=200)
@given(st.data())
def test_fuzzed_yaml_text_raises_input_error_only(data: st.DataObject) -> None:
    pos = data.draw(st.integers(0, len(FULL)))
    junk = data.draw(st.text(alphabet="{}[]:,-'\"#&*!|>%@` \n\tab1", max_size=6))
    cut = data.draw(st.integers(0, 4))
    text = FULL[:pos] + junk + FULL[pos + cut :]
    with contextlib.suppress(InputError):
        load(text)
