"""An :class:`~gpuplane.live.openai.errors.ApiError` as the aiohttp answer vLLM's server gives:
the error body (``errors.ApiError.body``) as JSON with the error's HTTP status. Shared by the
engine emulator and the router, so that neither service imports the other."""

from __future__ import annotations

from aiohttp import web

from gpuplane.live.openai.errors import ApiError


def error_response(err: ApiError) -> web.Response:
    return web.json_response(err.body(), status=err.status)
