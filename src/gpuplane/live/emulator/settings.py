"""What ``gpuplane serve engine`` was started with, and the engine it builds from that.

The server flags are vLLM's (``--gpu-memory-utilization``, ``--max-num-seqs``,
``--max-num-batched-tokens``, ``--max-model-len``, ``--enable-prefix-caching``, ...) held in the
same :class:`~gpuplane.serving.inference_server.InferenceServerSpec` the twin reads from a
container's args, and the engine comes from the twin's own builder
(``serving.engine_build.engine_for_gpu``): the emulator serves what the twin simulates.

Cold start: the twin's ``serving.cold_start`` without the image pull (the process is already
running): weights at ``storage_gbps`` (each TP rank loads its shard in parallel) plus ``init_s``
(CUDA init, memory profiling, graph capture), unless ``load_time_s`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.live.emulator.dcgm_model import Deployment, LoadPhases
from gpuplane.live.emulator.kv_config import KvTransferConfig
from gpuplane.live.emulator.nixl import DEFAULT_HOLD_S
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.engine_build import BuiltEngine, engine_for_gpu
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.models.shape import DTYPE_BYTES
from gpuplane.serving.steptime.kv_transfer import KvLink
from gpuplane.topology.catalog import get_gpu_model


@dataclass(frozen=True, slots=True)
class EmulatorSettings:
    spec: InferenceServerSpec
    gpu: str
    time_scale: float = 1.0
    seed: int = 0
    mean_output_tokens: int = 128  # the synthetic answer's length before EOS (uniform, mean)
    load_time_s: float | None = None  # None: from the memory plan (weights / storage + init)
    storage_gbps: float = ColdStart().storage_gbps
    init_s: float = ColdStart().init_s
    # P/D (docs/live.md, "P/D disaggregation"): --kv-transfer-config, and the link the KV
    # cache is read over: a NIC of kv_link_gbit (the twin's kv_link_gbit_per_s default), one
    # per prefill TP rank, or kv_link (GPUs of one node, from its topology).
    kv_transfer: KvTransferConfig | None = None
    kv_link_gbit: float = 400.0
    kv_link: KvLink | None = None
    kv_hold_timeout_s: float = DEFAULT_HOLD_S  # VLLM_NIXL_ABORT_REQUEST_TIMEOUT

    def kv_link_for(self, prefill_tp: int) -> KvLink:
        """The path a prefill engine of ``prefill_tp`` ranks sends its KV over."""
        if self.kv_link is not None:
            return self.kv_link
        return KvLink.nic(self.kv_link_gbit, parallel_paths=prefill_tp)


def build(settings: EmulatorSettings) -> tuple[BuiltEngine, float]:
    """The engine and its load time (emulated seconds before it answers)."""
    built = engine_for_gpu(
        settings.spec, get_gpu_model(settings.gpu), engine_id="engine-0", record_token_times=True
    )
    load = settings.load_time_s
    if load is None:
        load = built.plan.weights_bytes / (settings.storage_gbps * 1e9) + settings.init_s
    return built, load


def weights_s(settings: EmulatorSettings, built: BuiltEngine, load_s: float) -> float:
    """When the weights are in (emulated seconds): their share of the cold start."""
    weights = built.plan.weights_bytes / (settings.storage_gbps * 1e9)
    total = weights + settings.init_s
    return load_s * weights / total if total > 0 else 0.0


def deployment(settings: EmulatorSettings, built: BuiltEngine, load_s: float) -> Deployment:
    """What the DCGM endpoint reads besides the engine's counters (``dcgm_model``)."""
    gpu = get_gpu_model(settings.gpu)
    if gpu.board is None:
        raise ValueError(f"the catalog has no board power and clocks for {gpu.name}")
    shape = built.step_model.model
    return Deployment(
        board=gpu.board,
        memory_mib=gpu.memory_mib,
        plan=built.plan,
        load=LoadPhases(weights_s(settings, built, load_s), load_s, settings.storage_gbps * 1e9),
        tp=settings.spec.tensor_parallel_size,
        nvlink=gpu.nvlink is not None,
        hidden_size=shape.hidden_size,
        num_layers=shape.num_layers,
        dtype_bytes=DTYPE_BYTES.get(built.plan.dtype, 2.0),
    )
