"""``gpuplane serve ...``: gpuplane's long-running services. Each command lives in its own
module and is only registered here: ``extender`` (cli/serve_extender.py), ``mig-controller``
(cli/serve_mig.py), ``scaler`` (cli/serve_scaler.py), ``engine`` (cli/serve_engine.py) and
``router`` (cli/serve_router.py); docs/live.md describes them."""

from __future__ import annotations

import typer

from gpuplane.cli.serve_engine import engine_command
from gpuplane.cli.serve_extender import extender_command
from gpuplane.cli.serve_mig import mig_controller_command
from gpuplane.cli.serve_router import router_command
from gpuplane.cli.serve_scaler import scaler_command

serve_app = typer.Typer(
    help="Run gpuplane's services against a live cluster.", no_args_is_help=True
)
serve_app.command("extender")(extender_command)
serve_app.command("mig-controller")(mig_controller_command)
serve_app.command("scaler")(scaler_command)
serve_app.command("engine")(engine_command)
serve_app.command("router")(router_command)
