"""The ``fit`` answer as rich tables and paragraphs (``-o table``, the default)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from gpuplane.cli.console import out
from gpuplane.fit.result import FitAnswer, GpuAnswer, Outcome, PodAnswer


def _plain(text: str) -> None:
    out.print(Text(text))


def _gpus(g: GpuAnswer | None) -> tuple[str, str, str, str]:
    """(GPUs, ring GB/s, all-reduce ms, NUMA) of the kubelet's set."""
    if g is None or g.kubelet is None:
        return "-", "-", "-", "-"
    k = g.kubelet
    ids = ",".join(map(str, k.gpus)) + (" (assumed)" if g.uncertain else "")
    ring = f"{k.bottleneck_gbps:.0f}" if len(k.gpus) > 1 else "-"
    if g.bottleneck_range_gbps is not None:
        low, high = g.bottleneck_range_gbps
        if round(low) != round(high):
            ring += f" [{low:.0f}-{high:.0f}]"
    ms = f"{k.allreduce_ms:.2f}" if len(k.gpus) > 1 else "-"
    return ids, ring, ms, ",".join(map(str, k.numa_nodes)) or "-"


def _pods_table(answer: FitAnswer) -> Table:
    table = Table(
        title=f"{len(answer.pods)} pod(s) on {answer.nodes} node(s), profile "
        f"{answer.profile}, Kubernetes {answer.kubernetes_version}"
    )
    for column in (
        "pod",
        "outcome",
        "node",
        "GPUs",
        "ring GB/s",
        "all-reduce ms",
        "NUMA",
        "kubelet",
    ):
        table.add_column(column)
    for p in answer.pods:
        ids, ring, ms, numa = _gpus(p.gpus)
        if ids == "-" and (p.dra_devices or p.mig):
            ids = "DRA " + ", ".join(p.dra_devices) if p.dra_devices else f"MIG {p.mig}"
        verdict = "-"
        if p.kubelet is not None:
            verdict = ("admit" if p.kubelet.admit else p.kubelet.reason) + f" ({p.kubelet.policy})"
        table.add_row(
            Text(p.pod), str(p.outcome), p.node or "-", ids, ring, ms, numa, Text(verdict)
        )
    return table


def _explain(p: PodAnswer) -> None:
    _plain(f"{p.pod} ({p.workload}): {p.outcome}")
    if p.fit_error:
        _plain(f"  kube-scheduler: {p.fit_error}")
    for group in p.node_reasons:
        names = ", ".join(group.nodes)
        _plain(f"  {names}: {'; '.join(group.reasons)}")
        if group.detail:
            _plain(f"    {group.detail}")
    if p.kubelet is not None and not p.kubelet.admit:
        _plain(f"  kubelet on {p.node}: {p.kubelet.reason}: {p.kubelet.message}")
        _plain(f"    {p.kubelet.explanation}")
    if p.preempt_node is not None:
        victims = ", ".join(f"{v.pod} (priority {v.priority}, {v.gpus} GPU)" for v in p.victims)
        _plain(f"  preemption on {p.preempt_node}: evicts {victims}")
    if p.gpus is not None and p.gpus.nvidia is not None and p.gpus.gpuplane is not None:
        ours, theirs = p.gpus.gpuplane, p.gpus.nvidia
        if ours.gpus != theirs.gpus:
            _plain(
                f"  GPUs: gpuplane {list(ours.gpus)} ({ours.bottleneck_gbps:.0f} GB/s) vs "
                f"NVIDIA best-effort {list(theirs.gpus)} ({theirs.bottleneck_gbps:.0f} GB/s)"
            )


def print_answer(answer: FitAnswer) -> None:
    out.print(_pods_table(answer))
    fits = answer.count(Outcome.FITS)
    others = [
        f"{answer.count(o)} {o}" for o in Outcome if o is not Outcome.FITS and answer.count(o)
    ]
    tail = f"; {', '.join(others)}" if others else ""
    _plain(f"{fits}/{len(answer.pods)} fit as the cluster is{tail}")
    seen: set[tuple[object, ...]] = set()
    for p in answer.pods:
        if p.outcome is Outcome.FITS and not (p.gpus and p.gpus.uncertain):
            continue
        key = (p.workload, p.outcome, p.fit_error, p.node if p.kubelet else None)
        if key in seen and p.outcome is Outcome.UNSCHEDULABLE:
            continue
        seen.add(key)
        if p.outcome is not Outcome.FITS:
            _explain(p)
    for g in answer.gangs:
        state = "fits" if g.fits else "does not fit"
        _plain(
            f"gang {g.group}: {g.placed}/{g.min_member} members placed, {state}"
            + (f"; {g.note}" if g.note else "")
        )
    for r in answer.remedies:
        lead = f"would fit after {r.kind}" if r.fits_after else f"{r.kind} does not help"
        _plain(f"{lead}: {r.summary}")
        for m in r.moves:
            _plain(f"  move {m.pod}: {m.from_node} -> {m.to_node}")
        if r.disrupted and not r.moves:
            _plain(f"  disrupts: {', '.join(r.disrupted)}")
    for c in answer.capacity:
        more = "+" if c.capped else ""
        _plain(f"capacity: {c.max_replicas}{more} more pod(s) like {c.template} fit now")
    for n in answer.notes:
        _plain(f"note: {n}")
