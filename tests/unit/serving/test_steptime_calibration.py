from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuplane.core.errors import InputError
from gpuplane.serving.steptime import default_calibration, load_calibration
from gpuplane.serving.steptime.calibrate import (
    fit_calibration,
    predict_collective,
    predict_op,
)
from gpuplane.serving.steptime.dataset import VidurDataset, load_dataset
from gpuplane.serving.steptime.fit import Param, error_stats, fit_op_params
from gpuplane.serving.steptime.opcost import OpParams, op_time
from gpuplane.serving.steptime.operators import Work

VIDUR = Path(__file__).resolve().parents[4] / "shared/data/vidur"
needs_vidur = pytest.mark.skipif(not VIDUR.is_dir(), reason="shared/data/vidur not present")


@pytest.fixture(scope="module")
def dataset() -> VidurDataset:
    return load_dataset(VIDUR)


def test_packaged_calibration_covers_every_operator() -> None:
    cal = default_calibration()
    assert set(cal.families) == {"a100", "h100"}
    for family in cal.families.values():
        for op in (
            "qkv_proj",
            "o_proj",
            "gate_up_proj",
            "down_proj",
            "gemm",
            "norm",
            "attention_prefill",
            "attention_decode",
        ):
            params = family.operators[op]
            assert 0 < params.bw_eff <= 1 and 0 < params.mfu <= 1
        assert set(family.collectives) == {"nvlink", "pcie"}
    assert cal.families["h100"].borrowed == {
        "attention_prefill": "a100",
        "attention_decode": "a100",
        "cpu_overhead": "a100",
    }


@needs_vidur
def test_stored_errors_are_reproduced(dataset: VidurDataset) -> None:
    cal = default_calibration()
    for (family, op), samples in dataset.ops.items():
        stored = cal.families[family].errors[op]
        got = error_stats(
            predict_op(cal.families[family].operators[op], samples, dataset.peaks[family]),
            samples.measured_s,
        )
        assert got.n == stored.n
        assert got.mape_pct == pytest.approx(stored.mape_pct, abs=0.01)
        assert got.p90_pct == pytest.approx(stored.p90_pct, abs=0.01)
    for (family, kind), cs in dataset.collectives.items():
        stored = cal.families[family].errors[f"all_reduce_{kind}"]
        got = error_stats(
            predict_collective(cal.families[family].collectives[kind], cs), cs.measured_s
        )
        assert got.mape_pct == pytest.approx(stored.mape_pct, abs=0.01)


@needs_vidur
def test_refitting_gives_the_packaged_calibration(dataset: VidurDataset) -> None:
    refit = fit_calibration(dataset).to_dict()
    packaged = default_calibration().to_dict()
    assert _close(refit, packaged)


def _close(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-6, atol=1e-9))
    return a == b


def test_the_fit_recovers_known_efficiencies() -> None:
    rng = np.random.default_rng(3)
    tokens = rng.integers(1, 8192, size=400).astype(float)
    k, n = 4096.0, 14336.0
    work = Work(2 * tokens * k * n, (k * n + tokens * (k + n)) * 2.0)
    truth = OpParams(mfu=0.62, bw_eff=0.81, fixed_s=6e-6, sharpness=2.5)
    measured = np.asarray(op_time(truth, work, 989e12, 3.35e12).total_s)
    free = [
        Param("mfu", "fraction", 0.5),
        Param("bw_eff", "fraction", 0.5),
        Param("fixed_s", "positive", 1e-5),
        Param("sharpness", "sharpness", 2.0),
    ]
    got = fit_op_params(work, measured, 989e12, 3.35e12, free)
    assert got.mfu == pytest.approx(0.62, rel=1e-3)
    assert got.bw_eff == pytest.approx(0.81, rel=1e-3)
    assert got.fixed_s == pytest.approx(6e-6, rel=1e-2)
    assert got.sharpness == pytest.approx(2.5, rel=1e-2)


def test_a_broken_calibration_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_text('{"families": {"a100": {"gpu": 1}}}')
    with pytest.raises(InputError, match="not a step-time calibration"):
        load_calibration(path)
    path.write_text("{nope")
    with pytest.raises(InputError, match="cannot read the calibration"):
        load_calibration(path)
