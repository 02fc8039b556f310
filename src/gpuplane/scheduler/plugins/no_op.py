"""kube-scheduler default plugins whose inputs the twin does not model, registered as documented
no-ops so that kube's default plugin set (and a KubeSchedulerConfiguration naming them, enabled
or disabled) resolves unchanged.

Each extends no extension point: with nothing to look at, upstream's plugin would pass every node
(Filter), skip (PreFilter/PreScore) or score nothing, so leaving it out of every point gives the
same decisions. The upstream plugin is named in each class's docstring.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import Handle


class _NoOp:
    name: ClassVar[str]
    extension_points: ClassVar[frozenset[str]] = frozenset()
    unsupported: ClassVar[tuple[str, ...]]
    # Why the plugin does nothing here (the registry accepts it at multiPoint for this reason).
    no_op: ClassVar[str]

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass


class SchedulingGates(_NoOp):
    """kube: framework/plugins/schedulinggates (PreEnqueue on spec.schedulingGates)."""

    name = "SchedulingGates"
    no_op = "the twin's pods have no schedulingGates"
    unsupported = (no_op,)


class NodeName(_NoOp):
    """kube: framework/plugins/nodename (Filter on spec.nodeName)."""

    name = "NodeName"
    no_op = "the twin's pending pods never set spec.nodeName (a pod that does is not scheduled)"
    unsupported = (no_op,)


class NodePorts(_NoOp):
    """kube: framework/plugins/nodeports (PreFilter, Filter on hostPort conflicts)."""

    name = "NodePorts"
    no_op = "the twin models no host ports"
    unsupported = (no_op,)


class VolumeRestrictions(_NoOp):
    """kube: framework/plugins/volumerestrictions."""

    name = "VolumeRestrictions"
    no_op = "the twin models no volumes"
    unsupported = (no_op,)


class NodeVolumeLimits(_NoOp):
    """kube: framework/plugins/nodevolumelimits (CSI limits)."""

    name = "NodeVolumeLimits"
    no_op = "the twin models no volumes"
    unsupported = (no_op,)


class VolumeBinding(_NoOp):
    """kube: framework/plugins/volumebinding."""

    name = "VolumeBinding"
    no_op = "the twin models no volumes"
    unsupported = (no_op,)


class VolumeZone(_NoOp):
    """kube: framework/plugins/volumezone."""

    name = "VolumeZone"
    no_op = "the twin models no volumes"
    unsupported = (no_op,)


NO_OP_PLUGINS: tuple[type[_NoOp], ...] = (
    SchedulingGates,
    NodeName,
    NodePorts,
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
)
