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
from gpuplane.cli.autoscale import autoscale_app
from gpuplane.cli.bench import bench_app
from gpuplane.cli.console import clip_long_words, err
from gpuplane.cli.demo import demo_command
from gpuplane.cli.deploy import deploy_app
from gpuplane.cli.dra import dra_app
from gpuplane.cli.fit import fit_command
from gpuplane.cli.kubelet import kubelet_app
from gpuplane.cli.mig import mig_app
from gpuplane.cli.report import report_command
from gpuplane.cli.serve import serve_app
from gpuplane.cli.serving import serving_app
from gpuplane.cli.simulate import simulate_command
from gpuplane.cli.snapshot import snapshot_app
from gpuplane.cli.topo import topo_app
from gpuplane.core.errors import GpuplaneError

USER_ERROR_EXIT = 2

app = typer.Typer(
    name="gpuplane",
    help="Simulate, plan and explain Kubernetes GPU clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(topo_app, name="topo")
app.add_typer(kubelet_app, name="kubelet")
app.add_typer(mig_app, name="mig")
app.add_typer(dra_app, name="dra")
app.add_typer(serving_app, name="serving")
app.add_typer(autoscale_app, name="autoscale")
app.add_typer(bench_app, name="bench")
app.add_typer(snapshot_app, name="snapshot")
app.add_typer(serve_app, name="serve")
app.add_typer(deploy_app, name="deploy")
app.command("demo")(demo_command)
app.command("simulate")(simulate_command)
app.command("fit")(fit_command)
app.command("report")(report_command)


def _version(value: bool) -> None:
    if value:
        print(f"gpuplane {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
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
    except GpuplaneError as exc:
        message = escape(clip_long_words(str(exc)))
        err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
        return USER_ERROR_EXIT
    return 0


def main() -> None:
    sys.exit(run())
