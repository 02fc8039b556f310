"""The pieces of live P/D: ``--kv-transfer-config`` as vLLM reads it, a request's
``kv_transfer_params``, the prefill engine's holds, the router's prefill body and its split."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from gpuplane.cli.main import run
from gpuplane.core.errors import InputError
from gpuplane.live.emulator.clock import ScaledClock
from gpuplane.live.emulator.kv_config import KvTransferConfig, parse_kv_transfer_config
from gpuplane.live.emulator.kv_params import read_kv_params
from gpuplane.live.emulator.nixl import KvHolds, NixlConnector
from gpuplane.live.emulator.nixl_metrics import NixlMetrics
from gpuplane.live.openai.errors import ApiError
from gpuplane.live.openai.kv_transfer import PREFILL_PARAMS
from gpuplane.live.openai.text import segments_of, text_tokens
from gpuplane.live.router.backends import Backend, EngineLoadScrape
from gpuplane.live.router.picker import Picker
from gpuplane.live.router.prefill_hop import prefill_body
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.request import Request, RequestId
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.router import Role
from gpuplane.serving.steptime.kv_transfer import KvLink
from tests.unit.serving.test_engine_fakes import LINEAR, make_config


def test_kv_transfer_config_defaults_and_errors() -> None:
    cfg = parse_kv_transfer_config(
        '{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_buffer_device":"cuda"}',
        new_id="e1",
    )
    assert (cfg.kv_role, cfg.engine_id, cfg.kv_load_failure_policy) == ("kv_both", "e1", "fail")
    assert (
        len(
            parse_kv_transfer_config(
                '{"kv_connector":"NixlConnector","kv_role":"kv_producer"}'
            ).engine_id
        )
        == 36
    )
    bad = {
        "{": "not JSON",
        "[]": "not an object",
        '{"kv_role":"kv_both"}': "kv_connector is missing",
        '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}': "is not emulated",
        '{"kv_connector":"NixlConnector"}': "kv_role must be given",
        '{"kv_connector":"NixlConnector","kv_role":"both"}': "unsupported kv_role",
        '{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_load_failure_policy":"x"}': (
            "kv_load_failure_policy"
        ),
        '{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_rol":1}': "unknown field",
    }
    for text, message in bad.items():
        with pytest.raises(InputError, match=message) as err:
            parse_kv_transfer_config(text)
        assert "--kv-transfer-config" in str(err.value)


def test_serve_engine_refuses_a_bad_kv_transfer_config_with_exit_2() -> None:
    argv = ["serve", "engine", "--model", "Llama-3.1-8B", "--gpu", "H100-80GB", "--port", "0"]
    assert run([*argv, "--kv-transfer-config", '{"kv_connector":"P2pNcclConnector"}']) == 2


def test_kv_params() -> None:
    assert not read_kv_params({}).remote_decode
    assert read_kv_params({"kv_transfer_params": PREFILL_PARAMS}).remote_decode
    with pytest.raises(ApiError, match="must be an object"):
        read_kv_params({"kv_transfer_params": [1]})
    full = {
        "do_remote_prefill": True,
        "remote_block_ids": [3, 4],
        "remote_engine_id": "p",
        "remote_request_id": "cmpl-1",
        "remote_host": "10.0.0.1",
        "remote_port": 8000,
        "tp_size": 2,
    }
    got = read_kv_params({"kv_transfer_params": full})
    assert got.remote is not None and got.remote.block_ids == (3, 4) and got.remote.tp_size == 2
    empty = read_kv_params({"kv_transfer_params": {**full, "remote_block_ids": []}})
    assert empty.remote_prefill and empty.remote is None and empty.invalid is None
    partial = {k: v for k, v in full.items() if k != "remote_host"}
    invalid = read_kv_params({"kv_transfer_params": partial})
    assert invalid.remote is None and invalid.invalid is not None
    assert "remote_host" in invalid.invalid


def test_holds_are_read_once_and_expire() -> None:
    holds = KvHolds(num_blocks=10, timeout_s=480.0)
    ids = holds.hold("a", 40, 3, now_s=0.0)
    assert ids == [0, 1, 2]
    assert holds.hold("b", 100, 7, now_s=1.0) == [3, 4, 5, 6, 7, 8, 9]
    assert holds.next_deadline_s() == 480.0
    assert holds.take("a", (0, 1)) is None  # not the blocks held
    taken = holds.take("a", (0, 1, 2))
    assert taken is not None and taken.num_tokens == 40
    assert holds.take("a", (0, 1, 2)) is None  # read once
    assert holds.expire(480.5) == [] and holds.expire(481.0) == ["b"]
    assert holds.held == {} and holds.next_deadline_s() == float("inf")
    assert holds.hold("c", 16, 1, now_s=500.0) == [0]  # ids go round the pool


def test_fetch_stages_count_requests_read_and_not_yet_scheduled() -> None:
    engine = Engine(make_config(), LINEAR, "d")
    nixl = NixlConnector(
        KvTransferConfig("NixlConnector", "kv_consumer", "d"),
        engine,
        resolve_model("Llama-3.1-8B"),
        1,
        lambda tp: KvLink.nic(400.0),
        ScaledClock(),
        NixlMetrics(CollectorRegistry(), "m"),
        lambda rid: 0,
    )
    assert nixl.fetch_stages() == {"waiting_to_start": 0, "in_progress": 0, "completed_waiting": 0}
    live = engine.add_request(Request(RequestId("r"), 0.0, 64, 4), 0.0, external_kv_tokens=63)
    nixl.landed(live)
    assert nixl.fetch_stages()["completed_waiting"] == 1
    engine.advance(engine.next_event_time())  # its first step ran: it was scheduled
    assert live.first_scheduled_s == 0.0
    assert nixl.fetch_stages()["completed_waiting"] == 0


def test_prefill_body_is_what_vllms_proxy_sends() -> None:
    body: dict[str, object] = {
        "model": "m",
        "messages": [],
        "max_completion_tokens": 50,
        "min_tokens": 2,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    out = prefill_body(body)
    assert out["kv_transfer_params"] == PREFILL_PARAMS
    assert (out["stream"], out["max_tokens"], out["max_completion_tokens"]) == (False, 1, 1)
    assert "stream_options" not in out and "min_tokens" not in out
    assert body["stream"] is True  # the client's body is left for the decode hop


def _backend(url: str, role: Role) -> Backend:
    b = Backend(url, role)
    b.ready, b.load = True, EngineLoadScrape(num_blocks=1000)
    return b


def _req(text: str, n: int) -> Request:
    tokens = text_tokens(text)
    return Request(RequestId(f"r{n}"), 0.0, len(tokens), 4, segments_of(tokens))


def test_picker_splits_as_the_request_path_does() -> None:
    engines = [_backend("http://p", "prefill"), _backend("http://d", "decode")]
    picker = Picker("llm-d", pd=PDSettings(non_cached_tokens=16))
    doc = "a shared document " * 50
    first = picker.pick_pd(_req(doc + "one", 1), engines, 0.0)
    assert first.engine is engines[1] and first.prefill is engines[0]
    # Short prompts (under the threshold) stay on the decode engine.
    short = picker.pick_pd(_req("hi", 2), engines, 0.0)
    assert short.engine is engines[1] and short.prefill is None
    # The same prompt again: the decode engine holds it all (by the prefix index): no split.
    again = picker.pick_pd(_req(doc + "one", 3), engines, 0.0)
    assert again.engine is engines[1] and again.prefill is None
    # No ready prefill engine: the decode engine serves the whole request.
    engines[0].ready = False
    alone = picker.pick_pd(_req("something new " * 40, 4), engines, 0.0)
    assert alone.engine is engines[1] and alone.prefill is None
    # Only prefill engines ready: nowhere to decode.
    engines[0].ready, engines[1].ready = True, False
    assert picker.pick_pd(_req("x" * 400, 5), engines, 0.0).engine is None


def test_kv_link_within_a_node_is_the_slowest_hop_between_the_two_gpus() -> None:
    from gpuplane.cli.serve.engine import _kv_settings

    cfg = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    got = _kv_settings(cfg, 400.0, "dgx-h100", "0,4", "H100-80GB")
    assert got["kv_link"].gbps == 450.0  # NV18 on a DGX H100
    assert _kv_settings(None, 400.0, None, "0,1", "H100-80GB") == {}
    for gpus, message in (("0,9", "GPU 9 is not on dgx-h100"), ("0,1,2", "--kv-gpus")):
        with pytest.raises(InputError, match=message):
            _kv_settings(cfg, 400.0, "dgx-h100", gpus, "H100-80GB")


def test_serve_router_needs_an_engine_to_decode_on() -> None:
    assert run(["serve", "router", "--prefill-engine", "http://127.0.0.1:1"]) == 2
    assert run(["serve", "router", "--engine", "127.0.0.1:8000"]) == 2
    same = ["--engine", "http://127.0.0.1:1", "--decode-engine", "http://127.0.0.1:1/"]
    assert run(["serve", "router", *same]) == 2
