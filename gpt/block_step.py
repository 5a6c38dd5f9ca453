"""A generated token through a whole transformer block in one op: generation's inner loop.

With a KV cache, each new token runs every block on one position: ~25 small ops a block (two layer
norms, four products, the heads' split, the cache's append, attention, GELU, two adds), each costing
a few microseconds of calls around less arithmetic than that. Block's forward hands such a position
(the cache, one position, no grad, eval mode: dropout off) to nn's `block_step` op
(nn/_functional/block_step.py), which computes what the block's modules compute (up to the products'
rounding) in one kernel call and writes the new key and value into the cache, where a backend takes
the arrays (float32 on the CPU). Otherwise, and under MINIGRAD_KERNELS=numpy or reference, the modules
run as written (gpt/model.py's Block).
"""
import minigrad
import nn.functional as F


def run(block, x, cache):
    """The block (gpt.model.Block) on x (B, 1, C) against `cache` (a KV cache layer) as one op, or None
    where it is not taken (the caller then runs the modules)."""
    if x.shape[1] != 1 or block.training or minigrad.is_grad_enabled():
        return None
    attn, mlp = block.attn, block.mlp
    layers = (block.ln_1, attn.c_attn, attn.c_proj, block.ln_2, mlp.c_fc, mlp.c_proj)
    params = [p for layer in layers for p in (layer.weight, layer.bias)]
    return F._block_step(x, cache.cache, cache.index, attn.n_head, block.ln_1.eps, mlp.gelu.approximate, *params)
