"""One new position through a pre-LayerNorm transformer block (GPT-2's), against a KV cache, as one op.

Inference only: a generated token's block (gpt/block_step.py hands it over) where a backend takes the
arrays (minigrad/backends/cpu/block_step.py: float32 on the CPU). The op has no array code of its own:
where no backend takes it, `block_step` returns None and the block's modules run as written. What it
computes, at position t = the layer cache's length:

    h = ln_1(x);  q, k, v = c_attn(h);  k, v written at t
    x = x + c_proj(softmax(q k_0..t^T / sqrt(hs)) v_0..t)   (each head)
    out = x + mlp_c_proj(gelu(c_fc(ln_2(x))))

`cache.layers[i]` is the layer's cache: `length`, its key and value buffers `k`, `v` (B, nh, capacity,
hs) and `reserve(end, B, nh, hs, like)`, which makes room for `end` positions (gpt/kv_cache.py's). The
cache and i are passed, not the layer's own object, so that a compiled replay reads the cache it is given.
"""
import numpy as np

from minigrad import backends

from ._common import Function


def block_step(x, cache, i, n_head, eps, approximate, *params):
    """The block on x (B, 1, C) at layer i's next cached position, or None where no backend takes it.
    params: ln_1's weight and bias, then c_attn's, attention's c_proj's, ln_2's, c_fc's and the MLP's
    c_proj's (12 tensors, None for one that is not there)."""
    if _backend(x, params) is None:
        return None
    return BlockStep.apply(x, cache, i, n_head, eps, approximate, *params)


def _backend(x, params):
    B, _, C = x.array.shape
    return backends.find("block_step", x.array.reshape(B, C), *(params[j].array for j in (2, 4, 8, 10)))


class BlockStep(Function):
    @staticmethod
    def forward(ctx, x, cache, i, n_head, eps, approximate, *params):
        impl = _backend(x, params)
        if impl is None:  # (block_step asked the same, and a compiled replay's guards hold what it asked)
            raise RuntimeError("BlockStep: no backend takes these arrays (call it through block_step)")
        B, _, C = x.array.shape
        rows = x.array.reshape(B, C)
        layer = cache.layers[i]
        t = layer.length
        layer.reserve(t + 1, B, n_head, C // n_head, rows)
        out = np.empty((B, C), rows.dtype)
        impl.forward(out, rows if rows.flags.c_contiguous else np.ascontiguousarray(rows), layer.k, layer.v, t,
                     [None if p is None else p.array for p in params], eps, approximate)
        layer.length = t + 1
        return out.reshape(B, 1, C)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the KV cache is for generation, under no_grad: nothing differentiates through it")
