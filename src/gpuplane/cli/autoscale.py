"""``gpuplane autoscale``: the HPA and KEDA as check commands, and PromQL over sample files."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplane.autoscaler.hpa.spec import hpa_to_dict
from gpuplane.autoscaler.keda.hpa_generation import hpa_for
from gpuplane.autoscaler.keda.scalers import build_scaler
from gpuplane.autoscaler.promql import Scalar, evaluate
from gpuplane.autoscaler.promql.series_file import load_series_text
from gpuplane.cases.hpa_check import FAMILIES, run_json
from gpuplane.cli.console import print_json
from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_stdin, read_user_text
from gpuplane.k8s.manifests.hpa import load_hpa
from gpuplane.k8s.manifests.hpa_check import check_hpa, load_values
from gpuplane.k8s.manifests.scaled_object import load_scaled_objects

autoscale_app = typer.Typer(
    help="Autoscaling: the HPA's and KEDA's decisions as check commands, PromQL on samples.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@autoscale_app.command("hpa-check")
def hpa_check_command(
    hpa: Annotated[
        Path | None,
        typer.Option(
            "--hpa", help="An autoscaling/v2 HorizontalPodAutoscaler manifest (with --metrics)."
        ),
    ] = None,
    metrics: Annotated[
        Path | None,
        typer.Option(
            "--metrics",
            help="What the metrics APIs answer now: replicas, pods, metrics (see docs).",
        ),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """With --hpa and --metrics: one sync of that HPA, printing its status after the sync
    (currentReplicas, desiredReplicas, currentMetrics, conditions), whether it rescales and
    its events as JSON; -o yaml|json prints the HPA object with that status. Without them:
    read one case of shared/reference/hpa-examples.json on stdin (without its expected*
    fields, with "family" naming its list) and print the computed expected* values."""
    if hpa is None and metrics is None:
        print_json(run_json(read_stdin()))
        return
    if hpa is None or metrics is None:
        missing = "--metrics" if metrics is None else "--hpa"
        raise InputError(
            f"{missing} is missing",
            expected="--hpa HPA.yaml and --metrics VALUES.yaml together (or a case on stdin)",
        )
    spec, manifest = load_hpa(hpa)
    answer = check_hpa(spec, load_values(metrics))
    if output is not None:
        emit(
            [{**{k: v for k, v in manifest.items() if k != "status"}, "status": answer["status"]}],
            output,
        )
    else:
        print_json(answer)


def _prom_value(v: float) -> str:
    """A sample value as Prometheus's HTTP API formats it (Go's ``FormatFloat(v, 'f', -1)``:
    the shortest round-trip digits, never an exponent)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    text = format(Decimal(repr(v)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _option_seconds(text: str, option: str) -> float:
    """A duration option; its errors name the option."""
    try:
        return parse_duration_s(text)
    except InputError as err:
        raise InputError(
            err.problem, expected=err.expected, location=Location(field=option)
        ) from None


@autoscale_app.command("promql")
def promql_command(
    query: Annotated[str, typer.Argument(help="A PromQL expression of the supported subset.")],
    series: Annotated[
        Path,
        typer.Option("--series", help="Samples: JSON {series: [...]} or CSV t,name,value,labels."),
    ],
    at: Annotated[
        str | None,
        typer.Option("--time", help="Evaluation time (seconds or 5m); default: the last sample."),
    ] = None,
    lookback: Annotated[
        str,
        typer.Option(
            "--lookback", help="Lookback delta of instant selectors (0: the default, 5m)."
        ),
    ] = "5m",
) -> None:
    """Evaluate QUERY on a small sample file; print the result as Prometheus's /api/v1/query
    data object ({"resultType", "result"})."""
    try:
        text = read_user_text(series)
    except OSError as err:
        raise InputError(
            f"cannot read {series}: {err.strerror}", location=Location(str(series))
        ) from None
    store = load_series_text(text, str(series))
    if at is None:
        times = [t for name in store.names() for s in store.series(name) for t in s.times[-1:]]
        t_s = max(times, default=0.0)
    else:
        t_s = _option_seconds(at, "--time")
    lookback_s = _option_seconds(lookback, "--lookback")
    if lookback_s < 0:
        raise InputError(
            f"{lookback!r} is negative",
            expected="a duration such as 5m (0 means Prometheus's default, 5m)",
            location=Location(field="--lookback"),
        )
    value = evaluate(query, store, t_s, lookback_s, source="QUERY")
    data: dict[str, Any]
    if isinstance(value, Scalar):
        data = {"resultType": "scalar", "result": [t_s, _prom_value(value.value)]}
    else:
        data = {
            "resultType": "vector",
            "result": [
                {"metric": s.labels_dict(), "value": [t_s, _prom_value(s.value)]}
                for s in value.samples
            ],
        }
    print_json(data)


@autoscale_app.command("keda-hpa")
def keda_hpa_command(
    file: Annotated[Path, typer.Argument(help="A YAML file with one or more ScaledObjects.")],
) -> None:
    """Validate KEDA ScaledObjects and print the HPA KEDA would create for each."""
    out = []
    for so in load_scaled_objects(file):
        scalers = tuple(build_scaler(t, i, None) for i, t in enumerate(so.spec.triggers))
        out.append(hpa_to_dict(hpa_for(so, scalers)))
    print_json(out if len(out) != 1 else out[0])


__all__ = ["FAMILIES", "autoscale_app"]
