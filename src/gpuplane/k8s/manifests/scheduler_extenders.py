"""The ``extenders`` of a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1
``Extender``), checked as kube-scheduler's validation checks them: ``urlPrefix`` is required,
a positive ``weight`` when ``prioritizeVerb`` is set, at most one extender binds, a managed
resource name is given once, ``httpTimeout`` is a duration. Validation only: ``fit`` does not
call extenders."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import first_error
from gpuplane.core.yamlio import LineIndex
from gpuplane.k8s.field_errors import relocate


class ManagedResource(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    ignoredByScheduler: bool = False


class Extender(BaseModel):
    model_config = ConfigDict(extra="forbid")
    urlPrefix: str = Field(min_length=1)
    filterVerb: str = ""
    preemptVerb: str = ""
    prioritizeVerb: str = ""
    bindVerb: str = ""
    weight: int = 0
    enableHTTPS: bool = False
    tlsConfig: dict[str, Any] | None = None
    httpTimeout: str = "30s"
    nodeCacheCapable: bool = False
    managedResources: list[ManagedResource] = Field(default_factory=list)
    ignorable: bool = False

    @field_validator("httpTimeout")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration_s(value)
        return value


def check_extenders(raw: object, source: str, index: LineIndex) -> tuple[Extender, ...]:
    where = Location(source, index.line_of("extenders"), "extenders")
    if not isinstance(raw, list):
        raise InputError("extenders is not a list", location=where)
    out: list[Extender] = []
    for i, item in enumerate(raw):
        try:
            ext = Extender.model_validate(item)
        except (ValidationError, InputError) as err:
            if isinstance(err, InputError):
                raise InputError(err.problem, location=where) from None
            raise relocate(
                first_error(Extender, err), source, index.line_of, f"extenders[{i}]"
            ) from None
        if ext.prioritizeVerb and ext.weight <= 0:
            raise InputError(
                f"extenders[{i}].weight is {ext.weight}",
                expected="a positive weight when prioritizeVerb is set",
                location=where,
            )
        names = [r.name for r in ext.managedResources]
        if len(set(names)) != len(names):
            raise InputError(
                f"extenders[{i}].managedResources names a resource twice", location=where
            )
        out.append(ext)
    if sum(1 for e in out if e.bindVerb) > 1:
        raise InputError(
            "more than one extender binds", expected="at most one bindVerb", location=where
        )
    return tuple(out)
