"""Request validation, the state machine and engine settings."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.core.errors import InputError
from gpuplane.core.validation import validate_model
from gpuplane.serving.engine.settings import GIB, EngineConfig, vllm_default_limits
from gpuplane.serving.request import (
    VALID_TRANSITIONS,
    IllegalTransition,
    Request,
    RequestId,
    RequestState,
    Segment,
    check_transition,
)


def test_every_state_has_an_entry_and_terminal_states_are_final() -> None:
    assert set(VALID_TRANSITIONS) == set(RequestState)
    assert not VALID_TRANSITIONS[RequestState.FINISHED]
    assert not VALID_TRANSITIONS[RequestState.ABORTED]
    check_transition(RequestState.RUNNING, RequestState.PREEMPTED)
    check_transition(RequestState.PREEMPTED, RequestState.RUNNING)
    with pytest.raises(IllegalTransition):
        check_transition(RequestState.WAITING, RequestState.FINISHED)
    with pytest.raises(IllegalTransition):
        check_transition(RequestState.FINISHED, RequestState.RUNNING)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"prompt_tokens": 0}, "prompt_tokens=0"),
        ({"output_tokens": 0}, "output_tokens=0"),
        ({"max_tokens": 0}, "max_tokens=0"),
        ({"segments": (Segment("a", 5),)}, "segments hold 5 tokens"),
    ],
)
def test_bad_requests_are_input_errors(kwargs: dict[str, Any], needle: str) -> None:
    # Any: the point is to hand Request values its annotations rule out.
    base: dict[str, Any] = {
        "request_id": RequestId("x"),
        "arrival_s": 0.0,
        "prompt_tokens": 10,
        "output_tokens": 3,
    }
    with pytest.raises(InputError, match=needle):
        Request(**{**base, **kwargs})


def test_content_names_prompt_and_output() -> None:
    r = Request(RequestId("x"), 0.0, 10, 3, (Segment("s", 4), Segment("u", 6)), output_key="o")
    assert r.content() == (Segment("s", 4), Segment("u", 6), Segment("o", 3))
    plain = Request(RequestId("y"), 0.0, 10, 3)
    assert [s.num_tokens for s in plain.content()] == [10, 3]


def test_config_defaults_and_checks() -> None:
    cfg = EngineConfig(num_gpu_blocks=100, max_model_len=1600)
    assert (cfg.page_tokens, cfg.max_num_seqs, cfg.max_num_batched_tokens) == (16, 256, 2048)
    assert EngineConfig(kind="sglang", num_gpu_blocks=2000, max_model_len=1600).page_tokens == 1
    with pytest.raises(InputError, match="fewer than max_model_len"):
        validate_model(EngineConfig, {"num_gpu_blocks": 10, "max_model_len": 1600})
    with pytest.raises(InputError, match="unknown key"):
        validate_model(EngineConfig, {"num_gpu_blocks": 10, "max_model_len": 100, "blocks": 3})


def test_vllm_batch_defaults_follow_the_gpu() -> None:
    assert vllm_default_limits(80 * GIB, "H100-80GB") == (8192, 1024)
    assert vllm_default_limits(80 * GIB, "A100-80GB") == (2048, 256)
    assert vllm_default_limits(48 * GIB, "L40S") == (2048, 256)
