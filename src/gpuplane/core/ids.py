"""Typed ids: plain strings and ints at run time, distinct types for mypy."""

from __future__ import annotations

from typing import NewType

NodeName = NewType("NodeName", str)
GpuIndex = NewType("GpuIndex", int)
NicIndex = NewType("NicIndex", int)
NumaId = NewType("NumaId", int)
BridgeId = NewType("BridgeId", str)
GpuModelName = NewType("GpuModelName", str)
PresetName = NewType("PresetName", str)
