"""Every command, its valid inputs, and the mutants run against them.

A :class:`Target` is one valid input of one command: the file to mutate, how the command is run
(``{dir}`` is the case's scratch folder, which holds a copy of ``examples/`` where the input
refers to other files), and how many field and line mutants to draw from it. Option targets put
each hostile value in one numeric or list option. ``cases()`` is the whole corpus, stable from
run to run; ``run_case`` runs one in this process and returns the answer and what the message
must name.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from tests.robustness.harness import Answer, answer, problems
from tests.robustness.mutate import Mutant, line_mutants, structural, textual
from tests.robustness.pending import tolerated

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples"
SEEDS = Path(__file__).with_name("seeds")
PRESETS = REPO / "src/gpuplane/topology/data/presets"

# The twin runs one simulated second: loading, wiring and the first events are what read the
# inputs; the HTML report (matplotlib, seconds) reads only the run's own files.
SIM = ["--until", "1s", "--out", "{dir}/out"]


@dataclass(frozen=True, slots=True)
class Target:
    """One valid input of one command."""

    name: str
    argv: tuple[str, ...]
    seed: Path  # the valid input
    fmt: str  # yaml, json, csv, text (whitespace columns)
    rel: str = "input"  # where the mutant is written under {dir} ("-" = standard input)
    fields: int = 0  # field mutants drawn
    lines: int = 0  # line mutants drawn
    whole: bool = True  # the encoding, size and syntax mutants too
    tree: bool = False  # the case needs a copy of examples/ at {dir}/examples
    extra_codes: frozenset[int] = frozenset()
    snapshot: bool = False  # the case needs a snapshot of examples/snapshot at {dir}/snap.yaml
    lenient: bool = False  # unknown fields are ignored, as Kubernetes clients decode them
    valid_argv: tuple[str, ...] = ()  # an option target: the command with a valid value

    @property
    def command(self) -> str:
        """The command alone (``fit``, ``serving memory``), for grouping timings."""
        return self.name.split(":")[0].split(" --")[0]


@dataclass(frozen=True, slots=True)
class Case:
    target: Target
    mutant: Mutant
    argv_override: tuple[str, ...] | None = None
    source_override: str | None = None

    @property
    def id(self) -> str:
        return f"{self.target.name}/{self.mutant.name}"


def _ex(rel: str) -> str:
    return "{dir}/examples/" + rel


def _targets() -> list[Target]:
    t: list[Target] = []
    for rel, budget in (
        ("scenario.yaml", 16),
        ("autoscaling/scenario.yaml", 5),
        ("autoscaling/scenario-slo.yaml", 5),
    ):
        t.append(
            Target(
                f"simulate:{rel}",
                ("simulate", _ex(rel), *SIM),
                EXAMPLES / rel,
                "yaml",
                rel="examples/" + rel,
                fields=budget,
                whole=rel == "scenario.yaml",
                tree=True,
            )
        )
    # Files the scenario refers to, read by the twin.
    for rel, budget in (
        ("manifests/dra-classes.yaml", 4),
        ("manifests/keda-vllm-llama.yaml", 4),
        ("manifests/vllm-deployment.yaml", 4),
        ("topologies/h100-della-topo-m.txt", 0),
    ):
        fmt = "text" if rel.endswith(".txt") else "yaml"
        t.append(
            Target(
                f"simulate:{rel}",
                ("simulate", _ex("scenario.yaml"), *SIM),
                EXAMPLES / rel,
                fmt,
                rel="examples/" + rel,
                fields=budget,
                lines=4 if fmt == "text" else 0,
                whole=False,
                tree=True,
            )
        )
    t.append(
        Target(
            "simulate:traces/azure_conv_20min.csv",
            ("simulate", _ex("autoscaling/scenario.yaml"), *SIM),
            EXAMPLES / "traces/azure_conv_20min.csv",
            "csv",
            rel="examples/traces/azure_conv_20min.csv",
            lines=6,
            tree=True,
        )
    )
    fit = ("fit", "{dir}/input", "--snapshot", "{dir}/snap.yaml", "--no-remedies")
    for path in (
        sorted((EXAMPLES / "snapshot/workloads").glob("*.yaml"))
        + [
            EXAMPLES / f"manifests/{n}.yaml"
            for n in ("embeddings-deployment", "finetune-job", "mig-inference", "notebooks")
        ]
        + [EXAMPLES / "manifests/pretrain-gang.yaml"]
    ):
        t.append(
            Target(
                f"fit:{path.relative_to(EXAMPLES)}",
                (*fit, "--pools", str(EXAMPLES / "snapshot/pools.yaml")),
                path,
                "yaml",
                fields=4,
                whole=path.name == "tp4-fits.yaml",
                snapshot=True,
                extra_codes=frozenset({1}),
            )
        )
    t += [
        Target(
            "fit:--pools",
            (
                "fit",
                str(EXAMPLES / "snapshot/workloads/tp4-fits.yaml"),
                "--snapshot",
                "{dir}/snap.yaml",
                "--no-remedies",
                "--pools",
                "{dir}/input",
            ),
            EXAMPLES / "snapshot/pools.yaml",
            "yaml",
            fields=10,
            snapshot=True,
        ),
        Target(
            "fit:--kubelet-config",
            (
                "fit",
                str(EXAMPLES / "snapshot/workloads/tp4-fits.yaml"),
                "--snapshot",
                "{dir}/snap.yaml",
                "--no-remedies",
                "--kubelet-config",
                "{dir}/input",
            ),
            SEEDS / "kubelet-config.yaml",
            "yaml",
            fields=10,
            whole=False,
            snapshot=True,
            lenient=True,
        ),
        Target(
            "fit:--scheduler-config",
            (
                "fit",
                str(EXAMPLES / "snapshot/workloads/tp4-fits.yaml"),
                "--snapshot",
                "{dir}/snap.yaml",
                "--no-remedies",
                "--scheduler-config",
                "{dir}/input",
            ),
            SEEDS / "scheduler-config.yaml",
            "yaml",
            fields=10,
            whole=False,
            snapshot=True,
        ),
        Target(
            "snapshot-show:snapshot",
            ("snapshot", "show", "{dir}/input"),
            Path("{snapshot}"),
            "yaml",
            fields=10,
            snapshot=True,
            lenient=True,
        ),
    ]
    for rel in ("snapshot/mixed-cluster.yaml", "snapshot/cluster.yaml"):
        t.append(
            Target(
                f"snapshot-save:{rel}",
                ("snapshot", "save", "--from", "{dir}/input.yaml", "--out", "{dir}/s.yaml"),
                EXAMPLES / rel,
                "yaml",
                rel="input.yaml",
                fields=10,
                whole=rel.endswith("mixed-cluster.yaml"),
                lenient=True,
            )
        )
    t += [
        Target(
            "mig-check-config",
            ("mig", "check-config", "{dir}/input"),
            SEEDS / "mig-parted.yaml",
            "yaml",
            fields=10,
        ),
        Target(
            "mig-plan:--current",
            (
                "mig",
                "plan",
                "--gpu",
                "A100-80GB",
                "--count",
                "2",
                "--demand",
                "1g.10gb=3",
                "--time-limit",
                "5",
                "--current",
                "{dir}/input",
                "--json",
            ),
            SEEDS / "mig-current.yaml",
            "yaml",
            fields=10,
            whole=False,
        ),
        Target(
            "dra-allocate",
            ("dra", "allocate", "{dir}/input", "--node", "node-a"),
            REPO / "tests/golden/dra-objects.yaml",
            "yaml",
            fields=14,
            extra_codes=frozenset({1}),
        ),
        Target(
            "keda-hpa:scaledobject",
            ("autoscale", "keda-hpa", "{dir}/input"),
            EXAMPLES / "autoscaling/scaledobject.yaml",
            "yaml",
            fields=10,
        ),
        Target(
            "keda-hpa:keda-vllm-llama",
            ("autoscale", "keda-hpa", "{dir}/input"),
            EXAMPLES / "manifests/keda-vllm-llama.yaml",
            "yaml",
            fields=5,
            whole=False,
        ),
        Target(
            "promql:series.json",
            ("autoscale", "promql", "sum(vllm:num_requests_waiting)", "--series", "{dir}/input"),
            SEEDS / "series.json",
            "json",
            fields=8,
        ),
        Target(
            "promql:series.csv",
            (
                "autoscale",
                "promql",
                "sum(rate(http_requests_total[30s]))",
                "--series",
                "{dir}/input",
            ),
            SEEDS / "series.csv",
            "csv",
            lines=12,
        ),
        Target(
            "topo-show:preset-yaml",
            ("topo", "show", "{dir}/input.yaml", "--json"),
            PRESETS / "dgx-h100.yaml",
            "yaml",
            rel="input.yaml",
            fields=8,
            whole=False,
        ),
    ]
    for path in [
        EXAMPLES / "topologies/h100-della-topo-m.txt",
        *sorted((SHARED / "data/topologies").glob("*.txt"))[:3],
    ]:
        t.append(
            Target(
                f"topo-show:{path.name}",
                ("topo", "show", "{dir}/input.txt", "--gpu-model", "H100-80GB-SXM", "--json"),
                path,
                "text",
                rel="input.txt",
                lines=8,
                whole=path.parent == EXAMPLES / "topologies",
            )
        )
    t += _sweep_targets()
    t += _case_targets()
    return t


def _sweep_targets() -> list[Target]:
    """Sweep files: the fit one is run (its 24 points take half a second), the twin ones are
    checked and listed (every value goes through the base's checks without running a point)."""
    out = []
    for rel, argv, budget in (
        ("sweeps/fit-tp.yaml", ("--workers", "1", "--no-plots", "--out", "{dir}/out"), 10),
        ("sweeps/keda-thresholds.yaml", ("--list",), 6),
        ("sweeps/openb-small.yaml", ("--list",), 4),
    ):
        out.append(
            Target(
                f"sweep:{rel}",
                ("sweep", _ex(rel), *argv),
                EXAMPLES / rel,
                "yaml",
                rel="examples/" + rel,
                fields=budget,
                whole=rel.endswith("fit-tp.yaml"),
                tree=True,
            )
        )
    return out


def _case_targets() -> list[Target]:
    """hpa-check and merge-hints: one case of each family of the reference files, on stdin."""
    out: list[Target] = []
    scratch = _scratch() / "cases"
    scratch.mkdir(exist_ok=True)
    hpa = json.loads((SHARED / "reference/hpa-examples.json").read_text())
    first = True
    for family, cases in hpa.items():
        if family == "schema":
            continue
        case = {k: v for k, v in cases[0].items() if not k.startswith("expected")}
        case["family"] = family
        path = scratch / f"hpa-{family}.json"
        path.write_text(json.dumps(case))
        out.append(
            Target(
                f"hpa-check:{family}",
                ("autoscale", "hpa-check"),
                path,
                "json",
                rel="-",
                fields=5,
                whole=first,
            )
        )
        first = False
    tm = json.loads((SHARED / "reference/topology-manager-examples.json").read_text())
    for i in (0, 5, 11):
        case = {k: v for k, v in tm["merge_cases"][i].items() if not k.startswith("expected")}
        path = scratch / f"merge-{i}.json"
        path.write_text(json.dumps(case))
        out.append(
            Target(
                f"merge-hints:{i}",
                ("kubelet", "merge-hints"),
                path,
                "json",
                rel="-",
                fields=8,
                whole=i == 0,
            )
        )
    return out


# ----- hostile option values -----
HOSTILE = ("nan", "-1", "0", "1e400", "99999999999999999999999", "abc", "")
MODEL = ("--model", "Qwen/Qwen2.5-7B-Instruct")
OPTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--weights-gib", "14"),
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--gpu-memory-utilization", "0.9"),
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--max-model-len", "4096"),
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--block-size", "16"),
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--max-num-seqs", "256"),
    (("serving", "memory", *MODEL, "--gpu", "H100-80GB-SXM"), "--activation-gib", "1"),
    (("serving", "step", *MODEL, "--gpu", "H100", "--decode-batch", "8"), "--context", "2048"),
    (("serving", "step", *MODEL, "--gpu", "H100", "--context", "512"), "--decode-batch", "8"),
    (("serving", "step", *MODEL, "--gpu", "H100"), "--prefill-tokens", "512,1024"),
    (("serving", "step", *MODEL, "--gpu", "H100", "--prefill-tokens", "64"), "--tp", "1"),
    (("serving", "kv-transfer", *MODEL, "--nic-gbit", "400"), "--tokens", "4096"),
    (("serving", "kv-transfer", *MODEL, "--tokens", "4096", "--nic-gbit", "400"), "--ranks", "2"),
    (("topo", "ring", "dgx-h100", "--gpus", "0,1"), "--message-mib", "256"),
    (("topo", "ring", "dgx-h100"), "--gpus", "0,1,2,3"),
    (("topo", "pick", "seed-8gpu", "--available", "0,1,2,3"), "--size", "2"),
    (("topo", "pick", "seed-8gpu", "--size", "2"), "--available", "0,1,2,3"),
    (("mig", "plan", "--gpu", "A100-80GB", "--demand", "1g.10gb=3"), "--count", "2"),
    (("mig", "plan", "--gpu", "A100-80GB", "--count", "2"), "--demand", "1g.10gb=3"),
    (
        ("mig", "plan", "--gpu", "A100-80GB", "--count", "1", "--demand", "1g.10gb=1"),
        "--time-limit",
        "5",
    ),
    (
        (
            "autoscale",
            "promql",
            "sum(vllm:num_requests_waiting)",
            "--series",
            str(SEEDS / "series.json"),
        ),
        "--time",
        "30",
    ),
    (
        (
            "autoscale",
            "promql",
            "sum(vllm:num_requests_waiting)",
            "--series",
            str(SEEDS / "series.json"),
        ),
        "--lookback",
        "5m",
    ),
    (
        ("dra", "allocate", str(REPO / "tests/golden/dra-objects.yaml"), "--node", "node-a"),
        "--node-labels",
        "zone=a",
    ),
    (
        ("simulate", str(EXAMPLES / "autoscaling/scenario.yaml"), "--out", "{dir}/out"),
        "--until",
        "1s",
    ),
    (
        (
            "fit",
            str(EXAMPLES / "snapshot/workloads/tp4-fits.yaml"),
            "--snapshot",
            "{dir}/snap.yaml",
            "--no-remedies",
        ),
        "--message-mib",
        "256",
    ),
    (
        (
            "fit",
            str(EXAMPLES / "snapshot/workloads/tp4-fits.yaml"),
            "--snapshot",
            "{dir}/snap.yaml",
            "--no-remedies",
        ),
        "--capacity-limit",
        "4",
    ),
)


def _option_cases(values: tuple[str, ...] = HOSTILE) -> Iterator[Case]:
    for base, option, valid in OPTIONS:
        command = " ".join(a for a in base[:2] if "/" not in a)
        target = Target(
            f"{command} {option}",
            base,
            Path("-"),
            "option",
            snapshot="{dir}/snap.yaml" in base,
            extra_codes=frozenset({1}),
            valid_argv=(*base, option, valid),
        )
        for value in values:
            argv = (*base, option, value)
            yield Case(target, Mutant(repr(value), False, lambda: b""), argv, option)


# ----- the corpus -----
_SCRATCH: list[Path] = []


def _scratch() -> Path:
    if not _SCRATCH:
        path = Path(tempfile.mkdtemp(prefix="gpuplane-mutations-"))
        atexit.register(shutil.rmtree, path, True)
        _SCRATCH.append(path)
    return _SCRATCH[0]


def snapshot_file() -> Path:
    path = _scratch() / "snap.yaml"
    if not path.exists():
        ans = answer(
            [
                "snapshot",
                "save",
                "--from",
                str(EXAMPLES / "snapshot/mixed-cluster.yaml"),
                "--out",
                str(path),
            ]
        )
        assert ans.code == 0, ans.err
    return path


def _scaled(count: int, scale: float) -> int:
    return max(1, round(count * scale)) if count else 0


def mutants(target: Target, scale: float = 1.0) -> list[Mutant]:
    """The target's mutants; ``scale`` shrinks the number of field and line mutants drawn."""
    seed = snapshot_file() if str(target.seed) == "{snapshot}" else target.seed
    data = seed.read_bytes()
    found: list[Mutant] = []
    if target.fields:
        found += structural(
            target.name, data, target.fmt, _scaled(target.fields, scale), target.lenient
        )
    if target.lines:
        sep = "," if target.fmt == "csv" else ""
        found += line_mutants(target.name, data, _scaled(target.lines, scale), sep)
    if target.whole:
        found += textual(target.name, data, target.fmt)
    return found


def cases(scale: float = 1.0) -> list[Case]:
    """The whole corpus, in a stable order (``scale``: the share of field and line mutants)."""
    found = [Case(t, m) for t in _targets() for m in mutants(t, scale)]
    # Below full scale, the first five values (click itself refuses "abc" and "" for numbers).
    found += list(_option_cases(HOSTILE if scale >= 1 else HOSTILE[:5]))
    return found


def valid_case(target: Target) -> Case:
    """The target's own valid input, unmutated: the baseline of the benchmark."""
    if target.fmt == "option":
        return Case(target, Mutant("valid", False, lambda: b""), target.valid_argv, "-")
    seed = snapshot_file() if str(target.seed) == "{snapshot}" else target.seed
    data = seed.read_bytes()
    return Case(target, Mutant("valid", False, lambda: data))


def judge(case: Case, work: Path) -> tuple[Answer, list[str]]:
    """Run the case in ``work``; its answer and what is wrong with it (empty: a clean answer).

    A mutant listed in ``pending`` may be accepted (exit 0); it must still end cleanly.
    """
    ans, source = run_case(case, work)
    found = problems(
        ans,
        source=source,
        must_fail=case.mutant.must_fail and not tolerated(case.id),
        extra_codes=case.target.extra_codes,
        folder=str(work) if case.target.tree else None,
    )
    return ans, found


def run_case(case: Case, work: Path) -> tuple[Answer, str]:
    """Set up ``work`` for the case, run it, and return the answer and what it must name."""
    target = case.target
    if target.tree:
        shutil.copytree(EXAMPLES, work / "examples")
    if target.snapshot:
        shutil.copy(snapshot_file(), work / "snap.yaml")
    data = case.mutant.build()
    stdin = None
    if target.fmt == "option":
        source = case.source_override or ""
    elif target.rel == "-":
        stdin, source = data, "<stdin>"
    else:
        path = work / target.rel
        path.write_bytes(data)
        source = str(path)
    argv = [a.replace("{dir}", str(work)) for a in (case.argv_override or target.argv)]
    with mock.patch("gpuplane.cli.simulate.write_html_report"):
        return answer(argv, stdin), source
