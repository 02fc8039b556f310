"""The router registry: one list of names, a factory each, lookup errors that list them."""

from __future__ import annotations

from typing import get_args

import pytest

from gpuplane.core.errors import InputError
from gpuplane.serving.routing.registry import ROUTER_NAMES, RouterName, make_router
from gpuplane.twin.scenario.serving import Service


def test_every_name_makes_a_router_of_that_name() -> None:
    assert get_args(RouterName) == ROUTER_NAMES
    for name in ROUTER_NAMES:
        assert make_router(name).name


def test_an_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(InputError) as err:
        make_router("fastest")
    assert all(name in str(err.value) for name in ROUTER_NAMES)


def test_the_scenario_schema_takes_the_registry_names() -> None:
    field = Service.model_fields["router"]
    assert field.annotation is not None
    assert get_args(field.annotation) == ROUTER_NAMES
