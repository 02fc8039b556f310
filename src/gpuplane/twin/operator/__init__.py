"""The GPU Operator in the twin: node agents (lifecycle, faults) and the driver upgrade agent."""
