"""Layer 3: scheduling. ``framework/`` is modelled on kube-scheduler's scheduling framework
(queue, extension points, profiles, plugin registry); ``plugins/`` holds one plugin per file;
``policies/`` the GPU placement scoring policies (the FGD paper's six and gpuplane's own) as
vectorised pure functions; ``openb/`` the FGD paper's OpenB simulation protocol.
"""
