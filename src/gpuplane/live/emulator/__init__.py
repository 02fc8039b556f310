"""``gpuplane serve engine``: an OpenAI-compatible HTTP server whose timing is the twin's engine.

The twin's engine (``serving.engine``: the vLLM V1 or SGLang scheduler, the KV pool with prefix
caching, the calibrated step time, the memory plan) runs in real time through
``serving.engine.wall_clock.ClockDriver``: a request is added when it arrives, and every token is
sent when the emulated step that produced it ends (``--time-scale X``: X emulated seconds per
wall second). Prompts are counted by the 4-characters estimate (``live.openai.text``); output
words are synthetic, drawn from the seed. docs/live.md, "Engine emulator".
"""
