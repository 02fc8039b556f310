"""Estimates of the two memory parts vLLM measures at start-up instead of computing.

vLLM runs one dummy forward pass with ``max_num_batched_tokens`` tokens split over up to
``max_num_seqs`` requests, then samples one token per request, and records
- the PyTorch *activation peak*: the largest amount of tensor memory alive during that run;
- *non-torch* memory: what grew outside PyTorch's allocator (CUDA context pieces, cuBLAS and NCCL
  buffers, vLLM's custom all-reduce buffers).

Neither can be computed exactly without running the kernels, so these are estimates with the
measured points they were checked against; every command accepts the logged figures instead
(``--activation-gib``, ``--non-torch-gib``). CUDA-graph memory is captured after the KV cache is
allocated and is not part of this budget in the vLLM versions modelled (it comes on top).

Activation estimate: the MLP is the widest point of a layer. With ``T`` tokens the live tensors
there are the residual stream and the normalised hidden state (2 x T x hidden) plus the gate/up
output and the activation output (3 x T x MLP width / TP for a gated MLP, 2 x for a plain one;
for MoE, per routed copy of each token). The sampler then holds the logits of every request in
the model dtype and in float32, the probabilities and a sort workspace (about 14 bytes per vocab
entry per request). The two are added: for Llama-3-8B (8192 tokens, 256 requests) that gives
1.21 GiB where vLLM logged 1.26 GiB (vLLM PR #10511).

Non-torch default: 0.16 GiB on one GPU (logged for Llama-2-7B on A100 and for a Llama-3.2 model
on H100), plus 1 GiB for the NCCL/custom all-reduce buffers when TP > 1 (logged values range from
0.2 GiB on PCIe GPUs to 3.6 GiB on H100 NVLink; PR #14447, PR #10511).
"""

from __future__ import annotations

from gpuplane.core.units import GIB
from gpuplane.serving.memory.vllm_defaults import padded_vocab
from gpuplane.serving.models.shape import MlpKind, ModelShape

SAMPLER_BYTES_PER_LOGIT = 14  # logits (model dtype, then float32), probabilities, sort workspace
NON_TORCH_SINGLE_GPU_BYTES = int(0.16 * GIB)
NON_TORCH_TP_EXTRA_BYTES = 1 * GIB


def forward_peak_bytes(model: ModelShape, tp: int, num_tokens: int, dtype_bytes: float) -> int:
    """Tensor memory alive at the widest point of one layer's forward pass."""
    h = model.hidden_size
    attention = 2 * model.q_size // tp + 2 * model.kv_heads_per_gpu(tp) * model.head_dim
    if model.moe is not None:
        moe = model.moe
        routed = moe.experts_per_token * (3 * moe.expert_intermediate_size // tp + h)
        mlp = routed + 3 * moe.shared_intermediate_size // tp
    else:
        branches = 3 if model.mlp is MlpKind.GATED else 2
        mlp = branches * model.intermediate_size // tp
    return int(num_tokens * dtype_bytes * (2 * h + max(attention, mlp)))


def sampler_peak_bytes(model: ModelShape, tp: int, num_requests: int) -> int:
    """The sampler's logits buffers for one token per request (0 for embedding models)."""
    if not model.is_decoder:
        return 0
    return num_requests * padded_vocab(model.vocab_size) * SAMPLER_BYTES_PER_LOGIT


def activation_peak_bytes(
    model: ModelShape,
    tp: int,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    dtype_bytes: float,
) -> int:
    """Estimated PyTorch activation peak of vLLM's profiling run."""
    requests = min(max_num_seqs, max_num_batched_tokens)
    return forward_peak_bytes(model, tp, max_num_batched_tokens, dtype_bytes) + sampler_peak_bytes(
        model, tp, requests
    )


def non_torch_bytes(tp: int) -> int:
    """Default non-torch memory per GPU for a TP group of ``tp``."""
    return NON_TORCH_SINGLE_GPU_BYTES + (NON_TORCH_TP_EXTRA_BYTES if tp > 1 else 0)
