"""``gpuplane serving``: LLM engine cost model checks (models, memory, step time, calibration)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

import gpuplane
from gpuplane.cli.console import err, out, print_json
from gpuplane.cli.numbers import finite
from gpuplane.core.errors import InputError, Location
from gpuplane.core.units import GIB
from gpuplane.core.validation import validate_model
from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.memory import (
    VllmMemorySettings,
    kv_dtype_bytes,
    plan_memory,
    resolve_dtype,
)
from gpuplane.serving.memory.report import memory_report
from gpuplane.serving.models import default_catalog, resolve_model
from gpuplane.serving.steptime import (
    Calibration,
    KvLink,
    RooflineStepTime,
    default_calibration,
    kv_transfer_bytes,
    kv_transfer_s,
    load_calibration,
)
from gpuplane.serving.steptime.calibrate import fit_calibration, uncalibrated
from gpuplane.serving.steptime.dataset import load_dataset
from gpuplane.serving.steptime.interconnect import pod_interconnect
from gpuplane.serving.steptime.report import step_report
from gpuplane.topology.catalog import get_gpu_model

serving_app = typer.Typer(
    help="LLM engine cost model: model shapes, vLLM memory/KV sizing, step time.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        "--model-config",
        help="A catalog name or Hugging Face id (see `gpuplane serving models`), "
        "or the path of a Hugging Face config.json (--model-config FILE).",
    ),
]
GpuOpt = Annotated[str, typer.Option("--gpu", help="GPU model, e.g. A100-80GB, H100, H200.")]
TpOpt = Annotated[int, typer.Option("--tp", min=1, help="Tensor-parallel size.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
DtypeOpt = Annotated[str, typer.Option("--dtype", help="auto, float16, bfloat16 or float32.")]
KvDtypeOpt = Annotated[
    str, typer.Option("--kv-cache-dtype", help="auto (the model dtype), fp8, fp8_e4m3, fp8_e5m2.")
]
VIDUR_SUBDIR = Path("shared/data/vidur")


def _gib(value: float | None) -> int | None:
    return None if value is None else int(value * GIB)


@serving_app.command("models")
def models_command(json_out: JsonOpt = False) -> None:
    """List the model catalog with the shape figures the engine model uses."""
    catalog = default_catalog()
    rows: list[dict[str, Any]] = []
    for entry in catalog.entries.values():
        shape = catalog.shape(entry)
        rows.append(
            {
                "name": entry.name,
                "hf_id": entry.hf_id,
                "model_type": shape.model_type,
                "params_b": round(shape.num_params / 1e9, 3),
                "active_params_b": round(shape.num_active_params / 1e9, 3),
                "layers": shape.num_layers,
                "hidden_size": shape.hidden_size,
                "heads": shape.num_attention_heads,
                "kv_heads": shape.num_kv_heads,
                "kv_bytes_per_token": shape.kv_bytes_per_token(),
                "max_model_len": shape.derived_max_model_len,
                "dtype": shape.config_dtype,
                "moe": shape.moe is not None,
            }
        )
    if json_out:
        print_json(rows)
        return
    table = Table(title="Model catalog")
    for col in ("name", "params", "layers", "hidden", "heads/kv", "KV B/token", "max len", "type"):
        table.add_column(col)
    for r in rows:
        params = f"{r['params_b']:g}B" + (
            f" ({r['active_params_b']:g}B active)" if r["moe"] else ""
        )
        table.add_row(
            r["name"],
            params,
            str(r["layers"]),
            str(r["hidden_size"]),
            f"{r['heads']}/{r['kv_heads']}",
            f"{r['kv_bytes_per_token']:,}",
            f"{r['max_model_len']:,}",
            r["model_type"],
        )
    out.print(table)


# Bounds on what a user types: 1 PiB of GPU memory, a million requests in one step, a hundred
# million tokens of context; far beyond any GPU or model, far below float and index overflow.
MAX_GIB = 1024.0**2
MAX_BATCH = 1_000_000
MAX_TOKENS = 100_000_000
# VllmMemorySettings field -> the option that sets it, so a refused value names the option.
_MEMORY_FLAGS = {
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_model_len": "--max-model-len",
    "block_size": "--block-size",
    "kv_cache_dtype": "--kv-cache-dtype",
    "dtype": "--dtype",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "max_num_seqs": "--max-num-seqs",
    "gpu_memory_bytes": "--gpu-memory-gib",
    "weights_bytes": "--weights-gib",
    "activation_bytes": "--activation-gib",
    "non_torch_bytes": "--non-torch-gib",
    "other_processes_bytes": "--other-processes-gib",
}


def _memory_settings(values: dict[str, Any]) -> VllmMemorySettings:
    try:
        return validate_model(VllmMemorySettings, values)
    except InputError as err:
        field = (err.location.field or "").split(".")[0]
        flag = _MEMORY_FLAGS.get(field)
        if flag is None:
            raise
        problem, raw = err.problem, values.get(field)
        if field.endswith("_bytes") and isinstance(raw, int):
            problem = f"got {raw / GIB:g} GiB"  # the option's unit, not the setting's bytes
        raise InputError(problem, expected=err.expected, location=Location(field=flag)) from None


@serving_app.command("memory")
def memory_command(
    model: ModelOpt,
    gpu: GpuOpt,
    tp: TpOpt = 1,
    gpu_memory_utilization: Annotated[
        float, typer.Option(help="Fraction of total GPU memory vLLM may use.", callback=finite())
    ] = 0.9,
    max_model_len: Annotated[
        int | None, typer.Option(help="Longest request; default: from config.json.")
    ] = None,
    block_size: Annotated[int, typer.Option(help="Tokens per KV block.")] = 16,
    kv_cache_dtype: KvDtypeOpt = "auto",
    dtype: DtypeOpt = "auto",
    max_num_batched_tokens: Annotated[
        int | None, typer.Option(help="Tokens in the profiling run; default per GPU.")
    ] = None,
    max_num_seqs: Annotated[int | None, typer.Option(help="Requests per step.")] = None,
    gpu_memory_gib: Annotated[
        float | None,
        typer.Option(
            help="Total GPU memory as CUDA reports it (GiB).",
            callback=finite(above=0.0, maximum=MAX_GIB),
        ),
    ] = None,
    weights_gib: Annotated[
        float | None,
        typer.Option(
            help="Measured weights per GPU.", callback=finite(minimum=0.0, maximum=MAX_GIB)
        ),
    ] = None,
    activation_gib: Annotated[
        float | None,
        typer.Option(
            help="Measured PyTorch activation peak.", callback=finite(minimum=0.0, maximum=MAX_GIB)
        ),
    ] = None,
    non_torch_gib: Annotated[
        float | None,
        typer.Option(
            help="Measured non-torch memory.", callback=finite(minimum=0.0, maximum=MAX_GIB)
        ),
    ] = None,
    other_processes_gib: Annotated[
        float,
        typer.Option(
            help="GPU memory already held by other processes.",
            callback=finite(minimum=0.0, maximum=MAX_GIB),
        ),
    ] = 0.0,
    json_out: JsonOpt = False,
) -> None:
    """vLLM's memory budget and KV-cache size for one engine GPU (errors as vLLM words them)."""
    settings = _memory_settings(
        {
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "block_size": block_size,
            "kv_cache_dtype": kv_cache_dtype,
            "dtype": dtype,
            "max_num_batched_tokens": max_num_batched_tokens,
            "max_num_seqs": max_num_seqs,
            "gpu_memory_bytes": _gib(gpu_memory_gib),
            "weights_bytes": _gib(weights_gib),
            "activation_bytes": _gib(activation_gib),
            "non_torch_bytes": _gib(non_torch_gib),
            "other_processes_bytes": _gib(other_processes_gib) or 0,
        }
    )
    plan = plan_memory(resolve_model(model), get_gpu_model(gpu), tp, settings)
    if json_out:
        print_json(memory_report(plan, settings.gpu_memory_utilization))
        return
    for line in plan.log_lines():
        out.print(line)
    if plan.max_concurrency is None:
        out.print("encoder-only model: no KV cache")
    else:
        out.print(
            f"num_gpu_blocks {plan.num_gpu_blocks:,} x {plan.block_size} tokens; "
            f"{plan.kv_bytes_per_token:,} KV bytes per token per GPU"
        )


def parse_prefills(text: str) -> list[PrefillChunk]:
    """``512,1024`` (new prompts) or ``256@4096`` (a chunk of 256 after 4096 cached tokens)."""
    chunks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        new, at, ctx = part.partition("@")
        try:
            # "256@" (an @ with no context) is a mistake, not 256 new tokens.
            chunk = PrefillChunk(int(new), int(ctx) if at else 0)
        except ValueError:
            chunk = PrefillChunk(-1)
        if chunk.new_tokens < 1 or chunk.context_tokens < 0:
            raise InputError(
                f"{part!r} in {text!r}",
                expected="comma-separated token counts >= 1, each optionally @cached-context "
                "(e.g. 512,2048 or 256@4096)",
                location=Location(field="--prefill-tokens"),
            )
        chunks.append(chunk)
    return chunks


def check_context_lengths(prefills: list[PrefillChunk], context: int, max_model_len: int) -> None:
    """No sequence longer than the model's context: vLLM refuses such a prompt ("This model's
    maximum context length is N tokens. However, you requested M tokens ...")."""
    for chunk in prefills:
        total = chunk.new_tokens + chunk.context_tokens
        if total > max_model_len:
            raise InputError(
                f"This model's maximum context length is {max_model_len} tokens. However, you "
                f"requested {total} tokens ({chunk.context_tokens} cached + {chunk.new_tokens} "
                "new)",
                expected=f"prompt chunks of at most {max_model_len} tokens with their context",
                location=Location(field="--prefill-tokens"),
            )
    if context + 1 > max_model_len:
        raise InputError(
            f"This model's maximum context length is {max_model_len} tokens; a decode step "
            f"after {context} tokens would exceed it",
            expected=f"--context below {max_model_len}",
            location=Location(field="--context"),
        )


def parse_gpu_indices(text: str) -> list[int]:
    try:
        gpus = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        gpus = []
    if not gpus or any(g < 0 for g in gpus) or len(set(gpus)) != len(gpus):
        raise InputError(f"--gpus {text!r}", expected="distinct GPU indices like 0,1,2,3")
    return gpus


@serving_app.command("step")
def step_command(
    model: ModelOpt,
    gpu: GpuOpt,
    tp: TpOpt = 1,
    prefill_tokens: Annotated[
        str | None,
        typer.Option(help="Prompt chunks in the step: 512,2048 or 256@4096 (after cached 4096)."),
    ] = None,
    decode_batch: Annotated[
        int, typer.Option(min=0, max=MAX_BATCH, help="Decoding requests in the step.")
    ] = 0,
    context: Annotated[
        int,
        typer.Option(
            min=0, max=MAX_TOKENS, help="Context (cached tokens) of each decoding request."
        ),
    ] = 0,
    topology: Annotated[
        str | None,
        typer.Option(help="Node: a preset, a hardware YAML or saved `nvidia-smi topo -m`."),
    ] = None,
    gpus: Annotated[str | None, typer.Option(help="GPU indices of the pod, e.g. 0,1,2,3.")] = None,
    dtype: DtypeOpt = "auto",
    kv_cache_dtype: KvDtypeOpt = "auto",
    calibration: Annotated[
        Path | None, typer.Option(help="A calibration file from `serving calibrate`.")
    ] = None,
    uncalibrated_roofline: Annotated[
        bool, typer.Option("--uncalibrated", help="Pure roofline (peak rates, no overheads).")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Time of one engine step (forward pass) and what it is made of."""
    prefills = parse_prefills(prefill_tokens) if prefill_tokens else []
    if not prefills and decode_batch == 0:
        raise InputError(
            "the step is empty", expected="--prefill-tokens and/or --decode-batch with --context"
        )
    if gpus is not None and topology is None:
        raise InputError("--gpus without --topology", expected="--topology PRESET_OR_FILE")
    shape = resolve_model(model)
    check_context_lengths(prefills, context if decode_batch else 0, shape.derived_max_model_len)
    batch = BatchShape(tuple(prefills), (context,) * decode_batch)
    cal: Calibration = load_calibration(calibration) if calibration else default_calibration()
    if uncalibrated_roofline:
        cal = uncalibrated(cal)
    gpu_model = get_gpu_model(gpu)
    engine = RooflineStepTime(
        shape,
        gpu_model,
        tp,
        interconnect=pod_interconnect(
            topology, parse_gpu_indices(gpus) if gpus else None, gpu_model, tp
        ),
        calibration=cal,
        dtype=dtype,
        kv_cache_dtype=kv_cache_dtype,
        cpu_overhead=not uncalibrated_roofline,
    )
    breakdown = engine.breakdown(batch)
    data = step_report(engine, batch, breakdown)
    if json_out:
        print_json(data)
        return
    out.print(
        f"{data['model']} on {data['tp']}x {data['gpu']} ({data['dtype']}), "
        f"{data['tokens']} tokens: {data['step_ms']:.3f} ms, {data['bottleneck']}-bound"
    )
    table = Table()
    for col in ("operator", "kernels", "ms", "bound"):
        table.add_column(col)
    for name, op in data["per_operator"].items():
        mark = " *" if op["extrapolated"] else ""
        table.add_row(name + mark, str(op["count"]), f"{op['ms']:.3f}", op["bound"])
    table.add_row("cpu overhead", "", f"{data['cpu_overhead_ms']:.3f}", "overhead")
    out.print(table)
    measured = engine.cal.family.gpu
    if engine.cal.extrapolated:
        out.print(f"* {measured} efficiencies applied to {engine.gpu.name}'s peaks (extrapolated)")
    elif engine.cal.family.borrowed:
        ops = ", ".join(sorted(engine.cal.family.borrowed))
        out.print(f"* no {measured} measurements of {ops}: efficiencies borrowed from another GPU")


@serving_app.command("kv-transfer")
def kv_transfer_command(
    model: ModelOpt,
    tokens: Annotated[int, typer.Option(min=0, help="Prompt tokens whose KV cache moves.")],
    nic_gbit: Annotated[
        float | None,
        typer.Option(
            help="Between nodes: NIC speed in Gb/s (e.g. 400).", callback=finite(above=0.0)
        ),
    ] = None,
    ranks: Annotated[
        int, typer.Option(min=1, help="Prefill TP ranks sending their shares in parallel.")
    ] = 1,
    topology: Annotated[
        str | None, typer.Option(help="Within a node: a preset or topology file.")
    ] = None,
    gpus: Annotated[
        str | None, typer.Option(help="The sending and receiving GPU, e.g. 0,4.")
    ] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU model (for topology files).")] = "H100",
    kv_cache_dtype: KvDtypeOpt = "auto",
    json_out: JsonOpt = False,
) -> None:
    """Time to move a request's KV cache from a prefill engine to a decode engine."""
    shape = resolve_model(model)
    if (nic_gbit is None) == (topology is None):
        raise InputError(
            "say how the KV cache travels", expected="either --nic-gbit or --topology with --gpus"
        )
    if nic_gbit is not None:
        if nic_gbit <= 0:
            raise InputError(f"--nic-gbit {nic_gbit}", expected="a speed > 0")
        link = KvLink.nic(nic_gbit, parallel_paths=ranks)
    else:
        pair = parse_gpu_indices(gpus or "0,1")
        link = KvLink.from_interconnect(
            pod_interconnect(topology, pair, get_gpu_model(gpu), len(pair))
        )
    width = kv_dtype_bytes(kv_cache_dtype, resolve_dtype(shape, get_gpu_model(gpu)))
    seconds = kv_transfer_s(tokens, shape, link, kv_dtype_bytes=width)
    moved = kv_transfer_bytes(tokens, shape, width)
    data = {
        "model": shape.name,
        "tokens": tokens,
        "bytes": moved,
        "link_gbps": link.gbps,
        "parallel_paths": link.parallel_paths,
        "link": link.description,
        "transfer_ms": seconds * 1e3,
    }
    if json_out:
        print_json(data)
        return
    out.print(
        f"{tokens:,} tokens of {shape.name}: {moved / GIB:.3f} GiB of KV over "
        f"{link.description} in {seconds * 1e3:.3f} ms"
    )


def default_vidur_dir() -> Path | None:
    """``shared/data/vidur`` beside the repository, or ``../shared/data/vidur``."""
    package = Path(gpuplane.__file__).resolve()
    candidates = [parent / VIDUR_SUBDIR for parent in package.parents]
    candidates.append(Path.cwd().parent / VIDUR_SUBDIR)
    return next((c for c in candidates if c.is_dir()), None)


@serving_app.command("calibrate")
def calibrate_command(
    vidur: Annotated[
        Path | None, typer.Option(help="Vidur's data folder (default: shared/data/vidur).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--out", help="Write the calibration JSON here.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Fit the step-time efficiencies to Vidur's measured kernel times."""
    root = vidur or default_vidur_dir()
    if root is None or not root.is_dir():
        raise InputError(
            f"no Vidur data folder {'at ' + str(root) if root else 'found'}",
            expected="--vidur pointing at shared/data/vidur",
        )
    start = time.perf_counter()
    cal = fit_calibration(load_dataset(root))
    elapsed = time.perf_counter() - start
    text = json.dumps(cal.to_dict(), indent=2, sort_keys=True) + "\n"
    if output is not None:
        output.write_text(text, "utf-8")
        err.print(f"wrote {output} in {elapsed:.2f} s")
    if json_out or output is None:
        print(text, end="")
        return
    table = Table(title="Fit error (MAPE / P90 abs % error)")
    for col in ("GPU", "operator", "samples", "MAPE %", "P90 %", "note"):
        table.add_column(col)
    for fam in cal.families.values():
        for op, e in fam.errors.items():
            table.add_row(fam.gpu, op, str(e.n), f"{e.mape_pct:.1f}", f"{e.p90_pct:.1f}", "")
        for op, other in fam.borrowed.items():
            table.add_row(fam.gpu, op, "-", "-", "-", f"from {other}")
    out.print(table)
