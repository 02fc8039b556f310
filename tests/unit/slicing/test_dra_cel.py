"""gpuplane's CEL subset for DRA selectors: what it evaluates, how it fails at run time, and the
constructs it refuses (with their column)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra.cel.evaluate import CelRuntimeError, compile_selector, device_input
from gpuplane.slicing.dra.cel.semver import Version
from gpuplane.slicing.dra.devices import Device
from tests.unit.slicing.test_dra_support import qty

GPU = Device(
    "gpu-0",
    attributes={
        "type": "gpu",
        "index": 3,
        "mig": False,
        "cudaComputeCapability": Version(9, 0, 0),
        "productName": "NVIDIA H100 80GB HBM3",
        "gpuplane.io/nvlinkDomain": 1,
        "resource.kubernetes.io/pcieRoot": "pci0000:00",
    },
    capacity={"memory": qty("80Gi")},
)
INPUT = device_input(GPU, "gpu.nvidia.com")
NV = 'device.attributes["gpu.nvidia.com"]'


def matches(expression: str) -> bool:
    return compile_selector(expression).matches(INPUT)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.nvidia.com"', True),
        (f'{NV}.type == "gpu"', True),
        (f'{NV}["type"] != "gpu"', False),
        (f"{NV}.index >= 3 && {NV}.index < 4", True),
        (f"{NV}.index > 3 || {NV}.index <= 2", False),
        (f"!{NV}.mig", True),
        (f'{NV}.type in ["gpu", "mig"]', True),
        (f"{NV}.index in [1, 2]", False),
        (f'({NV}.type == "mig" || {NV}.index == 3) && device.driver != "x"', True),
        ('device.attributes["gpuplane.io"].nvlinkDomain == 1', True),
        ('device.attributes["resource.kubernetes.io"].pcieRoot.startsWith("pci0000")', True),
        (f'{NV}.productName.contains("H100") && {NV}.productName.endsWith("HBM3")', True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("100G"))', True),
        ('device.capacity["gpu.nvidia.com"].memory == quantity("85899345920")', True),
        ('device.capacity["gpu.nvidia.com"].memory.asInteger() == 85899345920', True),
        (f'{NV}.cudaComputeCapability.isGreaterThan(semver("8.9.0"))', True),
        (f'{NV}.cudaComputeCapability.compareTo(semver("9.0.0")) == 0', True),
        (f"{NV}.cudaComputeCapability.major() == 9", True),
        (f'{NV}.cudaComputeCapability == semver("9.0.0")', True),
        (f"has({NV}.type) && !has({NV}.nope)", True),
        ('has(device.attributes["other.example.com"].x)', False),
        (f"{NV}.type == 1", False),  # different types are simply unequal
        ('isSemver("1.2") || isQuantity("1x")', False),
        ("true && !false", True),
        ("0x10 == 16 && -1 < 0", True),
        (f"{NV}.index == 3 // a comment", True),
        (r"'it\'s' == " + '"it\'s"', True),
    ],
)
def test_evaluates(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f"{NV}.nope == 1", "no such key: nope"),
        (f'{NV}.index < "4"', "no such overload"),
        (f'{NV}.cudaComputeCapability < semver("10.0.0")', "no such overload"),
        (f'{NV}.cudaComputeCapability == "9.0.0"', "no such overload"),
        (
            'device.capacity["gpu.nvidia.com"].memory.isLessThan(semver("1.0.0"))',
            "no such overload",
        ),
        (f"{NV}.index", "could not be converted to bool"),
        (f"!{NV}.index", "no such overload"),
        (f"{NV}.type.startsWith(1)", "no such overload"),
    ],
)
def test_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError, match=message):
        matches(expression)


def test_and_or_absorb_errors_like_cel() -> None:
    assert matches(f"false && {NV}.nope == 1") is False
    assert matches(f"{NV}.nope == 1 && false") is False
    assert matches(f"{NV}.nope == 1 || true") is True
    with pytest.raises(CelRuntimeError, match="no such key"):
        matches(f"{NV}.nope == 1 || false")


def test_an_unknown_domain_is_an_empty_map() -> None:
    assert matches('"x" in device.attributes["other.example.com"]') is False
    with pytest.raises(CelRuntimeError, match="no such key: x"):
        matches('device.attributes["other.example.com"].x == 1')


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ('{"a": 1}.a == 1', "unsupported map literal at column 1"),
        ("cel.bind(x, 1, x == 1)", "unsupported macro 'cel.bind' at column 1"),
        ("1.5 > 1", "unsupported floating-point literal at column 1"),
        ("1u > 0", "unsupported unsigned integer literal at column 1"),
        ("size([1]) == 1", "unsupported function 'size' at column 1"),
        ("gpu.index == 1", "undeclared reference to 'gpu' at column 1"),
        ("device.name == 'x'", "undefined field 'name' at column 8"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ('quantity("12x") == quantity("1")', "'12x': quantities must match"),
        ('semver("1.2") == semver("1.2.0")', "invalid semver '1.2' at column 8"),
        ("has(device.attributes['a'])", "invalid argument to has() macro"),
        ('device.driver == "x', "unterminated string literal at column 18"),
        ("device.driver == ", "unexpected 'end of expression' at column 18"),
        ("(true", "expected ')' but found 'end of expression' at column 6"),
        ("true && 1", "operator '&&' needs a bool operand, not int at column 9"),
        ("1 in 2", "the right side of 'in' must be a list at column 6"),
        ("null == 1", "unsupported null literal"),
        ("device.driver.compareTo()", "'compareTo' takes 1 argument(s), got 0"),
    ],
)
def test_refused_constructs_name_what_and_where(expression: str, problem: str) -> None:
    with pytest.raises(InputError) as err:
        compile_selector(expression)
    assert problem in err.value.problem


@pytest.mark.parametrize(
    ("expression", "token", "problem"),
    [
        (f'{NV}.productName.matches("H1.*")', "matches", "CEL: unsupported function 'matches'"),
        (f"{NV}.index + 1 == 4", "+", "CEL: unsupported operator '+'"),
        (f"{NV}.index == 1 ? true : false", "?", "CEL: unsupported conditional operator '?:'"),
        (f"{NV}.?index == 1", ".?", "CEL: unsupported optional field selection '.?'"),
        (f"{NV}.list.all(x, x > 1)", "all", "CEL: unsupported macro 'all'"),
    ],
)
def test_columns_point_at_the_construct(expression: str, token: str, problem: str) -> None:
    with pytest.raises(InputError) as err:
        compile_selector(expression)
    assert err.value.problem == f"{problem} at column {expression.index(token) + 1}"


def test_the_error_for_an_unsupported_function_lists_what_is_supported() -> None:
    with pytest.raises(InputError) as err:
        compile_selector('device.driver.matches("x")')
    assert err.value.expected is not None and "has()" in err.value.expected


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet='device.atrbus[]"()!&|=<>  0123456789gpu', max_size=40))
def test_any_text_either_compiles_or_is_an_input_error(text: str) -> None:
    try:
        program = compile_selector(text)
    except InputError:
        return
    with contextlib.suppress(CelRuntimeError):
        program.matches(INPUT)
