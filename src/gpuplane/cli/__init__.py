"""Layer 5: the ``gpuplane`` command line (typer + rich). Thin: parse flags, call layers, print."""
