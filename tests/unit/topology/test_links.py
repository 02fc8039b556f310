from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError
from gpuplane.topology.links import NVML_LEVEL_TO_CLASS, Link, LinkClass, nvlink, parse_link


@pytest.mark.parametrize("tok", ["X", "NV1", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"])
def test_round_trip(tok: str) -> None:
    assert parse_link(tok).label == tok


def test_soc_is_the_old_name_of_sys() -> None:
    assert parse_link("SOC") == Link(LinkClass.SYS)


@pytest.mark.parametrize("tok", ["NV", "NV0", "nv18", "PXQ", "", "SYSSYS", "X X"])
def test_invalid_tokens(tok: str) -> None:
    with pytest.raises(InputError, match="expected"):
        parse_link(tok)


def test_rank_orders_closeness() -> None:
    order = ["X", "NV2", "PIX", "PXB", "PHB", "NODE", "SYS"]
    ranks = [parse_link(t).rank for t in order]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_nv_needs_a_count() -> None:
    with pytest.raises(ValueError):
        Link(LinkClass.NV)
    with pytest.raises(ValueError):
        Link(LinkClass.PIX, 2)
    assert nvlink(6).is_nvlink


def test_nvml_levels_follow_the_legend() -> None:
    assert [NVML_LEVEL_TO_CLASS[k].value for k in (10, 20, 30, 40, 50)] == [
        "PIX",
        "PXB",
        "PHB",
        "NODE",
        "SYS",
    ]
