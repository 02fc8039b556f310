"""The golden cases: every example scenario for two seeds, the README's CLI examples, OpenB.

Issue 12 (the house moves) must keep behaviour identical. ``record.py`` runs every case once and
writes the SHA-256 of every output byte stream to ``golden.json``; ``test_golden.py`` runs them
again and compares. A case is a name, the CLI arguments (``{out}`` is a fresh folder) and, for
stdin-driven commands, the text fed on standard input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples"

SIM_FILES = ("summary.json", "events.jsonl", "timeseries.csv", "resolved-config.yaml")


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    argv: tuple[str, ...]
    stdin: str | None = None
    files: tuple[str, ...] = ()  # files under {out} whose bytes are compared, besides stdout


def _simulations() -> Iterator[Case]:
    scenarios = {
        "scenario": ("examples/scenario.yaml", "2h"),
        "autoscaling": ("examples/autoscaling/scenario.yaml", "1h"),
        "autoscaling-slo": ("examples/autoscaling/scenario-slo.yaml", "1h"),
    }
    for name, (path, until) in scenarios.items():
        for seed in (0, 7):
            argv = ("simulate", str(REPO / path), "--seed", str(seed), "--until", until)
            yield Case(f"simulate-{name}-seed{seed}", (*argv, "--out", "{out}"), files=SIM_FILES)


def _cli() -> Iterator[Case]:
    argvs: dict[str, tuple[str, ...]] = {
        "topo-presets": ("topo", "presets", "--json"),
        "topo-show-dgx-h100": ("topo", "show", "dgx-h100", "--json"),
        "topo-show-seed": ("topo", "show", "seed-8gpu", "--json"),
        "topo-show-pcie-plx": (
            "topo",
            "show",
            str(SHARED / "data/topologies/pcie-8gpu-plx-switches-dual-socket.txt"),
            "--gpu-model",
            "L40S",
            "--json",
        ),
        "topo-labels-h200": ("topo", "labels", "hgx-h200"),
        "topo-nrt-h200": ("topo", "nrt", "hgx-h200", "--node-name", "n1"),
        "topo-ring-v100": ("topo", "ring", "dgx1-v100", "--gpus", "0,1,2,3", "--json"),
        "topo-pick-seed": (
            "topo",
            "pick",
            "seed-8gpu",
            "--available",
            "0,1,2,3,5,6",
            "--size",
            "2",
            "--json",
        ),
        "topo-pick-seed-gpuallocator": (
            "topo",
            "pick",
            "seed-8gpu",
            "--available",
            "0,1,2,3,5,6",
            "--size",
            "4",
            "--policy",
            "gpuallocator",
            "--json",
        ),
        "mig-plan": (
            "mig",
            "plan",
            "--gpu",
            "A100-80GB",
            "--count",
            "2",
            "--demand",
            "1g.10gb=7,3g.40gb=2",
            "--json",
        ),
        "mig-plan-h100": (
            "mig",
            "plan",
            "--gpu",
            "H100-80GB",
            "--count",
            "3",
            "--demand",
            "1g.10gb=7,3g.40gb=2",
            "--json",
        ),
        "mig-profiles": ("mig", "profiles", "--gpu", "H100", "--json"),
        "mig-layouts": ("mig", "layouts", "--gpu", "A100-40GB", "--maximal", "--json"),
        "mig-defaults": ("mig", "defaults", "--gpu", "H100-80GB"),
        "serving-models": ("serving", "models", "--json"),
        "serving-memory-70b": (
            "serving",
            "memory",
            "--model",
            "Llama-3.1-70B",
            "--gpu",
            "H100",
            "--tp",
            "4",
            "--gpu-memory-utilization",
            "0.9",
            "--json",
        ),
        "serving-step-prefill": (
            "serving",
            "step",
            "--model",
            "Llama-3.1-70B",
            "--gpu",
            "H100",
            "--tp",
            "4",
            "--prefill-tokens",
            "512,1024",
            "--json",
        ),
        "serving-step-decode": (
            "serving",
            "step",
            "--model",
            "Llama-3.1-8B",
            "--gpu",
            "H100",
            "--tp",
            "1",
            "--decode-batch",
            "64",
            "--context",
            "2048",
            "--json",
        ),
        "serving-kv-transfer": (
            "serving",
            "kv-transfer",
            "--model",
            "Llama-3.1-70B",
            "--tokens",
            "4096",
            "--nic-gbit",
            "400",
            "--json",
        ),
        "keda-hpa": ("autoscale", "keda-hpa", str(EXAMPLES / "autoscaling/scaledobject.yaml")),
        "dra-allocate": (
            "dra",
            "allocate",
            str(Path(__file__).with_name("dra-objects.yaml")),
            "--node",
            "node-a",
            "--json",
        ),
    }
    for name, argv in argvs.items():
        yield Case(f"cli-{name}", argv)


def _stdin_cases() -> Iterator[Case]:
    hpa = json.loads((SHARED / "reference/hpa-examples.json").read_text())
    for family, cases in hpa.items():
        if family == "schema":
            continue
        for i, case in enumerate(cases):
            inputs = {k: v for k, v in case.items() if not k.startswith("expected")}
            inputs["family"] = family
            yield Case(f"hpa-check-{family}-{i}", ("autoscale", "hpa-check"), json.dumps(inputs))
    tm = json.loads((SHARED / "reference/topology-manager-examples.json").read_text())
    for i, case in enumerate(tm.get("merge_cases", [])):
        inputs = {k: v for k, v in case.items() if not k.startswith("expected")}
        yield Case(f"merge-hints-{i}", ("kubelet", "merge-hints"), json.dumps(inputs))


def _openb() -> Iterator[Case]:
    for policy in ("random", "dotprod", "clustering", "packing", "bestfit", "fgd", "gpuplane"):
        yield Case(
            f"openb-{policy}", ("bench", "openb", "--policy", policy, "--seeds", "42", "--json")
        )


def all_cases() -> list[Case]:
    return [*_simulations(), *_cli(), *_stdin_cases(), *_openb()]
