"""The OpenAI-compatible wire that vLLM and SGLang servers speak, as the engine emulator and the
router need it: request bodies read into prompts and sampling limits, vLLM's error bodies, the
response and SSE chunk shapes, and a tokenizer-free estimate of a prompt's tokens.

No model runs: a prompt becomes a token count and content segments (what prefix caching and
prefix-aware routing act on), and output tokens are synthetic words drawn from a seed.
"""
