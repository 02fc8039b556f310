"""The ``kv_transfer_params`` field of vLLM's OpenAI requests and answers, as its NixlConnector
names them: the constants both sides of a P/D hop speak (the router writes them, the engine
emulator reads them), kept here so that neither service imports the other.

vLLM (``distributed/kv_transfer/kv_connector/v1/nixl_connector.py``, connector version 2): the
router sends the prefill engine ``PREFILL_PARAMS`` with ``max_tokens: 1`` and ``stream: false``;
the prefill engine answers ``kv_transfer_params`` naming ``remote_block_ids`` and the
``REMOTE_KEYS`` (and ``tp_size``), which the router passes to the decode engine.
"""

from __future__ import annotations

# What the router sends a prefill engine (vLLM's toy_proxy_server.py and llm-d's sidecar).
PREFILL_PARAMS: dict[str, object] = {
    "do_remote_decode": True,
    "do_remote_prefill": False,
    "remote_engine_id": None,
    "remote_block_ids": None,
    "remote_host": None,
    "remote_port": None,
}
# Where a decode engine reads the prompt's blocks from; params lacking one are invalid to vLLM.
REMOTE_KEYS = ("remote_engine_id", "remote_request_id", "remote_host", "remote_port")
