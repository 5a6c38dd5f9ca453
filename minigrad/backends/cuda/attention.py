"""scaled_dot_product_attention on the GPU: two batched products around one kernel that scales, masks
(causal) and softmaxes the scores; backward: four products around the softmax's gradient kernel."""

from . import kernels


def plan(q, k, v, out):
    """The GPU takes any (B, H, L, E) arrays (the op has checked the rest)."""
    return ()


def forward(plan, out, q, k, v, keep, dscale, scale, is_causal):
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


def backward(plan, g, P, q, k, v, keep, dscale, scale, is_causal, gq, gk, gv):
    """As minigrad/backends/cpu/attention.py's backward; returns True."""
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
    return True


