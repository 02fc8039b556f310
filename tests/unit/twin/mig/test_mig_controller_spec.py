"""The scenario's MIG controller settings: the live flags, validated."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gpuplane.twin.scenario.schema import Scenario


def _scenario(*migs: dict[str, Any]) -> dict[str, Any]:
    pools = [
        {"name": f"mig{i}", "preset": "dgx-a100", "count": 1, "mig": m} for i, m in enumerate(migs)
    ]
    return {"name": "s", "node_pools": pools}


def test_the_controller_flags_are_read() -> None:
    mig = {"dynamic": True, "max_unavailable": 2, "allow_evict": True, "strategy": "single"}
    got = Scenario.model_validate(_scenario(mig)).node_pools[0].mig
    assert got is not None and (got.max_unavailable, got.allow_evict) == (2, True)


def test_controller_flags_need_dynamic() -> None:
    with pytest.raises(ValidationError, match="needs dynamic: true"):
        Scenario.model_validate(_scenario({"max_unavailable": 2}))


def test_max_unavailable_is_at_least_one() -> None:
    with pytest.raises(ValidationError, match="max_unavailable"):
        Scenario.model_validate(_scenario({"dynamic": True, "max_unavailable": 0}))


def test_dynamic_pools_share_one_controller() -> None:
    a = {"dynamic": True, "allow_evict": True}
    b = {"dynamic": True}
    with pytest.raises(ValidationError, match="share one MIG controller"):
        Scenario.model_validate(_scenario(a, b))
