"""Fuzz: damaged versions of every real output either parse or raise a located InputError.

Nothing else may escape: no IndexError, ValueError, KeyError, RecursionError, and no hang on
huge numbers. Successful parses must also build a node (or raise a located InputError).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.topology.from_matrix import topology_from_matrix
from gpuplane.topology.smi_parser import parse_topo_text
from tests.unit.topology.test_smi_parser import FIXTURE_NAMES, fixture_text

JUNK_CHARS = [*"\t \r XNVSYPIOCDEHBL0123456789-,/:_.", "\u00a0", "é", "\x00", "\u2028"]
junk = st.text(alphabet=st.sampled_from(JUNK_CHARS), max_size=12) | st.text(max_size=6)
index = st.integers(min_value=0, max_value=10**6)
TOKENS = ["X", "NV18", "NV6", "PIX", "PXB", "NODE", "SYS", "0-55,112-167", "N/A", "NIC0", "GPU3"]

Mutation = tuple[str, int, int, str]
mutations: st.SearchStrategy[Mutation] = st.tuples(
    st.sampled_from(
        ["delete_line", "duplicate_line", "swap_lines", "delete_chars", "insert", "token", "cut"]
    ),
    index,
    index,
    junk | st.sampled_from(TOKENS) | st.just("9" * 40),
)


def mutate(text: str, mutation: Mutation) -> str:
    kind, a, b, extra = mutation
    lines = text.split("\n")
    i, j = a % len(lines), b % len(lines)
    if kind == "delete_line":
        del lines[i]
    elif kind == "duplicate_line":
        lines.insert(j, lines[i])
    elif kind == "swap_lines":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "delete_chars":
        pos = b % (len(lines[i]) + 1)
        lines[i] = lines[i][:pos] + lines[i][pos + 1 + b % 5 :]
    elif kind == "insert":
        pos = b % (len(lines[i]) + 1)
        lines[i] = lines[i][:pos] + extra + lines[i][pos:]
    elif kind == "token":
        # Replace one whitespace-separated cell of a line with junk or another valid token.
        cells = re.split(r"(\s+)", lines[i])
        words = [k for k, c in enumerate(cells) if c and not c.isspace()]
        if words:
            cells[words[b % len(words)]] = extra
        lines[i] = "".join(cells)
    else:
        return text[: a % (len(text) + 1)]
    return "\n".join(lines)


def check(text: str, source: str) -> None:
    try:
        m = parse_topo_text(text, source)
        topology_from_matrix(m)
    except InputError as err:
        message = str(err)
        assert re.search(rf"{re.escape(source)}:\d+", message), message
        assert err.location.line is not None and err.location.line >= 1


@pytest.mark.parametrize("name", FIXTURE_NAMES)
@settings(max_examples=150, deadline=None)
@given(changes=st.lists(mutations, min_size=1, max_size=4))
def test_mutated_fixtures_parse_or_raise_located_errors(name: str, changes: list[Mutation]) -> None:
    text = fixture_text(name)
    for change in changes:
        text = mutate(text, change)
    check(text, name)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400))
def test_arbitrary_text(text: str) -> None:
    check(text, "random.txt")


@settings(max_examples=150, deadline=None)
@given(
    cells=st.lists(st.sampled_from([*TOKENS, "", " ", "SOC", "NV0", "CPU Affinity"]), max_size=30)
)
def test_token_soup_under_a_header(cells: list[str]) -> None:
    header = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    body = "\t".join(cells).replace("GPU3", "\nGPU1").replace("NIC0", "\nNIC0")
    check(header + "GPU0\t" + body, "soup.txt")
