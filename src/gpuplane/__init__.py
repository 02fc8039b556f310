"""gpuplane: simulate, plan and explain Kubernetes GPU clusters.

Layers (lower never imports higher): core < topology < {slicing, kubelet}
< {scheduler, serving, autoscaler, operator} < twin < {report, cli}; ``k8s`` is the
only package that reads or writes Kubernetes formats, and only ``cli`` imports it.
"""

__version__ = "0.1.0"
