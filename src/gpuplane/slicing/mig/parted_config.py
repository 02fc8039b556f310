"""mig-parted configuration files: read (with located errors), hold, and write back.

The format (NVIDIA/mig-parted ``api/spec/v1``)::

    version: v1
    mig-configs:
      <name>:
        - devices: all | [0, 1, ...]        # GPU indices
          device-filter: "0x233010DE" | [...] # optional PCI device id + vendor id (10DE)
          mig-enabled: true | false
          mig-devices: {"1g.10gb": 7}         # profile -> count

Checks follow what mig-parted's own parser rejects: a missing or unknown ``version``, an unknown
key, an empty ``mig-configs`` or an empty config, ``devices`` other than ``all`` or a list of
integers, ``mig-enabled`` missing or not a boolean, ``mig-devices`` missing while MIG is enabled
or non-empty while it is disabled, a malformed profile name or a negative count. Two mistakes
mig-parted lets through silently are errors here: a negative GPU index and a ``device-filter``
that is not ``0x`` + 8 hex digits (mig-parted ignores the parse error, so the entry never
matches). Every error names ``file:line: field``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuplane.core.errors import InputError, Location
from gpuplane.core.yamlio import LineIndex, parse_yaml

VERSION = "v1"
ALL_DEVICES = "all"
NVIDIA_VENDOR_ID = 0x10DE
# "<c>c.<g>g.<N>gb" or "<g>g.<N>gb", then optional attributes ("+me", "+gfx", "-me", "+me.all").
PROFILE_SYNTAX = re.compile(r"^(?:(\d+)c\.)?(\d+)g\.(\d+)gb(?:([+-])([A-Za-z][A-Za-z0-9.,]*))?$")
_FILTER = re.compile(r"^0x([0-9A-Fa-f]{4})([0-9A-Fa-f]{4})$")
_ENTRY_KEYS = ("devices", "device-filter", "mig-enabled", "mig-devices")


@dataclass(frozen=True, slots=True)
class PartedEntry:
    """One item of a config: which GPUs, and what to make of them."""

    devices: str | tuple[int, ...]  # "all" or GPU indices
    mig_enabled: bool
    mig_devices: tuple[tuple[str, int], ...] = ()  # (profile, count), in file order
    device_filter: str | tuple[str, ...] | None = None  # as written (one string or a list)
    has_mig_devices: bool = True  # False when the key is absent (allowed with MIG disabled)
    line: int | None = field(default=None, compare=False)
    mig_devices_line: int | None = field(default=None, compare=False)

    @property
    def filters(self) -> tuple[str, ...]:
        if self.device_filter is None:
            return ()
        return (self.device_filter,) if isinstance(self.device_filter, str) else self.device_filter

    def filter_device_ids(self) -> tuple[int, ...]:
        """The PCI device ids (upper half of ``0xDDDDVVVV``) the filter names."""
        out: list[int] = []
        for text in self.filters:
            match = _FILTER.match(text)
            if match is not None and int(match.group(2), 16) == NVIDIA_VENDOR_ID:
                out.append(int(match.group(1), 16))
        return tuple(out)

    def matches_index(self, index: int) -> bool:
        return self.devices == ALL_DEVICES or index in self.devices

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, n in self.mig_devices:
            out[name] = out.get(name, 0) + n
        return out


@dataclass(frozen=True, slots=True)
class PartedConfig:
    """A whole mig-parted file: named configs, each a list of entries (file order kept)."""

    configs: tuple[tuple[str, tuple[PartedEntry, ...]], ...]
    version: str = VERSION
    source: str = field(default="<config>", compare=False)

    def names(self) -> list[str]:
        return [name for name, _ in self.configs]

    def get(self, name: str) -> tuple[PartedEntry, ...]:
        for key, entries in self.configs:
            if key == name:
                return entries
        raise InputError(
            f"mig-parted config {name!r} is not in {self.source}",
            expected=f"one of {', '.join(self.names())}",
        )


def entry_for_gpu(
    entries: tuple[PartedEntry, ...], index: int, pci_device_id: int
) -> PartedEntry | None:
    """The entry mig-parted ends up applying to GPU ``index`` (PCI device id such as 0x2330):
    it walks the entries in order and applies every one whose devices and device-filter match,
    so the last match wins. None: the config leaves this GPU alone."""
    chosen = None
    for entry in entries:
        ids = entry.filter_device_ids()
        if entry.filters and pci_device_id not in ids:
            continue
        if entry.matches_index(index):
            chosen = entry
    return chosen


class _Reader:
    def __init__(self, index: LineIndex, source: str) -> None:
        self.index = index
        self.source = source

    def fail(self, path: str, problem: str, expected: str | None = None) -> InputError:
        loc = Location(self.source, self.index.line_of(path), path or None)
        return InputError(problem, expected=expected, location=loc)

    def mapping(self, value: Any, path: str, what: str) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"got {value!r:.60}", f"{what} (a mapping)")
        return value

    def entry(self, raw: Any, path: str) -> PartedEntry:
        data = self.mapping(raw, path, "an entry with devices and mig-enabled")
        for key in data:
            if key not in _ENTRY_KEYS:
                raise self.fail(
                    f"{path}.{key}", f"unknown key {key!r}", f"one of {', '.join(_ENTRY_KEYS)}"
                )
        for key in ("devices", "mig-enabled"):
            if key not in data:
                raise self.fail(path, f"required key {key!r} is missing", f"{key} in every entry")
        enabled = data["mig-enabled"]
        if not isinstance(enabled, bool):
            raise self.fail(f"{path}.mig-enabled", f"got {enabled!r:.40}", "true or false")
        devices = self.devices(data["devices"], f"{path}.devices")
        filt = self.device_filter(data.get("device-filter"), f"{path}.device-filter")
        has = "mig-devices" in data and data["mig-devices"] is not None
        mig = self.mig_devices(data.get("mig-devices"), f"{path}.mig-devices")
        if enabled and not has:
            raise self.fail(
                path,
                "mig-devices is missing while mig-enabled is true",
                'mig-devices: {} (no instances) or {"<profile>": count}',
            )
        if not enabled and mig:
            raise self.fail(
                f"{path}.mig-devices",
                "MIG devices listed while mig-enabled is false",
                "no mig-devices (or mig-enabled: true)",
            )
        return PartedEntry(
            devices,
            enabled,
            mig,
            filt,
            has,
            self.index.line_of(path),
            self.index.line_of(f"{path}.mig-devices"),
        )

    def devices(self, value: Any, path: str) -> str | tuple[int, ...]:
        if value == ALL_DEVICES:
            return ALL_DEVICES
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        )
        if not ok:
            raise self.fail(
                path, f"got {value!r:.60}", '"all" or a list of GPU indices like [0, 1]'
            )
        if any(v < 0 for v in value):
            raise self.fail(path, f"negative GPU index in {value}", "GPU indices >= 0")
        return tuple(value)

    def device_filter(self, value: Any, path: str) -> str | tuple[str, ...] | None:
        if value is None:
            return None
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise self.fail(path, f"got {value!r:.60}", "a PCI id string or a list of them")
        for v in items:
            if not _FILTER.match(v.strip()):
                raise self.fail(
                    path,
                    f"PCI id {v!r} is malformed (mig-parted would silently never match it)",
                    '"0x" + device id + vendor id, e.g. "0x233010DE"',
                )
        return value if isinstance(value, str) else tuple(items)

    def mig_devices(self, value: Any, path: str) -> tuple[tuple[str, int], ...]:
        if value is None:
            return ()
        data = self.mapping(value, path, "profile -> count")
        out: list[tuple[str, int]] = []
        for name, count in data.items():
            where = f"{path}.{name}"
            if not isinstance(name, str) or not PROFILE_SYNTAX.match(name):
                raise self.fail(
                    where,
                    f"malformed MIG profile name {name!r}",
                    '"<g>g.<N>gb" or "<c>c.<g>g.<N>gb", optionally with "+me"',
                )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise self.fail(where, f"got count {count!r:.30}", "an integer >= 0")
            out.append((name, count))
        return tuple(out)


def read_parted_config(text: str, source: str) -> PartedConfig:
    """Parse and check a mig-parted file (format only; see ``parted_check`` for the hardware)."""
    node, data = parse_yaml(text, source)
    if node is None or data is None:
        raise InputError(
            "the file is empty",
            expected="a mig-parted config (version: v1)",
            location=Location(source, 1),
        )
    reader = _Reader(LineIndex(node, source), source)
    top = reader.mapping(data, "", "a mig-parted config with version and mig-configs")
    for key in top:
        if key not in ("version", "mig-configs"):
            raise reader.fail(str(key), f"unknown key {key!r}", "version, mig-configs")
    if "version" not in top:
        raise reader.fail("", "required key 'version' is missing", "version: v1")
    if top["version"] != VERSION:
        raise reader.fail("version", f"unknown version {top['version']!r}", "v1")
    raw = reader.mapping(top.get("mig-configs") or {}, "mig-configs", "named configs")
    if not raw:
        raise reader.fail("mig-configs", "no configs", "at least one entry in mig-configs")
    configs: list[tuple[str, tuple[PartedEntry, ...]]] = []
    for name, entries in raw.items():
        path = f"mig-configs.{name}"
        if not isinstance(entries, list) or not entries:
            raise reader.fail(
                path, f"config {name!r} has no entries", "a non-empty list of entries"
            )
        configs.append(
            (str(name), tuple(reader.entry(e, f"{path}[{i}]") for i, e in enumerate(entries)))
        )
    return PartedConfig(tuple(configs), VERSION, source)


def _flow(values: tuple[str, ...] | tuple[int, ...]) -> str:
    return "[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in values) + "]"


def _entry_lines(entry: PartedEntry) -> list[str]:
    lines: list[str] = []
    if entry.device_filter is not None:
        filt = entry.device_filter
        lines.append(f"device-filter: {_flow(filt) if isinstance(filt, tuple) else repr_str(filt)}")
    devices = entry.devices
    lines.append(f"devices: {devices if isinstance(devices, str) else _flow(devices)}")
    lines.append(f"mig-enabled: {'true' if entry.mig_enabled else 'false'}")
    if entry.has_mig_devices:
        if entry.mig_devices:
            lines.append("mig-devices:")
            lines.extend(f'  "{name}": {n}' for name, n in entry.mig_devices)
        else:
            lines.append("mig-devices: {}")
    return lines


def repr_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _plain_key(name: str) -> bool:
    """Whether ``name`` can be written unquoted and read back as the same string (``on``,
    ``true``, ``1`` or ``null`` would come back as other YAML types)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        return False
    return bool(yaml.safe_load(f"{name}: 0") == {name: 0})


def dump_parted_config(config: PartedConfig) -> str:
    """The config as mig-parted YAML, in the layout NVIDIA's own files use."""
    out = [f"version: {config.version}", "mig-configs:"]
    for i, (name, entries) in enumerate(config.configs):
        if i:
            out.append("")
        key = name if _plain_key(name) else repr_str(name)
        out.append(f"  {key}:")
        for entry in entries:
            lines = _entry_lines(entry)
            out.append(f"    - {lines[0]}")
            out.extend(f"      {line}" for line in lines[1:])
    text = "\n".join(out) + "\n"
    yaml.safe_load(text)  # the writer must always produce YAML; fail loudly here if not
    return text
