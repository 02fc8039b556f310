"""Layer 2: the kubelet's node-level resource alignment.

``topology_manager/`` ports the kubelet Topology Manager (bitmask, hints, merge, policies,
options, scopes) from ``pkg/kubelet/cm/topologymanager``; ``device_manager.py`` and
``cpu_manager.py`` are the hint providers; GPU set selection lives beside them. Everything here
is pure: values in, values out; the twin applies the results.
"""
