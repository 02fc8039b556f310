"""The engines behind the router: readiness from ``/health``, load from ``/metrics``.

Read from vLLM: ``vllm:num_requests_waiting``, ``vllm:num_requests_running``,
``vllm:kv_cache_usage_perc`` and ``vllm:cache_config_info``'s ``block_size``/``num_gpu_blocks``
(the fields llm-d's model-server protocol reads); from SGLang: ``sglang:num_queue_reqs``,
``sglang:num_running_reqs``, ``sglang:token_usage`` (page size 1 when none is exported). The
context limit comes from ``/v1/models`` (``max_model_len`` on each model card, as vLLM serves
it), read once an engine is ready.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from gpuplane.serving.routing.router import Role

_WAITING = ("vllm:num_requests_waiting", "sglang:num_queue_reqs")
_RUNNING = ("vllm:num_requests_running", "sglang:num_running_reqs")
_USAGE = ("vllm:kv_cache_usage_perc", "sglang:token_usage")


@dataclass(frozen=True, slots=True)
class EngineLoadScrape:
    """One scrape of an engine's metrics: what the routers read of it."""

    num_waiting: int = 0
    num_running: int = 0
    kv_usage: float = 0.0
    block_size: int = 16
    num_blocks: int = 0


def parse_load(text: str) -> EngineLoadScrape:
    """The load in a ``/metrics`` page (families missing from it read as zero)."""
    values: dict[str, float] = {}
    block_size, num_blocks = 16, 0
    for fam in text_string_to_metric_families(text):
        for sample in fam.samples:
            if sample.name == "vllm:cache_config_info":
                block_size = int(sample.labels.get("block_size", block_size))
                num_blocks = int(sample.labels.get("num_gpu_blocks", num_blocks))
            elif sample.name in (*_WAITING, *_RUNNING, *_USAGE):
                values[sample.name] = values.get(sample.name, 0.0) + sample.value
    if any(name.startswith("sglang:") for name in values):
        block_size = 1

    def first(names: tuple[str, str]) -> float:
        return next((values[n] for n in names if n in values), 0.0)

    return EngineLoadScrape(
        int(first(_WAITING)), int(first(_RUNNING)), first(_USAGE), block_size, num_blocks
    )


def parse_max_model_len(models: object) -> int | None:
    """The longest ``max_model_len`` in a ``/v1/models`` answer (vLLM's model cards carry it;
    SGLang's and others' may not: None)."""
    data = models.get("data") if isinstance(models, dict) else None
    lens = [
        card["max_model_len"]
        for card in data or []
        if isinstance(card, dict) and type(card.get("max_model_len")) is int
    ]
    return max(lens) if lens else None


class Backend:
    """One engine as the router holds it (mutable: readiness, load, requests in flight) and
    its P/D role (``both``: serves whole requests)."""

    def __init__(self, url: str, role: Role = "both") -> None:
        self.url = url.rstrip("/")
        self.role: Role = role
        self.ready = False
        self.load = EngineLoadScrape()
        self.outstanding = 0
        self.num_routed = 0
        # From the engine's /v1/models card (vLLM's ``max_model_len``); None until read.
        self.max_model_len: int | None = None

    @property
    def used_blocks(self) -> int:
        return round(self.load.kv_usage * self.load.num_blocks)
