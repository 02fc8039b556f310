"""The SLO scaler's settings: documented defaults, durations, and located mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gpuplane.autoscaler.slo.capacity import SloTargets
from gpuplane.autoscaler.slo.settings import (
    SloScalerSettings,
    settings_from_dict,
    settings_from_yaml,
)
from gpuplane.core.errors import InputError


def test_defaults() -> None:
    s = SloScalerSettings()
    assert s.targets() == SloTargets(2.0, 0.2)
    # The scale-down window follows the pool's horizon (cold start + sync period) unless set.
    assert s.scale_down_stabilization_s is None
    assert s.stabilization_s(180.0) == 195.0
    assert SloScalerSettings(scale_down_stabilization_s="5m").stabilization_s(60.0) == 300.0
    assert (s.forecast_damping, s.forecast_cap_at_peak, s.correction_smoothing) == (
        0.95,
        True,
        0.25,
    )
    assert s.idle_window_s == 300.0
    assert s.kv_usage_target == 0.8
    assert s.sync_period_s == 15.0
    assert s.z() == pytest.approx(1.2816, abs=1e-4)
    assert SloScalerSettings(forecast_quantile=0.5).z() == 0.0
    assert all(f.description for f in SloScalerSettings.model_fields.values())


def test_durations_as_users_write_them() -> None:
    s = settings_from_dict({"ttft_p90_s": "500ms", "idle_window_s": "10m", "backlog_drain_s": 45})
    assert (s.ttft_p90_s, s.idle_window_s, s.backlog_drain_s) == (0.5, 600.0, 45.0)
    assert settings_from_dict(None) == SloScalerSettings()


def test_bad_duration_names_the_field() -> None:
    with pytest.raises(InputError) as err:
        settings_from_dict({"idle_window_s": "soon"}, source="scaler.yaml")
    assert err.value.location.field == "idle_window_s"
    assert err.value.location.source == "scaler.yaml"
    assert "duration like 90s" in str(err.value)


def test_unknown_key_suggests_the_right_one() -> None:
    with pytest.raises(InputError) as err:
        settings_from_dict({"idle_window": "5m"})
    assert "unknown key 'idle_window'" in err.value.problem
    assert err.value.expected == "idle_window_s"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("headroom", -0.1),
        ("hysteresis", 1.0),
        ("forecast_quantile", 1.0),
        ("forecast_alpha", 0.0),
        ("kv_usage_target", 1.5),
        ("max_scale_down_fraction", 0.0),
        ("max_scale_up_replicas", 0),
        ("correction_max", 0.9),
        ("correction_smoothing", 0.0),
        ("forecast_damping", 0.5),
        ("scale_down_stabilization_s", "-1"),
        ("ttft_p90_s", 0),
    ],
)
def test_out_of_range_values_are_located(field: str, value: object) -> None:
    with pytest.raises(InputError) as err:
        settings_from_dict({field: value})
    assert err.value.location.field == field


def test_yaml_errors_carry_the_line() -> None:
    text = "ttft_p90_s: 1s\nitl_p99_s: 50ms\nheadroom: 3\n"
    with pytest.raises(InputError) as err:
        settings_from_yaml(text, "slo.yaml")
    assert (err.value.location.source, err.value.location.line) == ("slo.yaml", 3)
    assert err.value.location.field == "headroom"
    ok = settings_from_yaml("ttft_p90_s: 1s\nitl_p99_s: 50ms\n", "slo.yaml")
    assert ok.targets() == SloTargets(1.0, 0.05)
    with pytest.raises(InputError, match="empty"):
        settings_from_yaml("", "slo.yaml")


def test_settings_are_frozen() -> None:
    # Any: the assignment the frozen model refuses is one mypy refuses too.
    s: Any = SloScalerSettings()
    with pytest.raises(ValidationError):
        s.headroom = 0.5
