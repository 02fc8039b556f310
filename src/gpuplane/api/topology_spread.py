"""Pod topology spread constraints as values (core/v1 ``TopologySpreadConstraint``).

A constraint asks that pods matching ``label_selector`` (in the pod's namespace) be spread over
the values of the node label ``topology_key`` with at most ``max_skew`` between the fullest and
the emptiest domain: a hard rule with ``DoNotSchedule``, a preference with ``ScheduleAnyway``.
Fields left out keep None (the API's nil) so that the scheduler applies its own defaults:
``min_domains`` 1, ``node_affinity_policy`` Honor, ``node_taints_policy`` Ignore. The nil
``label_selector`` is None and matches no pod. ``match_label_keys`` name pod labels whose values
the scheduler adds to the selector (MatchLabelKeysInPodTopologySpread, beta and on in v1.31).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuplane.api.selectors import LabelSelector

UnsatisfiableAction = Literal["DoNotSchedule", "ScheduleAnyway"]
NodeInclusionPolicy = Literal["Honor", "Ignore"]

DO_NOT_SCHEDULE: UnsatisfiableAction = "DoNotSchedule"
SCHEDULE_ANYWAY: UnsatisfiableAction = "ScheduleAnyway"
UNSATISFIABLE_ACTIONS: tuple[UnsatisfiableAction, ...] = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
HONOR: NodeInclusionPolicy = "Honor"
IGNORE: NodeInclusionPolicy = "Ignore"
NODE_INCLUSION_POLICIES: tuple[NodeInclusionPolicy, ...] = (HONOR, IGNORE)

# Well-known node labels (core/v1 LabelHostname, LabelTopologyZone).
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: UnsatisfiableAction
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: NodeInclusionPolicy | None = None
    node_taints_policy: NodeInclusionPolicy | None = None
    match_label_keys: tuple[str, ...] = ()
