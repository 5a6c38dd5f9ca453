"""scaled_dot_product_attention as one ScaledDotProductAttentionBackward0 node.

It saves q, k, v (the input tensors themselves: no copies) and the attention probabilities P
(plus the boolean dropout mask when dropout_p > 0). Forward and backward run over the flattened
batch*heads in small groups of heads, so the (L, S) score blocks of a group are made, masked,
softmaxed and used while in cache, and the (L, S) gradient scratch is never as large as P.
"""
import math

import numpy as np

from . import erf as _erf
from ._common import Function, Tensor, check_tensor, once_differentiable, sum_to, xp_of
from .dropout import keep_mask

_NEG_INF = float("-inf")


def _groups(n, per_item, xp):
    """Slices over n (L, S) items, a few per group (all at once on cupy)."""
    if xp is not np:
        return (slice(0, n),)
    step = max(1, (4 * _erf.BLOCK) // max(1, per_item))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _flat(a, batch, xp):
    """(*batch, X, Y) -> (N, X, Y): a view unless `a` had to be broadcast to `batch`."""
    a = xp.broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
    return a.reshape((-1,) + a.shape[-2:])


class Attention(Function):
    node_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(ctx, q, k, v, mask, dropout_p, is_causal, scale, gqa):
        # P = softmax(q k^T * scale + mask);  out = dropout(P) v
        xp = xp_of(q.data)
        qd, kd, vd = q.data, _repeat_heads(k.data, gqa, xp), _repeat_heads(v.data, gqa, xp)
        L, S = qd.shape[-2], kd.shape[-2]
        batch = _broadcast(qd.shape[:-2], kd.shape[:-2], vd.shape[:-2])
        qf, kf, vf = _flat(qd, batch, xp), _flat(kd, batch, xp), _flat(vd, batch, xp)
        N = qf.shape[0]
        P = xp.empty((N, L, S), dtype=qd.dtype)
        out = xp.empty((N, L, vf.shape[-1]), dtype=qd.dtype)
        neg, add, per_item = _mask_arrays(mask, is_causal, L, S, batch, xp)
        keep = keep_mask(xp, (N, L, S), dropout_p) if dropout_p else None
        dscale = 1.0 / (1.0 - dropout_p) if dropout_p else 1.0
        for c in _groups(N, L * S, xp):
            s = P[c]
            xp.matmul(qf[c], xp.swapaxes(kf[c], -1, -2), out=s)
            s *= scale
            if add is not None:
                s += add[c] if per_item else add
            if neg is not None:
                xp.copyto(s, _NEG_INF, where=neg[c] if per_item else neg)
            m = s.max(axis=-1, keepdims=True)
            if neg is not None or add is not None:  # a fully masked row gives zeros, not NaN (as PyTorch)
                m[~xp.isfinite(m)] = 0.0
            s -= m
            xp.exp(s, out=s)
            d = s.sum(axis=-1, keepdims=True)
            if neg is not None or add is not None:
                d[d == 0.0] = 1.0
            s /= d
            if keep is not None:
                pd = s * keep[c]
                pd *= dscale
                xp.matmul(pd, vf[c], out=out[c])
            else:
                xp.matmul(s, vf[c], out=out[c])
        ctx.scale, ctx.dscale, ctx.batch, ctx.gqa = scale, dscale, batch, gqa
        ctx.save(query=q, key=k, value=v, attn=Tensor(P), mask=None if keep is None else Tensor(keep))
        return out.reshape(batch + out.shape[1:])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        # gv = P'^T g;  gP' = g v^T;  gP = gP' * keep/(1-p);  gS = P (gP - rowsum(gP P)) * scale;  gq = gS k;  gk = gS^T q
        q, k, v, P, keep = ctx.saved_tensors
        P = P.data
        xp = xp_of(P)
        batch, gqa = ctx.batch, ctx.gqa
        qd, kd, vd = q.data, _repeat_heads(k.data, gqa, xp), _repeat_heads(v.data, gqa, xp)
        qf, kf, vf = _flat(qd, batch, xp), _flat(kd, batch, xp), _flat(vd, batch, xp)
        gf = xp.ascontiguousarray(g.data).reshape((-1,) + g.data.shape[-2:])
        keep = None if keep is None else keep.data
        N, L, S = P.shape
        gq, gk, gv = xp.empty(qf.shape, qd.dtype), xp.empty(kf.shape, qd.dtype), xp.empty(vf.shape, qd.dtype)
        groups = _groups(N, L * S, xp)
        h = groups[0].stop - groups[0].start
        gP_buf, t_buf = xp.empty((h, L, S), P.dtype), xp.empty((h, L, S), P.dtype)
        for c in groups:
            Pc = P[c]
            n = Pc.shape[0]
            gP, t = gP_buf[:n], t_buf[:n]
            if keep is not None:
                xp.multiply(Pc, keep[c], out=t)
                t *= ctx.dscale
                xp.matmul(xp.swapaxes(t, -1, -2), gf[c], out=gv[c])
            else:
                xp.matmul(xp.swapaxes(Pc, -1, -2), gf[c], out=gv[c])
            xp.matmul(gf[c], xp.swapaxes(vf[c], -1, -2), out=gP)
            if keep is not None:
                gP *= keep[c]
                gP *= ctx.dscale
            xp.multiply(gP, Pc, out=t)  # gP P
            d = t.sum(axis=-1, keepdims=True)
            xp.multiply(Pc, d, out=gP)
            xp.subtract(t, gP, out=t)  # gS / scale
            t *= ctx.scale
            xp.matmul(t, kf[c], out=gq[c])
            xp.matmul(xp.swapaxes(t, -1, -2), qf[c], out=gk[c])
        needs = ctx.needs_input_grad
        return (Tensor(_grad(gq, batch, qd.shape)) if needs[0] else None,
                _unrepeat(_grad(gk, batch, kd.shape), gqa) if needs[1] else None,
                _unrepeat(_grad(gv, batch, vd.shape), gqa) if needs[2] else None,
                None, None, None, None, None)


def _grad(gf, batch, shape):
    return sum_to(gf.reshape(batch + gf.shape[1:]), shape)


def _repeat_heads(a, gqa, xp):
    """Grouped-query attention: each of the Hk key/value heads serves `gqa` query heads."""
    return a if gqa == 1 else xp.repeat(a, gqa, axis=-3)


def _unrepeat(g, gqa):
    if g is None or gqa == 1:
        return None if g is None else Tensor(g)
    shape = g.shape[:-3] + (g.shape[-3] // gqa, gqa) + g.shape[-2:]
    return Tensor(g.reshape(shape).sum(axis=-3))


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: batch dims of query, key and value do not broadcast: "
                           f"{[list(s) for s in shapes]}") from None


def _mask_arrays(mask, is_causal, L, S, batch, xp):
    """(neg, add, per_item): a bool 'masked out' array, a float array to add, and whether they are per (N) item."""
    if is_causal:
        return xp.triu(xp.ones((L, S), dtype=bool), 1), None, False
    if mask is None:
        return None, None, False
    m = mask.data
    shape = np.broadcast_shapes(m.shape, batch + (L, S))
    if shape != batch + (L, S):
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape {list(m.shape)} does not broadcast "
                           f"to the attention scores' shape {list(batch + (L, S))}")
    if all(s == 1 for s in m.shape[:-2]):
        m2 = m.reshape(m.shape[-2:]) if m.ndim >= 2 else m
        per_item = False
    else:
        m2 = xp.broadcast_to(m, batch + m.shape[-2:] if m.ndim >= 2 else batch + (1,) * 2).reshape((-1,) + m.shape[-2:])
        per_item = True
    if m.dtype == np.bool_:
        return xp.logical_not(m2), None, per_item
    return None, m2, per_item


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(t, name, "scaled_dot_product_attention")
        if t.data.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must have at least 2 dims (..., seq, features), "
                               f"got shape {list(t.shape)}")
    qs, ks, vs = query.data.shape, key.data.shape, value.data.shape
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size E, "
                           f"got query {list(qs)} and key {list(ks)}")
    if ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length S, "
                           f"got key {list(ks)} and value {list(vs)}")
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    gqa = 1
    if enable_gqa and len(qs) >= 3 and qs[-3] != ks[-3]:
        if qs[-3] % ks[-3] or ks[-3] != vs[-3]:
            raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa the number of query heads ({qs[-3]}) "
                               f"must be a multiple of the key/value heads ({ks[-3]}, {vs[-3]})")
        gqa = qs[-3] // ks[-3]
    dt = query.data.dtype
    if key.data.dtype != dt or value.data.dtype != dt:
        raise RuntimeError(f"scaled_dot_product_attention: expected query, key and value to have the same dtype, "
                           f"got {query.dtype}, {key.dtype} and {value.dtype}")
    if attn_mask is not None and attn_mask.data.dtype.kind not in "bf":
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask must be bool or float, got {attn_mask.dtype}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout probability has to be in [0, 1), but got {dropout_p}")
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    return Attention.apply(query, key, value, attn_mask, float(dropout_p), bool(is_causal), scale, gqa)
