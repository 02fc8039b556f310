"""gpuplane as a kube-scheduler extender (k8s.io/kube-scheduler/extender/v1): the wire format,
the extender's state (cluster view, assumed pods, verdict cache) and the HTTP service. The
decisions themselves are ``gpuplane.fit.extender``'s; docs/live.md says how to wire it in."""
