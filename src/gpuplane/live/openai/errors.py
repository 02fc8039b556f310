"""vLLM's error responses: ``{"error": {"message", "type", "param", "code"}}`` with the HTTP status
as ``code`` (``vllm/entrypoints/openai/protocol.py`` ``ErrorResponse``/``ErrorInfo``; vLLM up to
0.10 sent the flat ``{"object": "error", "message", "type", "param", "code"}``, newer releases
nest it under ``error`` as OpenAI does, which the ``openai`` client reads)."""

from __future__ import annotations

# HTTP status -> the error type vLLM names (create_error_response's err_type).
ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
}


class ApiError(Exception):
    """A request the server answers with an error body."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param

    def body(self) -> dict[str, object]:
        err_type = ERROR_TYPES.get(self.status, "BadRequestError")
        info = {"message": self.message, "type": err_type, "param": self.param}
        return {"error": {**info, "code": self.status}}


def model_not_found(model: str) -> ApiError:
    """vLLM ``OpenAIServing._check_model``."""
    return ApiError(404, f"The model `{model}` does not exist.", "model")


def context_too_long(max_model_len: int, prompt_tokens: int, max_tokens: int) -> ApiError:
    """vLLM's renderer check: the prompt is cut to ``max_model_len - max_tokens + 1`` tokens before
    it is counted, so the message gives that as a lower bound ("at least")."""
    at_least = max(1, min(prompt_tokens, max_model_len + 1 - max_tokens))
    return ApiError(
        400,
        f"This model's maximum context length is {max_model_len} tokens. However, you "
        f"requested {max_tokens} output tokens and your prompt contains at least {at_least} "
        f"input tokens, for a total of at least {at_least + max_tokens} tokens. Please reduce "
        f"the length of the input prompt or the number of requested output tokens. "
        f"(parameter=input_tokens, value={at_least})",
        "input_tokens",
    )
