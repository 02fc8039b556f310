"""The twin's MIG controller is the live one: the same node relabelled in the same round.

A twin scenario with two DGX A100 nodes on ``all-1g.10gb``, ``max_unavailable: 1`` and 18 pods
asking ``nvidia.com/mig-3g.40gb`` (a nodeSelector no node matches keeps them pending, so the
demand is the same every round on both sides): both nodes need relabelling, one at a time.

The live side is ``gpuplane serve mig-controller --once --apply`` run round by round against
the loopback API server on the same cluster state; between rounds the test does what NVIDIA's
MIG manager and the API server would: a patched ``nvidia.com/mig.config`` label is set on the
node with ``mig.config.state=pending``, and ``reconfigure_seconds`` later the state is
``success`` (the ConfigMap the controller wrote is served back by the fake server).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli.main import run
from gpuplane.twin.mig.controller import MigRepartitioner
from tests.integration.fake_apiserver import Obj, Served, kubeconfig_text, running
from tests.unit.twin.minitwin import bare_pod, pool, run_twin, scenario

pytestmark = pytest.mark.integration

NODES = ("mig-0", "mig-1")
INTERVAL_S = 30.0
RECONFIGURE_S = 45.0
ROUNDS = 5
PODS = 18  # 16 fill one node's 8 GPUs (2 x 3g.40gb each), 2 need a GPU of the other
MIG_3G = "nvidia.com/mig-3g.40gb"
CM_PATH = "/api/v1/namespaces/gpu-operator/configmaps"

# One round: what it relabelled (node, config) and what it skipped (node, reason).
Round = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


def _twin_rounds(tmp_path: Path) -> list[Round]:
    mig = {
        "strategy": "mixed",
        "config": "all-1g.10gb",
        "dynamic": True,
        "reconfigure_seconds": RECONFIGURE_S,
        "interval_seconds": INTERVAL_S,
        "max_unavailable": 1,
    }
    workloads = []
    for i in range(PODS):
        entry = bare_pod(f"train-{i:02d}", extra_limits={MIG_3G: 1})
        entry["manifest"]["spec"]["nodeSelector"] = {"example.com/pool": "elsewhere"}
        workloads.append(entry)
    spec = scenario(pool("mig", "dgx-a100", count=2, mig=mig), workloads=workloads)
    twin = run_twin(tmp_path, spec, until_s=INTERVAL_S * ROUNDS + 1)
    rounds = twin.sim.component(MigRepartitioner).rounds
    assert [r.t_s for r in rounds] == [INTERVAL_S * (i + 1) for i in range(ROUNDS)]
    return [
        (
            r.outcome.relabelled(),
            tuple((s.node, str(s.reason)) for s in r.outcome.decision.skipped),
        )
        for r in rounds
    ]


def _node(name: str) -> Obj:
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81920",
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/mig.config": "all-1g.10gb",
        "nvidia.com/mig.config.state": "success",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels},
        "status": {"allocatable": {"cpu": "256", "memory": "2Ti", "nvidia.com/mig-1g.10gb": "56"}},
    }


def _pod(i: int) -> Obj:
    limits = {"cpu": "1", "memory": "4Gi", MIG_3G: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"train-{i:02d}", "namespace": "default", "uid": f"uid-{i}"},
        "spec": {
            "containers": [{"name": "main", "resources": {"requests": limits, "limits": limits}}],
            "nodeSelector": {"example.com/pool": "elsewhere"},
        },
        "status": {"phase": "Pending"},
    }


def _live_round(served: Served, kubeconfig: Path, out: pytest.CaptureFixture[str]) -> Round:
    before = len(served.writes)
    args = ["--kubeconfig", str(kubeconfig), "--once", "--apply", "--max-unavailable", "1"]
    assert run(["serve", "mig-controller", *args]) == 0
    lines: list[dict[str, Any]] = [
        json.loads(line) for line in out.readouterr().out.splitlines() if line.startswith("{")
    ]
    patched = [w for w in served.writes[before:] if w.method == "PATCH"]
    applied = tuple((r["node"], r["config"]) for r in lines if r["action"] == "applied")
    assert [w.path.rsplit("/", 1)[-1] for w in patched] == [n for n, _ in applied]
    skipped = tuple((r["node"], r["reason"]) for r in lines if r["action"] == "skip")
    return applied, skipped


def _live_rounds(tmp_path: Path, out: pytest.CaptureFixture[str]) -> list[Round]:
    nodes = {name: _node(name) for name in NODES}
    served = Served(
        lists={
            "/api/v1/nodes": list(nodes.values()),
            "/api/v1/pods": [_pod(i) for i in range(PODS)],
            "/apis/policy/v1/poddisruptionbudgets": [],
            CM_PATH: [],
        },
        groups={},
        accept_writes=True,
    )
    relabelled_at: dict[str, float] = {}
    rounds: list[Round] = []
    with running(served) as url:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(kubeconfig_text({"fake": url}, "fake"))
        for i in range(ROUNDS):
            now = INTERVAL_S * (i + 1)
            for name, t in relabelled_at.items():
                if t + RECONFIGURE_S <= now:  # the MIG manager is done
                    nodes[name]["metadata"]["labels"]["nvidia.com/mig.config.state"] = "success"
            applied, skipped = _live_round(served, kubeconfig, out)
            for name, config in applied:  # the API server takes the patch, the manager starts
                labels = nodes[name]["metadata"]["labels"]
                labels["nvidia.com/mig.config"] = config
                labels["nvidia.com/mig.config.state"] = "pending"
                relabelled_at[name] = now
            rounds.append((applied, skipped))
    return rounds


def test_twin_and_live_relabel_the_same_node_in_the_same_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "twin").mkdir()
    twin = _twin_rounds(tmp_path / "twin")
    live = _live_rounds(tmp_path, capsys)
    assert twin == live
    # What both did: one node at a time, the second once the first is done.
    relabelled = [[node for node, _ in applied] for applied, _ in twin]
    assert relabelled == [["mig-0"], [], ["mig-1"], [], []]
    assert twin[0][1] == (("mig-1", "max-unavailable"),)
    assert set(twin[1][1]) == {("mig-0", "in-progress"), ("mig-1", "max-unavailable")}
    assert twin[0][0][0][1] != twin[2][0][0][1]  # 8 GPUs changed on one, 1 on the other
