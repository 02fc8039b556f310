"""The engine model: requests, the paged KV cache with prefix caching, vLLM V1 and SGLang
scheduling, and the event-driven engine that turns them into per-token timings.

Assumptions: one engine instance is one model server (any TP is inside the step-time model);
the KV capacity and step durations come from elsewhere (the memory and step-time models).
"""
