from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError, Location
from gpuplane.core.rng import RngStreams
from gpuplane.core.units import pcie_gbps


def test_input_error_renders_location_problem_and_expectation() -> None:
    err = InputError(
        "bad value 'x'",
        expected="an integer",
        location=Location(source="a.yaml", line=3, field="pools[0].count"),
    )
    assert str(err) == "a.yaml:3: pools[0].count: bad value 'x'; expected an integer"
    assert str(InputError("p").located("f.txt")) == "f.txt: p"


def test_rng_streams_are_independent_of_creation_order() -> None:
    a = RngStreams(7)
    x1 = a.stream("arrivals").random(3)
    b = RngStreams(7)
    b.stream("durations").random(10)
    x2 = b.stream("arrivals").random(3)
    assert list(x1) == list(x2)
    assert list(RngStreams(8).stream("arrivals").random(3)) != list(x1)
    with pytest.raises(ValueError):
        RngStreams(-1)


def test_pcie_bandwidth_per_direction() -> None:
    assert pcie_gbps(4, 16) == pytest.approx(31.5, abs=0.1)
    assert pcie_gbps(5, 16) == pytest.approx(63.0, abs=0.1)
    with pytest.raises(ValueError):
        pcie_gbps(9, 16)
    with pytest.raises(ValueError):
        pcie_gbps(4, 3)
