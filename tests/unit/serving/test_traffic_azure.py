"""The Azure trace loader: the real files, and every kind of bad file as a located InputError."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.serving.traffic.azure import load_azure_trace, parse_timestamp

TRACES = Path(__file__).resolve().parents[3] / "../shared/data/traces"
CONV = TRACES / "AzureLLMInferenceTrace_conv.csv"
CODE = TRACES / "AzureLLMInferenceTrace_code.csv"
HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


def test_conversation_trace_matches_its_published_statistics() -> None:
    trace = load_azure_trace(CONV)
    assert len(trace) == 19366  # SOURCES.md
    assert trace.arrival_s[0] == 0.0 and np.all(np.diff(trace.arrival_s) >= 0)
    assert 58 * 60 < trace.span_s < 59 * 60
    assert trace.mean_rate == pytest.approx(5.53, abs=0.01)
    assert np.median(trace.prompt_tokens) == 1020
    assert np.median(trace.output_tokens) == 129
    assert trace.prompt_tokens.max() == 14050


def test_code_trace_loads() -> None:
    trace = load_azure_trace(CODE)
    assert len(trace) == 8819
    assert np.median(trace.prompt_tokens) == 1469 and np.median(trace.output_tokens) == 13


def test_rate_scaling_twenty_times_over_an_hour() -> None:
    trace = load_azure_trace(CONV)
    fast = trace.rate_scaled(20.0, 3600.0)
    assert 19 * len(trace) < len(fast) < 21 * len(trace)
    assert fast.arrival_s[-1] < 3600.0 and np.all(np.diff(fast.arrival_s) >= 0)
    assert fast.mean_rate == pytest.approx(20 * trace.mean_rate, rel=0.03)
    short = trace.time_scaled(20.0)
    assert len(short) == len(trace) and short.span_s == pytest.approx(trace.span_s / 20)
    requests = list(short.window(0.0, 10.0).requests("x"))
    assert requests[0].request_id == "x0" and requests[-1].arrival_s < 10.0


def test_timestamps_with_seven_fractional_digits() -> None:
    a = parse_timestamp("2023-11-16 18:17:03.9799600")
    b = parse_timestamp("2023-11-16T18:17:04.0319600")
    assert b - a == pytest.approx(0.052, abs=1e-6)


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("", 1, "empty"),
        ("when,ContextTokens\n", 1, "lacks column(s) TIMESTAMP, GeneratedTokens"),
        (HEADER + "2023-11-16 18:17:03.1,10,5\nyesterday,10,5\n", 3, "not a timestamp"),
        (HEADER + "2023-11-16 18:17:03.1,ten,5\n", 2, "ContextTokens"),
        (HEADER + "2023-11-16 18:17:03.1,10,0\n", 2, "token count 0"),
        (HEADER + "2023-11-16 18:17:03.1,10,-3\n", 2, "GeneratedTokens"),
        (HEADER + "2023-11-16 18:17:03.1,10\n", 2, "2 fields"),
        (HEADER + "2023-11-16 18:17:05,10,5\n2023-11-16 18:17:04,10,5\n", 3, "earlier"),
        (HEADER + "2023-02-30 18:17:05,10,5\n", 2, "TIMESTAMP"),
        (HEADER, 1, "no requests"),
    ],
)
def test_bad_files_name_the_file_and_line(
    tmp_path: Path, text: str, line: int, needle: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_azure_trace(path)
    assert err.value.location.source == str(path)
    if line > 1 or "no requests" not in needle:
        assert err.value.location.line == line
    assert needle in err.value.render()


def test_missing_file_and_binary_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the trace"):
        load_azure_trace(tmp_path / "nope.csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00\x01garbage")
    with pytest.raises(InputError):
        load_azure_trace(binary)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.text(alphabet=st.sampled_from(list("0123456789-:., \nTZabc")), max_size=200))
def test_any_text_either_loads_or_is_an_input_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_text(HEADER + body)
    try:
        trace = load_azure_trace(path)
    except InputError as err:
        assert err.location.source == str(path)
    else:
        assert len(trace) >= 1 and trace.prompt_tokens.min() >= 1
