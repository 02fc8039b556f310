"""gpuplane: simulate, plan and explain Kubernetes GPU clusters.

Layers (lower never imports higher): core < topology < {slicing, kubelet}
< {scheduler, serving, autoscaler, operator} < twin < {report, cli}; ``k8s`` is the
only package that reads or writes Kubernetes formats, and only ``cli`` imports it.

``GPUPLANE_NATIVE=1`` runs the serving twin's hot modules compiled (see ``core.native``).
"""

import os as _os

__version__ = "0.1.0"

if _os.environ.get("GPUPLANE_NATIVE", "") not in ("", "0"):
    from gpuplane.core.native import enable_from_env as _enable_native

    _enable_native()
