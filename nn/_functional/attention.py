"""scaled_dot_product_attention as one ScaledDotProductAttentionBackward0 node.

It saves q, k, v (the input tensors themselves: no copies) and the attention probabilities P (plus
the boolean dropout mask when dropout_p > 0). q, k, v may be strided views (heads split off a fused
qkv projection): the products read them in place. Broadcast batch dims and grouped-query attention
(key/value heads shared by several query heads) are handled as broadcasting: a size-1 axis that the
gradient is summed over. The common case (4-D, no mask but the causal one) goes to a backend where
there is one (minigrad/backends/{cpu,cuda}/attention.py: each (batch, head) item in one compiled
call; P kept only where it is small). The reference (primitive ops, autograd):
nn/_functional/reference.py's scaled_dot_product_attention, nanoGPT's manual attention.
"""
import functools
import math

import numpy as np

import minigrad
from minigrad import backends
from minigrad.backends.arrays import causal_mask, empty_in_order_of, grads_like, keep_mask

from minigrad.dtypes import cpp_name
from minigrad.ops._util import broadcast_shapes, sum_to_array

from ._common import Function, Tensor, once_differentiable, row_dot, row_sum, xp_of

_NEG_INF = float("-inf")


def _views(q, k, v, gqa, xp):
    """(batch, out_batch, [q, k, v] broadcast as views to batch + (X, Y), their pre-broadcast shapes).

    `batch` is the computing batch shape (never empty; with grouped-query attention the query
    heads are split as (Hk, G) against key/value heads (Hk, 1)); `out_batch` is the caller's.
    """
    batch = q.shape[:-2]
    if gqa == 1 and q.ndim > 2 and batch == k.shape[:-2] == v.shape[:-2]:  # the common case: nothing to broadcast
        return batch, batch, [q, k, v], (q.shape, k.shape, v.shape)
    if gqa > 1:  # (..., Hq, L, E) -> (..., Hk, G, L, E) against k, v (..., Hk, 1, S, E)
        q = q.reshape(q.shape[:-3] + (q.shape[-3] // gqa, gqa) + q.shape[-2:])
        k, v = xp.expand_dims(k, -3), xp.expand_dims(v, -3)
    qb, kb, vb = q.shape[:-2], k.shape[:-2], v.shape[:-2]
    batch = qb if qb == kb == vb else _broadcast(qb, kb, vb)
    out_batch = batch[:-2] + (batch[-2] * batch[-1],) if gqa > 1 else batch
    batch = batch or (1,)
    views = [a if a.shape[:-2] == batch else xp.broadcast_to(a, batch + a.shape[-2:]) for a in (q, k, v)]
    return batch, out_batch, views, (q.shape, k.shape, v.shape)



class Attention(Function):
    node_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(ctx, q, k, v, mask, dropout_p, is_causal, scale, gqa):
        if mask is None and not dropout_p and True not in ctx.needs_input_grad:
            # nothing to save (no_grad, generation): the choices made once per layout, as a replay makes them
            return _attend_arrays(is_causal, scale, gqa)(q.array, k.array, v.array)
        ctx.scale, ctx.dscale, ctx.gqa, ctx.is_causal = scale, 1.0 / (1.0 - dropout_p), gqa, is_causal
        out, P, keep, ctx.impl, scores = _attend(q.array, k.array, v.array, mask, dropout_p, is_causal, scale, gqa)
        # a float mask that requires grad gets the scores' gradient, summed over where it was broadcast
        ctx.mask_grad = (scores, mask.array.shape, mask.array.dtype) if ctx.needs_input_grad[3] else None
        ctx.save(query=q, key=k, value=v, attn=P, mask=keep)
        ctx.attn_mask = mask  # (read by double_backward only)
        return out

    # its array function takes any shape, deciding again where the layout changes (a KV cache's keys
    # and values grow by one position a token)
    array_forward_any_shape = True

    @staticmethod
    def array_forward(q, k, v, mask, dropout_p, is_causal, scale, gqa):
        if mask is not None or dropout_p:
            return None
        return _AttendArrays(is_causal, scale, gqa)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        q, k, v, P, keep = ctx.saved_tensors
        grads, gS = _attend_backward(g.array, q.array, k.array, v.array, None if P is None else P.array,
                                     None if keep is None else keep.array, ctx.impl, ctx.scale, ctx.dscale, ctx.gqa,
                                     ctx.is_causal, ctx.needs_input_grad)
        gmask = None
        if ctx.mask_grad is not None:  # (the backend never runs with a mask: gS is the scores' gradient)
            full, mask_shape, mask_dtype = ctx.mask_grad
            gmask = Tensor._wrap(sum_to_array(gS.reshape(full), mask_shape).astype(mask_dtype, copy=False))
        return tuple([None if ga is None else Tensor._wrap(ga) for ga in grads]) + (gmask,) + (None,) * 4

    @staticmethod
    def double_backward(ctx, g):  # create_graph: the forward again as recorded ops (same dropout mask), differentiated
        q, k, v, _, keep = ctx.saved_tensors
        mask = ctx.attn_mask
        with minigrad.enable_grad():
            kk, vv = (k, v) if ctx.gqa == 1 else (k.repeat_interleave(ctx.gqa, -3), v.repeat_interleave(ctx.gqa, -3))
            S = (q @ kk.transpose(-2, -1)) * ctx.scale
            if ctx.is_causal:
                S = S.masked_fill(Tensor._wrap(causal_mask(S.shape[-2], S.shape[-1], xp_of(S.array))), _NEG_INF)
            if mask is not None:
                S = S.masked_fill(~mask, _NEG_INF) if mask.dtype == minigrad.bool else S + mask
            P = S.softmax(-1)
            if keep is not None:
                P = P * (keep.reshape(P.shape).to(P.dtype) * ctx.dscale)
            out = P @ vv
        inputs = [t for t, need in zip((q, k, v, mask), ctx.needs_input_grad) if need]
        grads = iter(minigrad.autograd.grad(out, inputs, g, create_graph=True, allow_unused=True))
        return tuple(next(grads) if need else None for need in ctx.needs_input_grad[:4]) + (None,) * 4

    @staticmethod
    def array_step(needs, q, k, v, mask, dropout_p, is_causal, scale, gqa):
        if mask is not None:
            return None
        dscale = 1.0 / (1.0 - dropout_p)

        def forward(qd, kd, vd):
            out, P, keep, impl, _ = _attend(qd, kd, vd, None, dropout_p, is_causal, scale, gqa)
            return out, (qd, kd, vd, P, keep, impl)

        def backward(saved, g):
            qd, kd, vd, P, keep, impl = saved
            return _attend_backward(g, qd, kd, vd, P, keep, impl, scale, dscale, gqa, is_causal, needs)[0]

        return forward, backward


def _attend_backward(g, qd, kd, vd, P, keep, impl, scale, dscale, gqa, is_causal, needs):
    """Attention's backward on arrays -> ((gq, gk, gv), each None where not needed; gS, the scores'
    gradient, where the numpy path ran). P None: not kept by the backend (it makes P again).
    gv = P'^T g;  gP' = g v^T;  gP = gP' * keep/(1-p);  gS = P (gP - rowsum(gP P));
    gq = gS k scale;  gk = gS^T q scale;  gmask = gS (summed to the mask's shape)"""
    xp = xp_of(qd)
    batch, _, (qb, kb, vb), shapes = _views(qd, kd, vd, gqa, xp)
    g = g.reshape(batch + g.shape[-2:])
    gq, gk, gv = grads_like(qd, kd, vd, batch, qb.dtype)
    gP = None
    if impl is not None:
        impl.backward(g, P, qb, kb, vb, keep, dscale, scale, is_causal, gq, gk, gv)
    else:
        g = g.astype(qb.dtype, copy=False)
        Pd = P if keep is None else P * keep * dscale
        xp.matmul(xp.swapaxes(Pd, -1, -2), g, out=gv)
        gP = xp.matmul(g, xp.swapaxes(vb, -1, -2))
        if keep is not None:
            gP *= keep
            gP *= dscale
        gP -= row_dot(gP, P, xp)  # gS = P (gP - rowsum(gP P))
        gP *= P
        xp.matmul(gP, kb, out=gq)
        gq *= scale
        xp.matmul(xp.swapaxes(gP, -1, -2), xp.multiply(qb, scale), out=gk)
    grads = tuple([_to_shape(sum_to_array(ga, shp), a.shape) if need else None
                   for ga, shp, a, need in zip((gq, gk, gv), shapes, (qd, kd, vd), needs)])
    return grads, gP


def _attend(qd, kd, vd, mask, dropout_p, is_causal, scale, gqa):
    """Attention's forward on arrays (mask: a Tensor or None) -> (out, P or None, the dropout mask or
    None, the backend that ran or None, the scores' shape)."""
    xp = xp_of(qd)
    batch, out_batch, (qb, kb, vb), _ = _views(qd, kd, vd, gqa, xp)
    L, S = qb.shape[-2], kb.shape[-2]
    out_shape = batch + (L, vb.shape[-1])
    dscale = 1.0 / (1.0 - dropout_p)
    out = _output(qd, out_shape, _like_q(qd, kd, vd, batch, dropout_p, gqa), xp)
    impl = backends.find("attention", out, qb, kb, vb, mask, gqa)
    if impl is not None:
        keep = keep_mask(xp, batch + (L, S), dropout_p) if dropout_p else None
        P = impl.forward(out, qb, kb, vb, keep, dscale, scale, is_causal)
        return _to_shape(out, out_batch + out.shape[-2:]), P, keep, impl, None
    # P = softmax(q scale k^T + mask);  out = dropout(P) v   (the scale on q: L x E, not L x S)
    neg, add = _mask_arrays(mask, is_causal, L, S, batch, out_batch, xp)
    P = xp.matmul(xp.multiply(qb, scale), xp.swapaxes(kb, -1, -2))
    if add is not None:
        P += add
    if neg is not None:
        xp.copyto(P, _NEG_INF, where=neg)
    P = _softmax(P, xp, neg is not None or add is not None)
    keep = keep_mask(xp, batch + (L, S), dropout_p) if dropout_p else None
    if keep is not None:
        Pd = P * keep
        Pd *= dscale
    else:
        Pd = P
    xp.matmul(Pd, vb, out=out)
    return _to_shape(out, out_batch + out.shape[-2:]), P, keep, None, out_batch + (L, S)


def _like_q(qd, kd, vd, batch, dropout_p, gqa):
    """Whether the output is laid out as q is. PyTorch's fused CPU kernel (4-D, no dropout, equal head
    sizes, q's rows unit-stride) does so: heads split off a (B, L, H E) projection give a (B, H, L, E)
    view of (B, L, H, E) memory, and merging the heads back after it is a view, not a copy."""
    return (qd.ndim == 4 and not dropout_p and gqa == 1 and vd.shape[-1] == qd.shape[-1]
            and qd.shape[:-2] == kd.shape[:-2] == vd.shape[:-2] == batch  # nothing broadcast
            and qd.strides[-1] == qd.itemsize)


def _output(qd, shape, like_q, xp):
    """The empty output: laid out as q is (`_like_q`), or contiguous."""
    return empty_in_order_of(qd, shape, qd.dtype) if like_q else xp.empty(shape, qd.dtype)


@functools.lru_cache(maxsize=64)
def _attend_arrays(is_causal, scale, gqa):
    """The no-grad forward's _AttendArrays for these arguments, shared by every call that passes them."""
    return _AttendArrays(is_causal, scale, gqa)


class _AttendArrays:
    """Attention.array_forward's function (and the forward's where nothing is saved): `_attend` with no
    mask and no dropout, its choices (the backend, the output's shape and layout) made once per layout
    of the arrays (their types, dtypes, shapes but for the keys' count, which a KV cache grows by one a
    token, q's strides, and k's and v's strides of rows and columns: a cache grown by cat has other batch
    strides at each count, and backends read keys and values a (batch, head) item at a time) and kernels'
    setting. Broadcast or grouped heads, or no backend taking them:
    `_attend` at each call."""

    def __init__(self, is_causal, scale, gqa):
        self.is_causal, self.scale, self.gqa = is_causal, scale, gqa
        self.plans = {}  # layout -> plan (generation's calls alternate: the whole context, then the cache's)

    def __call__(self, q, k, v):
        if k.shape[-2]:  # (no keys: nothing to choose for)
            layout = (type(q), type(k), type(v), q.dtype, k.dtype, v.dtype, q.shape, q.strides, k.shape[:-2],
                      k.shape[-1], k.strides[-2:], v.shape[:-2], v.shape[-1], v.strides[-2:],
                      k.shape[-2] == v.shape[-2], backends.get_kernels())
            plan = self.plans.get(layout)
            if plan is None:
                plan = self._plan(q, k, v)
                if plan is not None:  # (none: `find` is asked again at each call, as `_attend` asks it)
                    if len(self.plans) >= 64:
                        self.plans.clear()
                    self.plans[layout] = plan
            if plan is not None:
                forward, out_shape, like_q, like = plan
                out = np.empty_like(like) if like is not None else _output(q, out_shape, like_q, np)
                forward(out, q, k, v)
                return out
        return _attend(q, k, v, None, 0.0, self.is_causal, self.scale, self.gqa)[0]

    def _plan(self, q, k, v):
        if type(q) is not np.ndarray:
            return None
        batch, out_batch, views, _ = _views(q, k, v, self.gqa, np)
        if views[0] is not q or views[1] is not k or views[2] is not v or out_batch != batch:
            return None
        out_shape = batch + (q.shape[-2], v.shape[-1])
        like_q = _like_q(q, k, v, batch, 0.0, self.gqa)
        like = _output(q, out_shape, like_q, np)
        impl = backends.find("attention", like, q, k, v, None, self.gqa)
        if impl is None:
            return None
        # each call's output made as this one by empty_like (a third of _output's time) where that gives its
        # strides (not all of size-1 dims' ones)
        if np.empty_like(like).strides != like.strides:
            like = None
        prepared = getattr(impl, "prepared_forward", None)  # (the backend's choices for this layout, made once)
        if prepared is not None:
            return prepared(q, k, v, self.scale, self.is_causal), out_shape, like_q, like
        return ((lambda out, q, k, v: impl.forward(out, q, k, v, None, 1.0, self.scale, self.is_causal)), out_shape,
                like_q, like)


def _softmax(s, xp, masked):
    """softmax of the scores `s` along the last axis (in place on the array path). `masked`: rows may
    hold -inf, and a row of only -inf gives zeros, not NaN (as PyTorch)."""
    rows = s.reshape(-1, s.shape[-1])
    impl = backends.find("softmax", rows) if xp is np else None
    if impl is not None:  # softmax's row kernel: one pass a row (numpy's max over short rows alone cost more)
        p = impl.forward(rows)
        if masked:  # the kernel's NaN rows that were only -inf: zeros
            nan_rows = np.flatnonzero(np.isnan(p[:, 0]))
            p[nan_rows[np.isneginf(rows[nan_rows]).all(axis=-1)]] = 0.0
        return p.reshape(s.shape)
    m = s.max(axis=-1, keepdims=True)
    if masked:
        m[~xp.isfinite(m)] = 0.0
    s -= m
    xp.exp(s, out=s)
    d = row_sum(s, xp)
    if masked:
        d[d == 0.0] = 1.0
    xp.reciprocal(d, out=d)  # one division per row, then a multiply per element
    s *= d
    return s



def _to_shape(a, shape):
    return a if a.shape == shape else a.reshape(shape)


def _broadcast(qb, kb, vb):
    """The batch dims of q @ k^T, then of that @ v, with PyTorch's error for the first that does not broadcast
    (key/value with fewer heads than the query, enable_gqa unset, among them)."""
    return broadcast_shapes(broadcast_shapes(qb, kb), vb)


def _mask_arrays(mask, is_causal, L, S, batch, out_batch, xp):
    """(neg, add): a bool 'masked out' array, or a float one to add: (L, S) or a view of shape batch + (L, S).
    With both an attn_mask and is_causal, both apply (PyTorch's CPU attention does so)."""
    if mask is None:
        return (causal_mask(L, S, xp) if is_causal else None), None
    neg, add = _explicit_mask(mask, L, S, batch, out_batch, xp)
    if is_causal:
        neg = causal_mask(L, S, xp) if neg is None else xp.logical_or(neg, causal_mask(L, S, xp))
    return neg, add


def _explicit_mask(mask, L, S, batch, out_batch, xp):
    full = out_batch + (L, S)
    try:
        if np.broadcast_shapes(mask.array.shape, full) != full:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape {list(mask.shape)} does not broadcast "
                           f"to the attention scores' shape {list(full)}") from None
    m = xp.broadcast_to(mask.array, full).reshape(batch + (L, S))  # a view (splits or adds dims only)
    if m.dtype == np.bool_:
        return xp.logical_not(m), None
    return None, m


def _fused_takes_both(qs, ks, vs, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch's fused CPU kernel, which applies an explicit mask and causality together, takes
    these inputs: its math path, which takes the rest, refuses the pair."""
    heads_match = qs[1] == ks[1] == vs[1] or enable_gqa
    return (len(qs) == len(ks) == len(vs) == 4 and qs[0] == ks[0] == vs[0] and heads_match
            and qs[-1] == ks[-1] == vs[-1] and dropout_p == 0.0 and not attn_mask.requires_grad)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if not (isinstance(query, Tensor) and isinstance(key, Tensor) and isinstance(value, Tensor)):
        for pos, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
            if not isinstance(t, Tensor):
                raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position {pos}) must be Tensor, "
                                f"not {type(t).__name__}")
    # PyTorch's checks, in its order and words (its C++ type names; two spaces where it has them)
    dt = query.array.dtype
    if key.array.dtype != dt or value.array.dtype != dt:
        q, k, v = (cpp_name(t.array.dtype) for t in (query, key, value))
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: {q} "
                           f"key.dtype: {k} and value.dtype: {v} instead.")
    qs, ks, vs = query.array.shape, key.array.shape, value.array.shape
    if min(len(qs), len(ks), len(vs)) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{len(qs)} key.dim: {len(ks)} and value.dim: {len(vs)} instead.")
    if dt.kind not in "fc":  # (PyTorch's math path: its float scale meets the integer or bool inputs)
        if len(qs) == len(ks) == 2:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: float != {cpp_name(dt)}")
        raise RuntimeError(f"expected scalar type Float but found {query.dtype._legacy[:-6]}")
    if attn_mask is not None and attn_mask.array.dtype not in (np.bool_, dt):  # a float mask: the query's dtype
        m, q = (cpp_name(d) for d in (attn_mask.array.dtype, dt))
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {m} and  query.dtype: {q} instead.")
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size E, "
                           f"got query {list(qs)} and key {list(ks)}")
    if ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length S, "
                           f"got key {list(ks)} and value {list(vs)}")
    if attn_mask is not None and is_causal and not _fused_takes_both(qs, ks, vs, attn_mask, dropout_p, enable_gqa):
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    gqa = 1
    if enable_gqa and len(qs) >= 3 and qs[-3] != ks[-3]:
        if qs[-3] % ks[-3] or qs[-3] % vs[-3]:  # (PyTorch's text, cut short as it is)
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        if ks[-3] != vs[-3]:
            raise RuntimeError(f"scaled_dot_product_attention: minigrad's enable_gqa takes key and value with the same "
                               f"number of heads, got {ks[-3]} and {vs[-3]}")
        gqa = qs[-3] // ks[-3]
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    # (an embedding of size 0: every score an empty sum, 0, whatever the scale: PyTorch's uniform weights)
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(qs[-1]) if qs[-1] else 1.0
    if ks[-2] == 0:  # no keys: each output an empty sum, zeros (PyTorch's), as the product of the empty weights
        if gqa > 1:
            key, value = key.repeat_interleave(gqa, -3), value.repeat_interleave(gqa, -3)
        return (query @ key.transpose(-2, -1)) @ value
    # PyTorch's: a p at or below 0 drops nothing, a p of 1 everything (the output zeros, and so the gradients)
    p = max(float(dropout_p), 0.0)
    out = Attention.apply(query, key, value, attn_mask, 0.0 if p == 1.0 else p, bool(is_causal), scale, gqa)
    return out * 0.0 + 0.0 if p == 1.0 else out  # (+ 0: zeros, not the -0 of negative values times 0)

