"""Twin-only timing of the GPU Operator's components: how long each takes and how often it fails.

Nothing here is part of a ClusterPolicy; the real durations depend on image pulls, the kernel, the
GPU count and the registry. Defaults are estimates, each with its reasoning on the field, chosen so
a node goes from join to ready in about five to seven minutes with a compiled driver (NVIDIA's
docs describe the driver container as building the kernel module at start unless precompiled
modules are used). Failure probabilities default to 0 so scenarios are failure-free unless they
ask for failures.

Durations accept what :func:`gpuplane.core.duration.parse_duration_s` accepts (``90``, ``"3m"``).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError

# The fields of OperatorSettings that are a ComponentTiming, in lifecycle order.
COMPONENT_NAMES = (
    "node_join",
    "driver",
    "driver_precompiled",
    "toolkit",
    "validator",
    "device_plugin",
    "dcgm_exporter",
    "gfd",
)


def _seconds(value: object) -> float:
    try:
        return parse_duration_s(value)
    except InputError as err:  # its text says what a duration looks like
        raise ValueError(err.render()) from None


Seconds = Annotated[float, BeforeValidator(_seconds)]


class FixedDuration(BaseModel):
    """Always the same duration."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    dist: Literal["fixed"] = "fixed"
    seconds: Seconds = Field(description="The duration, e.g. 90 or '3m'.")

    def sample_s(self, rng: np.random.Generator) -> float:
        return self.seconds


class UniformDuration(BaseModel):
    """Uniform between ``low`` and ``high``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    dist: Literal["uniform"] = "uniform"
    low: Seconds = Field(description="Shortest duration.")
    high: Seconds = Field(description="Longest duration (>= low).")

    @model_validator(mode="after")
    def _ordered(self) -> UniformDuration:
        if self.high < self.low:
            raise ValueError(f"high ({self.high:g}s) must be >= low ({self.low:g}s)")
        return self

    def sample_s(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.low, self.high))


class LognormalDuration(BaseModel):
    """Log-normal with the given median; ``sigma`` is the standard deviation of ln(duration)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    dist: Literal["lognormal"] = "lognormal"
    median: Seconds = Field(gt=0, description="Median duration.")
    sigma: float = Field(ge=0, le=5, description="Spread: std. dev. of the log, e.g. 0.3.")

    def sample_s(self, rng: np.random.Generator) -> float:
        return float(rng.lognormal(math.log(self.median), self.sigma))


def _bare_duration_is_fixed(value: object) -> object:
    # ``duration: 4m`` is shorthand for ``{dist: fixed, seconds: 4m}``.
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return {"dist": "fixed", "seconds": value}
    return value


Distribution = Annotated[
    FixedDuration | UniformDuration | LognormalDuration,
    Field(discriminator="dist"),
    BeforeValidator(_bare_duration_is_fixed),
]


class ComponentTiming(BaseModel):
    """One component: time from its pod starting to it being up, and its failure chance.

    A failing attempt fails after the same kind of sampled duration (a driver build that breaks
    is noticed when the build ends), then waits out the back-off before the next attempt.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    duration: Distribution = Field(description="Time until the component is up (or fails).")
    failure_probability: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="Chance that one attempt fails (the container exits and is restarted).",
    )

    def sample_s(self, rng: np.random.Generator) -> float:
        return self.duration.sample_s(rng)

    def fails(self, rng: np.random.Generator) -> bool:
        # Always draw, so a run's random sequence does not depend on the probability being 0.
        return bool(rng.random() < self.failure_probability)


def _timing(duration: Distribution) -> ComponentTiming:
    return ComponentTiming(duration=duration)


class BackoffSettings(BaseModel):
    """Delay before a failed component is retried.

    Imitates the kubelet's CrashLoopBackOff for a container that keeps exiting: 10 s, doubling on
    each consecutive failure, capped at 5 min (kubelet ``backOffPeriod`` and
    ``MaxContainerBackOff``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    initial: Seconds = Field(default=10.0, gt=0, description="Delay after the first failure.")
    factor: float = Field(default=2.0, ge=1.0, le=10.0, description="Growth per failure.")
    cap: Seconds = Field(default=300.0, gt=0, description="Longest delay.")

    def delay_s(self, failures: int) -> float:
        """Delay after ``failures`` consecutive failures (1 = the first failure)."""
        exponent = max(failures - 1, 0)
        # Past the cap the exact power is irrelevant; stop before float overflow.
        if exponent > 64:
            return self.cap
        return min(self.cap, self.initial * self.factor**exponent)


class OperatorSettings(BaseModel):
    """Timing model of the GPU Operator on one node, per component, plus the upgrade controller."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    node_join: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=10, high=30)),
        description="Node registered -> operator pods scheduled and images pulled (estimate).",
    )
    driver: ComponentTiming = Field(
        default_factory=lambda: _timing(LognormalDuration(median=240, sigma=0.25)),
        description=(
            "Driver container: install packages, compile and load the kernel module (estimate: "
            "about 4 min, the build dominates)."
        ),
    )
    driver_precompiled: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=45, high=90)),
        description="Driver container with driver.usePrecompiled: load only (estimate).",
    )
    toolkit: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=20, high=60)),
        description="Container toolkit: install and restart the container runtime (estimate).",
    )
    validator: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=30, high=90)),
        description="Operator validator: driver, toolkit and CUDA vectorAdd checks (estimate).",
    )
    device_plugin: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=10, high=30)),
        description="Device plugin: start and register with the kubelet (estimate).",
    )
    dcgm_exporter: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=20, high=60)),
        description="DCGM exporter: start the host engine and the metrics endpoint (estimate).",
    )
    gfd: ComponentTiming = Field(
        default_factory=lambda: _timing(UniformDuration(low=10, high=30)),
        description="GPU Feature Discovery: first labelling pass (estimate).",
    )
    backoff: BackoffSettings = Field(default_factory=BackoffSettings)
    upgrade_requeue: Seconds = Field(
        default=120.0,
        gt=0,
        description=(
            "Upgrade controller's periodic reconcile (gpu-operator controllers/"
            "upgrade_controller.go plannedRequeueInterval = 2 min); it also reconciles at once "
            "when a node's upgrade-state label changes."
        ),
    )

    def timing(self, component: str) -> ComponentTiming:
        """The timing of ``component`` (a field name); KeyError lists the valid names."""
        if component not in COMPONENT_NAMES:
            valid = ", ".join(COMPONENT_NAMES)
            raise KeyError(f"unknown component {component!r}; expected one of {valid}")
        value: ComponentTiming = getattr(self, component)
        return value

    def sample_duration_s(self, component: str, rng: np.random.Generator) -> float:
        """One draw of ``component``'s duration."""
        return self.timing(component).sample_s(rng)
