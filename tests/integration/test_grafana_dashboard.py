"""deploy/grafana/gpuplane-serving.json: a valid Grafana dashboard whose every PromQL expression
parses with gpuplane's PromQL and names only series the emulator and its DCGM endpoint serve."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.autoscaler.promql import parse_query
from gpuplane.autoscaler.promql.ast import VectorSelector
from gpuplane.live.emulator.dcgm import DcgmSettings
from tests.integration.llm_servers import MODEL, emulator_with_dcgm, settings, stream

pytestmark = pytest.mark.integration
DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "gpuplane-serving.json"
# What Grafana substitutes before sending a query ($__rate_interval: at least 4 scrape intervals).
VARIABLES = {"$__rate_interval": "1m", "$model_name": MODEL}


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def expressions(dash: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in dash["panels"] if p["type"] != "row" for t in p["targets"]]


def interpolate(expr: str) -> str:
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, expr
    return expr


def selector_names(node: object) -> set[str]:
    """Metric names of every selector in a parsed expression."""
    if isinstance(node, VectorSelector):
        return {node.name} if node.name else set()
    out: set[str] = set()
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            for child in value if isinstance(value, tuple) else (value,):
                out |= selector_names(child)
    return out


def test_dashboard_is_valid_grafana_json_with_a_prometheus_datasource_variable() -> None:
    dash = dashboard()
    assert isinstance(dash["schemaVersion"], int) and dash["schemaVersion"] >= 36
    assert dash["title"] and dash["uid"]
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    ds = variables["datasource"]
    assert (ds["type"], ds["query"]) == ("datasource", "prometheus")
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    panels = [p for p in dash["panels"] if p["type"] != "row"]
    assert len(panels) >= 10
    for p in panels:
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert {"x", "y", "w", "h"} <= set(p["gridPos"]) and p["targets"], p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)) and all(t["expr"] for t in p["targets"])
    titles = " ".join(p["title"] for p in panels).lower()
    for want in ("first token", "inter-token", "scheduler", "kv cache", "preemption", "token"):
        assert want in titles
    quantiles = [e for e in expressions(dash) if e.startswith("histogram_quantile(")]
    assert any("time_to_first_token" in e for e in quantiles)
    assert any("inter_token_latency" in e for e in quantiles)


def test_every_expression_parses_and_names_only_series_the_emulator_serves() -> None:
    dash = dashboard()
    names: set[str] = set()
    for expr in expressions(dash):
        names |= selector_names(parse_query(interpolate(expr), "dashboard"))
    variable = dash["templating"]["list"][1]["query"]["query"]
    names |= set(re.findall(r"label_values\(([^,]+),", variable))
    assert any(n.startswith("DCGM_FI_") for n in names)

    async def served() -> set[str]:
        dcgm = DcgmSettings("node-a", collect_interval_ms=50)
        async with (
            emulator_with_dcgm(settings(), dcgm) as (url, dcgm_url),
            aiohttp.ClientSession() as client,
        ):
            body = {"model": MODEL, "prompt": "hello", "max_tokens": 3}
            await stream(client, url + "/v1/completions", body)
            out: set[str] = set()
            for u in (url, dcgm_url):
                async with client.get(u + "/metrics") as resp:
                    text = await resp.text()
                for fam in text_string_to_metric_families(text):
                    out |= {s.name for s in fam.samples}
            # dcgm-exporter's counters keep their bare name (the parser adds _total)
            return out | {n.removesuffix("_total") for n in out if n.startswith("DCGM_")}

    exposed = asyncio.run(served())
    assert names <= exposed, sorted(names - exposed)
