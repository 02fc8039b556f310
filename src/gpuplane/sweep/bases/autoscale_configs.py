"""The scaler configurations the ``autoscaling`` sweep base compares, named by one string each.

``FAMILY`` or ``FAMILY:KNOB=VALUE,KNOB=VALUE`` (values: numbers, ``true``/``false`` or words):

- ``keda``: the scenario's ScaledObject (the seed's: waiting queue and KV-cache triggers);
  ``keda-queue``: its queue trigger alone; ``keda-ttft``: one trigger on the TTFT P90 over the
  last minute (``histogram_quantile(0.9, ... vllm:time_to_first_token_seconds_bucket[1m])``).
  Knobs: ``queue`` (the queue trigger's threshold), ``kv`` (the KV trigger's; ``keda`` only),
  ``ttft`` (seconds; ``keda-ttft`` only), ``polling`` (``spec.pollingInterval``, s),
  ``cooldown`` (``spec.cooldownPeriod``, s: KEDA applies it only to scaling to and from zero),
  ``down_window`` (the HPA behavior's scale-down ``stabilizationWindowSeconds``), ``up`` (the
  scale-up policy, ``2pods/60s`` or ``100percent/15s``, replacing the ScaledObject's). The
  changed ScaledObject is checked again as KEDA's webhook would.
- ``slo``: gpuplane's SLO-aware scaler; any of its settings (docs/autoscaling.md), checked as
  from the scenario file (``target_margin=0.8,objective=per_request``).
- ``oracle``: sizes each minute from the future (``twin.autoscale_bench``); knobs
  ``objective`` (``percentile`` or ``per_request``), ``request_attainment``, ``target_margin``.

Pure: no I/O; errors are InputErrors at the field given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.slo.capacity import SloTargets
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model

KEDA_FAMILIES = ("keda", "keda-queue", "keda-ttft")
FAMILIES = (*KEDA_FAMILIES, "slo", "oracle")
_KEDA_COMMON = ("polling", "cooldown", "down_window", "up")
KNOBS: dict[str, tuple[str, ...]] = {
    "keda": ("queue", "kv", *_KEDA_COMMON),
    "keda-queue": ("queue", *_KEDA_COMMON),
    "keda-ttft": ("ttft", *_KEDA_COMMON),
    "slo": (*SloScalerSettings.model_fields, "signals"),  # signals: deployable | oracle
    "oracle": ("objective", "request_attainment", "target_margin"),
}
_UP = re.compile(r"^(\d+)(pods|percent)/(\d+)s$")
Knob = bool | int | float | str


@dataclass(frozen=True, slots=True)
class Config:
    family: str
    knobs: tuple[tuple[str, Knob], ...]

    def knob(self, name: str, default: Any) -> Any:
        return dict(self.knobs).get(name, default)


def _scalar(text: str) -> Knob:
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _error(problem: str, expected: str, field: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=field))


def parse_config(text: str, field: str) -> Config:
    """The configuration a string names; its knobs checked for its family (values are checked
    when applied, :func:`keda_object` / :func:`slo_settings` / :func:`oracle_targets`)."""
    family, _, rest = text.partition(":")
    if family not in FAMILIES:
        raise _error(
            f"unknown scaler family {family!r} in {text!r}",
            "FAMILY or FAMILY:KNOB=VALUE,... with FAMILY one of " + ", ".join(FAMILIES),
            field,
        )
    knobs: list[tuple[str, Knob]] = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        name, eq, value = part.partition("=")
        if not eq or not value:
            raise _error(f"{part!r} in {text!r} is not KNOB=VALUE", "KNOB=VALUE", field)
        if name not in KNOBS[family] or name in (k for k, _ in knobs):
            raise _error(
                f"{family} has no knob {name!r} (or it is given twice) in {text!r}",
                f"each once, one of {', '.join(KNOBS[family])}",
                field,
            )
        knobs.append((name, _scalar(value)))
    return Config(family, tuple(knobs))


def _up_policy(value: Knob, field: str) -> dict[str, Any]:
    match = _UP.match(str(value))
    if match is None:
        raise _error(
            f"up={value!r}", "a scale-up policy such as 2pods/60s or 100percent/15s", field
        )
    amount, unit, period = match.groups()
    kind = "Pods" if unit == "pods" else "Percent"
    return {"type": kind, "value": int(amount), "periodSeconds": int(period)}


def _trigger(triggers: list[dict[str, Any]], metric: str, so: str, field: str) -> dict[str, Any]:
    for t in triggers:
        if metric in t.get("metadata", {}).get("query", ""):
            return t
    raise _error(f"ScaledObject {so} has no trigger on {metric}", "the seed's triggers", field)


def keda_object(so: ScaledObjectIn, config: Config, field: str) -> ScaledObjectIn:
    """``so`` changed as the KEDA configuration says, checked again."""
    data = so.model_dump(mode="json", exclude_none=True)
    spec = data["spec"]
    name = so.metadata.name
    queue = _trigger(spec["triggers"], "vllm:num_requests_waiting", name, field)
    queue["metadata"]["threshold"] = str(config.knob("queue", queue["metadata"]["threshold"]))
    if config.family == "keda":
        kv = _trigger(spec["triggers"], "vllm:kv_cache_usage_perc", name, field)
        kv["metadata"]["threshold"] = str(config.knob("kv", kv["metadata"]["threshold"]))
        spec["triggers"] = [queue, kv]
    elif config.family == "keda-queue":
        spec["triggers"] = [queue]
    else:
        selector = queue["metadata"]["query"].split("{", 1)[1].split("}", 1)[0]
        query = (
            "histogram_quantile(0.9, sum by (le) "
            f"(rate(vllm:time_to_first_token_seconds_bucket{{{selector}}}[1m])))"
        )
        ttft = str(config.knob("ttft", 1.0))
        meta = {**queue["metadata"], "query": query, "threshold": ttft}
        spec["triggers"] = [{**queue, "metadata": meta}]
    for knob, key in (("polling", "pollingInterval"), ("cooldown", "cooldownPeriod")):
        if knob in dict(config.knobs):
            spec[key] = config.knob(knob, None)
    behavior = spec.setdefault("advanced", {}).setdefault("horizontalPodAutoscalerConfig", {})
    behavior = behavior.setdefault("behavior", {})
    if "down_window" in dict(config.knobs):
        down = behavior.setdefault("scaleDown", {})
        down["stabilizationWindowSeconds"] = config.knob("down_window", None)
    if "up" in dict(config.knobs):
        behavior.setdefault("scaleUp", {})["policies"] = [_up_policy(config.knob("up", ""), field)]
    try:
        return validate_model(ScaledObjectIn, data)
    except InputError as exc:
        where = exc.location.field
        raise _error(
            f"ScaledObject {name} with {config_text(config)} is refused: "
            + (f"{where}: " if where else "")
            + exc.problem,
            exc.expected or "a valid ScaledObject",
            field,
        ) from None


def slo_signals(base: str, config: Config, field: str) -> str:
    """The ``signals`` knob (the scaler spec's, not a setting): ``deployable`` or ``oracle``."""
    value = str(config.knob("signals", base))
    if value not in ("deployable", "oracle"):
        raise _error(
            f"SLO scaler {config_text(config)}: signals={value!r}", "deployable or oracle", field
        )
    return value


def slo_settings(base: SloScalerSettings, config: Config, field: str) -> SloScalerSettings:
    """The scenario's SLO scaler settings with the configuration's knobs, checked."""
    knobs = {k: v for k, v in config.knobs if k != "signals"}
    try:
        return validate_model(SloScalerSettings, {**base.model_dump(), **knobs})
    except InputError as exc:
        raise _error(
            f"SLO scaler settings {config_text(config)}: {exc.location.field}: {exc.problem}",
            exc.expected or "valid SLO scaler settings",
            field,
        ) from None


def oracle_targets(ttft_s: float, itl_s: float, config: Config, field: str) -> SloTargets:
    """What the oracle sizes each minute for: the objective in the form the knobs say."""
    knobs = {"objective": "percentile", **dict(config.knobs)}
    settings = slo_settings(SloScalerSettings(), Config("oracle", tuple(knobs.items())), field)
    return settings.sized(SloTargets(ttft_s, itl_s))


def config_text(config: Config) -> str:
    knobs = ",".join(f"{k}={v}" for k, v in config.knobs)
    return f"{config.family}:{knobs}" if knobs else config.family
