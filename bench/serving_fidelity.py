"""Benchmark: fidelity of the engine step-time model against Vidur's measured kernel times.

Run: ``.venv/bin/python bench/serving_fidelity.py`` (reads ``../shared/data/vidur``; another
folder with ``--vidur DIR``). In one process, side by side on the same rows:

- *calibrated*: the packaged calibration (``serving/data/steptime_calibration.json``);
- *held-out*: for the per-layer operators, refitted with one profiled model left out and scored
  on that model only (how well the fit carries to a shape it has not seen);
- *roofline*: the uncalibrated baseline (peak FLOP/s and bandwidth, hard maximum, no fixed costs).

Printed: per-operator MAPE / P90 absolute % error per GPU; per (GPU, model, TP) the error of a
layer's non-attention time and of a forward pass without attention (layers x operators + TP
all-reduces, the measured all-reduce interpolated at the message size); all-reduce error per
node; a sanity check against measured end-to-end iteration times; and prediction timings.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.models import default_catalog
from gpuplane.serving.steptime import RooflineStepTime, default_calibration
from gpuplane.serving.steptime.allreduce import allreduce_s
from gpuplane.serving.steptime.calibrate import (
    FREE_PARAMS,
    predict_collective,
    predict_op,
    uncalibrated,
)
from gpuplane.serving.steptime.calibration import Calibration, ErrorStats
from gpuplane.serving.steptime.dataset import (
    PROFILE_DTYPE_BYTES,
    Samples,
    VidurDataset,
    load_dataset,
)
from gpuplane.serving.steptime.fit import error_stats, fit_op_params
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.operators import Work
from gpuplane.serving.steptime.vidur_data import load_all_reduce_profiles
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.presets import load_preset

Array = npt.NDArray[np.float64]
LAYER_OPS = (
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
)
DGX = {"a100": ("a100_dgx", "dgx-a100"), "h100": ("h100_dgx", "dgx-h100")}


def fmt(e: ErrorStats | None) -> str:
    return "      -      " if e is None else f"{e.mape_pct:5.1f} / {e.p90_pct:5.1f}"


def subset(s: Samples, mask: npt.NDArray[np.bool_]) -> Samples:
    def pick(x: float | Array) -> Array:
        return np.asarray(x)[mask]

    work = Work(pick(s.work.flops), pick(s.work.bytes), pick(s.work.causal_flops))
    return Samples(
        s.family,
        s.op,
        work,
        s.measured_s[mask],
        s.model[mask],
        s.source_op[mask],
        s.tp[mask],
        s.tokens[mask],
    )


def held_out(ds: VidurDataset, s: Samples) -> ErrorStats | None:
    """Leave-one-model-out: fit on the other models, score on the one left out."""
    models = np.unique(s.model)
    if len(models) < 2:
        return None
    peaks = ds.peaks[s.family]
    pred = np.empty_like(s.measured_s)
    for name in models:
        test = s.model == name
        train = subset(s, ~test)
        params = fit_op_params(train.work, train.measured_s, *peaks, FREE_PARAMS[s.op])
        pred[test] = predict_op(params, subset(s, test), peaks)
    return error_stats(pred, s.measured_s)


def operator_table(ds: VidurDataset, cal: Calibration, base: Calibration) -> None:
    print("\n## Per operator (MAPE % / P90 abs % error)\n")
    print("| GPU | operator | samples | calibrated | held-out model | roofline baseline |")
    print("|---|---|---:|---:|---:|---:|")
    for (family, op), s in sorted(ds.ops.items()):
        peaks = ds.peaks[family]
        fam, bfam = cal.families[family], base.families[family]
        calibrated = error_stats(predict_op(fam.operators[op], s, peaks), s.measured_s)
        roofline = error_stats(predict_op(bfam.operators[op], s, peaks), s.measured_s)
        cv = held_out(ds, s) if op != "gemm" else None
        print(
            f"| {fam.gpu} | {op} | {len(s.measured_s)} | {fmt(calibrated)} | {fmt(cv)} | "
            f"{fmt(roofline)} |"
        )
    for (family, kind), cs in sorted(ds.collectives.items()):
        fam, bfam = cal.families[family], base.families[family]
        calibrated = error_stats(predict_collective(fam.collectives[kind], cs), cs.measured_s)
        roofline = error_stats(predict_collective(bfam.collectives[kind], cs), cs.measured_s)
        print(
            f"| {fam.gpu} | all_reduce ({kind}) | {len(cs.measured_s)} | {fmt(calibrated)} | "
            f"      -       | {fmt(roofline)} |"
        )


def layer_sums(
    ds: VidurDataset, cal: Calibration
) -> dict[tuple[str, str, int], dict[float, list[float]]]:
    """(family, model, tp) -> tokens -> [measured layer s, predicted layer s]."""
    parts: dict[tuple[str, str, int, float, str], list[tuple[float, float]]] = defaultdict(list)
    for (family, op), s in ds.ops.items():
        if op == "gemm":  # the pooled fit repeats the four projections' rows
            continue
        pred = predict_op(cal.families[family].operators[op], s, ds.peaks[family])
        for i in range(len(s.measured_s)):
            if s.source_op[i] not in LAYER_OPS:
                continue
            key = (family, str(s.model[i]), int(s.tp[i]), float(s.tokens[i]), str(s.source_op[i]))
            parts[key].append((float(s.measured_s[i]), float(pred[i])))
    ops_per_model: dict[tuple[str, str], set[str]] = defaultdict(set)
    for family, model, _, _, op in parts:
        ops_per_model[(family, model)].add(op)
    sums: dict[tuple[str, str, int], dict[float, list[float]]] = defaultdict(dict)
    grouped: dict[tuple[str, str, int, float], dict[str, tuple[float, float]]] = defaultdict(dict)
    for (family, model, tp, tokens, op), values in parts.items():
        grouped[(family, model, tp, tokens)][op] = (
            statistics.mean(v[0] for v in values),
            statistics.mean(v[1] for v in values),
        )
    for (family, model, tp, tokens), ops in grouped.items():
        if set(ops) != ops_per_model[(family, model)]:
            continue
        sums[(family, model, tp)][tokens] = [
            sum(v[0] for v in ops.values()),
            sum(v[1] for v in ops.values()),
        ]
    return sums


def measured_allreduce(root: Path) -> dict[tuple[str, int], tuple[Array, Array]]:
    out = {}
    for prof in load_all_reduce_profiles(root):
        for family, (node, _) in DGX.items():
            if prof.node != node:
                continue
            for n in np.unique(prof.num_gpus):
                rows = prof.num_gpus == n
                order = np.argsort(prof.size_bytes[rows])
                out[(family, int(n))] = (prof.size_bytes[rows][order], prof.time_s[rows][order])
    return out


def model_table(root: Path, ds: VidurDataset, cal: Calibration, base: Calibration) -> None:
    print(
        "\n## Per (GPU, model, TP): one layer without attention, and a forward pass without "
        "attention (layers x operators + 2 all-reduces per layer)\n"
    )
    print(
        "| GPU | model | TP | points | layer: calibrated | layer: roofline | "
        "forward: calibrated | forward: roofline |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    catalog = default_catalog()
    ar = measured_allreduce(root)
    cal_sums, base_sums = layer_sums(ds, cal), layer_sums(ds, base)
    for key in sorted(cal_sums):
        family, model, tp = key
        entry = catalog.by_vidur(model)
        assert entry is not None
        shape = catalog.shape(entry)
        tokens = np.array(sorted(cal_sums[key]))
        meas = np.array([cal_sums[key][t][0] for t in tokens])
        pred = np.array([cal_sums[key][t][1] for t in tokens])
        pred0 = np.array([base_sums[key][t][1] for t in tokens])
        layers = shape.num_layers
        msg = tokens * shape.hidden_size * PROFILE_DTYPE_BYTES
        if tp > 1:
            sizes, times = ar[(family, tp)]
            meas_ar = np.interp(msg, sizes, times)
            link = Interconnect.from_topology(load_preset(DGX[family][1]), list(range(tp)))
            kind = link.link_kind
            ar_cal = np.asarray(
                allreduce_s(cal.families[family].collectives[kind], tp, link.bottleneck_gbps, msg)
            )
            ar_base = np.asarray(
                allreduce_s(base.families[family].collectives[kind], tp, link.bottleneck_gbps, msg)
            )
        else:
            meas_ar = ar_cal = ar_base = np.zeros_like(msg)
        fwd_meas = layers * (meas + 2 * meas_ar)
        fwd_cal = layers * (pred + 2 * ar_cal)
        fwd_base = layers * (pred0 + 2 * ar_base)
        gpu = cal.families[family].gpu
        print(
            f"| {gpu} | {entry.name} | {tp} | {len(tokens)} | {fmt(error_stats(pred, meas))} | "
            f"{fmt(error_stats(pred0, meas))} | {fmt(error_stats(fwd_cal, fwd_meas))} | "
            f"{fmt(error_stats(fwd_base, fwd_meas))} |"
        )


def network_table(ds: VidurDataset, cal: Calibration) -> None:
    print("\n## All-reduce per node and group size (calibrated)\n")
    print("| node | GPUs | link | samples | all sizes | >= 4 MiB | < 64 KiB |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for (family, kind), cs in sorted(ds.collectives.items()):
        pred = predict_collective(cal.families[family].collectives[kind], cs)
        for node in np.unique(cs.node):
            for n in np.unique(cs.num_gpus[cs.node == node]):
                rows = (cs.node == node) & (cs.num_gpus == n)
                big, small = rows & (cs.size_bytes >= 4 * 2**20), rows & (cs.size_bytes < 2**16)
                cells = [
                    fmt(error_stats(pred[m], cs.measured_s[m])) if m.any() else "-"
                    for m in (rows, big, small)
                ]
                print(
                    f"| {node} | {int(n)} | {kind} | {int(rows.sum())} | "
                    + " | ".join(cells)
                    + " |"
                )


def end_to_end(ds: VidurDataset) -> None:
    print(
        "\n## Sanity check: measured engine iterations (CodeLlama-34B, TP 2, A100, sarathi-serve)\n"
    )
    print(
        "Steps mix prefill and decode and the file does not say how; the prediction assumes a "
        "decode step of the batch with contexts at the mean of a 256-token prompt plus half of "
        "its batch_size x 3 generated tokens, kernels only (model_execution_e2e has no CPU "
        "scheduling).\n"
    )
    print("| batch | measured ms | predicted ms | error % |")
    print("|---:|---:|---:|---:|")
    catalog = default_catalog()
    shape = catalog.shape(catalog.entries["CodeLlama-34B-Instruct"])
    engine = RooflineStepTime(shape, get_gpu_model("A100-SXM4-80GB"), 2, cpu_overhead=False)
    errs = []
    for bs, measured in zip(ds.overhead.batch_size, ds.overhead.model_execution_s, strict=True):
        ctx = int(256 + 1.5 * bs)
        pred = engine.step_time(BatchShape((), (ctx,) * int(bs))).total_s
        errs.append(abs(pred / measured - 1) * 100)
        print(
            f"| {int(bs)} | {measured * 1e3:.1f} | {pred * 1e3:.1f} | "
            f"{(pred / measured - 1) * 100:+.1f} |"
        )
    print(f"\nMAPE {statistics.mean(errs):.1f} %")


def timings(ds: VidurDataset, cal: Calibration) -> None:
    print("\n## Prediction timings\n")
    catalog = default_catalog()
    engine = RooflineStepTime(
        catalog.shape(catalog.entries["Llama-3.1-70B"]),
        get_gpu_model("H100"),
        4,
    )
    rng = np.random.default_rng(7)
    batches = [
        BatchShape(
            (PrefillChunk(int(rng.integers(64, 2048)), int(rng.integers(0, 4096))),),
            tuple(int(c) for c in rng.integers(16, 8192, size=int(rng.integers(1, 256)))),
        )
        for _ in range(2000)
    ]
    start = time.perf_counter()
    for b in batches:
        engine.step_time(b)
    per_step = (time.perf_counter() - start) / len(batches)
    rows = sum(len(s.measured_s) for s in ds.ops.values())
    start = time.perf_counter()
    for (family, op), s in ds.ops.items():
        predict_op(cal.families[family].operators[op], s, ds.peaks[family])
    vec = time.perf_counter() - start
    print(
        f"- step_time (Llama-3.1-70B, TP 4, H100, 1 prefill chunk + up to 255 decodes): "
        f"{per_step * 1e6:.1f} us per step ({1 / per_step:,.0f} steps/s)"
    )
    print(
        f"- vectorised operator predictions over all {rows:,} measured rows: {vec * 1e3:.1f} ms "
        f"({rows / vec / 1e6:.1f} M rows/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vidur", type=Path, default=Path("../shared/data/vidur"))
    args = parser.parse_args()
    start = time.perf_counter()
    ds = load_dataset(args.vidur)
    print(
        f"loaded {sum(len(s.measured_s) for s in ds.ops.values()):,} operator rows and "
        f"{sum(len(c.measured_s) for c in ds.collectives.values()):,} all-reduce rows in "
        f"{time.perf_counter() - start:.2f} s"
    )
    cal = default_calibration()
    base = uncalibrated(cal)
    operator_table(ds, cal, base)
    model_table(args.vidur, ds, cal, base)
    network_table(ds, cal)
    end_to_end(ds)
    timings(ds, cal)


if __name__ == "__main__":
    main()
