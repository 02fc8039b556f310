"""Taints the twin's node lifecycle puts on nodes (node lifecycle controller,
TaintNodesByCondition).

The matching rules (tolerations, node selectors, node affinity) live with the scheduler plugins
that use them: ``gpuplane.scheduler.framework.matching``.
"""

from __future__ import annotations

from gpuplane.api.taints import Taint

NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
UNREACHABLE_TAINT = Taint("node.kubernetes.io/unreachable", "", "NoExecute")
