"""Parser for the text of ``nvidia-smi topo -m``: device matrix, affinity columns, NIC legend.

Accepted layouts, all seen in real pastes (``shared/data/topologies/SOURCES.md``):

- columns separated by tabs (newer drivers, empty cells are real), by runs of spaces (older
  output, or tab output that went through a renderer), or a mix of both;
- optional trailing columns ``CPU Affinity``, ``NUMA Affinity``, ``GPU NUMA ID`` in any order;
- NICs named ``NIC<n>`` with a ``NIC Legend:`` block, or directly (``mlx5_0``) without one;
- cells glued by a lost tab (``PXBNODE``, ``SYSSYS``, `` X NODE``), split back into link tokens
  when the split is unique; each repair is reported in :attr:`TopoMatrix.repairs`.

Every problem raises :class:`InputError` located at the source, 1-based line and column name.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.errors import InputError, Location
from gpuplane.topology.links import VALID_TOKENS, Link, LinkClass, parse_link

CPU_AFFINITY = "CPU Affinity"
NUMA_AFFINITY = "NUMA Affinity"
GPU_NUMA_ID = "GPU NUMA ID"
_COLUMNS = (CPU_AFFINITY, NUMA_AFFINITY, GPU_NUMA_ID)

_COLUMN_RE = re.compile(r"CPU\s+Affinity|NUMA\s+Affinity|GPU\s+NUMA\s+ID")
_DEVICE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.:\-]*")
_GPU_RE = re.compile(r"GPU([0-9]+)")
_TOKEN_RE = re.compile(r"X|NV[1-9][0-9]{0,2}|PIX|PXB|PHB|NODE|SYS|SOC")
_GLUED_RE = re.compile(f"(?:{_TOKEN_RE.pattern})+")
_ID_LIST_RE = re.compile(r"[0-9]{1,6}(?:-[0-9]{1,6})?(?:,[0-9]{1,6}(?:-[0-9]{1,6})?)*")
_ID_RE = re.compile(r"[0-9]{1,6}")
_VALUE_RE = re.compile(r"[0-9,\-]+|N/A")
_LEGEND_ENTRY_RE = re.compile(r"([^\s:]+)\s*:\s*(\S+)")
_ROWS_END = ("Legend:", "NIC Legend:")
# Bounds keep hostile input cheap (parse_cpu_list expands ranges); Linux allows at most 8192 CPUs
# (NR_CPUS with MAXSMP) and 1024 NUMA nodes (NODES_SHIFT 10).
_MAX_CPU_ID = 1 << 16
_MAX_NUMA_ID = 1 << 10
_NUM_GPU_DIGITS = 4


@dataclass(frozen=True, slots=True)
class TopoMatrix:
    """One ``nvidia-smi topo -m`` table; every per-device tuple is in header order."""

    source: str
    device_names: tuple[str, ...]
    cells: tuple[tuple[Link, ...], ...]
    cpu_affinity: tuple[str | None, ...]
    numa_affinity: tuple[str | None, ...]
    gpu_numa_id: tuple[str | None, ...]
    nic_legend: dict[str, str]
    row_lines: tuple[int, ...]
    header_line: int
    columns: tuple[str, ...]
    repairs: tuple[str, ...] = ()

    @property
    def gpu_positions(self) -> tuple[int, ...]:
        return tuple(i for i, n in enumerate(self.device_names) if is_gpu_name(n))

    @property
    def nic_positions(self) -> tuple[int, ...]:
        return tuple(i for i, n in enumerate(self.device_names) if not is_gpu_name(n))

    def gpu_index(self, pos: int) -> int:
        """The ``n`` of the ``GPU<n>`` column at ``pos`` (one of :attr:`gpu_positions`)."""
        return int(self.device_names[pos].removeprefix("GPU"))

    def nic_name(self, pos: int) -> str:
        """The NIC's name from the legend (``NIC0 -> mlx5_0``), else its column name."""
        name = self.device_names[pos]
        return self.nic_legend.get(name, name)

    def labels(self) -> list[list[str]]:
        return [[cell.label for cell in row] for row in self.cells]

    def cpu_ids(self, pos: int) -> tuple[int, ...]:
        text = self.cpu_affinity[pos]
        return parse_cpu_list(text) if text is not None else ()

    def numa_ids(self, pos: int) -> tuple[int, ...]:
        text = self.numa_affinity[pos]
        return parse_cpu_list(text) if text is not None else ()

    def first_numa(self, pos: int) -> int | None:
        """The first NUMA id as written (GH200 prints the CPU node first: ``0,5-11``)."""
        text = self.numa_affinity[pos]
        return int(re.split(r"[,\-]", text)[0]) if text is not None else None

    def memory_numa(self, pos: int) -> int | None:
        text = self.gpu_numa_id[pos]
        return int(text) if text is not None else None


def is_gpu_name(name: str) -> bool:
    return _GPU_RE.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class _Header:
    line: int
    devices: tuple[str, ...]
    columns: tuple[str, ...]
    # Character offsets of the affinity columns (tabs expanded), to place space-separated values.
    starts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Cell:
    text: str
    start: int  # character offset in space-separated rows; -1 in tab-separated ones
    group: int  # which tab cell (or, without tabs, which word) the text came from


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    line: int
    links: tuple[Link, ...]
    values: dict[str, str | None]
    repairs: tuple[str, ...]


def _error(source: str, line: int, field: str | None, problem: str, expected: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(source, line, field))


def parse_topo_text(text: str, source: str) -> TopoMatrix:
    """Parse ``nvidia-smi topo -m`` output; InputError (with file, line, column) on any problem."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    header = _parse_header(lines, source)
    rows, end = _collect_rows(lines, header, source)
    legend = _parse_nic_legend(lines, end, header, source)
    ordered = _order_rows(rows, header, source)
    cells = tuple(row.links for row in ordered)
    _check_matrix(cells, ordered, header, source)
    return TopoMatrix(
        source=source,
        device_names=header.devices,
        cells=cells,
        cpu_affinity=tuple(row.values.get(CPU_AFFINITY) for row in ordered),
        numa_affinity=tuple(row.values.get(NUMA_AFFINITY) for row in ordered),
        gpu_numa_id=tuple(row.values.get(GPU_NUMA_ID) for row in ordered),
        nic_legend=legend,
        row_lines=tuple(row.line for row in ordered),
        header_line=header.line,
        columns=header.columns,
        repairs=tuple(r for row in rows for r in row.repairs),
    )


# ----- header -----
def _parse_header(lines: list[str], source: str) -> _Header:
    index = next((i for i, line in enumerate(lines) if line.strip()), None)
    expected = "a header row of device names (GPU0 GPU1 ... NIC0 ...) then optional CPU Affinity"
    if index is None:
        raise _error(source, 1, None, "the text is empty", expected)
    line_no = index + 1
    expanded = lines[index].expandtabs(8)
    found = list(_COLUMN_RE.finditer(expanded))
    first = found[0].start() if found else len(expanded)
    gaps = [expanded[a.end() : b.start()] for a, b in itertools.pairwise(found)]
    if any(gap.strip() for gap in [*gaps, expanded[found[-1].end() :] if found else ""]):
        problem = "unknown text among the affinity columns"
        raise _error(source, line_no, None, problem, f"only {', '.join(_COLUMNS)}")
    columns = tuple(" ".join(m.group().split()) for m in found)
    if len(set(columns)) != len(columns):
        raise _error(source, line_no, None, "an affinity column is repeated", "each at most once")
    devices = tuple(expanded[:first].split())
    _check_devices(devices, source, line_no, expected)
    return _Header(line_no, devices, columns, tuple(m.start() for m in found))


def _check_devices(devices: tuple[str, ...], source: str, line: int, expected: str) -> None:
    if not devices:
        raise _error(source, line, None, "the header has no device columns", expected)
    seen: set[str] = set()
    for name in devices:
        if _DEVICE_RE.fullmatch(name) is None or _split_glued(name) is not None:
            raise _error(source, line, name, f"{name!r} is not a device name", expected)
        gpu = _GPU_RE.fullmatch(name)
        if gpu is not None and len(gpu.group(1)) > _NUM_GPU_DIGITS:
            raise _error(source, line, name, f"GPU index of {name!r} is too long", "GPU0..GPU9999")
        if name in seen:
            raise _error(source, line, name, f"column {name} appears twice", "unique names")
        seen.add(name)
    if not any(is_gpu_name(n) for n in devices):
        raise _error(source, line, None, "the header has no GPU<n> column", expected)


# ----- rows -----
def _collect_rows(lines: list[str], header: _Header, source: str) -> tuple[list[_Row], int]:
    """Rows run from the header to the first blank line or legend; returns them and that index."""
    rows: list[_Row] = []
    index = header.line
    while index < len(lines):
        stripped = lines[index].strip()
        if not stripped or stripped.startswith(_ROWS_END):
            break
        rows.append(_parse_row(lines[index], index + 1, header, source))
        index += 1
    return rows, index


def _split_cells(raw: str) -> tuple[str, list[_Cell], bool]:
    """The row name and its cells, one word each; tab rows keep empty cells as ``""``."""
    if "\t" not in raw:
        words = [_Cell(m.group(), m.start(), k) for k, m in enumerate(re.finditer(r"\S+", raw))]
        return words[0].text, words[1:], False
    # Spaces inside a tab cell separate values too: mixed pastes, or a tab lost in copying.
    cells = [
        _Cell(word, -1, group)
        for group, piece in enumerate(raw.split("\t"))
        for word in (piece.split() or [""])
    ]
    return cells[0].text, cells[1:], True


def _parse_row(raw: str, line: int, header: _Header, source: str) -> _Row:
    name, cells, tabbed = _split_cells(raw)
    if name not in header.devices:
        problem = f"row {name!r} is not a device of the header"
        raise _error(source, line, name or None, problem, f"one of {', '.join(header.devices)}")
    links, used, repairs = _take_links(cells, name, line, header, source)
    values = _assign_values(cells[used:], tabbed, name, line, header, source)
    for column, value in values.items():
        if value is not None:
            _check_value(column, value, name, Location(source, line, column))
    return _Row(name, line, links, values, repairs)


def _take_links(
    cells: list[_Cell], name: str, line: int, header: _Header, source: str
) -> tuple[tuple[Link, ...], int, tuple[str, ...]]:
    """One link per device column; returns them, how many cells they used, and repairs made."""
    need = len(header.devices)
    tokens: list[str] = []
    taken: list[tuple[_Cell, list[str]]] = []
    while len(tokens) < need:
        column = header.devices[len(tokens)]
        cell = cells[len(taken)] if len(taken) < len(cells) else _Cell("", -1, -1)
        parts = _split_glued(cell.text)
        if parts is None:
            if cell.text and _VALUE_RE.fullmatch(cell.text) is None:
                problem = f"{cell.text!r} is not a link class"
                raise _error(source, line, column, problem, VALID_TOKENS)
            problem = f"row {name} has only {len(tokens)} link cells"
            raise _error(source, line, column, problem, f"{need}, one per device column")
        if len(tokens) + len(parts) > need:
            raise _too_many(source, line, name, need)
        tokens.extend(parts)
        taken.append((cell, parts))
    if len(taken) < len(cells) and _split_glued(cells[len(taken)].text) is not None:
        raise _too_many(source, line, name, need)
    return tuple(parse_link(t) for t in tokens), len(taken), _repairs(taken, line)


def _repairs(taken: list[tuple[_Cell, list[str]]], line: int) -> tuple[str, ...]:
    """Cells that held more than one link: glued words, or several words in one tab cell."""
    out: list[str] = []
    for _, group in itertools.groupby(taken, key=lambda item: item[0].group):
        items = list(group)
        parts = [p for _, ps in items for p in ps]
        if len(parts) > 1:
            out.append(f"line {line}: {' '.join(c.text for c, _ in items)!r} -> {' '.join(parts)}")
    return tuple(out)


def _too_many(source: str, line: int, name: str, need: int) -> InputError:
    problem = f"row {name} has more than {need} link cells"
    return _error(source, line, name, problem, f"{need}, one per device column")


def _split_glued(text: str) -> list[str] | None:
    """Split a cell into link tokens (``PXBNODE`` -> PXB NODE); None if it is not made of them.

    No token is a prefix of another and none starts with a digit, so a split, when there is one,
    is unique: repairing never has to guess.
    """
    words = text.split()
    if not words or not all(_GLUED_RE.fullmatch(w) for w in words):
        return None
    return [token for word in words for token in _TOKEN_RE.findall(word)]


# ----- affinity columns -----
def _assign_values(
    rest: list[_Cell], tabbed: bool, name: str, line: int, header: _Header, source: str
) -> dict[str, str | None]:
    columns = header.columns
    texts = [c.text for c in rest]
    if tabbed:
        texts = _drop_padding(texts, columns)
    if len(texts) > len(columns):
        listed = ", ".join(columns) or "no affinity columns"
        problem = f"row {name} has {len(texts) - len(columns)} cell(s) too many"
        field = columns[-1] if columns else name
        raise _error(source, line, field, problem, f"the link cells, then {listed}")
    if tabbed or len(texts) == len(columns) or not texts:
        placed = dict(zip(columns, texts, strict=False))
    else:
        placed = _place_by_offset(rest, name, line, header, source)
    return {c: _blank_to_none(placed.get(c)) for c in columns}


def _drop_padding(texts: list[str], columns: tuple[str, ...]) -> list[str]:
    """Remove the empty alignment cells nvidia-smi adds in tab output."""
    texts = list(texts)
    # The driver prints the NUMA Affinity value followed by two tabs ("0\t\tN/A"), so that the
    # next value lines up under the wide header; the second tab is not a column.
    if NUMA_AFFINITY in columns and len(texts) > len(columns):
        pad = columns.index(NUMA_AFFINITY) + 1
        if pad < len(texts) and pad < len(columns) and texts[pad] == "":
            del texts[pad]
    while len(texts) > len(columns) and texts[-1] == "":
        texts.pop()
    return texts


def _place_by_offset(
    rest: list[_Cell], name: str, line: int, header: _Header, source: str
) -> dict[str, str]:
    """Space-separated rows hide empty cells; put each value under the nearest header column."""
    placed: dict[str, str] = {}
    for cell in rest:
        nearest = min(range(len(header.columns)), key=lambda k: abs(header.starts[k] - cell.start))
        column = header.columns[nearest]
        if column in placed:
            problem = f"cannot tell which column {cell.text!r} of {name} is under"
            raise _error(source, line, column, problem, "values under headers, or tab-separated")
        placed[column] = cell.text
    return placed


def _blank_to_none(text: str | None) -> str | None:
    return None if text is None or text in ("", "N/A") else text


def _check_value(column: str, text: str, name: str, loc: Location) -> None:
    if column == GPU_NUMA_ID:
        if _ID_RE.fullmatch(text) is None or int(text) > _MAX_NUMA_ID:
            expected = f"a NUMA node id up to {_MAX_NUMA_ID} or N/A"
            raise InputError(f"{column} of {name} is {text!r}", expected=expected, location=loc)
        return
    limit = _MAX_CPU_ID if column == CPU_AFFINITY else _MAX_NUMA_ID
    kind = "CPU" if column == CPU_AFFINITY else "NUMA node"
    expected = f"a {kind} list like 0-55,112-167 (ids up to {limit}), or N/A"
    too_big = any(int(n) > limit for n in re.findall(r"[0-9]+", text))
    if _ID_LIST_RE.fullmatch(text) is None or too_big:
        raise InputError(f"{column} of {name} is {text!r}", expected=expected, location=loc)
    try:
        parse_cpu_list(text)
    except InputError as err:
        raise InputError(err.problem, expected=err.expected, location=loc) from None


# ----- whole matrix -----
def _order_rows(rows: list[_Row], header: _Header, source: str) -> list[_Row]:
    by_name: dict[str, _Row] = {}
    for row in rows:
        first = by_name.get(row.name)
        if first is not None:
            problem = f"second row for {row.name} (first at line {first.line})"
            raise _error(source, row.line, row.name, problem, "one row per device")
        by_name[row.name] = row
    for name in header.devices:
        if name not in by_name:
            end = rows[-1].line if rows else header.line
            problem = f"column {name} has no row (the rows end at line {end})"
            raise _error(
                source, header.line, name, problem, "one row per column, then a blank line"
            )
    return [by_name[name] for name in header.devices]


def _check_matrix(
    cells: tuple[tuple[Link, ...], ...], rows: list[_Row], header: _Header, source: str
) -> None:
    """X exactly on the diagonal, and the same class both ways for every pair."""
    names = header.devices
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            if (i == j) != (cell.cls is LinkClass.X):
                problem = f"{names[i]} to {names[j]} is {cell.label}"
                raise _error(source, rows[i].line, names[j], problem, "X exactly on the diagonal")
            if j < i and cell != cells[j][i]:
                problem = (
                    f"{names[j]} to {names[i]} is {cells[j][i].label} (line {rows[j].line}) "
                    f"but {names[i]} to {names[j]} is {cell.label} (line {rows[i].line})"
                )
                raise _error(source, rows[i].line, names[j], problem, "a symmetric matrix")


# ----- NIC legend -----
def _parse_nic_legend(lines: list[str], start: int, header: _Header, source: str) -> dict[str, str]:
    """``NIC Legend:`` entries (``  NIC0: mlx5_0``) after the matrix; {} when there is none."""
    legend: dict[str, str] = {}
    inside = False
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if stripped in _ROWS_END:
            inside = stripped == "NIC Legend:"
            continue
        if not inside or not stripped:
            continue
        line, field = index + 1, "NIC Legend"
        entry = _LEGEND_ENTRY_RE.fullmatch(stripped)
        if entry is None:
            problem = f"{stripped!r} is not a legend entry"
            raise _error(source, line, field, problem, "NIC<n>: <name>")
        key, value = entry.groups()
        if key not in header.devices or is_gpu_name(key):
            problem = f"the legend names {key}, which is not a NIC column"
            raise _error(source, line, field, problem, "a NIC from the header")
        if key in legend:
            raise _error(source, line, field, f"{key} is in the legend twice", "one entry per NIC")
        legend[key] = value
    return legend
