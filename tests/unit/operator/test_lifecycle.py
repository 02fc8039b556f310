from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from gpuplane.operator.cluster_policy import (
    ClusterPolicy,
    ComponentSpec,
    DevicePluginSpec,
    DriverSpec,
)
from gpuplane.operator.lifecycle import (
    VALID_TRANSITIONS,
    GpuNodeState,
    IllegalTransitionError,
    LifecycleStep,
    lose_node,
    next_step,
    recover_node,
    restart_driver,
    transition,
)
from gpuplane.operator.settings import ComponentTiming, FixedDuration, OperatorSettings

S = GpuNodeState


def make_policy(**enabled: bool) -> ClusterPolicy:
    """A policy with the named components switched on/off (driver, toolkit, device_plugin, ...)."""
    return ClusterPolicy(
        driver=DriverSpec(enabled=enabled.get("driver", True)),
        toolkit=ComponentSpec(enabled=enabled.get("toolkit", True)),
        device_plugin=DevicePluginSpec(enabled=enabled.get("device_plugin", True)),
        dcgm_exporter=ComponentSpec(enabled=enabled.get("dcgm_exporter", True)),
        gfd=ComponentSpec(enabled=enabled.get("gfd", True)),
    )


def run_to_rest(
    policy: ClusterPolicy, settings: OperatorSettings, seed: int = 0, start: S = S.JOINING
) -> list[tuple[S, LifecycleStep]]:
    """Follow next_step until it returns None, checking each move against the table."""
    rng = np.random.default_rng(seed)
    state, failures = start, 0
    steps: list[tuple[S, LifecycleStep]] = []
    for _ in range(200):
        step = next_step(state, policy, settings, rng, failures=failures)
        if step is None:
            return steps
        steps.append((state, step))
        failures = failures + 1 if step.failed else (failures if step.reason == "Pulled" else 0)
        state = transition(state, step.next_state)
    raise AssertionError("lifecycle did not come to rest")


def test_every_move_outside_the_table_is_refused() -> None:
    for a, b in product(S, S):
        if b in VALID_TRANSITIONS[a]:
            assert transition(a, b) is b
        else:
            with pytest.raises(IllegalTransitionError, match=f"{a} -> {b}"):
                transition(a, b)


def test_table_covers_every_state_and_ready_is_reachable_from_all() -> None:
    assert set(VALID_TRANSITIONS) == set(S)
    reach = {S.READY}
    changed = True
    while changed:
        before = len(reach)
        reach |= {a for a, targets in VALID_TRANSITIONS.items() if targets & reach}
        changed = len(reach) != before
    assert reach == set(S)


def test_full_order_and_what_becomes_true_when() -> None:
    steps = run_to_rest(make_policy(), OperatorSettings())
    states = [s.next_state for _, s in steps]
    assert states == [
        S.DRIVER_INSTALLING,
        S.TOOLKIT_INSTALLING,
        S.VALIDATING,
        S.DEVICE_PLUGIN_STARTING,
        S.DCGM_STARTING,
        S.GFD_LABELING,
        S.READY,
    ]
    by_component = {s.component: s for _, s in steps if s.component}
    assert by_component["device_plugin"].advertise_gpus is True
    assert by_component["device_plugin"].gpu_schedulable is True
    assert by_component["dcgm_exporter"].export_metrics is True
    assert by_component["gfd"].apply_gfd_labels is True
    # Nothing before the device plugin lets GPU pods in.
    before = [
        s for _, s in steps[: states.index(S.DCGM_STARTING)] if s.component != "device_plugin"
    ]
    assert all(s.gpu_schedulable is None and s.advertise_gpus is None for s in before)
    assert all(s.delay_s > 0 for _, s in steps)


def test_preinstalled_driver_and_toolkit_are_skipped() -> None:
    steps = run_to_rest(make_policy(driver=False, toolkit=False), OperatorSettings())
    assert [s.next_state for _, s in steps][:2] == [S.VALIDATING, S.DEVICE_PLUGIN_STARTING]
    steps = run_to_rest(make_policy(driver=False), OperatorSettings())
    assert steps[0][1].next_state == S.TOOLKIT_INSTALLING


def test_without_device_plugin_gpus_are_never_advertised() -> None:
    steps = run_to_rest(make_policy(device_plugin=False, dcgm_exporter=False), OperatorSettings())
    assert [s.next_state for _, s in steps][-2:] == [S.GFD_LABELING, S.READY]
    assert not any(s.advertise_gpus for _, s in steps)
    validator = next(s for _, s in steps if s.component == "validator")
    assert validator.gpu_schedulable is True  # GPUs usable by other means (DRA driver)


def test_only_the_validator_left() -> None:
    policy = make_policy(
        driver=False, toolkit=False, device_plugin=False, dcgm_exporter=False, gfd=False
    )
    steps = run_to_rest(policy, OperatorSettings())
    assert [s.next_state for _, s in steps] == [S.VALIDATING, S.READY]


def failing(component: str, probability: float = 0.999) -> OperatorSettings:
    timing = ComponentTiming(duration=FixedDuration(seconds=60), failure_probability=probability)
    return OperatorSettings(**{component: timing})


def test_failure_goes_to_the_failed_state_and_retries_with_growing_back_off() -> None:
    settings = failing("toolkit")
    rng = np.random.default_rng(1)
    step = next_step(S.TOOLKIT_INSTALLING, make_policy(), settings, rng)
    assert step is not None and step.next_state == S.TOOLKIT_FAILED and step.failed
    assert step.reason == "BackOff" and step.event_type == "Warning"
    assert "nvidia-container-toolkit-ctr" in step.message
    delays = []
    for failures in (1, 2, 3, 4, 5, 6, 7, 20):
        retry = next_step(S.TOOLKIT_FAILED, make_policy(), settings, rng, failures=failures)
        assert retry is not None and retry.next_state == S.TOOLKIT_INSTALLING
        delays.append(retry.delay_s)
    assert delays == [10, 20, 40, 80, 160, 300, 300, 300]  # kubelet: 10 s doubling, 5 min cap


def test_a_flaky_component_eventually_gets_through() -> None:
    runs = [run_to_rest(make_policy(), failing("driver", 0.5), seed=seed) for seed in range(20)]
    assert all(steps[-1][1].next_state == S.READY for steps in runs)
    assert any(s.next_state == S.DRIVER_FAILED for steps in runs for _, s in steps)


def test_precompiled_driver_uses_its_own_timing() -> None:
    settings = OperatorSettings(
        driver=ComponentTiming(duration=FixedDuration(seconds=999)),
        driver_precompiled=ComponentTiming(duration=FixedDuration(seconds=5)),
    )
    policy = ClusterPolicy(driver=DriverSpec(use_precompiled=True))
    step = next_step(S.DRIVER_INSTALLING, policy, settings, np.random.default_rng(0))
    assert step is not None and step.delay_s == 5


def test_driver_upgrade_withdraws_gpus_and_comes_back_through_validation() -> None:
    withdraw = restart_driver(S.READY)
    assert withdraw.next_state == S.DRIVER_UPGRADING
    assert withdraw.advertise_gpus is False and withdraw.gpu_schedulable is False
    steps = run_to_rest(make_policy(), OperatorSettings(), start=S.DRIVER_UPGRADING)
    assert [s.next_state for _, s in steps][:2] == [S.VALIDATING, S.DEVICE_PLUGIN_STARTING]
    with pytest.raises(IllegalTransitionError):
        restart_driver(S.JOINING)  # no driver pod yet


def test_node_loss_and_recovery_restart_the_lifecycle() -> None:
    lost = lose_node(S.READY)
    assert lost.next_state == S.NODE_LOST and lost.advertise_gpus is False
    assert (
        next_step(S.NODE_LOST, make_policy(), OperatorSettings(), np.random.default_rng()) is None
    )
    assert recover_node(S.NODE_LOST).next_state == S.JOINING
    with pytest.raises(IllegalTransitionError):
        lose_node(S.NODE_LOST)
    with pytest.raises(IllegalTransitionError):
        recover_node(S.READY)


@pytest.mark.parametrize("flags", list(product([True, False], repeat=5)))
def test_every_policy_reaches_ready_along_legal_moves(flags: tuple[bool, ...]) -> None:
    names = ("driver", "toolkit", "device_plugin", "dcgm_exporter", "gfd")
    policy = make_policy(**dict(zip(names, flags, strict=True)))
    steps = run_to_rest(policy, failing("validator", 0.3), seed=sum(flags))
    assert steps[-1][1].next_state == S.READY


def test_same_seed_same_steps() -> None:
    settings = failing("driver", 0.4)
    assert run_to_rest(make_policy(), settings, seed=3) == run_to_rest(
        make_policy(), settings, seed=3
    )
