"""twin.serving: an engine follows each inference pod, ready after its cold start.

Cold start = image pull (30 s, once per node and image) + weights / storage bandwidth (about
16 GB at 1000 GB/s: 0.016 s for Llama-3.1-8B in bf16) + engine start-up (20 s). Both replicas
land on the one node and start at 0 s: the first pays the pull, the second finds the image.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import MiniTwin, pool, run_twin, scenario


def vllm_deployment(model: str, replicas: int) -> dict[str, Any]:
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.8.5",
        "args": ["--model", model, "--max-model-len", "8192"],
        "resources": {
            "requests": {"cpu": "8", "memory": "32Gi"},
            "limits": {"nvidia.com/gpu": 1, "memory": "32Gi"},
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "llm", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "llm"}},
            "template": {
                "metadata": {"labels": {"app": "llm"}},
                "spec": {"containers": [container]},
            },
        },
    }


def serving_twin(
    tmp_path: Path,
    until_s: float,
    model: str = "meta-llama/Llama-3.1-8B-Instruct",
    **extra: Any,
) -> MiniTwin:
    serving = {
        "cold_start": {"image_pull": "30s", "storage_gbps": 1000, "init": "20s"},
        "services": [
            {
                "name": "chat",
                "namespace": "default",
                "deployment": "llm",
                "router": "round-robin",
                "traffic": {
                    "poisson": {
                        "rate_per_s": 2,
                        "prompt_tokens": 200,
                        "output_tokens": 20,
                        "start": "10s",
                    }
                },
            }
        ],
    }
    return run_twin(
        tmp_path,
        scenario(pool(), workloads=[{"path": "llm.yaml"}], serving=serving, **extra),
        until_s=until_s,
        files={"llm.yaml": vllm_deployment(model, 2)},
    )


def test_each_pod_gets_an_engine_ready_after_its_cold_start(tmp_path: Path) -> None:
    twin = serving_twin(tmp_path, until_s=120.0)
    pods = twin.pods("llm")
    assert len(pods) == 2 and all(p.started_s == 0.0 for p in pods)
    ready = sorted(e.t_s for e in twin.events("EngineReady"))
    assert len(ready) == 2
    assert 20.0 < ready[0] < 20.1  # image already on the node
    assert 50.0 < ready[1] < 50.1  # pulled the image first
    assert all(p.conditions["Ready"] for p in pods)
    (svc,) = twin.result.summary.as_dict()["serving"]
    assert svc["engines_started"] == 2
    req = svc["requests"]
    assert req["arrived"] > 0 and req["completed"] > 0
    assert req["arrived"] == req["completed"] + req["rejected"] + req["aborted"] + req["in_flight"]


def test_a_pod_is_running_but_not_ready_until_its_engine_is(tmp_path: Path) -> None:
    twin = serving_twin(tmp_path, until_s=40.0)
    pods = twin.pods("llm")
    assert all(p.phase is PodPhase.RUNNING for p in pods)
    assert sorted(p.conditions["Ready"] for p in pods) == [False, True]
    assert len(twin.events("EngineReady")) == 1


def test_an_engine_that_cannot_start_crashes_its_pod(tmp_path: Path) -> None:
    # 70B parameters in bf16 (about 141 GB) do not fit one 80 GB GPU.
    twin = serving_twin(tmp_path, until_s=120.0, model="meta-llama/Llama-3.1-70B-Instruct")
    # Every start fails; the kubelet restarts the container after 10 s, doubling each time.
    for pod in twin.pods("llm"):
        assert [e.t_s for e in twin.events("Started", pod.name)] == [0.0, 10.0, 30.0, 70.0]
        assert len(twin.events("BackOff", pod.name)) == 4
    assert twin.result.summary.as_dict()["counters"]["engine_start_failures"] == 2 * 4
    assert twin.events("EngineReady") == []
    (svc,) = twin.result.summary.as_dict()["serving"]
    assert svc["engines_started"] == 0 and svc["requests"]["completed"] == 0


def test_the_engine_goes_with_its_pod_and_comes_with_the_replacement(tmp_path: Path) -> None:
    # GPU 0 falls off the bus at 80 s: the pod on it fails and its engine is removed; the
    # ReplicaSet's replacement starts at once on a healthy GPU, and its engine is ready 20 s
    # later (the image is on the node already).
    xid = {"kind": "gpu-xid", "at": "80s", "gpu": 0, "xid": 79, "nodes": {"names": ["gpu-0"]}}
    twin = serving_twin(tmp_path, until_s=150.0, faults=[xid])
    first_two, (new,) = twin.pods("llm")[:2], twin.pods("llm")[2:]
    (lost,) = [p for p in first_two if p.gpu_ids == (0,)]
    (kept,) = [p for p in first_two if p is not lost]
    assert lost.phase is PodPhase.FAILED and lost.finished_s == 80.0
    assert kept.phase is PodPhase.RUNNING
    assert new.created_s == 80.0 and new.phase is PodPhase.RUNNING and 0 not in new.gpu_ids
    ready = twin.events("EngineReady", new.name)
    assert len(ready) == 1 and 100.0 < ready[0].t_s < 100.1
    (svc,) = twin.result.summary.as_dict()["serving"]
    assert svc["engines_started"] == 3
    req = svc["requests"]
    assert req["arrived"] == req["completed"] + req["rejected"] + req["aborted"] + req["in_flight"]
