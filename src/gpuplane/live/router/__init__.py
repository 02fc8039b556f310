"""``gpuplane serve router``: an OpenAI-compatible proxy in front of engines (vLLM, SGLang, or
gpuplane's emulator) that picks each request's engine with the twin's routers, unchanged
(``serving.routing.registry.make_router``). Engine load comes from scraping each engine's
``/metrics`` (as llm-d's endpoint picker does), the prefix index and session table are the
router's own, and the response (JSON or SSE) is passed through as it arrives. docs/live.md,
"Router".
"""
