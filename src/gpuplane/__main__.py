"""``python -m gpuplane`` runs the CLI."""

from gpuplane.cli.main import main

main()
