"""scaled_dot_product_attention on the GPU: two batched products around one kernel that scales, masks
(causal) and softmaxes the scores; backward: four products around the softmax's gradient kernel."""

from . import kernels


def supports(out, q, k, v, mask, gqa):
    """(B, H, L, E) float cupy arrays of one batch, no mask but the causal one, no grouped heads."""
    return mask is None and gqa == 1 and q.ndim == 4 and q.dtype.char in "fd" and q.shape[:2] == k.shape[:2] == v.shape[:2]


def forward(out, q, k, v, keep, dscale, scale, is_causal):
    """As minigrad/backends/cpu/attention.py's forward; returns P (always kept)."""
    cp = kernels._cp()
    P = cp.matmul(q, cp.swapaxes(k, -1, -2))
    kernels.attention_softmax(P, scale, causal=is_causal, out=P)
    if keep is not None:
        Pd = P * keep
        Pd *= kernels._scalar(P.dtype, dscale)
    else:
        Pd = P
    out[...] = cp.matmul(Pd, v)
    return P


def backward(g, P, q, k, v, keep, dscale, scale, is_causal, gq, gk, gv):
    """As minigrad/backends/cpu/attention.py's backward."""
    cp = kernels._cp()
    g = g.astype(q.dtype, copy=False)
    ds = kernels._scalar(P.dtype, dscale)
    Pd = P if keep is None else P * keep * ds
    gv[...] = cp.matmul(cp.swapaxes(Pd, -1, -2), g)
    del Pd
    gP = cp.matmul(g, cp.swapaxes(v, -1, -2))
    if keep is not None:
        gP *= keep
        gP *= ds
    gS = kernels.softmax_backward(P, gP, -1, False, scale)  # gS = P (gP - rowsum(gP P)) scale
    del gP
    gq[...] = cp.matmul(gS, k)
    gk[...] = cp.matmul(cp.swapaxes(gS, -1, -2), q)


