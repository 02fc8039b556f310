"""The Topology Manager merge visits every combination of hints; inputs beyond a stated bound are
refused with a message instead of running for hours."""

from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import TopologyHint
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo
from gpuplane.kubelet.topology_manager.policy import MAX_COMBINATIONS, PolicyName, merge_hints


def test_too_many_combinations_are_refused() -> None:
    numa = NumaInfo(tuple(range(8)), None)
    hints = [TopologyHint(BitMask.of([i]), True) for i in range(8)]
    providers = [{f"r{k}": hints} for k in range(12)]
    assert MAX_COMBINATIONS < 8**12
    with pytest.raises(InputError, match="68,719,476,736"):
        merge_hints(PolicyName.BEST_EFFORT, numa, providers)
    assert merge_hints(PolicyName.BEST_EFFORT, numa, providers[:3]).admit  # 512: merged
