"""``gpuplane serve ...``: gpuplane's long-running services. Each command lives in its own
module and is only registered here: ``extender`` (cli/serve/extender.py), ``mig-controller``
(cli/serve/mig.py), ``scaler`` (cli/serve/scaler.py), ``engine`` (cli/serve/engine.py) and
``router`` (cli/serve/router.py); docs/live.md describes them."""

from __future__ import annotations

import typer

from gpuplane.cli.serve.engine import engine_command
from gpuplane.cli.serve.extender import extender_command
from gpuplane.cli.serve.mig import mig_controller_command
from gpuplane.cli.serve.router import router_command
from gpuplane.cli.serve.scaler import scaler_command

serve_app = typer.Typer(
    help="Run gpuplane's services against a live cluster.", no_args_is_help=True
)
serve_app.command("extender")(extender_command)
serve_app.command("mig-controller")(mig_controller_command)
serve_app.command("scaler")(scaler_command)
serve_app.command("engine")(engine_command)
serve_app.command("router")(router_command)
