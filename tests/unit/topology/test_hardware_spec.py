"""The hardware description loader: every malformed file is an InputError with file, line, field.

``BASE`` is a small valid file; each case edits it in one place and names the line and field the
error must point at. Fuzz tests check that no input, however broken, escapes as another exception.
"""

from __future__ import annotations

from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.topology.hardware_spec import HardwareSpec, load_hardware_spec

BASE = """\
name: tiny
gpu_model: H100
cpu: {model: test, sockets: 2, cores_per_socket: 2, threads_per_core: 1}
numa_nodes:
  - {id: 0, cpus: "0-1", socket: 0}
  - {id: 1, cpus: "2-3", socket: 1}
pcie: {gen: 5, width: 16}
bridges:
  - {id: hb0, kind: host-bridge, numa: 0}
  - {id: sw0, kind: switch, parent: hb0}
  - {id: hb1, kind: host-bridge, numa: 1}
gpus:
  - {index: 0, parent: sw0}
  - {index: 1, parent: sw0}
  - {index: 2, parent: hb1}
nics:
  - {name: mlx5_0, parent: sw0}
nvlink: {fabric: nvswitch}
"""

SOURCE = "node.yaml"


def load(text: str) -> HardwareSpec:
    return load_hardware_spec(text, SOURCE)


def test_base_is_valid() -> None:
    spec = load(BASE)
    assert spec.name == "tiny" and len(spec.gpus) == 3 and spec.nvlink.fabric == "nvswitch"
    assert spec.pcie is not None and spec.pcie.gbps == 63.008


LINES = BASE.splitlines(keepends=True)


def line(number: int, new: str) -> str:
    """BASE with line ``number`` (1-based) replaced by ``new`` (which may span lines)."""
    return "".join(LINES[: number - 1]) + new + "\n" + "".join(LINES[number:])


def item(number: int, body: str) -> str:
    """BASE with the flow mapping on list-item line ``number`` replaced by ``{body}``."""
    return line(number, "  - {" + body + "}")


def nv(body: str) -> str:
    return line(18, "nvlink: {" + body + "}")


def sub(old: str, new: str) -> str:
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


SW = "id: sw0, kind: switch, parent: "
G0 = "index: 0, parent: sw0, "
G2 = "index: 2, parent: hb1, "
NO_NICS = line(16, "nics: mlx5_0").replace("  - {name: mlx5_0, parent: sw0}\n", "")
UNCLOSED = item(13, "index: 0, parent: sw0").replace("sw0}\n", "sw0\n", 1)
HB1P = "id: hb1, kind: host-bridge, numa: 1, parent: hb0"
N1 = 'id: 1, cpus: "2-3", socket: 1'
SLIT = BASE + "numa_distances: "
ASYM = SLIT + "\n  - [10, 21]\n  - [20, 10]\n"
OVER = "[[0, 1, 9], [0, 2, 10]]"  # GPU 0: 19 links, an H100 has 18
CYCLE = "  - {id: sw0, kind: switch, parent: sw1}\n  - {id: sw1, kind: switch, parent: sw0}"
NO_C2C = item(13, "index: 0, parent: sw0, host_link: c2c").replace("H100", "GH200")
NO_GPUS = "".join(LINES[:11]) + "gpus: []\n" + "".join(LINES[15:])
TWO_NICS = line(17, "  - {name: mlx5_0, parent: sw0}\n  - {name: mlx5_0, parent: hb1}")

# (case id, text, line, field, a word the rendered error must contain). BASE's lines: 3 cpu,
# 5-6 numa_nodes, 7 pcie, 9-11 bridges (hb0, sw0, hb1), 13-15 gpus, 17 nic, 18 nvlink, 19 new.
CASES: list[tuple[str, str, int, str | None, str]] = [
    ("unknown top key", BASE + "gpu_modle: H100\n", 19, "gpu_modle", "unknown key"),
    ("gpu key", item(13, "index: 0, parent: sw0, colour: red"), 13, "gpus[0].colour", "index"),
    ("unknown parent", item(15, "index: 2, parent: hb9"), 15, "gpus[2].parent", "hb9"),
    ("switch cycle", item(10, SW + "sw0"), 10, "bridges[1].parent", "cycle"),
    ("two-switch cycle", line(10, CYCLE), 10, "bridges[1].parent", "sw0 -> sw1 -> sw0"),
    ("switch parent", item(10, SW + "hbX"), 10, "bridges[1].parent", "hbX"),
    ("dup bridge", item(11, "id: hb0, kind: host-bridge, numa: 1"), 11, "bridges[2].id", "hb0"),
    ("gpu index gap", item(15, "index: 3, parent: hb1"), 15, "gpus[2].index", "skip 2"),
    ("dup gpu index", item(15, "index: 1, parent: hb1"), 15, "gpus[2].index", "also"),
    ("hb numa", item(11, "id: hb1, kind: host-bridge, numa: 5"), 11, "bridges[2].numa", "NUMA 5"),
    ("hb no numa", item(11, "id: hb1, kind: host-bridge"), 11, "bridges[2]", "numa"),
    ("hb parent", item(11, HB1P), 11, "bridges[2].parent", "root"),
    ("switch numa", item(10, SW + "hb0, numa: 0"), 10, "bridges[1].numa", "host bridge"),
    ("switch orphan", item(10, "id: sw0, kind: switch"), 10, "bridges[1]", "parent"),
    ("no pcie anywhere", line(7, "# no default PCIe link"), 10, "bridges[1]", "pcie"),
    ("numa socket", item(6, 'id: 1, cpus: "2-3", socket: 2'), 6, "numa_nodes[1].socket", "0..1"),
    ("dup numa id", item(6, 'id: 0, cpus: "2-3", socket: 1'), 6, "numa_nodes[1].id", "also"),
    ("backwards cpus", item(6, N1.replace("2-3", "3-2")), 6, "numa_nodes[1].cpus", "backwards"),
    ("garbage cpus", item(6, 'id: 1, cpus: "2-x", socket: 1'), 6, "numa_nodes[1].cpus", "0-55"),
    ("overlap cpus", item(6, 'id: 1, cpus: "1-3", socket: 1'), 6, "numa_nodes[1].cpus", "CPU 1"),
    ("cpu count", sub("cores_per_socket: 2", "cores_per_socket: 4"), 3, "cpu", "= 8"),
    ("no cpus", item(6, "id: 1, socket: 1"), 6, "numa_nodes[1].cpus", "no CPUs"),
    ("word for int", sub("sockets: 2", "sockets: two"), 3, "cpu.sockets", "integer"),
    ("bool for int", item(13, "index: true, parent: sw0"), 13, "gpus[0].index", "integer"),
    ("str for float", item(6, N1 + ', memory_gib: "9"'), 6, "numa_nodes[1].memory_gib", "number"),
    ("neg memory", item(6, N1 + ", memory_gib: -1"), 6, "numa_nodes[1].memory_gib", "greater"),
    ("pcie width", sub("width: 16", "width: 12"), 7, "pcie.width", "16"),
    ("pcie gen", sub("gen: 5", "gen: 0"), 7, "pcie.gen", "1"),
    ("bridge kind", item(10, "id: sw0, kind: hub, parent: hb0"), 10, "bridges[1].kind", "switch"),
    ("numa kind", item(6, N1 + ", kind: gpu"), 6, "numa_nodes[1].kind", "gpu-memory"),
    ("missing gpu_model", line(2, "# no gpu_model"), 1, "gpu_model", "missing"),
    ("missing parent", item(13, "index: 0"), 13, "gpus[0].parent", "missing"),
    ("mapping expected", line(3, "cpu: 5"), 3, "cpu", "sockets"),
    ("list expected", NO_NICS, 16, "nics", "list"),
    ("unknown gpu model", sub("gpu_model: H100", "gpu_model: H900"), 2, "gpu_model", "H900"),
    ("per-gpu model", item(13, "index: 0, parent: sw0, model: Z80"), 13, "gpus[0].model", "Z80"),
    ("no nvlink", sub("gpu_model: H100", "gpu_model: L40S"), 13, "gpus[0]", "NVLink"),
    ("dup pair", nv("fabric: mesh, pairs: [[0, 1, 6], [1, 0, 2]]"), 18, "nvlink.pairs[1]", "also"),
    ("pair gpu", nv("fabric: mesh, pairs: [[0, 5, 6]]"), 18, "nvlink.pairs[0][1]", "GPU 5"),
    ("self pair", nv("fabric: mesh, pairs: [[1, 1, 6]]"), 18, "nvlink.pairs[0]", "two different"),
    ("short pair", nv("fabric: mesh, pairs: [[0, 1]]"), 18, "nvlink.pairs[0]", "2 numbers"),
    ("too many links", nv("fabric: mesh, pairs: " + OVER), 18, "nvlink.pairs", "19 NVLinks"),
    ("no pairs", nv("fabric: mesh"), 18, "nvlink.pairs", "without pairs"),
    ("nvswitch pairs", nv("fabric: nvswitch, pairs: [[0, 1, 1]]"), 18, "nvlink.pairs", "mesh"),
    ("fabric name", nv("fabric: nvlink"), 18, "nvlink.fabric", "mesh"),
    ("slit size", SLIT + "[[10]]\n", 19, "numa_distances", "1 rows"),
    ("slit row", SLIT + "[[10, 21], [21]]\n", 19, "numa_distances[1]", "1 values"),
    ("slit diagonal", SLIT + "[[11, 21], [21, 10]]\n", 19, "numa_distances[0][0]", "10"),
    ("slit symmetric", ASYM, 20, "numa_distances[0][1]", "symmetric"),
    ("slit range", SLIT + "[[10, 5], [5, 10]]\n", 19, "numa_distances[0][1]", "10..255"),
    ("mem numa kind", item(13, G0 + "memory_numa: 0"), 13, "gpus[0].memory_numa", "gpu-memory"),
    ("mem numa id", item(13, G0 + "memory_numa: 9"), 13, "gpus[0].memory_numa", "NUMA 9"),
    ("c2c model", item(15, G2 + "host_link: c2c"), 15, "gpus[2].host_link", "C2C"),
    ("c2c switch", NO_C2C, 13, "gpus[0].host_link", "host bridge"),
    ("dup nic", TWO_NICS, 18, "nics[1].name", "also"),
    ("nic parent", item(17, "name: mlx5_0, parent: sw9"), 17, "nics[0].parent", "sw9"),
    ("no gpus", NO_GPUS, 12, "gpus", "at least 1"),
    ("dup yaml key", BASE + "name: other\n", 19, "name", "duplicate"),
    ("unclosed flow", UNCLOSED, 14, None, "YAML"),
    ("tab indent", line(5, '\t- {id: 0, cpus: "0-1", socket: 0}'), 5, None, "YAML"),
    ("two docs", BASE + "---\nname: again\n", 19, None, "single document"),
    ("control char", sub("name: tiny", "name: ti\x07ny"), 1, None, "printable"),
    ("python tag", sub("name: tiny", "name: !!python/object:os.system x"), 1, None, "YAML"),
]


@pytest.mark.parametrize(
    ("text", "line", "field", "word"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_malformed_files_raise_located_errors(
    text: str, line: int, field: str | None, word: str
) -> None:
    with pytest.raises(InputError) as info:
        load(text)
    err = info.value
    assert err.location.source == SOURCE
    assert err.location.line == line, err.render()
    assert err.location.field == field, err.render()
    assert word.lower() in err.render().lower()
    assert str(err).startswith(f"{SOURCE}:{line}")


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("", "the file is empty"),
        ("~\n", "the file is empty"),
        ("- a\n- b\n", "mapping"),
    ],
)
def test_empty_or_non_mapping_files(text: str, word: str) -> None:
    with pytest.raises(InputError) as info:
        load(text)
    assert info.value.location.source == SOURCE and info.value.location.line == 1
    assert word in info.value.render()


def test_recursive_alias_is_a_located_error_not_a_crash() -> None:
    with pytest.raises(InputError) as info:
        load(sub("name: tiny", "name: &a [*a]"))
    assert info.value.location.line == 1 and info.value.location.field == "name[0]"
    assert "recursive alias" in info.value.problem


def test_dates_stay_strings() -> None:
    assert load(sub("name: tiny", "name: 2024-05-01")).name == "2024-05-01"


def test_single_cpu_may_be_written_as_a_number() -> None:
    spec = load(
        sub("cores_per_socket: 2", "cores_per_socket: 1")
        .replace('"0-1"', "0")
        .replace('"2-3"', "1")
    )
    assert spec.numa_nodes[0].cpus == "0"


def test_unknown_key_is_reported_before_the_missing_key_it_causes() -> None:
    with pytest.raises(InputError) as info:
        load(sub("gpu_model: H100", "gpu_modle: H100"))
    assert info.value.location.field == "gpu_modle" and info.value.location.line == 2
    assert "gpu_model" in (info.value.expected or "")


def test_spec_built_in_python_is_checked_too() -> None:
    with pytest.raises(InputError) as info:
        HardwareSpec.model_validate(
            {
                "name": "x",
                "gpu_model": "A10",
                "cpu": {"model": "c", "sockets": 1, "cores_per_socket": 1},
                "numa_nodes": [{"id": 0, "cpus": "0", "socket": 0}],
                "gpus": [{"index": 0, "parent": "nowhere"}],
            }
        )
    assert info.value.location.field == "gpus[0].parent"


# ----- fuzz: nothing but InputError ever comes out -----

PRESET_TEXT = (
    resources.files("gpuplane.topology").joinpath("data/presets/dgx1-v100.yaml").read_text("utf-8")
)
_YAML_CHARS = st.sampled_from(list(":-[]{},#&*!|>'\"%@` \t\n0123456789aXz."))


def _assert_only_input_errors(text: str) -> None:
    try:
        load(text)
    except InputError as err:
        assert err.location.source == SOURCE
        line = err.location.line
        assert line is None or 1 <= line <= text.count("\n") + 2


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_fuzz_random_text(text: str) -> None:
    _assert_only_input_errors(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_preset(data: st.DataObject) -> None:
    text = BASE if data.draw(st.booleans()) else PRESET_TEXT
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text)))
        action = data.draw(
            st.sampled_from(["insert", "delete", "replace", "drop-line", "dup-line"])
        )
        lines = text.splitlines(keepends=True)
        row = data.draw(st.integers(0, max(len(lines) - 1, 0)))
        if action == "insert":
            text = text[:pos] + data.draw(_YAML_CHARS) + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + 1 :]
        elif action == "replace":
            text = text[:pos] + data.draw(_YAML_CHARS) + text[pos + 1 :]
        elif action == "drop-line" and lines:
            text = "".join(lines[:row] + lines[row + 1 :])
        elif lines:
            text = "".join(lines[: row + 1] + lines[row:])
    _assert_only_input_errors(text)
