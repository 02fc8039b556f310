from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from gpuplane.operator.settings import (
    COMPONENT_NAMES,
    BackoffSettings,
    ComponentTiming,
    LognormalDuration,
    OperatorSettings,
    UniformDuration,
)


def test_defaults_are_realistic() -> None:
    settings = OperatorSettings()
    rng = np.random.default_rng(0)
    driver = [settings.sample_duration_s("driver", rng) for _ in range(200)]
    assert 120 < float(np.median(driver)) < 420  # compiling the kernel module takes minutes
    assert settings.upgrade_requeue == 120
    assert settings.backoff.delay_s(1) == 10 and settings.backoff.delay_s(100) == 300
    for name in COMPONENT_NAMES:
        assert settings.timing(name).failure_probability == 0


def test_durations_accept_duration_strings_and_bare_values() -> None:
    settings = OperatorSettings.model_validate(
        {
            "driver": {"duration": "3m", "failure_probability": 0.1},
            "toolkit": {"duration": {"dist": "uniform", "low": "10s", "high": "1m"}},
            "gfd": {"duration": {"dist": "lognormal", "median": 20, "sigma": 0.5}},
            "backoff": {"initial": "5s", "cap": "2m"},
            "upgrade_requeue": "1m",
        }
    )
    rng = np.random.default_rng(0)
    assert settings.sample_duration_s("driver", rng) == 180
    assert 10 <= settings.sample_duration_s("toolkit", rng) <= 60
    assert isinstance(settings.gfd.duration, LognormalDuration)
    assert settings.backoff.delay_s(10) == 120
    assert settings.upgrade_requeue == 60


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"driver": {"duration": "soon"}}, "not a duration"),
        ({"driver": {"duration": {"dist": "uniform", "low": 60, "high": 10}}}, "must be >= low"),
        ({"driver": {"duration": 60, "failure_probability": 1.0}}, "less than 1"),
        ({"driver": {"duration": {"dist": "gamma"}}}, "dist"),
        ({"drivers": {}}, "Extra inputs"),
    ],
)
def test_mistakes_are_rejected_with_a_reason(data: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        OperatorSettings.model_validate(data)


def test_unknown_component_lists_the_valid_ones() -> None:
    with pytest.raises(KeyError, match="device_plugin"):
        OperatorSettings().timing("plugin")


def test_sampling_is_deterministic_for_a_seed() -> None:
    timing = ComponentTiming(duration=UniformDuration(low=1, high=100), failure_probability=0.5)
    a = [
        (timing.sample_s(r), timing.fails(r)) for r in [np.random.default_rng(9)] for _ in range(5)
    ]
    b = [
        (timing.sample_s(r), timing.fails(r)) for r in [np.random.default_rng(9)] for _ in range(5)
    ]
    assert a == b


def test_backoff_growth_and_cap() -> None:
    backoff = BackoffSettings(initial=1, factor=3, cap=50)
    assert [backoff.delay_s(n) for n in range(0, 6)] == [1, 1, 3, 9, 27, 50]
