from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.api.strategies import MigStrategy
from gpuplane.operator.cluster_policy import (
    ClusterPolicy,
    DriverSpec,
    DriverUpgradePolicy,
    percent_or_int,
)


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        (3, 10, 3),
        ("25%", 10, 3),
        ("25%", 4, 1),
        ("25%", 1, 1),
        ("0%", 9, 0),
        ("100%", 7, 7),
        ("1%", 150, 2),
    ],
)
def test_percent_rounds_up_like_intstr(value: int | str, total: int, expected: int) -> None:
    assert percent_or_int(value, total) == expected


@given(st.integers(0, 1000), st.integers(0, 100_000))
def test_percent_matches_go_float_ceil(percent: int, total: int) -> None:
    assert percent_or_int(f"{percent}%", total) == math.ceil(percent * total / 100)


@pytest.mark.parametrize("value", ["5", "25 %", "-1%", "%", True])
def test_other_strings_are_errors(value: int | str) -> None:
    with pytest.raises(ValueError):
        percent_or_int(value, 10)


def test_defaults_are_the_operators() -> None:
    policy = ClusterPolicy()
    assert policy.driver.enabled and policy.toolkit.enabled and policy.device_plugin.enabled
    assert policy.dcgm_exporter.enabled and policy.gfd.enabled and policy.mig_manager.enabled
    assert policy.mig_strategy is MigStrategy.NONE
    assert policy.driver.upgrade_policy is None and not policy.auto_upgrade
    upgrade = DriverUpgradePolicy()
    assert (upgrade.auto_upgrade, upgrade.max_parallel_upgrades, upgrade.max_unavailable) == (
        False,
        1,
        "25%",
    )
    on = ClusterPolicy(driver=DriverSpec(upgrade_policy=DriverUpgradePolicy(auto_upgrade=True)))
    assert on.auto_upgrade
    preinstalled = ClusterPolicy(
        driver=DriverSpec(enabled=False, upgrade_policy=DriverUpgradePolicy(auto_upgrade=True))
    )
    assert not preinstalled.auto_upgrade  # no driver pods to upgrade
