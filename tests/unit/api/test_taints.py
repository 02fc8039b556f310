from __future__ import annotations

from gpuplane.api.taints import Taint, Toleration, first_untolerated, tolerated

B200 = Taint("nvidia.com/gpu", "b200", "NoSchedule")
SPOT = Taint("spot", "true", "PreferNoSchedule")


def test_toleration_rules() -> None:
    assert Toleration(None, "Exists").tolerates(B200)  # empty key + Exists: everything
    assert Toleration("nvidia.com/gpu", "Exists").tolerates(B200)  # any value, any effect
    assert Toleration("nvidia.com/gpu", "Equal", "b200", "NoSchedule").tolerates(B200)
    assert not Toleration("nvidia.com/gpu", "Equal", "h100").tolerates(B200)
    assert not Toleration("nvidia.com/gpu", "Exists", None, "NoExecute").tolerates(B200)
    assert not Toleration(None, "Equal", "b200").tolerates(B200)  # empty key needs Exists


def test_equal_with_no_value_matches_an_empty_taint_value() -> None:
    assert Toleration("maint").tolerates(Taint("maint", "", "NoExecute"))
    assert not Toleration("maint").tolerates(Taint("maint", "x", "NoExecute"))


def test_first_untolerated_looks_only_at_the_given_effects() -> None:
    taints = (SPOT, B200)
    assert first_untolerated(taints, (), frozenset({"NoSchedule"})) == B200
    assert (
        first_untolerated(
            taints, (Toleration("nvidia.com/gpu", "Exists"),), frozenset({"NoSchedule"})
        )
        is None
    )
    assert tolerated(SPOT, (Toleration("spot", "Equal", "true"),))
