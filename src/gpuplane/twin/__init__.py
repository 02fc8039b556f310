"""Layer 4: the digital twin of a Kubernetes GPU cluster.

For now it holds the scenario format (node pools); the event loop, object store and controllers
arrive with the twin issue. Everything here is deterministic given a scenario and a seed.
"""
