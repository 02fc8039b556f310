"""A minimal twin for the adapter tests: a scenario written in code, loaded like a user's file.

Every test here builds its twin through :func:`run_twin`, the one place that turns a scenario
(a dict, dumped to ``scenario.yaml`` in a temporary directory) into a finished run; the tests
read the outcome from the run result and the object store through :class:`MiniTwin`. Going
through the scenario loader and ``twin.build`` keeps the tests off ``Simulation``'s constructor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.cluster.events import Event
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.store import ObjectStore
from gpuplane.twin.dra.state import DraState
from gpuplane.twin.simulation import RunResult, Simulation

GIB = 1024**3


@dataclass(frozen=True, slots=True)
class MiniTwin:
    """A finished run and the simulation it came from."""

    sim: Simulation
    result: RunResult

    @property
    def store(self) -> ObjectStore:
        return self.sim.cluster.store

    @property
    def dra(self) -> DraState:
        return self.sim.component(DraState)  # LookupError when the scenario has no DRA pool

    def node(self, name: str) -> Node:
        return self.store.nodes[name]

    def advertised(self, node: str, resource: str = "nvidia.com/gpu") -> int:
        """How many ``resource`` devices the node's device plugin advertises (healthy ones)."""
        n = self.node(node)
        if resource == "nvidia.com/gpu":
            return self.store.gpu_allocatable(n)
        return n.allocatable.get(resource, 0)

    def pods(self, prefix: str = "") -> list[Pod]:
        """Every pod ever created whose name starts with ``prefix``, oldest first."""
        found = [p for p in self.store.pods.values() if p.name.startswith(prefix)]
        return sorted(found, key=lambda p: (p.created_s, p.name))

    def pod(self, name: str) -> Pod:
        (found,) = [p for p in self.store.pods.values() if p.name == name]
        return found

    def events(self, reason: str, name: str | None = None) -> list[Event]:
        """The run's events with ``reason`` (about object ``name`` if given), in time order."""
        return [
            e for e in self.result.events if e.reason == reason and (name is None or e.name == name)
        ]


def run_twin(
    tmp_path: Path,
    scenario: Mapping[str, Any],
    *,
    until_s: float,
    files: Mapping[str, Any] | None = None,
    seed: int = 0,
) -> MiniTwin:
    """Write ``scenario`` (and ``files``, name -> YAML data or a list of documents, for the
    parts a scenario names by path) under ``tmp_path``, load it, build the twin and run it to
    ``until_s`` with the invariants checked after every event."""
    for name, data in (files or {}).items():
        # A list is a multi-document file (``---`` between the manifests).
        docs = data if isinstance(data, list) else [data]
        (tmp_path / name).write_text(yaml.safe_dump_all(docs, sort_keys=False))
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(dict(scenario), sort_keys=False))
    spec = load_scenario_spec(path).spec
    sim = simulation_from_spec(spec, seed=seed, check_invariants=True)
    return MiniTwin(sim, sim.run(until_s))


# ----- scenario pieces -----


def pool(
    name: str = "gpu", preset: str = "seed-8gpu", count: int = 1, **extra: Any
) -> dict[str, Any]:
    """A node pool entry: ``count`` nodes of a topology preset (``extra``: kubelet, mig, ...)."""
    return {"name": name, "preset": preset, "count": count, **extra}


def container(
    gpus: int = 0,
    *,
    cpu: str = "1",
    memory: str = "4Gi",
    name: str = "main",
    extra_limits: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A container with Guaranteed resources: requests equal limits."""
    res: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus:
        res["nvidia.com/gpu"] = gpus
    res.update(extra_limits or {})
    return {"name": name, "image": "busybox", "resources": {"requests": res, "limits": dict(res)}}


def pod_spec(
    gpus: int = 0,
    *,
    restart: str = "Always",
    annotations: Mapping[str, str] | None = None,
    **container_kw: Any,
) -> dict[str, Any]:
    """A pod template's ``metadata`` and ``spec`` with one container."""
    return {
        "metadata": {"annotations": dict(annotations or {})},
        "spec": {"restartPolicy": restart, "containers": [container(gpus, **container_kw)]},
    }


def bare_pod(
    name: str, gpus: int = 0, *, at: str = "0s", run: str | None = None, **kw: Any
) -> dict[str, Any]:
    """A workload entry: one Pod manifest created at ``at`` that runs for ``run`` (default: to
    the end of the run)."""
    template = pod_spec(gpus, **kw)
    metadata = {"name": name, "namespace": "default", **template["metadata"]}
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
    duration = {"until_end": True} if run is None else {"fixed": run}
    return {"manifest": manifest, "arrival": {"at": at}, "duration": duration}


def deployment(name: str, replicas: int, gpus: int = 0, **kw: Any) -> dict[str, Any]:
    """A Deployment manifest (not a workload entry: serving and KEDA name it by file)."""
    template = pod_spec(gpus, **kw)
    template["metadata"]["labels"] = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template,
        },
    }


def scenario(
    *pools: dict[str, Any], workloads: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    """A scenario with no ClusterPolicy (GPUs advertised from 0 s) unless ``extra`` sets one."""
    return {"name": "mini", "node_pools": list(pools), "workloads": workloads, **extra}
