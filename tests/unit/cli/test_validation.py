"""Issue 16, "accepted silently" and "unlocated": each reproduction ends in exit code 2 with a
``file:line: field`` message and no traceback, or in a warning that the run's files keep.

Scenario cases run through ``gpuplane validate`` (the same loader ``simulate`` uses, without the
simulation); a few run ``simulate``/``demo`` to check that they refuse the same input.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]

POOL = "name: x\nnode_pools:\n  - name: a\n    preset: seed-8gpu\n    count: 4\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 1
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
        - name: c
          image: busybox
          resources: {limits: {nvidia.com/gpu: 1}}
"""
POLICY = """cluster_policy:
  apiVersion: nvidia.com/v1
  kind: ClusterPolicy
  metadata: {name: cluster-policy}
  spec:
    driver:
      version: VERSION
"""
DEVICE_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
"""


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], *where: str) -> str:
    assert run(argv) == 2
    captured = capsys.readouterr()
    text = captured.err.replace("\n", " ")
    assert "Traceback" not in captured.err + captured.out
    for part in where:
        assert part in text, text
    return text


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _manifest(tmp_path: Path, old: str, new: str) -> Path:
    assert old in DEPLOYMENT
    _write(tmp_path, "m.yaml", DEPLOYMENT.replace(old, new))
    return _write(tmp_path, "s.yaml", POOL + "workloads:\n  - {path: m.yaml}\n")


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        (
            '    labels: {"bad key!": x}\n',
            ("s.yaml:6", "node_pools[0].labels.bad key!", "name part"),
        ),
        (
            "    labels: {a: " + "v" * 64 + "}\n",
            ("s.yaml:6", "node_pools[0].labels.a", "no more than 63 characters"),
        ),
        (
            '    taints: [{key: "bad key!", effect: NoSchedule}]\n',
            ("s.yaml:6", "node_pools[0].taints[0].key", 'Invalid value: "bad key!"'),
        ),
        (
            '    labels: {nvidia.com/gpu.count: "9"}\n',
            ("s.yaml:6", "labels.nvidia.com/gpu.count", "GPU Feature Discovery"),
        ),
        (
            "priority_classes:\n  - {name: system-node-critical, value: 5}\n",
            ("s.yaml:7", "priority_classes[0].name", "already exists"),
        ),
        (
            "priority_classes:\n  - {name: system-mine, value: 5}\n",
            ("s.yaml:7", "priority_classes[0].name", "reserved for system use only"),
        ),
        (
            "faults:\n  - {kind: node-lost, at: 1m, nodes: {pool: zzz}}\n",
            ("s.yaml:7", "faults[0].nodes.pool", "no node pool 'zzz'"),
        ),
        (
            "faults:\n  - {kind: gpu-xid, at: 1m, gpu: 9, nodes: {pool: a}}\n",
            ("s.yaml:7", "faults[0].gpu", "no GPU 9"),
        ),
        (
            'control_plane:\n  kube_reserved: {cpu: "100000"}\n',
            ("s.yaml:7", "control_plane.kube_reserved.cpu", "leaves nothing allocatable"),
        ),
        (
            "serving:\n  rate_scale: .inf\n",
            ("s.yaml:7", "serving.rate_scale", "a finite number"),
        ),
    ],
)
def test_scenario_mistakes_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, where: tuple[str, ...]
) -> None:
    path = _write(tmp_path, "s.yaml", POOL + extra)
    _fails(["validate", str(path)], capsys, *where)


def test_a_boolean_count_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "s.yaml", POOL.replace("count: 4", "count: true"))
    _fails(["validate", str(path)], capsys, "s.yaml:5", "node_pools[0].count", "got True")


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (
            "          image: busybox\n",
            "          image: busybox\n          ports: [{containerPort: 99999}]\n",
            ("m.yaml:13", "containers[0].ports[0].containerPort", "between 1 and 65535"),
        ),
        (
            "          image: busybox\n",
            "          image: busybox\n          livenessProbe: {httpGett: {path: /, port: 80}}\n",
            (
                "m.yaml:13",
                'unknown field "spec.template.spec.containers[0].livenessProbe.httpGett"',
            ),
        ),
        (
            "          image: busybox\n",
            '          image: busybox\n          command: "sleep 10"\n',
            ("m.yaml:13", "containers[0].command", "got 'sleep 10'"),
        ),
        (
            "      containers:\n",
            "      priorityClassName: nope\n      containers:\n",
            (
                "m.yaml:10",
                "spec.template.spec.priorityClassName",
                "no PriorityClass with name nope",
            ),
        ),
        (
            "          resources: {limits: {nvidia.com/gpu: 1}}\n",
            "          resources: {claims: [{name: gpus}]}\n",
            ("m.yaml:13", "containers[0].resources.claims[0]", 'Not found: "gpus"'),
        ),
    ],
)
def test_manifest_mistakes_are_located(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    where: tuple[str, ...],
) -> None:
    _fails(["validate", str(_manifest(tmp_path, old, new))], capsys, *where)


def test_one_deployment_created_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "m.yaml", DEPLOYMENT)
    entries = "workloads:\n  - {name: w1, path: m.yaml}\n  - {name: w2, path: m.yaml}\n"
    path = _write(tmp_path, "s.yaml", POOL + entries)
    _fails(["validate", str(path)], capsys, "m.yaml:3", "metadata.name", "already exists")


def test_a_device_class_defined_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "dra.yaml", DEVICE_CLASS + "---\n" + DEVICE_CLASS)
    path = _write(tmp_path, "s.yaml", POOL + "dra: [dra.yaml]\n")
    _fails(["validate", str(path)], capsys, "dra.yaml:10", 'deviceclasses.resource.k8s.io "gpu')


@pytest.mark.parametrize(
    ("policy", "where"),
    [
        (POLICY.replace("VERSION", '"latest!!"'), ("s.yaml:12", "driver.version", "image tag")),
        (
            POLICY.replace("VERSION", "550.90.07")
            + "      upgradePolicy: {autoUpgrade: true, maxUnavailable: 125%}\n",
            ("s.yaml:13", "maxUnavailable", "must not be greater than 100%"),
        ),
        (
            POLICY.replace("VERSION", "550.90.07")
            + "cluster_policy_updates:\n  - {at: 1h, patch: {spec: {driver: {version: null}}}}\n",
            ("s.yaml:14", "cluster_policy_updates[0].patch.spec.driver.version", "removes"),
        ),
    ],
)
def test_cluster_policy_mistakes_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, where: tuple[str, ...]
) -> None:
    _fails(["validate", str(_write(tmp_path, "s.yaml", POOL + policy))], capsys, *where)


@pytest.mark.parametrize(
    ("faults", "warning"),
    [
        ("{kind: node-lost, at: 1m, nodes: {pool: a, count: 100}}", "more than the 4 matching"),
        ("{kind: node-lost, at: 1m, nodes: {labels: {zone: x}}}", "matches no node"),
    ],
)
def test_faults_that_do_less_are_warnings_kept_in_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], faults: str, warning: str
) -> None:
    path = _write(tmp_path, "s.yaml", POOL + f"faults:\n  - {faults}\n")
    assert run(["validate", str(path)]) == 0
    assert warning in capsys.readouterr().err.replace("\n", " ")
    out = tmp_path / "o"
    assert run(["simulate", str(path), "--until", "2m", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert any(warning in w for w in summary["warnings"])
    assert warning in (out / "warnings.txt").read_text()
    assert "1 warning" in capsys.readouterr().out


def test_a_missing_scaled_object_target_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    so = (
        "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: s}\n"
        "spec:\n  scaleTargetRef: {name: nothing}\n  triggers:\n"
        "  - type: prometheus\n    metadata: {serverAddress: 'http://p:9090', query: up, "
        "threshold: '1'}\n"
    )
    _write(tmp_path, "so.yaml", so)
    path = _write(tmp_path, "s.yaml", POOL + "autoscaling: [so.yaml]\n")
    assert run(["validate", str(path)]) == 0
    assert "Target resource doesn't exist" in capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize(
    ("tp", "words"),
    [("3", "must be divisible by tensor parallel size (3)"), ("8", "World size (8) is larger")],
)
def test_a_tp_vllm_refuses_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tp: str, words: str
) -> None:
    server = (
        "          image: vllm/vllm-openai:v0.6.3\n"
        '          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", '
        f'"--tensor-parallel-size", "{tp}"]\n'
    )
    path = _manifest(tmp_path, "          image: busybox\n", server)
    text = path.read_text().replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 4")
    path.write_text(text.replace("seed-8gpu", "dgx-h100"))
    (tmp_path / "m.yaml").write_text(
        (tmp_path / "m.yaml").read_text().replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 4")
    )
    assert run(["validate", str(path)]) == 0
    assert words in capsys.readouterr().err.replace("\n", " ")


def test_validate_prints_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(
        tmp_path,
        "m.yaml",
        DEPLOYMENT.replace("      containers:", "      priorityClassName: x\n      containers:"),
    )
    text = (
        "name: x\nnode_pools:\n"
        '  - {name: a, preset: seed-8gpu, count: 1, labels: {"bad key!": x}}\n'
        "  - {name: b, preset: seed-8gpu, count: 1, taints: [{key: 'k k', effect: NoSchedule}]}\n"
        "priority_classes:\n  - {name: system-x, value: 1}\n"
        "workloads:\n  - {path: m.yaml}\n  - {name: w2, path: m.yaml}\n  - {path: p.yaml}\n"
    )
    _write(
        tmp_path,
        "p.yaml",
        DEPLOYMENT.replace("name: d}", "name: e}").replace("  - name: c", "  - name: C"),
    )
    path = _write(tmp_path, "s.yaml", text)
    err = _fails(
        ["validate", str(path)],
        capsys,
        "s.yaml:3: node_pools[0].labels",
        "s.yaml:4: node_pools[1].taints[0].key",
        "s.yaml:6: priority_classes[0].name",
        "m.yaml:10: spec.template.spec.priorityClassName",
        "p.yaml:11: spec.template.spec.containers[0].name",
        "6 errors",
    )
    assert err.count("error:") == 6


def test_validate_reports_every_shape_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "s.yaml", "name: x\nnode_pools:\n  - {name: A, count: 0}\ncolour: 1\n")
    _fails(["validate", str(path)], capsys, "s.yaml:4: colour", "s.yaml:3: node_pools[0].count")


def test_valid_example_validates(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the path as a user types it, from wherever the suite was started
    assert run(["validate", "examples/scenario.yaml"]) == 0
    assert "examples/scenario.yaml: valid: 12 node pools" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["simulate", "demo"])
def test_dry_run_checks_without_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / "o"
    bad = _write(tmp_path, "s.yaml", POOL.replace("count: 4", "count: true"))
    _fails([command, str(bad), "--dry-run", "--out", str(out)], capsys, "node_pools[0].count")
    good = _write(tmp_path, "g.yaml", POOL)
    assert run([command, str(good), "--dry-run", "--out", str(out)]) == 0
    assert "valid: 1 node pools, 4 nodes" in capsys.readouterr().out
    assert not out.exists()


# ----- commands -----


def test_nrt_node_name_is_a_dns_subdomain(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["topo", "nrt", "hgx-h200", "--node-name", "Bad_Name!"]
    _fails(argv, capsys, "--node-name", 'Invalid value: "Bad_Name!"', "RFC 1123 subdomain")


STEP = ["serving", "step", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "H100-80GB-SXM"]


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--prefill-tokens", "256@"], ("--prefill-tokens", "'256@'")),
        (["--prefill-tokens", "200000"], ("--prefill-tokens", "maximum context length is 32768")),
        (["--decode-batch", "1", "--context", "40000"], ("--context", "maximum context length")),
    ],
)
def test_serving_step_refuses_what_vllm_refuses(
    capsys: pytest.CaptureFixture[str], args: list[str], where: tuple[str, ...]
) -> None:
    _fails([*STEP, *args], capsys, *where)


def test_serving_memory_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serving", "memory", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "H100-80GB-SXM"]
    _fails([*argv, "--max-num-seqs", "-5"], capsys, "--max-num-seqs: got -5")


@pytest.mark.parametrize(
    ("case", "where"),
    [
        (
            '{"family": "replica_calc_cases", "kind": "resource_utilization", '
            '"current_replicas": 3, "target": 30}',
            ("<stdin>: pods: required key 'pods' is missing",),
        ),
        (
            '{"family": "replica_calc_cases", "kind": "resource_utilization", '
            '"current_replicas": "3", "target": 30, "pods": []}',
            ("<stdin>: current_replicas: got '3'",),
        ),
        (
            '{"family": "replica_calc_cases",\n"target": 30,\n"target": 40}',
            ("<stdin>:3: duplicate key 'target'",),
        ),
    ],
)
def test_hpa_check_cases_are_strict(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: str,
    where: tuple[str, ...],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(case))
    _fails(["autoscale", "hpa-check"], capsys, *where)


@pytest.mark.parametrize(
    ("case", "where"),
    [
        (
            '{"policy": "restricted", "numa_nodes": [0, 1], "providers_hints": '
            '[{"gpu": [{"affinity": [70], "preferred": true}]}]}',
            "<stdin>: providers_hints[0].gpu[0].affinity: NUMA node 70",
        ),
        (
            '{"policy": "restricted", "numa_nodes": [0, 1], '
            '"policy_options": {"prefer-closest-numa-nodes": "maybe"}}',
            "<stdin>: policy_options.prefer-closest-numa-nodes",
        ),
    ],
)
def test_merge_hints_errors_have_a_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, where: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(case))
    _fails(["kubelet", "merge-hints"], capsys, where)


@pytest.mark.parametrize(
    ("rows", "option", "where"),
    [
        ("1,m,1\n1,m,2\n", [], "s.csv:3: duplicate sample for timestamp 1"),
        ("2,m,1\n1,m,2\n", [], "s.csv:3: sample for m"),
        ("1,m,1\n", ["--lookback", "xx"], "--lookback: 'xx' is not a duration"),
        ("1,m,1\n", ["--lookback", "-5m"], "--lookback"),
        ("1,m,1\n", ["--time", "5q"], "--time: '5q' is not a duration"),
    ],
)
def test_promql_errors_name_the_file_or_option(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rows: str,
    option: list[str],
    where: str,
) -> None:
    series = _write(tmp_path, "s.csv", "t,name,value\n" + rows)
    _fails(["autoscale", "promql", "m", "--series", str(series), *option], capsys, where)


def test_promql_zero_lookback_is_prometheus_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = _write(tmp_path, "s.csv", "t,name,value\n0,m,1\n")
    argv = ["autoscale", "promql", "m", "--series", str(series), "--time", "200"]
    assert run([*argv, "--lookback", "0s"]) == 0
    assert '"1"' in capsys.readouterr().out  # 200 s after the sample: within 5m
