"""Sweep files: expansion (grid order, ranges, seeded random draws) and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.sweep import expand, load_sweep
from gpuplane.sweep.bases.registry import bases
from gpuplane.sweep.engine.spec import ParameterSpec, SearchSpec
from tests.unit.sweep.sweep_factories import GRID, openb_sweep


def params(**specs: dict[str, object]) -> dict[str, ParameterSpec]:
    return {k: ParameterSpec.model_validate(v) for k, v in specs.items()}


def test_grid_order_last_parameter_fastest() -> None:
    points = expand(params(a={"values": [1, 2]}, b={"values": "7-9"}), SearchSpec())
    assert [p.params for p in points] == [(("a", x), ("b", y)) for x in (1, 2) for y in (7, 8, 9)]
    assert [p.index for p in points] == list(range(6))


def test_ranges_whole_and_fractional() -> None:
    (whole,) = params(x={"range": {"start": 2, "stop": 10, "step": 4}}).values()
    (frac,) = params(x={"range": {"start": 0.5, "stop": 0.95, "step": 0.15}}).values()
    grid = expand({"w": whole, "f": frac}, SearchSpec())
    assert sorted({p.value("w") for p in grid}) == [2, 6, 10]
    assert sorted({p.value("f") for p in grid}) == [0.5, 0.65, 0.8, 0.95]


def test_random_search_is_seeded_and_within_bounds() -> None:
    spec = params(
        q={"integers": [1, 32]},
        kv={"uniform": [0.5, 0.95]},
        poll={"log_uniform": [1, 60]},
        policy={"values": ["a", "b"]},
    )
    search = SearchSpec.model_validate({"random": {"samples": 50, "seed": 7}})
    first, again = expand(spec, search), expand(spec, search)
    assert first == again and len(first) == 50
    other = expand(spec, SearchSpec.model_validate({"random": {"samples": 50, "seed": 8}}))
    assert other != first
    for p in first:
        assert 1 <= p.value("q") <= 32 and isinstance(p.value("q"), int)  # type: ignore[operator]
        assert 0.5 <= p.value("kv") <= 0.95  # type: ignore[operator]
        assert 1 <= p.value("poll") <= 60  # type: ignore[operator]
        assert p.value("policy") in ("a", "b")


def test_random_search_keeps_a_repeated_draw_once() -> None:
    spec = params(policy={"values": ["a", "b"]})
    points = expand(spec, SearchSpec.model_validate({"random": {"samples": 40}}))
    assert sorted(p.value("policy") for p in points) == ["a", "b"]


def located(path: Path) -> str:
    with pytest.raises(InputError) as info:
        load_sweep(path, bases())
    return str(info.value)


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("parameters", "extra", "needle", "expected"),
    [
        (GRID.replace("packing", "pakcing"), "", "pakcing", "policy.values[1]: unknown policy"),
        (GRID.replace("[a, b]", "[a, zz]"), "", "zz", "trace.values[1]: no pod list"),
        (GRID.replace("42-44", "44-42"), "", "44-42", "seed.values: '44-42'"),
        (GRID + "  spice: {values: [1]}\n", "", "spice", "has no knob 'spice'"),
        (GRID + "  point: {values: [1]}\n", "", "point:", "'point' is the table's first column"),
        (GRID + "  tune_ratio: {uniform: [1, 2]}\n", "", "tune_ratio", "continuous domain"),
        (GRID + "  tune_ratio: {values: [-1]}\n", "", "tune_ratio", "tune_ratio.values[0]"),
        (GRID, "figures: [arrivals, oops]\n", "oops", "figures[1]: the OpenB base has no"),
        (GRID, "pareto: [[arrivals, failed_pods]]\n", "pareto", "pareto[0][0]"),
        (GRID, "objectives: {nope: min}\n", "nope", "objectives.nope"),
        (GRID, "serch: {}\n", "serch", "unknown key 'serch'"),
        (GRID.replace("values: [a, b]", "values: [a], range: {start: 1, stop: 2}"), "",
         "range", "exactly one of"),
    ],
)  # fmt: skip
def test_mistakes_are_located(
    tmp_path: Path, parameters: str, extra: str, needle: str, expected: str
) -> None:
    path = openb_sweep(tmp_path, parameters, extra)
    text = located(path)
    assert text.startswith(f"{path}:{line_of(path, needle)}: "), text
    assert expected in text


def test_unknown_base_kind_lists_the_kinds(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nbase:\n  openbb: {}\nparameters:\n  seed: {values: [1]}\n")
    expected = "s.yaml:3: base.openbb: unknown base kind 'openbb'; expected one of autoscaling, "
    assert expected + "fit, openb, scenario" in located(path)
