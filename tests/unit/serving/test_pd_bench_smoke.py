"""Smoke test of bench/pd_disaggregation.py on a tiny trace slice: conservation and sanity."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench import pd_disaggregation as pdb
from gpuplane.serving.routing.outcome import RequestOutcome, Status
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.serving.traffic.trace import Trace

COLOCATED, PD = pdb.LAYOUTS[0], pdb.LAYOUTS[1]


@pytest.fixture(scope="module")
def dep() -> pdb.Deployment:
    return pdb.make_deployment()


@pytest.fixture(scope="module")
def fabrics() -> dict[str, pdb.Fabric]:
    return pdb.make_fabrics()


@pytest.fixture(scope="module")
def conv() -> Trace:
    path = pdb.TRACE_DIR / pdb.TRACES["conv"]
    if not path.exists():
        pytest.skip("the shared Azure traces are not on this machine")
    return load_azure_trace(path).window(600.0, 630.0)


def outcome(
    ttft: float, tpot: float, out: int, status: Status = Status.COMPLETED
) -> RequestOutcome:
    first = 10.0 + ttft
    return RequestOutcome(
        "r",
        status,
        "",
        10.0,
        first_token_s=first,
        end_s=first + tpot * (out - 1),
        output_tokens=out,
    )


def test_slo_counts_ttft_and_mean_inter_token_latency() -> None:
    slo = pdb.Slo(ttft_s=2.0, tpot_s=0.1)
    assert slo.met(outcome(1.99, 0.099, 50))
    assert not slo.met(outcome(2.01, 0.01, 50))
    assert not slo.met(outcome(0.5, 0.101, 50))
    assert slo.met(outcome(0.5, 0.0, 1))  # one token: no TPOT
    assert not slo.met(outcome(2.5, 0.0, 1))
    assert not slo.met(RequestOutcome("r", Status.REJECTED, "too long", 10.0))
    assert not slo.met(RequestOutcome("r", Status.IN_FLIGHT, "end of run", 10.0))
    assert pdb.tpot_s(outcome(0.5, 0.04, 11)) == pytest.approx(0.04)


def test_fabrics_follow_the_node_topology(fabrics: dict[str, pdb.Fabric]) -> None:
    nv, rdma, pcie = fabrics["nvlink"], fabrics["rdma"], fabrics["pcie"]
    assert nv.tp_link.link_kind == rdma.tp_link.link_kind == "nvlink"
    assert pcie.tp_link.link_kind == "pcie"
    assert nv.kv_link.gbps == 450.0  # NV18 on the NVSwitch, per direction
    assert rdma.kv_link.gbps == pcie.kv_link.gbps == 50.0  # 400 Gb/s NIC below PCIe Gen5 x16
    assert {f.kv_link.parallel_paths for f in fabrics.values()} == {pdb.TP}
    assert pdb.result_key("conv", COLOCATED, nv) == pdb.result_key("conv", COLOCATED, rdma)
    assert pdb.result_key("conv", PD, nv) != pdb.result_key("conv", PD, rdma)
    assert [lay.num_gpus for lay in pdb.LAYOUTS] == [8, 8, 12, 12, 12]


@pytest.mark.parametrize("layout", [COLOCATED, PD], ids=lambda lay: lay.name)
def test_every_request_is_accounted_for(
    layout: pdb.Layout, conv: Trace, fabrics: dict[str, pdb.Fabric], dep: pdb.Deployment
) -> None:
    point = pdb.measure(conv, 2.0, layout, fabrics["rdma"], dep, pdb.Slo())
    assert point.num_requests == len(conv)
    assert point.rate == pytest.approx(len(conv) * 2.0 / conv.span_s)
    assert 0.0 <= point.attainment <= 1.0
    if layout.is_pd:  # every prompt of 16+ tokens goes through the prefill engine
        assert point.num_split == int((conv.prompt_tokens >= 16).sum())
    else:
        assert point.num_split == 0
    assert point.ttft_p90_s > 0 and point.tpot_p90_s > 0


def test_search_brackets_the_slo_boundary(
    conv: Trace, fabrics: dict[str, pdb.Fabric], dep: pdb.Deployment
) -> None:
    job = pdb.Job("conv", conv, PD, fabrics["nvlink"], dep, pdb.Slo(), pdb.SearchSettings(0.5, 1))
    found = pdb.find_goodput(job)
    assert found.best is not None and found.first_miss is not None
    assert found.best.attainment >= 0.9 > found.first_miss.attainment
    assert found.best.rate < found.first_miss.rate
    assert found.goodput == found.best.rate
    assert found.per_gpu == pytest.approx(found.goodput / 8)
    factors = [p.factor for p in found.points]
    assert factors == sorted(factors) and len(set(factors)) == len(factors)
    again = pdb.find_goodput(job)
    assert dataclasses.replace(again, wall_s=0.0) == dataclasses.replace(found, wall_s=0.0)


def test_main_prints_both_tables_and_json(
    capsys: pytest.CaptureFixture[str], conv: Trace, tmp_path: Path
) -> None:
    args = ["--traces", "conv", "--fabrics", "pcie", "--window-min", "0.5", "--bisections", "0"]
    out_file = tmp_path / "pd.json"
    assert pdb.main([*args, "--jobs", "1", "--json", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "goodput per GPU" in out
    for lay in pdb.LAYOUTS:
        assert lay.name in out
    assert "5 searches" in out
    doc = json.loads(out_file.read_text(encoding="utf-8"))
    assert doc["tp"] == pdb.TP and len(doc["searches"]) == 5
    for search in doc["searches"]:
        assert search["points"] and search["num_gpus"] in (8, 12)
        assert all(p["num_requests"] == len(conv) for p in search["points"])


def test_unknown_names_are_input_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert pdb.main(["--traces", "chat"]) == 2
    assert "trace chat" in capsys.readouterr().err
    assert pdb.main(["--fabrics", "nvlink,infiniband"]) == 2
    assert "infiniband" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        pdb.main(["--window-min", "0"])
    assert exit_.value.code == 2
    assert "--window-min is out of range" in capsys.readouterr().err
