"""One pod of a ``fit`` answer as HTML: where it went and why the other nodes were rejected,
the kubelet's verdict, preemption victims, its GPU sets and the chosen node's topology with the
kubelet's set highlighted."""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.fit.model import FitNode
from gpuplane.fit.result import GpuAnswer, GpuSet, KubeletVerdict, PodAnswer
from gpuplane.report.html.page import esc, figure, table
from gpuplane.report.html.topology_svg import topology_svg


def gpu_ids(g: GpuAnswer | None) -> str:
    """The kubelet's GPU indices, ``(assumed)`` when other pods' holdings are replayed."""
    if g is None or g.kubelet is None:
        return "-"
    return ",".join(map(str, g.kubelet.gpus)) + (" (assumed)" if g.uncertain else "")


def ring_text(g: GpuAnswer | None) -> str:
    """The kubelet's set's ring bottleneck in GB/s, with the range over possible holdings."""
    if g is None or g.kubelet is None or len(g.kubelet.gpus) < 2:
        return "-"
    text = f"{g.kubelet.bottleneck_gbps:.0f}"
    if g.bottleneck_range_gbps is not None:
        low, high = g.bottleneck_range_gbps
        if round(low) != round(high):
            text += f" [{low:.0f}-{high:.0f}]"
    return text


def verdict_text(k: KubeletVerdict | None) -> str:
    if k is None:
        return "-"
    if not k.known:
        return f"not computed ({k.policy}): no hardware model"
    return ("admit" if k.admit else k.reason) + f" ({k.policy})"


def _sets_table(g: GpuAnswer) -> str:
    rows: list[tuple[object, ...]] = []
    named: tuple[tuple[str, GpuSet | None], ...] = (
        ("kubelet (the node's device plugin)", g.kubelet),
        ("gpuplane (widest ring)", g.gpuplane),
        ("NVIDIA best-effort", g.nvidia),
    )
    for who, s in named:
        if s is None:
            rows.append((who, "-", "-", "-", "-", "-"))
            continue
        multi = len(s.gpus) > 1
        rows.append(
            (
                who,
                ",".join(map(str, s.gpus)),
                ",".join(map(str, s.numa_nodes)) or "-",
                " > ".join(map(str, s.ring)) if multi else "-",
                round(s.bottleneck_gbps, 1) if multi else "-",
                round(s.allreduce_ms, 3) if multi else "-",
            )
        )
    head = ("choice", "GPUs", "NUMA", "ring order", "ring GB/s", "all-reduce ms")
    out = table(head, rows)
    if g.gpuplane is not None and g.nvidia is not None and g.gpuplane.gpus != g.nvidia.gpus:
        out += (
            f'<p class="warn">gpuplane and NVIDIA choose differently: gpuplane '
            f"{esc(list(g.gpuplane.gpus))} ({g.gpuplane.bottleneck_gbps:.0f} GB/s) vs NVIDIA "
            f"best-effort {esc(list(g.nvidia.gpus))} ({g.nvidia.bottleneck_gbps:.0f} GB/s).</p>"
        )
    free = ",".join(map(str, g.free_assumed)) or "none"
    extra = f"Free GPUs on the node{' (assumed)' if g.uncertain else ''}: {free}."
    if g.uncertain:
        extra += (
            f" Bound pods there name no GPUs: their holdings are replayed, "
            f"{g.holdings_possible} holding(s) possible."
        )
    if g.bottleneck_range_gbps is not None:
        low, high = g.bottleneck_range_gbps
        span = f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"
        extra += f" Ring bottleneck over every possible holding: {span} GB/s."
    return out + f"<p>{esc(extra)}</p>"


def _topology(p: PodAnswer, node: FitNode) -> str:
    topo = node.hardware.topology
    if topo is None:
        return f'<p class="missing">{esc(node.name)}: no hardware model, no topology.</p>'
    g = p.gpus
    chosen = g.kubelet.gpus if g is not None and g.kubelet is not None else ()
    free = g.free_assumed if g is not None else ()
    assumed = " (assumed)" if g is not None and g.uncertain else ""
    if chosen:
        what = f"the kubelet's GPUs {','.join(map(str, chosen))}{assumed} highlighted"
    else:
        what = "no GPU set admitted"
    caption = (
        f"{node.name} ({topo.name}, {node.hardware.source}): {what}; free GPUs{assumed} "
        "outlined dashed, GPUs held by other pods grey."
    )
    return figure(topology_svg(topo, chosen, free), caption)


def _reasons(p: PodAnswer) -> str:
    if not p.node_reasons:
        return ""
    rows = [
        (
            f"{r.count}: {', '.join(r.nodes)}" + (" ..." if r.count > len(r.nodes) else ""),
            "; ".join(r.reasons),
            r.detail or "-",
        )
        for r in p.node_reasons
    ]
    return "<h4>Nodes rejected</h4>" + table(("nodes", "reasons", "GPU-level account"), rows)


def _kubelet(p: PodAnswer) -> str:
    k = p.kubelet
    if k is None:
        return ""
    where = esc(p.node or "-")
    if k.admit:
        numa = ",".join(map(str, k.numa_affinity or ())) or "any (no alignment asked)"
        return f"<p><b>kubelet on {where}</b> ({esc(k.policy)}): admits, NUMA affinity {numa}.</p>"
    if not k.known:
        return f"<p><b>kubelet on {where}</b>: {esc(verdict_text(k))}.</p>"
    return (
        f'<p class="warn"><b>kubelet on {where}</b> ({esc(k.policy)}) rejects: '
        f"<code>{esc(k.reason)}: {esc(k.message)}</code><br>{esc(k.explanation)}</p>"
    )


def _preemption(p: PodAnswer) -> str:
    if p.preempt_node is None:
        return ""
    rows = [(v.pod, v.priority, v.gpus) for v in p.victims]
    return f"<h4>Preemption on {esc(p.preempt_node)}</h4>" + table(
        ("victim", "priority", "GPUs"), rows
    )


def pod_html(p: PodAnswer, nodes: Mapping[str, FitNode]) -> str:
    """The pod's section: outcome, FitError, node reasons, kubelet, preemption, GPUs, topology."""
    node_name = p.node or p.preempt_node
    head = f"<h3>{esc(p.pod)} ({esc(p.workload)}): {esc(p.outcome)}</h3>"
    lines = []
    if node_name is not None:
        source = f" (hardware: {esc(p.hardware)})" if p.hardware else ""
        lines.append(f"<p>Node: <b>{esc(node_name)}</b>{source}.</p>")
    if p.fit_error:
        lines.append(f'<p class="warn">kube-scheduler: <code>{esc(p.fit_error)}</code></p>')
    if p.mig:
        lines.append(f"<p>MIG: {esc(p.mig)}</p>")
    if p.dra_devices:
        lines.append(f"<p>DRA devices: {esc(', '.join(p.dra_devices))}</p>")
    body = "".join(lines) + _reasons(p) + _kubelet(p) + _preemption(p)
    if p.gpus is not None:
        body += "<h4>GPUs</h4>" + _sets_table(p.gpus)
    node = nodes.get(node_name) if node_name is not None else None
    if node is not None and (p.gpus is not None or node.gpus):
        body += _topology(p, node)
    return head + body
