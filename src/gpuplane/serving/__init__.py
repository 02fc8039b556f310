"""LLM serving: engine models (memory, batching, step time), metrics, traffic and routing."""
