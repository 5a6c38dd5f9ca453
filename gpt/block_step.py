"""A generated token through a whole transformer block in one op: generation's inner loop.

With a KV cache, each new token runs every block on one position: ~25 small ops a block (two layer
norms, four products, the heads' split, the cache's append, attention, GELU, two adds), each costing
a few microseconds of calls around less arithmetic than that. Where a backend takes the block
(`backends.find("block_step", ...)`: minigrad/backends/cpu/block_step.py, float32 on the CPU), Block's
forward hands it to `BlockStep` instead, which computes what the block's modules compute (up to the
products' rounding) in one kernel call and writes the new key and value into the cache. Only for
inference: the cache, one position, no grad, eval mode (dropout off). Otherwise, and under
MINIGRAD_KERNELS=numpy or reference, the modules run as written (gpt/model.py's Block).
"""
import numpy as np

import minigrad
from minigrad import backends


def takes(block, x, cache):
    """Whether `block` (gpt.model.Block) runs x (B, 1, C) against `cache` (a KV cache layer) as one BlockStep."""
    if cache is None or x.shape[1] != 1 or block.training or minigrad.is_grad_enabled():
        return False
    attn, mlp = block.attn, block.mlp
    return backends.find("block_step", x.array.reshape(x.shape[0], x.shape[2]), attn.c_attn.weight.array,
                         attn.c_proj.weight.array, mlp.c_fc.weight.array, mlp.c_proj.weight.array) is not None


def run(block, x, cache):
    """The block on x (B, 1, C) at the cache's next position, as one op (`takes` said yes)."""
    attn, mlp = block.attn, block.mlp
    layers = (block.ln_1, attn.c_attn, attn.c_proj, block.ln_2, mlp.c_fc, mlp.c_proj)
    params = [p for layer in layers for p in (layer.weight, layer.bias)]
    return BlockStep.apply(x, cache.cache, cache.index, attn.n_head, block.ln_1.eps, mlp.gelu.approximate, *params)


class BlockStep(minigrad.autograd.Function):
    """x (B, 1, C) through a pre-LayerNorm block at position t = the layer cache's length, its key and value
    written there: ln_1, c_attn, attention over positions 0..t, c_proj, the residual add, ln_2, c_fc,
    GELU, the MLP's c_proj, the residual add. `params`: each layer's weight and bias (None if absent)."""

    @staticmethod
    def forward(ctx, x, cache, i, n_head, eps, approximate, *params):
        B, _, C = x.array.shape
        rows = x.array.reshape(B, C)
        arrays = [None if p is None else p.array for p in params]
        impl = backends.find("block_step", rows, arrays[2], arrays[4], arrays[8], arrays[10])
        if impl is None:  # (takes() asked the same at capture, and a compiled replay's guards hold what it asked)
            raise RuntimeError("BlockStep: no backend takes these arrays (Block.forward asks gpt.block_step.takes)")
        layer = cache.layers[i]
        t = layer.length
        layer.reserve(t + 1, B, n_head, C // n_head, rows)
        out = np.empty((B, C), rows.dtype)
        impl.forward(out, rows if rows.flags.c_contiguous else np.ascontiguousarray(rows), layer.k, layer.v, t,
                     arrays, eps, approximate)
        layer.length = t + 1
        return out.reshape(B, 1, C)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the KV cache is for generation, under no_grad: nothing differentiates through it")

