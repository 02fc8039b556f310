"""The scheduler process: the framework driven by the twin's clock, its cluster snapshots and
NRT views."""
