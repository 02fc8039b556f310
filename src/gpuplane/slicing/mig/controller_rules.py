"""The MIG controller's per-node safety rules (``decide`` applies them to every change it
considers, mixed and single strategy alike): a config that failed is not set again, and a
change that disrupts running GPU pods needs ``allow_evict`` and room in every
PodDisruptionBudget covering them."""

from __future__ import annotations

from gpuplane.slicing.mig.controller_types import (
    FAILED_STATE,
    ControlNode,
    ControlPod,
    ControlSettings,
    ControlSnapshot,
    SkippedAction,
    SkipReason,
)


def previously_failed(node: ControlNode, config: str) -> SkippedAction | None:
    if node.state != FAILED_STATE or node.config != config:
        return None
    return SkippedAction(
        node.name,
        SkipReason.PREVIOUSLY_FAILED,
        f"mig.config.state is failed: the MIG manager could not apply {config}, the config "
        "the plan would set again; not relabelled (fix the node, or relabel it by hand)",
    )


def blocker(
    node: ControlNode, evicts: list[ControlPod], snap: ControlSnapshot, settings: ControlSettings
) -> SkippedAction | None:
    if not evicts:
        return None
    keys = tuple(p.key for p in evicts)
    if not settings.allow_evict:
        return SkippedAction(
            node.name,
            SkipReason.WOULD_EVICT,
            f"reconfiguring {node.name} would disrupt {len(keys)} running GPU pod(s) "
            f"({', '.join(keys)}); pass --allow-evict to allow it",
            keys,
        )
    for budget in snap.budgets:
        covered = [p.key for p in evicts if budget.covers(p)]
        if len(covered) > budget.disruptions_allowed:
            return SkippedAction(
                node.name,
                SkipReason.PDB,
                f"PodDisruptionBudget {budget.key} allows {budget.disruptions_allowed} "
                f"disruption(s); reconfiguring {node.name} would disrupt {len(covered)} "
                f"({', '.join(covered)})",
                keys,
            )
    return None
