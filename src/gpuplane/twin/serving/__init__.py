"""Serving in the twin: engines that follow pods, the serving runtime, its summary."""
