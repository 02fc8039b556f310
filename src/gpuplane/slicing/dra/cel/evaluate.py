"""Evaluate a checked DRA selector against one device, as the Kubernetes DRA CEL environment
does (``k8s.io/dynamic-resource-allocation/cel``).

The input is ``device`` with ``driver``, ``attributes`` and ``capacity``, the latter two grouped
by domain: an attribute published without a domain belongs to the driver's domain. Looking up an
unknown domain gives an empty map; looking up a name the device does not have is a runtime error
(``no such key: <name>``), which makes the allocator abort with that error. Equality between
values of different built-in types is false (CEL's heterogeneous equality), while ordering them,
or comparing a quantity or semver with anything but its own kind, is ``no such overload``.
Quantities and versions have no ``<``: use ``compareTo``, ``isGreaterThan`` or ``isLessThan``.
``&&`` and ``||`` are commutative about errors: ``false && error`` is false and
``error || true`` is true.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra.cel.ast_nodes import (
    Binary,
    Call,
    Has,
    Ident,
    Index,
    ListLit,
    Lit,
    Node,
    Not,
    Select,
)
from gpuplane.slicing.dra.cel.parser import parse_cel
from gpuplane.slicing.dra.cel.semver import Version, is_semver, parse_version
from gpuplane.slicing.dra.devices import Device
from gpuplane.slicing.dra.names import split_qualified_name
from gpuplane.slicing.dra.quantity import DeviceQuantity, parse_quantity


class CelRuntimeError(Exception):
    """An evaluation error (the allocator turns it into a "CEL runtime error")."""


@dataclass(frozen=True, slots=True)
class _Map:
    """A CEL map; ``default`` is what an absent key gives (None: a ``no such key`` error)."""

    entries: Mapping[str, object]
    default: object | None = None

    def get(self, key: object) -> object:
        if isinstance(key, str) and key in self.entries:
            return self.entries[key]
        if self.default is not None:
            return self.default
        raise CelRuntimeError(f"no such key: {key}")


_EMPTY = _Map({})


@dataclass(frozen=True, slots=True)
class DeviceInput:
    """The ``device`` variable for one device."""

    driver: str
    attributes: _Map
    capacity: _Map


def device_input(device: Device, driver: str) -> DeviceInput:
    attributes: dict[str, dict[str, object]] = {}
    for name, value in device.attributes.items():
        domain, ident = split_qualified_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, object]] = {}
    for name, quantity in device.capacity.items():
        domain, ident = split_qualified_name(name, driver)
        capacity.setdefault(domain, {})[ident] = quantity
    return DeviceInput(
        driver,
        _Map({d: _Map(v) for d, v in attributes.items()}, default=_EMPTY),
        _Map({d: _Map(v) for d, v in capacity.items()}, default=_EMPTY),
    )


def type_name(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, DeviceQuantity):
        return "kubernetes.Quantity"
    if isinstance(value, Version):
        return "kubernetes.Semver"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, DeviceInput):
        return "kubernetes.DRADevice"
    return "map"


def _no_overload(op: str, *values: object) -> CelRuntimeError:
    kinds = ", ".join(type_name(v) for v in values)
    return CelRuntimeError(f"no such overload: {op}({kinds})")


def cel_equal(a: object, b: object) -> bool:
    """``==``: heterogeneous equality for built-in types; quantities and semvers compare only
    with their own kind."""
    special = (DeviceQuantity, Version)
    if isinstance(a, special) or isinstance(b, special):
        if type(a) is not type(b):
            raise _no_overload("_==_", a, b)
        return a == b
    if type_name(a) != type_name(b):
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _order(op: str, a: object, b: object) -> bool:
    kinds = (type_name(a), type_name(b))
    if kinds[0] != kinds[1] or kinds[0] not in ("int", "string", "bool"):
        raise _no_overload(f"_{op}_", a, b)
    compare: dict[str, Callable[[object, object], bool]] = {
        "<": lambda x, y: x < y,  # type: ignore[operator]
        "<=": lambda x, y: x <= y,  # type: ignore[operator]
        ">": lambda x, y: x > y,  # type: ignore[operator]
        ">=": lambda x, y: x >= y,  # type: ignore[operator]
    }
    return compare[op](a, b)


class _Evaluator:
    def __init__(self, device: DeviceInput) -> None:
        self.device = device

    def eval(self, node: Node) -> object:
        if isinstance(node, Lit):
            return node.value
        if isinstance(node, Ident):
            return self.device
        if isinstance(node, Select):
            return _field(self.eval(node.operand), node.field)
        if isinstance(node, Index):
            return _index(self.eval(node.operand), self.eval(node.index))
        if isinstance(node, ListLit):
            return [self.eval(item) for item in node.items]
        if isinstance(node, Not):
            value = self.eval(node.operand)
            if not isinstance(value, bool):
                raise _no_overload("!_", value)
            return not value
        if isinstance(node, Has):
            return _has(self.eval(node.select.operand), node.select.field)
        if isinstance(node, Call):
            return self.call(node)
        return self.binary(node)

    def binary(self, node: Binary) -> object:
        if node.op in ("&&", "||"):
            return self.logic(node)
        left, right = self.eval(node.left), self.eval(node.right)
        if node.op == "==":
            return cel_equal(left, right)
        if node.op == "!=":
            return not cel_equal(left, right)
        if node.op == "in":
            if isinstance(right, _Map):
                return isinstance(left, str) and left in right.entries
            if not isinstance(right, list):
                raise _no_overload("@in", left, right)
            return any(cel_equal(left, item) for item in right)
        return _order(node.op, left, right)

    def logic(self, node: Binary) -> bool:
        decisive = node.op == "||"  # the value that ends the evaluation
        failure: CelRuntimeError | None = None
        for side in (node.left, node.right):
            try:
                value = self.eval(side)
            except CelRuntimeError as err:
                failure = failure or err
                continue
            if not isinstance(value, bool):
                failure = failure or _no_overload(f"_{node.op}_", value)
            elif value is decisive:
                return decisive
        if failure is not None:
            raise failure
        return not decisive

    def call(self, node: Call) -> object:
        args = [self.eval(a) for a in node.args]
        if node.target is None:
            return _global_call(node.name, args[0])
        return _member_call(node.name, self.eval(node.target), args)


def _field(value: object, name: str) -> object:
    if isinstance(value, DeviceInput):
        if name == "driver":
            return value.driver
        return value.attributes if name == "attributes" else value.capacity
    if isinstance(value, _Map):
        return value.get(name)
    raise CelRuntimeError(f"type '{type_name(value)}' does not support field selection")


def _index(value: object, key: object) -> object:
    if isinstance(value, _Map):
        return value.get(key)
    if isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool):
        if not 0 <= key < len(value):
            raise CelRuntimeError(f"index out of bounds: {key}")
        return value[key]
    raise _no_overload("_[_]", value, key)


def _has(value: object, name: str) -> bool:
    if isinstance(value, _Map):
        return name in value.entries
    if isinstance(value, DeviceInput):
        return name in ("driver", "attributes", "capacity")
    raise CelRuntimeError(f"invalid type for field selection: {type_name(value)}")


def _global_call(name: str, arg: object) -> object:
    if not isinstance(arg, str):
        raise _no_overload(name, arg)
    if name == "isQuantity":
        try:
            parse_quantity(arg)
        except InputError:
            return False
        return True
    if name == "isSemver":
        return is_semver(arg)
    try:
        return parse_quantity(arg) if name == "quantity" else parse_version(arg)
    except InputError as err:
        raise CelRuntimeError(err.problem) from None


def _member_call(name: str, target: object, args: list[object]) -> object:
    if name in ("startsWith", "endsWith", "contains"):
        if not isinstance(target, str) or not isinstance(args[0], str):
            raise _no_overload(name, target, *args)
        if name == "startsWith":
            return target.startswith(args[0])
        return target.endswith(args[0]) if name == "endsWith" else args[0] in target
    if name in ("major", "minor", "patch"):
        if not isinstance(target, Version):
            raise _no_overload(name, target)
        return {"major": target.major, "minor": target.minor, "patch": target.patch}[name]
    if name == "asInteger":
        if not isinstance(target, DeviceQuantity):
            raise _no_overload(name, target)
        if target.value.denominator != 1 or abs(target.value) >= 2**63:
            raise CelRuntimeError("cannot convert value to integer")
        return target.value.numerator
    return _compare_call(name, target, args[0])


def _compare_call(name: str, target: object, other: object) -> object:
    if isinstance(target, DeviceQuantity) and isinstance(other, DeviceQuantity):
        result = target.cmp(other)
    elif isinstance(target, Version) and isinstance(other, Version):
        result = target.compare(other)
    else:
        raise _no_overload(name, target, other)
    if name == "compareTo":
        return result
    return result > 0 if name == "isGreaterThan" else result < 0


@dataclass(frozen=True, slots=True)
class CelProgram:
    """A compiled selector."""

    expression: str
    node: Node

    def matches(self, device: DeviceInput) -> bool:
        result = _Evaluator(device).eval(self.node)
        if not isinstance(result, bool):
            raise CelRuntimeError(
                f"CEL result of type {type_name(result)} could not be converted to bool"
            )
        return result


@lru_cache(maxsize=512)
def compile_selector(expression: str) -> CelProgram:
    """Parse and check ``expression`` (InputError for anything outside the subset)."""
    return CelProgram(expression, parse_cel(expression))
