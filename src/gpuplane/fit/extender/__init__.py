"""The scheduler extender's decisions: which of the nodes kube-scheduler offers a pod should be
kept (the kubelet would admit it there and its GPU set meets what the pod declares), and how to
rank the survivors by the GPU set the pod would get.

Pure functions of ``fit``'s values (:mod:`gpuplane.fit.model`) and the node holdings; no
wire format (that is ``gpuplane.live.extender``), no clock (times are passed in), no I/O.
"""
