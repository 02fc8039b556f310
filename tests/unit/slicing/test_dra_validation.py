"""Object validation in the API server's words, quantities and semantic versions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.semver import Version, loose_version, parse_version
from gpuplane.slicing.dra.claims import (
    DeviceClaim,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceRequest,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from gpuplane.slicing.dra.devices import DeviceToleration
from gpuplane.slicing.dra.quantity import binary_quantity, parse_quantity
from gpuplane.slicing.dra.slice_validation import validate_slice
from gpuplane.slicing.dra.validation import (
    validate_claim,
    validate_device_class,
    validate_template,
)
from tests.unit.slicing.test_dra_support import claim, dclass, dev, first, match, req, rslice, sub


def problem(check: Callable[[Any], object], value: object) -> tuple[str, str]:
    with pytest.raises(InputError) as err:
        check(value)
    return err.value.location.field or "", err.value.problem


def test_a_valid_claim_passes() -> None:
    validate_claim(
        claim(
            "ok",
            req("a", 2),
            first("b", sub("x"), sub("y", 2)),
            constraints=[match("gpu.nvidia.com/numa", "a", "b/x")],
        )
    )


@pytest.mark.parametrize(
    ("bad", "field", "text"),
    [
        (
            claim("c", req("a", 0)),
            "spec.devices.requests[0].exactly.count",
            "Invalid value: 0: must be greater than zero",
        ),
        (
            claim("c", req("a", -2)),
            "spec.devices.requests[0].exactly.count",
            "Invalid value: -2: must be greater than zero",
        ),
        (
            claim("c", req("Bad_Name")),
            "spec.devices.requests[0].name",
            'Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of',
        ),
        (claim("c", req("a"), req("a")), "spec.devices.requests[1].name", 'Duplicate value: "a"'),
        (
            claim("c", *[req(f"r{i}") for i in range(33)]),
            "spec.devices.requests",
            "Too many: 33: must have at most 32 items",
        ),
        (
            claim("c", req("a", cls="")),
            "spec.devices.requests[0].exactly.deviceClassName",
            "Required value",
        ),
        (
            claim("c", DeviceRequest("a")),
            "spec.devices.requests[0]",
            "Required value: exactly one of `exactly` or `firstAvailable` is required",
        ),
        (
            claim("c", first("a", *[sub(f"s{i}") for i in range(9)])),
            "spec.devices.requests[0].firstAvailable",
            "Too many: 9: must have at most 8 items",
        ),
        (
            claim("c", req("a", selectors=["device.driver.matches('x')"])),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression",
            "CEL: unsupported function 'matches'",
        ),
        (
            claim("c", req("a"), constraints=[match("gpu.nvidia.com/x", "b")]),
            "spec.devices.constraints[0].requests[0]",
            'Invalid value: "b": must be the name of a request in the claim',
        ),
        (
            claim("c", req("a"), constraints=[match("numa")]),
            "spec.devices.constraints[0].matchAttribute",
            "a fully qualified name must be a domain and a name separated by a slash",
        ),
        (
            claim("c", req("a"), constraints=[DeviceConstraint(("a",))]),
            "spec.devices.constraints[0].matchAttribute",
            "Required value",
        ),
        (
            claim("c", req("a", tolerations=[DeviceToleration("k", "Exists", "v")])),
            "spec.devices.requests[0].exactly.tolerations[0].value",
            "value must be empty when `operator` is 'Exists'",
        ),
    ],
)
def test_claim_errors(bad: object, field: str, text: str) -> None:
    where, what = problem(validate_claim, bad)
    assert where == field and text in what


def test_all_mode_must_not_give_a_count() -> None:
    bad = claim("c", req("a", mode=limits.ALL))
    exact = bad.spec.devices.requests[0].exactly
    assert exact is not None
    counted = replace(
        bad, spec=ResourceClaimSpec(DeviceClaim((DeviceRequest("a", replace(exact, count=2)),)))
    )
    assert problem(validate_claim, counted) == (
        "spec.devices.requests[0].exactly.count",
        "Invalid value: 2: must not be specified when allocationMode is 'All'",
    )
    validate_claim(bad)


def test_templates_and_classes() -> None:
    template = ResourceClaimTemplate("t", spec=claim("x", req("a", 0)).spec)
    assert problem(validate_template, template)[0] == "spec.spec.devices.requests[0].exactly.count"
    validate_device_class(dclass("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"'))
    bad = dclass("gpu", "device.foo")
    assert problem(validate_device_class, bad)[0] == "spec.selectors[0].cel.expression"
    assert (
        problem(validate_device_class, replace(bad, name="Not A Name", spec=DeviceClassSpec()))[0]
        == "metadata.name"
    )


def test_slice_errors() -> None:
    validate_slice(rslice("s", [dev("gpu-0", index=0)]))
    no_node = replace(rslice("s", [dev("d")]), spec=replace(rslice("s").spec, node_name=None))
    assert problem(validate_slice, no_node) == (
        "spec",
        "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required",
    )
    both = rslice("s", [dev("d")], all_nodes=True)
    both = replace(both, spec=replace(both.spec, node_name="n0"))
    assert "but multiple fields are set" in problem(validate_slice, both)[1]
    mixed = rslice("s", [dev("d")], counters={"c": {"x": 1}})
    assert problem(validate_slice, mixed)[1].endswith(
        "only one of `sharedCounters` or `devices` is allowed"
    )
    many = rslice("s", [dev(f"d{i}", consumes={"c": {"x": 1}}) for i in range(65)])
    assert problem(validate_slice, many) == (
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    )
    validate_slice(rslice("s", [dev(f"d{i}") for i in range(128)]))
    not_an_identifier: dict[str, Any] = {"9bad": 1}
    bad_attr = rslice("s", [dev("d", **not_an_identifier)])
    assert problem(validate_slice, bad_attr)[0] == "spec.devices[0].attributes.9bad"
    zero = replace(
        rslice("s"),
        spec=replace(rslice("s").spec, pool=replace(rslice("s").spec.pool, resource_slice_count=0)),
    )
    assert problem(validate_slice, zero)[1] == "Invalid value: 0: must be greater than zero"
    dup = rslice("s", [dev("d"), dev("d")])
    assert problem(validate_slice, dup) == ("spec.devices[1].name", 'Duplicate value: "d"')


def test_quantities_compare_exactly() -> None:
    assert parse_quantity("40Gi") == parse_quantity("42949672960")
    assert parse_quantity("1.5k") > parse_quantity("1499")
    assert parse_quantity("500m").value * 2 == 1
    assert parse_quantity("1e3") == parse_quantity("1k")
    assert str(binary_quantity(80 * 2**30)) == "80Gi" and str(binary_quantity(14)) == "14"
    for bad in ("", "12x", "1.2.3Gi", "1 Gi", "1e1001"):
        with pytest.raises(InputError):
            parse_quantity(bad)
    assert parse_quantity("Gi").value == 0  # no digits reads as 0, as resource.ParseQuantity


def test_semantic_versions() -> None:
    assert parse_version("1.2.3-alpha.1") < parse_version("1.2.3")
    assert parse_version("1.2.3-alpha.2") < parse_version("1.2.3-alpha.10")
    assert parse_version("1.2.3-1") < parse_version("1.2.3-a")
    assert parse_version("1.0.0+build") == parse_version("1.0.0")
    assert str(parse_version("2.0.0-rc.1+x")) == "2.0.0-rc.1+x"
    assert loose_version("580.82.07") == Version(580, 82, 7)
    assert str(loose_version("13.0")) == "13.0.0"
    for bad in ("1.2", "01.2.3", "v1.2.3", "1.2.3-"):
        with pytest.raises(InputError):
            parse_version(bad)
