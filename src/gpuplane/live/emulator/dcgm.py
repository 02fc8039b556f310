"""The emulator's DCGM-exporter endpoint: ``/metrics`` for the engine's emulated GPUs.

Follows dcgm-exporter 4.x (``etc/default-counters.csv``): the default counters with their HELP
text and type, the metric names as they are (a counter has no ``_total`` suffix), integers for
integer fields and six decimals for double fields, the labels ``gpu``, ``UUID``, ``pci_bus_id``,
``device``, ``modelName``, ``Hostname``, ``DCGM_FI_DRIVER_VERSION`` and, when the GPUs are mapped
to a pod (dcgm-exporter does it through the kubelet's pod-resources API; here flags or the
``POD_NAME``/``POD_NAMESPACE``/``CONTAINER_NAME`` environment), ``container``, ``namespace``,
``pod``. Like dcgm-exporter it collects every ``collect_interval_ms`` (its ``-c`` flag, default
30000) and serves the last collection to every scrape. One GPU per TP rank; the values:
:mod:`gpuplane.live.emulator.dcgm_model`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from dataclasses import dataclass

from aiohttp import web

from gpuplane.live.emulator.dcgm_model import Counters, Deployment, GpuFields, fields
from gpuplane.live.emulator.runtime import EngineRuntime
from gpuplane.live.emulator.service import RUNTIME

TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_DRIVER_VERSION = "570.133.20"
# Bus ids of the eight GPUs of an HGX H100/H200 board, in the order NVML numbers them.
HGX_BUS_IDS = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")


@dataclass(frozen=True, slots=True)
class Family:
    """One counter of default-counters.csv: its type, HELP and the ``GpuFields`` attribute it
    reads (``None``: always 0 here); ``double``: DCGM's double fields print six decimals."""

    name: str
    kind: str
    help: str
    attr: str | None = None
    double: bool = False


FAMILIES: tuple[Family, ...] = (
    Family("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "sm_clock_mhz"),
    Family("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "mem_clock_mhz"),
    Family("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "memory_temp_c"),
    Family("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "gpu_temp_c"),
    Family("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "power_w", double=True),
    Family(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
        "energy_mj",
    ),
    Family("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    Family("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "gpu_util_pct"),
    Family("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", "mem_copy_util_pct"),
    Family("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    Family("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    Family("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    Family("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "fb_free_mib"),
    Family("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "fb_used_mib"),
    Family(
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "counter",
        "Total number of NVLink bandwidth counters for all lanes.",
        "nvlink_bytes",
    ),
    Family("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    Family(
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for uncorrectable errors",
    ),
    Family(
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for correctable errors",
    ),
    Family("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    Family(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "gauge",
        "Ratio of time the graphics engine is active.",
        "gr_engine_active",
        double=True,
    ),
    Family(
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "gauge",
        "Ratio of cycles the tensor (HMMA) pipe is active.",
        "tensor_active",
        double=True,
    ),
    Family(
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
        "dram_active",
        double=True,
    ),
    Family(
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "gauge",
        "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
        "payloads - in bytes per second.",
        "pcie_tx_bytes_per_s",
    ),
    Family(
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "gauge",
        "The rate of data received over the PCIe bus - including both protocol headers and data "
        "payloads - in bytes per second.",
        "pcie_rx_bytes_per_s",
    ),
)
FAMILY_NAMES = frozenset(f.name for f in FAMILIES)


@dataclass(frozen=True, slots=True)
class DcgmSettings:
    """The exporter's flags: where it runs and what its labels say."""

    hostname: str
    driver_version: str = DEFAULT_DRIVER_VERSION
    pod: str = ""
    namespace: str = ""
    container: str = ""
    collect_interval_ms: int = 30000
    seed: int = 0


def gpu_labels(settings: DcgmSettings, model_name: str, rank: int) -> str:
    """The label set of GPU ``rank`` (deterministic from the hostname and the seed)."""
    digest = hashlib.sha256(f"{settings.hostname}/{settings.seed}/{rank}".encode()).digest()
    gpu_uuid = f"GPU-{uuid.UUID(bytes=digest[:16])}"
    bus = HGX_BUS_IDS[rank] if rank < len(HGX_BUS_IDS) else f"{0xE0 + rank:02X}"
    pairs = [
        ("gpu", str(rank)),
        ("UUID", gpu_uuid),
        ("pci_bus_id", f"00000000:{bus}:00.0"),
        ("device", f"nvidia{rank}"),
        ("modelName", model_name),
        ("Hostname", settings.hostname),
        ("DCGM_FI_DRIVER_VERSION", settings.driver_version),
    ]
    if settings.pod:
        pairs += [
            ("container", settings.container),
            ("namespace", settings.namespace),
            ("pod", settings.pod),
        ]
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(labels: list[str], values: GpuFields) -> str:
    """The exposition text of one collection (every rank has the same values)."""
    lines: list[str] = []
    for fam in FAMILIES:
        name = fam.name
        lines += [f"# HELP {name} {fam.help}", f"# TYPE {name} {fam.kind}"]
        value = getattr(values, fam.attr) if fam.attr else 0
        text = f"{value:f}" if fam.double else str(int(value))
        extra = ',err_code="0",err_msg="No Error"' if name == "DCGM_FI_DEV_XID_ERRORS" else ""
        lines += [f"{name}{{{lab}{extra}}} {text}" for lab in labels]
    return "\n".join(lines) + "\n"


class DcgmExporter:
    """Collects the emulated GPUs' fields on a timer and serves the last collection (mutable)."""

    def __init__(
        self, runtime: EngineRuntime, deployment: Deployment, settings: DcgmSettings, model: str
    ) -> None:
        self.runtime = runtime
        self.deployment = deployment
        self.settings = settings
        self.labels = [gpu_labels(settings, model, r) for r in range(deployment.tp)]
        self._prev = Counters(0.0)
        self.text = ""
        self.collect()

    def counters(self) -> Counters:
        self.runtime.poll()
        engine = self.runtime.engine
        t = self.runtime.clock.now_s()
        prefill, decode = engine.busy_seconds(t)
        st = engine.stats
        computed = st.prompt_tokens - st.prompt_cached_tokens - st.prompt_external_tokens
        gen = st.generation_tokens
        return Counters(t, prefill, decode, max(computed, 0) + gen, gen)

    def collect(self) -> None:
        cur = self.counters()
        self.text = render(self.labels, fields(self.deployment, self._prev, cur))
        self._prev = cur

    async def run(self) -> None:
        """Collect every interval until cancelled."""
        while True:
            await asyncio.sleep(self.settings.collect_interval_ms / 1000)
            self.collect()

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.text.encode(), headers={"Content-Type": TEXT_FORMAT})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="OK")


EXPORTER = web.AppKey("dcgm_exporter", DcgmExporter)


def make_dcgm_app(
    engine_app: web.Application, deployment: Deployment, settings: DcgmSettings, model: str
) -> web.Application:
    """The DCGM endpoint of the engine served by ``engine_app`` (``service.make_app``)."""
    exporter = DcgmExporter(engine_app[RUNTIME], deployment, settings, model)
    app = web.Application()
    app[EXPORTER] = exporter
    app.router.add_get("/metrics", exporter.metrics)
    app.router.add_get("/health", exporter.health)
    task: list[asyncio.Task[None]] = []

    async def start(app: web.Application) -> None:
        task.append(asyncio.get_running_loop().create_task(exporter.run()))

    async def stop(app: web.Application) -> None:
        for t in task:
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await t

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app
