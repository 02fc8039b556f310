"""``gpuplane fit --html FILE``: the answer as one self-contained page.

The summary, every pod's node and why the others were rejected (kube-scheduler's FitError, the
node reason groups with the GPU-level account, preemption victims, the kubelet's verdict), the
chosen node's topology with the pod's GPU set highlighted, the remedies (MIG repartitions drawn
over the GPUs' memory slices before and after), capacity and notes. No script, no network, no
date: the same answer gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.fit.model import FitCluster
from gpuplane.fit.result import FitAnswer, MigGpuChange, Outcome, Remedy
from gpuplane.report.html.fit_pod_view import gpu_ids, pod_html, ring_text, verdict_text
from gpuplane.report.html.mig_svg import mig_svg
from gpuplane.report.html.page import esc, figure, page, table

# Pods shown in full; the rest are in the table (a 500-replica Deployment stays readable).
MAX_POD_DETAILS = 32


def _summary(answer: FitAnswer) -> str:
    placed = answer.count(Outcome.FITS)
    rows: list[tuple[object, ...]] = [
        ("pods", len(answer.pods)),
        ("placed as the cluster is", placed),
        ("not placed", len(answer.pods) - placed),
        *((f"outcome {o}", answer.count(o)) for o in Outcome if answer.count(o)),
        ("all fit", "yes" if answer.all_fit else "no"),
        ("nodes", answer.nodes),
        ("scheduler profile", answer.profile),
        ("Kubernetes version", answer.kubernetes_version),
    ]
    body = table(("", "value"), rows)
    if answer.gangs:
        gangs = [
            (g.group, g.min_member, g.placed, "yes" if g.fits else "no", g.note or "-")
            for g in answer.gangs
        ]
        body += "<h3>Gangs</h3>" + table(("PodGroup", "minMember", "placed", "fits", "note"), gangs)
    if answer.notes:
        body += "<h3>Notes</h3><ul>" + "".join(f"<li>{esc(n)}</li>" for n in answer.notes)
        body += "</ul>"
    return body


def _pods_table(answer: FitAnswer) -> str:
    rows = []
    for p in answer.pods:
        g = p.gpus
        ms = "-"
        numa = "-"
        if g is not None and g.kubelet is not None:
            numa = ",".join(map(str, g.kubelet.numa_nodes)) or "-"
            if len(g.kubelet.gpus) > 1:
                ms = f"{g.kubelet.allreduce_ms:.2f}"
        ids = gpu_ids(g)
        if ids == "-" and (p.dra_devices or p.mig):
            ids = "DRA " + ", ".join(p.dra_devices) if p.dra_devices else f"MIG {p.mig}"
        rows.append(
            (
                p.pod,
                str(p.outcome),
                p.node or "-",
                ids,
                ring_text(g),
                ms,
                numa,
                verdict_text(p.kubelet),
            )
        )
    head = ("pod", "outcome", "node", "GPUs (kubelet)", "ring GB/s", "all-reduce ms", "NUMA")
    return table((*head, "kubelet"), rows)


def _pod_details(answer: FitAnswer, cluster: FitCluster) -> str:
    """Each pod in full, except repeats: unschedulable replicas with the same FitError."""
    nodes = {n.name: n for n in cluster.nodes}
    seen: dict[tuple[object, ...], str] = {}
    parts: list[str] = []
    shown = 0
    for i, p in enumerate(answer.pods):
        key = (p.workload, p.outcome, p.fit_error)
        if p.outcome is Outcome.UNSCHEDULABLE and key in seen:
            parts.append(f"<p>{esc(p.pod)}: as {esc(seen[key])}.</p>")
            continue
        seen.setdefault(key, p.pod)
        if shown == MAX_POD_DETAILS:
            left = len(answer.pods) - i
            parts.append(f'<p class="missing">{left} more pod(s): see the table above.</p>')
            break
        parts.append(pod_html(p, nodes))
        shown += 1
    return _pods_table(answer) + "".join(parts)


def _mig_changes(changes: Sequence[MigGpuChange]) -> str:
    parts = []
    for node in sorted({c.node for c in changes}):
        mine = [c for c in changes if c.node == node]
        rows: list[tuple[str, str]] = []
        for c in mine:
            rows += [(f"GPU {c.gpu} now", c.before.describe())]
            rows += [(f"GPU {c.gpu} after", c.after.describe())]
        caption = (
            f"{node}: MIG layouts ({mine[0].model.name}) before and after, over the memory "
            "slices: "
            + "; ".join(f"GPU {c.gpu}: {c.before.describe()} -> {c.after.describe()}" for c in mine)
        )
        parts.append(figure(mig_svg(mine[0].model, rows), caption))
    return "".join(parts)


def _remedy(r: Remedy) -> str:
    lead = f"would fit {r.fits_after} pod(s) after" if r.fits_after else "does not help:"
    body = f"<h3>{esc(r.kind)}</h3><p>{esc(lead)} {esc(r.kind)}: {esc(r.summary)}</p>"
    if r.moves:
        moves = [(m.pod, m.from_node, m.to_node) for m in r.moves]
        body += table(("move pod", "from", "to"), moves)
    if r.mig_changes:
        body += _mig_changes(r.mig_changes)
    if r.disrupted and not r.moves:
        body += f"<p>Disrupts: {esc(', '.join(r.disrupted))}.</p>"
    return body


def _remedies(answer: FitAnswer) -> str:
    if not answer.remedies:
        return "<p>None needed or none found.</p>"
    return "".join(_remedy(r) for r in answer.remedies)


def _capacity(answer: FitAnswer) -> str:
    if not answer.capacity:
        return "<p>Not computed.</p>"
    rows = [(c.template, f"{c.max_replicas}{'+' if c.capped else ''}") for c in answer.capacity]
    return "<p>More pods like each template that fit now (nothing evicted).</p>" + table(
        ("template", "more pods"), rows
    )


def fit_page(answer: FitAnswer, cluster: FitCluster, title: str) -> str:
    """The whole page; ``cluster`` gives the chosen nodes' hardware for the topology drawings."""
    return page(
        title,
        (
            ("summary", "Summary", _summary(answer)),
            ("pods", "Pods", _pod_details(answer, cluster)),
            ("remedies", "What would make it fit", _remedies(answer)),
            ("capacity", "Capacity", _capacity(answer)),
        ),
    )
