"""Factories for the sweep tests: a small OpenB data folder (a tenth of the GPU nodes, two
subsets of the default trace) whose runs take a fraction of a second, and sweep files."""

from __future__ import annotations

from pathlib import Path

from gpuplane.scheduler.openb.trace import load_nodes, load_pods
from tests.unit.scheduler.openb_factories import DATA, NODE_CSV, subset_nodes, subset_pods

SMALL_TRACES = ("a", "b")


def small_openb(folder: Path) -> Path:
    """``folder/openb`` with openb_node_list_small.csv and openb_pod_list_{a,b}.csv."""
    data = folder / "openb"
    data.mkdir(parents=True, exist_ok=True)
    nodes = subset_nodes(load_nodes(NODE_CSV), range(0, 1213, 10))
    lines = ["sn,cpu_milli,memory_mib,gpu,model"]
    for i, name in enumerate(nodes.names):
        model = nodes.model_names[int(nodes.model[i])]
        lines.append(f"{name},{nodes.cpu_milli[i]},{nodes.mem_mib[i]},{nodes.num_gpus[i]},{model}")
    (data / "openb_node_list_small.csv").write_text("\n".join(lines) + "\n")
    pods = load_pods(DATA / "openb_pod_list_default.csv")
    for offset, trace in enumerate(SMALL_TRACES):
        small = subset_pods(pods, range(offset, pods.num_pods, 8))
        lines = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli"]
        for i, name in enumerate(small.names):
            lines.append(
                f"{name},{small.cpu_milli[i]},{small.mem_mib[i]},{small.num_gpu[i]},"
                f"{small.gpu_milli[i]}"
            )
        (data / f"openb_pod_list_{trace}.csv").write_text("\n".join(lines) + "\n")
    return data


def openb_sweep(folder: Path, parameters: str, extra: str = "") -> Path:
    """A sweep file on the small data; ``parameters``: the YAML lines under ``parameters:``."""
    small_openb(folder)
    path = folder / "sweep.yaml"
    path.write_text(
        "name: small\n"
        "base:\n"
        "  openb: {data: openb, nodes: openb_node_list_small.csv, trace: a}\n"
        "parameters:\n" + parameters + extra
    )
    return path


GRID = (
    "  policy: {values: [bestfit, packing]}\n  trace: {values: [a, b]}\n  seed: {values: 42-44}\n"
)
