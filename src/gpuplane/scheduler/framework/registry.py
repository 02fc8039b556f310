"""Plugins by name (kube-scheduler's frameworkruntime.Registry): a decorator registers a plugin
class with its args model; a lookup of an unknown name lists the valid ones. The framework holds
no registry of its own and imports no plugin: ``gpuplane.scheduler.plugins.registry`` builds the
in-tree one, and whoever builds a ``Scheduler`` passes a registry in.

kube-scheduler's in-tree plugins that gpuplane does not model are known by name, so enabling one
says why it is missing instead of "unknown".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpuplane.core.validation import first_error
from gpuplane.scheduler.framework.interfaces import EXTENSION_POINTS, Handle, Plugin

T = TypeVar("T")

# kube-scheduler plugins (default ones: apis/config/v1/default_plugins.go) gpuplane leaves out.
NOT_MODELLED: dict[str, str] = {
    "EBSLimits": "the twin models no volumes",
    "GCEPDLimits": "the twin models no volumes",
    "AzureDiskLimits": "the twin models no volumes",
}


class UnknownPluginError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class PluginSpec:
    name: str
    factory: Callable[[Any, Handle], Plugin]
    args_model: type[BaseModel] | None
    extension_points: frozenset[str]
    unsupported: tuple[str, ...]
    # Set for a registered kube plugin that does nothing in gpuplane (why, in words): it extends
    # no point, yet a profile may name it, as kube's default set and real configs do.
    no_op: str | None = None

    def parse_args(self, args: Mapping[str, object] | None) -> BaseModel | None:
        """The plugin's args, validated; a ValueError whose text names the bad field."""
        if self.args_model is None:
            if args:
                raise ValueError(f"plugin {self.name} takes no args")
            return None
        try:
            return self.args_model.model_validate(dict(args or {}))
        except ValidationError as err:
            located = first_error(self.args_model, err)
            field = located.location.field
            where = f"args.{field}: " if field else "args: "
            expected = f"; expected {located.expected}" if located.expected else ""
            gaps = f" ({self.name} does not model: {'; '.join(self.unsupported)})"
            raise ValueError(
                f"{where}{located.problem}{expected}{gaps if self.unsupported else ''}"
            ) from None


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, PluginSpec] = {}

    def register(
        self, name: str, *, args: type[BaseModel] | None = None
    ) -> Callable[[type[T]], type[T]]:
        """Class decorator: ``@register("NodeResourcesFit", args=NodeResourcesFitArgs)``."""

        def add(cls: type[T]) -> type[T]:
            if name in self._specs:
                raise ValueError(f"plugin {name!r} is already registered")
            points = frozenset(getattr(cls, "extension_points", frozenset()))
            bad = points - set(EXTENSION_POINTS)
            if bad:
                raise ValueError(f"plugin {name!r} declares unknown extension points {bad}")
            self._specs[name] = PluginSpec(
                name=name,
                factory=cls,  # type: ignore[arg-type]
                args_model=args,
                extension_points=points,
                unsupported=tuple(getattr(cls, "unsupported", ())),
                no_op=getattr(cls, "no_op", None),
            )
            return cls

        return add

    def unregister(self, name: str) -> None:
        self._specs.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return sorted(self._specs)

    def get(self, name: str) -> PluginSpec:
        spec = self._specs.get(name)
        if spec is not None:
            return spec
        valid = ", ".join(self.names())
        if name in NOT_MODELLED:
            raise UnknownPluginError(
                f"plugin {name!r} is a kube-scheduler plugin gpuplane does not model "
                f"({NOT_MODELLED[name]}); valid names: {valid}"
            )
        raise UnknownPluginError(f"unknown plugin {name!r}; valid names: {valid}")
