"""The ``gpuplane`` entry point: the typer app and the error boundary.

Every GpuplaneError (a user mistake or something missing on this machine) ends here as a
one-paragraph message on stderr and exit code 2; click's own usage errors also exit with 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer
from rich.markup import escape

from gpuplane import __version__
from gpuplane.cli.console import clip_long_words, err
from gpuplane.cli.lazy import LazyCommand, lazy_group
from gpuplane.core.errors import GpuplaneError, InputErrors

USER_ERROR_EXIT = 2
INTERRUPTED_EXIT = 130  # 128 + SIGINT, as cli/progress.py and a shell report it

# ----- commands: each module is imported only when its command runs (cli/lazy.py) -----
# name -> (module, its typer.Typer or command function); listed in this order by --help.
COMMANDS = {
    "topo": LazyCommand("gpuplane.cli.topo", "topo_app"),
    "kubelet": LazyCommand("gpuplane.cli.kubelet", "kubelet_app"),
    "mig": LazyCommand("gpuplane.cli.mig", "mig_app"),
    "dra": LazyCommand("gpuplane.cli.dra", "dra_app"),
    "serving": LazyCommand("gpuplane.cli.serving", "serving_app"),
    "autoscale": LazyCommand("gpuplane.cli.autoscale", "autoscale_app"),
    "bench": LazyCommand("gpuplane.cli.bench", "bench_app"),
    "snapshot": LazyCommand("gpuplane.cli.snapshot", "snapshot_app"),
    "serve": LazyCommand("gpuplane.cli.serve", "serve_app"),
    "deploy": LazyCommand("gpuplane.cli.deploy", "deploy_app"),
    "demo": LazyCommand("gpuplane.cli.demo", "demo_command"),
    "simulate": LazyCommand("gpuplane.cli.simulate", "simulate_command"),
    "validate": LazyCommand("gpuplane.cli.validate", "validate_command"),
    "fit": LazyCommand("gpuplane.cli.fit", "fit_command"),
    "report": LazyCommand("gpuplane.cli.report", "report_command"),
    "sweep": LazyCommand("gpuplane.cli.sweep", "sweep_command"),
}

app = typer.Typer(
    name="gpuplane",
    cls=lazy_group(COMMANDS),
    help="Simulate, plan and explain Kubernetes GPU clusters.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
# ----- end of commands -----


def _version(value: bool) -> None:
    if value:
        print(f"gpuplane {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """gpuplane: topology, scheduling, slicing, serving and autoscaling for GPU clusters."""


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (tests call this directly).

    click (vendored by typer) handles its own usage errors in standalone mode: it prints them and
    exits with 2. Our own errors propagate (pretty exceptions are off) and are printed here.
    """
    try:
        app(args=list(argv) if argv is not None else None, prog_name="gpuplane")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except InputErrors as exc:
        for one in exc.errors:
            message = escape(clip_long_words(str(one)))
            err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
        err.print(f"{len(exc.errors)} errors", markup=False, highlight=False)
        return USER_ERROR_EXIT
    except GpuplaneError as exc:
        message = escape(clip_long_words(str(exc)))
        err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
        return USER_ERROR_EXIT
    except KeyboardInterrupt:
        # Ctrl-C outside a long job's own handling (cli/progress.py): nothing partial to keep.
        err.print("interrupted", markup=False, highlight=False)
        return INTERRUPTED_EXIT
    return 0


def main() -> None:
    sys.exit(run())
