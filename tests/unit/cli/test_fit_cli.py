"""``gpuplane fit`` on the shipped example cluster and workloads (examples/snapshot/), and its
outputs: --json, -o yaml (a v1 List kubectl accepts, with kube-scheduler-simulator's
annotations), and located errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "snapshot"
SIM = "kube-scheduler-simulator.sigs.k8s.io/"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fit") / "mixed.json"
    assert (
        run(["snapshot", "save", "--from", str(EXAMPLES / "mixed-cluster.yaml"), "--out", str(out)])
        == 0
    )
    return out


def _fit(
    snapshot: Path, workload: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, Any]:
    args = [
        "fit",
        str(EXAMPLES / "workloads" / workload),
        "--snapshot",
        str(snapshot),
        "--pools",
        str(EXAMPLES / "pools.yaml"),
        "--json",
        *extra,
    ]
    assert run(args) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_tp4_fits_on_nvlink_gpus(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _fit(snapshot, "tp4-fits.yaml", capsys)
    (pod,) = a["pods"]
    assert pod["outcome"] == "fits" and pod["node"] == "gpu-h100-b"
    kubelet = pod["gpus"]["kubelet"]
    assert len(kubelet["gpus"]) == 4 and len(kubelet["numaNodes"]) == 1
    assert kubelet["bottleneckGBps"] == 450.0
    assert pod["gpus"]["uncertain"] is True  # the server already there names no GPUs
    assert pod["kubelet"]["policy"] == "single-numa-node/pod" and pod["kubelet"]["admit"]


def test_preemption_evicts_the_batch_pods(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _fit(snapshot, "preempt.yaml", capsys)
    (pod,) = a["pods"]
    assert pod["outcome"] == "fits-after-preemption" and pod["node"] == "gpu-h200-a"
    victims = {v["pod"] for v in pod["preemption"]["victims"]}
    assert victims == {"batch/sweep-0", "batch/sweep-1"}


def test_mig_repartition_is_proposed(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _fit(snapshot, "mig-3g.yaml", capsys)
    assert {p["outcome"] for p in a["pods"]} == {"unschedulable"}
    assert "5 Insufficient nvidia.com/mig-3g.40gb" in a["pods"][0]["fitError"]
    (mig,) = [r for r in a["remedies"] if r["kind"] == "mig-repartition"]
    assert "gpu-a100-mig" in mig["summary"] and "3g.40gb" in mig["summary"]
    assert mig["fitsAfter"] == 2 and len(mig["disrupted"]) == 10


def test_numa_alignment_failure_is_the_kubelets(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _fit(snapshot, "numa-fails.yaml", capsys)
    (pod,) = a["pods"]
    assert pod["outcome"] == "rejected-by-kubelet" and pod["node"] == "gpu-h100-a"
    assert pod["kubelet"]["reason"] == "TopologyAffinityError"
    assert "no NUMA node has 2" in pod["kubelet"]["explanation"]
    assert a["allFit"] is False


def test_yaml_output_is_an_annotated_list(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "fit",
        str(EXAMPLES / "workloads" / "preempt.yaml"),
        "--snapshot",
        str(snapshot),
        "-o",
        "yaml",
    ]
    assert run(args) == 0
    listing = yaml.safe_load(capsys.readouterr().out)
    assert listing["apiVersion"] == "v1" and listing["kind"] == "List"
    (pod,) = listing["items"]
    notes = pod["metadata"]["annotations"]
    assert notes["gpuplane.io/fit"] == "fits"
    assert notes[SIM + "selected-node"] == "gpu-h200-a"
    filters = json.loads(notes[SIM + "filter-result"])
    assert filters["gpu-h100-c"]["NodeUnschedulable"] == "node(s) were unschedulable"
    assert filters["gpu-h200-a"]["NodeResourcesFit"] == "Insufficient nvidia.com/gpu"
    assert pod["spec"]["containers"][0]["name"] == "vllm"  # the object is otherwise as written


def test_scores_are_reported_for_feasible_nodes(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "fit",
        str(EXAMPLES / "workloads" / "numa-fails.yaml"),
        "--snapshot",
        str(snapshot),
        "-o",
        "yaml",
    ]
    assert run(args) == 0
    notes = yaml.safe_load(capsys.readouterr().out)["items"][0]["metadata"]["annotations"]
    scores = json.loads(notes[SIM + "score-result"])
    final = json.loads(notes[SIM + "finalscore-result"])
    assert set(scores) == {"gpu-h100-a"} == set(final)
    assert (
        int(final["gpu-h100-a"]["TaintToleration"])
        == 3 * int(scores["gpu-h100-a"]["TaintToleration"])
        or scores["gpu-h100-a"]["TaintToleration"]
    )


def test_table_output_explains(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "fit",
        str(EXAMPLES / "workloads" / "mig-3g.yaml"),
        "--snapshot",
        str(snapshot),
        "--pools",
        str(EXAMPLES / "pools.yaml"),
    ]
    assert run(args) == 0
    text = capsys.readouterr().out
    assert "0/6 nodes are available" in text and "would fit after mig-repartition" in text


def test_errors_are_located(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    resources: {limits: {nvidia.com/gpu: two}}\n"
    )
    assert run(["fit", str(bad), "--snapshot", str(snapshot)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:7" in err and "nvidia.com/gpu" in err and "Traceback" not in err
    assert run(["fit", str(bad)]) == 2
    assert "--snapshot" in capsys.readouterr().err
    unknown = tmp_path / "svc.yaml"
    unknown.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    assert run(["fit", str(unknown), "--snapshot", str(snapshot)]) == 2


def test_unknown_priority_class_is_refused(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  priorityClassName: gold\n  containers: [{name: c}]\n"
    )
    assert run(["fit", str(w), "--snapshot", str(snapshot)]) == 2
    assert "no PriorityClass with name gold was found" in capsys.readouterr().err


def _two_node_dump(path: Path, images_on: str | None) -> Path:
    """Two identical CPU nodes as ``kubectl get nodes -o yaml`` prints them; ``images_on`` also
    reports the workload's image (800 MiB) in its status.images."""
    nodes = []
    for name in ("cpu-a", "cpu-b"):
        status: dict[str, Any] = {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}
        if name == images_on:
            status["images"] = [
                {
                    "names": [
                        "registry.example/app@sha256:" + "ab" * 32,
                        "registry.example/app:latest",
                    ],
                    "sizeBytes": 800 * 1024 * 1024,
                },
                {"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320_368},
            ]
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "spec": {},
                "status": status,
            }
        )
    dump = path / f"dump-{images_on}.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}))
    out = path / f"snap-{images_on}.json"
    assert run(["snapshot", "save", "--from", str(dump), "--out", str(out)]) == 0
    return out


def test_a_node_holding_the_image_wins_the_tie(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: web}\nspec:\n"
        "  containers:\n  - name: app\n    image: registry.example/app\n"
        "    resources: {requests: {cpu: '1', memory: 1Gi}}\n"
    )

    def answer(images_on: str | None) -> tuple[str, dict[str, Any]]:
        snap = _two_node_dump(tmp_path, images_on)
        capsys.readouterr()
        assert run(["fit", str(w), "--snapshot", str(snap), "-o", "yaml"]) == 0
        notes = yaml.safe_load(capsys.readouterr().out)["items"][0]["metadata"]["annotations"]
        return notes[SIM + "selected-node"], json.loads(notes[SIM + "score-result"])

    chosen, scores = answer(None)
    assert {s["ImageLocality"] for s in scores.values()} == {"0"}
    other = "cpu-b" if chosen == "cpu-a" else "cpu-a"
    # The untagged image is registry.example/app:latest, held by one of the two nodes: 800 MiB
    # x 1/2 = 400 MiB of [23, 1000] -> 100 * 377 / 977 = 38.6 -> 38; every other score is equal.
    chosen, scores = answer(other)
    assert chosen == other
    loser = "cpu-b" if other == "cpu-a" else "cpu-a"
    assert scores[other]["ImageLocality"] == "38" and scores[loser]["ImageLocality"] == "0"
    rest = {k: v for k, v in scores[other].items() if k != "ImageLocality"}
    assert rest == {k: v for k, v in scores[loser].items() if k != "ImageLocality"}
