"""Commands imported only when they run: ``gpuplane --version`` and ``gpuplane topo ...`` must
not pay for the twin, numpy-heavy planners and the live services they do not use.

A command is registered by name with the module that defines it (``LazyCommand``); the root
group imports that module when click asks for the command: to run it, to complete it, or to
list it in ``--help`` (which therefore imports every command module, as it needs their help
texts). Commands registered the usual typer way (``app.command``/``app.add_typer``) keep
working beside the lazy ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup
from typer.main import get_group

# click's Command and Context, typed loosely: typer 0.29 vendors its own click (typer._click),
# older typers use the click package.
Command = Any
Context = Any


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """``module:attr`` is a ``typer.Typer`` (a command group) or a command function."""

    module: str
    attr: str


def load_command(name: str, spec: LazyCommand) -> Command:
    """The click command for ``spec``; a Typer is always a group (as ``add_typer`` makes it),
    even with a single command, so ``gpuplane kubelet merge-hints`` keeps its name."""
    target = getattr(importlib.import_module(spec.module), spec.attr)
    command: Command
    if isinstance(target, typer.Typer):
        command = get_group(target)
    else:
        holder = typer.Typer(add_completion=False)
        holder.command(name)(target)
        command = typer.main.get_command(holder)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """A TyperGroup that also holds ``lazy_commands``, imported on first use."""

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        eager = super().list_commands(ctx)
        return eager + [n for n in self.lazy_commands if n not in eager]

    def get_command(self, ctx: Context, cmd_name: str) -> Command:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in self.lazy_commands:
            return command
        command = load_command(cmd_name, self.lazy_commands[cmd_name])
        self.add_command(command, cmd_name)
        return command


def lazy_group(commands: Mapping[str, LazyCommand]) -> type[LazyGroup]:
    """A LazyGroup class serving ``commands`` (typer takes the group as a class)."""
    return type("GpuplaneGroup", (LazyGroup,), {"lazy_commands": dict(commands)})
