"""scaled_dot_product_attention as one ScaledDotProductAttentionBackward0 node.

It saves q, k, v (the input tensors themselves: no copies) and the attention probabilities P
(plus the boolean dropout mask when dropout_p > 0); on the CPU's fused path, P only where it is
no larger than q, k and v (`_keeps_probabilities`), else backward makes it again. Forward and
backward run over the leading batch dim in small groups, so the (L, S) score blocks of a group
are made, masked, softmaxed and used while in cache, and the (L, S) gradient scratch is never as
large as P. The common case (4-D, no mask but the causal one, no dropout, OpenBLAS) runs each
(batch, head) item in one compiled call, BLAS products included (`_attention_items`). q, k, v may
be strided views (heads split off a fused qkv projection): BLAS reads them in place, no copies.
Broadcast batch dims and grouped-query attention (key/value heads shared by several query heads)
are handled as broadcasting: a size-1 axis that the gradient is summed over.
"""
import functools
import math

import numpy as np

from . import _common
from . import cpu_kernels, cuda_kernels
from ._common import (
    Function, Tensor, check_tensor, for_blocks, num_threads, once_differentiable, row_dot, row_sum, scratch_like, sum_to,
    xp_of,
)
from .dropout import keep_mask

_NEG_INF = float("-inf")


def _views(q, k, v, gqa, xp):
    """(batch, out_batch, [q, k, v] broadcast as views to batch + (X, Y), their pre-broadcast shapes).

    `batch` is the computing batch shape (never empty; with grouped-query attention the query
    heads are split as (Hk, G) against key/value heads (Hk, 1)); `out_batch` is the caller's.
    """
    if gqa > 1:  # (..., Hq, L, E) -> (..., Hk, G, L, E) against k, v (..., Hk, 1, S, E)
        q = q.reshape(q.shape[:-3] + (q.shape[-3] // gqa, gqa) + q.shape[-2:])
        k, v = xp.expand_dims(k, -3), xp.expand_dims(v, -3)
    qb, kb, vb = q.shape[:-2], k.shape[:-2], v.shape[:-2]
    batch = qb if qb == kb == vb else _broadcast(qb, kb, vb)
    out_batch = batch[:-2] + (batch[-2] * batch[-1],) if gqa > 1 else batch
    batch = batch or (1,)
    views = [a if a.shape[:-2] == batch else xp.broadcast_to(a, batch + a.shape[-2:]) for a in (q, k, v)]
    return batch, out_batch, views, (q.shape, k.shape, v.shape)


def _work_split(batch, L, S, xp):
    """How the batch is cut into work items: (number of items, indices(lo, hi) -> index tuples, items
    per block). Items are single (batch, head) pairs when the batch is (B, H), so that even B = 1
    gives every core work; otherwise items of the first batch dim. A block's (L, S) scores fit in
    cache; blocks run one per core, each with single-threaded BLAS (many small products go faster
    that way)."""
    if len(batch) == 2 and xp is np:
        H = batch[1]

        def indices(lo, hi):  # the flat item range as whole batch entries and (b, heads h0:h1) pieces
            out = []
            while lo < hi:
                b, h = divmod(lo, H)
                if h == 0 and hi - lo >= H:  # a run of whole batch entries in one piece
                    b1 = b + (hi - lo) // H
                    out.append((slice(b, b1),))
                    lo = b1 * H
                    continue
                h1 = min(H, h + hi - lo)
                out.append((b, slice(h, h1)))
                lo += h1 - h
            return out

        n = batch[0] * H
        return n, indices, _per_core(n, max(1, _common.BLOCK // max(1, L * S)), L * S)
    per = L * S
    for d in batch[1:]:
        per *= d
    block = batch[0] if xp is not np else _per_core(batch[0], max(1, _common.BLOCK // max(1, per)), per)
    return batch[0], lambda lo, hi: [(slice(lo, hi),)], block


def _per_core(n, block, per_item):
    """A block size that still gives every core a share when all the work would fit in one block,
    unless the work is too small to be worth a thread (one generated token, say)."""
    if n * per_item < _common.BLOCK // 4:
        return n
    return max(1, min(block, -(-n // num_threads())))


class Attention(Function):
    node_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(ctx, q, k, v, mask, dropout_p, is_causal, scale, gqa):
        if cuda_kernels.use(q.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.Attention.forward(ctx, q, k, v, mask, dropout_p, is_causal, scale, gqa)
        # P = softmax(q k^T * scale + mask);  out = dropout(P) v
        xp = xp_of(q.data)
        ctx.scale, ctx.dscale, ctx.gqa, ctx.is_causal = scale, 1.0 / (1.0 - dropout_p), gqa, is_causal
        qd, kd, vd = q.data, k.data, v.data
        if (xp is np and mask is None and not is_causal and not dropout_p and gqa == 1 and qd.ndim > 2
                and qd.shape[:-2] == kd.shape[:-2] == vd.shape[:-2]
                and qd.size // max(1, qd.shape[-1]) * kd.shape[-2] < _common.BLOCK // 4):
            # a small unmasked job, such as a generated token's one query: the loop below would run
            # once over everything; the same operations without its machinery
            P = np.matmul(np.multiply(qd, scale), np.swapaxes(kd, -1, -2))
            _softmax_(P, np, False)
            ctx.save(query=q, key=k, value=v, attn=P, mask=None)
            return np.matmul(P, vd)
        batch, out_batch, (qb, kb, vb), _ = _views(qd, kd, vd, gqa, xp)
        L, S = qb.shape[-2], kb.shape[-2]
        out_shape = batch + (L, vb.shape[-1])
        # PyTorch's fused CPU kernel (4-D, no dropout, equal head sizes, q's rows unit-stride) lays its
        # output out as q is: heads split off a (B, L, H E) projection give a (B, H, L, E) view of
        # (B, L, H, E) memory, and merging the heads back after it is a view, not a copy. Likewise here.
        like_q = (qd.ndim == 4 and not dropout_p and gqa == 1 and vb.shape[-1] == qd.shape[-1]
                  and qd.shape[:-2] == kd.shape[:-2] == vd.shape[:-2] == batch  # nothing broadcast
                  and qd.strides[-1] == qd.itemsize)
        out = _empty_in_order_of(qd, out_shape, qb.dtype) if like_q else xp.empty(out_shape, qb.dtype)
        n_items, indices, block = _work_split(batch, L, S, xp)
        chunks = _causal_chunks(L, S, is_causal, xp)
        gemm = _fused_gemm(cpu_kernels.use(qb) and mask is None and gqa == 1 and len(batch) == 2, qb, kb, vb, out)
        if gemm is not None:  # the whole of each item in one compiled call (see _attention_items)
            P = xp.empty(batch + (L, S), dtype=qb.dtype) if _keeps_probabilities(L, S, qb.shape[-1],
                                                                                  vb.shape[-1]) else None
            P3 = np.empty((0, L, S), qb.dtype) if P is None else P.reshape(n_items, L, S)  # empty: a scratch per item
            ctx.gemm = gemm  # backward takes the same path (and makes P again when it was not kept)
            spans = np.array(chunks, dtype=np.int64)
            keep = keep_mask(xp, batch + (L, S), dropout_p) if dropout_p else None
            _fused_forward(out, P3, 0, qb, kb, vb, keep, ctx.dscale, 0, n_items, scale, spans, is_causal, gemm, True)
            ctx.save(query=q, key=k, value=v, attn=P, mask=keep)
            return _to_shape(out, out_batch + out.shape[-2:])

        neg, add = _mask_arrays(mask, is_causal, L, S, batch, out_batch, xp)
        masked = neg is not None or add is not None
        keep = keep_mask(xp, batch + (L, S), dropout_p) if dropout_p else None
        dscale = ctx.dscale

        compiled = cpu_kernels.use(qb) and add is None and (neg is None or is_causal)

        def softmax(s, ix, rows, cols):  # s = P[ix][rows, cols] holds (q scale) k^T: mask, softmax in place
            if compiled and _softmax_compiled(s, rows.start if is_causal else -1):
                return
            if add is not None:
                s += add[ix][..., rows, cols]
            if neg is not None and is_causal:  # keys before the first row are seen by every row
                r0 = rows.start
                xp.copyto(s[..., r0:], _NEG_INF, where=neg[rows, r0:cols.stop])
            elif neg is not None:
                xp.copyto(s, _NEG_INF, where=neg[rows, cols] if neg.ndim == 2 else neg[ix][..., rows, cols])
            _softmax_(s, xp, masked)

        P = xp.empty(batch + (L, S), dtype=qb.dtype)

        def attend(lo, hi):  # items lo:hi, start to end on one core, while in cache
            for ix in indices(lo, hi):
                Pi, ki, vi, oi = P[ix], kb[ix], vb[ix], out[ix]
                # the scale goes on q (L x E per item) rather than on the scores (L x S)
                qs = xp.multiply(qb[ix], scale, out=scratch_like(1, qb[ix].shape, qb.dtype, xp))
                for r0, r1, c1 in chunks:  # query rows r0:r1 see keys :c1 (causal: none after r1)
                    rows, cols = slice(r0, r1), slice(0, c1)
                    Pc = Pi[..., rows, cols]
                    xp.matmul(qs[..., rows, :], xp.swapaxes(ki[..., cols, :], -1, -2), out=Pc)
                    softmax(Pc, ix, rows, cols)
                    if c1 < S:
                        Pi[..., rows, c1:] = 0.0
                    if keep is not None:
                        Pc = Pc * keep[ix][..., rows, cols]
                        Pc *= dscale
                    xp.matmul(Pc, vi[..., cols, :], out=oi[..., rows, :])

        for_blocks(n_items, attend, block, xp, blas=True)
        ctx.save(query=q, key=k, value=v, attn=P, mask=keep)
        return _to_shape(out, out_batch + out.shape[-2:])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if cuda_kernels.use(g.data):
            return cuda_kernels.Attention.backward(ctx, g)
        # gv = P'^T g;  gP' = g v^T;  gP = gP' * keep/(1-p);  gS = P (gP - rowsum(gP P));
        # gq = gS k scale;  gk = gS^T q scale  (the scale is applied to the small L x E results)
        q, k, v, P, keep = ctx.saved_tensors
        P = None if P is None else P.data  # None: not kept (see _keeps_probabilities)
        xp = xp_of(q.data)
        batch, _, (qb, kb, vb), shapes = _views(q.data, k.data, v.data, ctx.gqa, xp)
        g = g.data.reshape(batch + g.data.shape[-2:])
        keep = None if keep is None else keep.data
        L, S = qb.shape[-2], kb.shape[-2]
        gq, gk, gv = _grads_like(q.data, k.data, v.data, batch, qb.dtype, xp)
        scale, dscale = ctx.scale, ctx.dscale
        n_items, indices, block = _work_split(batch, L, S, xp)
        chunks = _causal_chunks(L, S, ctx.is_causal, xp)
        compiled = P is not None and cpu_kernels.use(P)
        fused = ctx.__dict__.get("gemm")  # set by the forward's fused path
        if fused is not None and (g.dtype != qb.dtype or _fused_gemm(True, g) is None):
            # a gradient BLAS cannot read (sum's stride-0 one, say) or of another dtype: a copy in the
            # output's dtype (as PyTorch casts it), so that the fused forward's backward always takes it
            g = np.ascontiguousarray(g, dtype=qb.dtype)
        use_fused = fused is not None and _fused_gemm(True, g, gq, gk, gv) is not None
        if P is None and not use_fused:  # cannot happen: the gradients are laid out as q, k, v, which BLAS read
            raise RuntimeError("scaled_dot_product_attention backward: the probabilities were not kept and "
                               "cannot be made again here")
        if use_fused:  # the whole of each item in one compiled call (see _attention_items_backward)
            spans, dt = np.array(chunks, dtype=np.int64), qb.dtype.type
            # forward's probabilities: kept, or made again, exactly as the forward made them, for a group
            # of items at a time (`gq` stands in for the output, which is not written)
            group = n_items if P is not None else _items_per_group(L, S, qb.itemsize)
            P3 = P.reshape(n_items, L, S) if P is not None else np.empty((min(group, n_items), L, S), qb.dtype)
            team = _shared_out(n_items, qb, kb)  # (decided for the whole job: any grouping gives the same bits)
            for lo in range(0, n_items, group):
                hi = min(n_items, lo + group)
                p0 = 0 if P is not None else lo
                if P is None:
                    _fused_forward(gq, P3, p0, qb, kb, vb, None, 1.0, lo, hi, scale, spans, ctx.is_causal, fused, False,
                                   team)
                run = _attention_items_backward if team else _attention_items_backward.plain
                with cpu_kernels.one_blas_thread():
                    run(gq, gk, gv, g, P3, p0, qb, kb, vb, _no_mask() if keep is None else keep, dt(dscale), spans, lo,
                        hi, dt(scale), dt(0), dt(1), *fused)
        else:
            for_blocks(n_items, _attend_grad_numpy(P, g, qb, kb, vb, gq, gk, gv, keep, indices, chunks, compiled,
                                                   scale, dscale, xp), block, xp, blas=True)
        needs = ctx.needs_input_grad
        return tuple(Tensor(_to_shape(sum_to(ga, shp), t.data.shape)) if need else None
                     for ga, shp, t, need in zip((gq, gk, gv), shapes, (q, k, v), needs)) + (None,) * 5


def _attend_grad_numpy(P, g, qb, kb, vb, gq, gk, gv, keep, indices, chunks, compiled, scale, dscale, xp):
    """Attention's backward over items lo:hi in numpy passes and matmuls (the general case)."""

    def attend_grad(lo, hi):  # items lo:hi on one core
        for ix in indices(lo, hi):
            Pi, gi, ki, vi = P[ix], g[ix], kb[ix], vb[ix]
            gqi, gki, gvi = gq[ix], gk[ix], gv[ix]
            qs = xp.multiply(qb[ix], scale, out=scratch_like(1, qb[ix].shape, qb.dtype, xp))
            whole = len(chunks) == 1
            if not whole:  # key and value rows gather gradient from every chunk of queries after them
                gki[...] = 0.0
                gvi[...] = 0.0
            for r0, r1, c1 in chunks:
                rows, cols = slice(r0, r1), slice(0, c1)
                Pc, gc = Pi[..., rows, cols], gi[..., rows, :]
                gP = scratch_like(0, Pc.shape, P.dtype, xp)
                Pd = Pc if keep is None else Pc * keep[ix][..., rows, cols] * dscale
                if whole:
                    xp.matmul(xp.swapaxes(Pd, -1, -2), gc, out=gvi)
                else:
                    gvi[..., cols, :] += xp.matmul(xp.swapaxes(Pd, -1, -2), gc)
                xp.matmul(gc, xp.swapaxes(vi[..., cols, :], -1, -2), out=gP)
                if keep is not None:
                    gP *= keep[ix][..., rows, cols]
                    gP *= dscale
                if not (compiled and _softmax_grad_compiled(gP, Pc)):
                    gP -= row_dot(gP, Pc, xp)  # gS = P (gP - rowsum(gP P))
                    gP *= Pc
                xp.matmul(gP, ki[..., cols, :], out=gqi[..., rows, :])
                gqi[..., rows, :] *= scale
                if whole:
                    xp.matmul(xp.swapaxes(gP, -1, -2), qs, out=gki)
                else:
                    gki[..., cols, :] += xp.matmul(xp.swapaxes(gP, -1, -2), qs[..., rows, :])

    return attend_grad


def _softmax_(s, xp, masked):
    """softmax of the scores `s` along the last axis, in place. `masked`: rows may hold -inf, and a row
    of only -inf gives zeros, not NaN (as PyTorch)."""
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


# The compiled softmax (cpu_kernels): the row max, the mask and the normalisation each in one
# pass over a row while it is in cache; the exp stays numpy's (vectorized; a compiled exp is not).
@cpu_kernels.kernel
def _softmax_shift(s, r0, zero, neg_inf):  # s (n, R, C): s - max over the keys a row sees, -inf past them
    n, R, C = s.shape
    for b in range(n):
        for i in range(R):
            end = C if r0 < 0 else min(C, r0 + i + 1)  # causal (r0 >= 0): row i is query r0 + i
            m = neg_inf
            for j in range(end):
                m = max(m, s[b, i, j])
            if not np.isfinite(m):  # a row of -inf (or NaN): left to give zeros (or NaN), as the numpy form
                m = zero
            for j in range(end):
                s[b, i, j] -= m
            for j in range(end, C):
                s[b, i, j] = neg_inf


@cpu_kernels.kernel
def _softmax_normalise(s, zero, one):  # s (n, R, C) of exp(x - max): divided by its row sums (a zero sum stays zeros)
    n, R, C = s.shape
    for b in range(n):
        for i in range(R):
            d = zero
            for j in range(C):
                d += s[b, i, j]
            r = one / d if d != zero else one
            for j in range(C):
                s[b, i, j] *= r


@cpu_kernels.kernel
def _softmax_grad_rows(gP, P, zero):  # gS = P (gP - rowsum(gP P)), into gP; both (n, R, C)
    n, R, C = gP.shape
    for b in range(n):
        for i in range(R):
            d = zero
            for j in range(C):
                d += gP[b, i, j] * P[b, i, j]
            for j in range(C):
                gP[b, i, j] = P[b, i, j] * (gP[b, i, j] - d)


def _as_rows3(a):
    """a (..., R, C) as an (n, R, C) view, or None when its batch dims do not merge without a copy."""
    if a.ndim == 3:
        return a
    try:
        return np.reshape(a, (-1,) + a.shape[-2:], copy=False)
    except ValueError:
        return None


def _softmax_compiled(s, r0):
    """Softmax of the scores s (..., R, C) in place with the compiled kernels (r0 >= 0: causal, the
    rows being queries r0...). False, having done nothing, when s is not a view they take."""
    s3 = _as_rows3(s)
    if s3 is None:
        return False
    dt = s.dtype.type  # scalars in the scores' precision: float64 ones would make the loops float64
    _softmax_shift(s3, r0, dt(0), dt(-np.inf))
    np.exp(s, out=s)
    _softmax_normalise(s3, dt(0), dt(1))
    return True


def _softmax_grad_compiled(gP, P):
    g3, p3 = _as_rows3(gP), _as_rows3(P)
    if g3 is None or p3 is None:
        return False
    _softmax_grad_rows(g3, p3, gP.dtype.type(0))
    return True


def _fused_gemm(ok, *arrays):
    """(gemm address, ilp64) for the one-call-per-item forward, or None. It needs the compiled
    kernels, OpenBLAS, (B, H, rows, cols) arrays of one float dtype whose rows are unit-stride (as
    BLAS reads them), and no mask but the causal one, no dropout, no grouped heads (the caller's `ok`)."""
    if not ok:
        return None
    a0 = arrays[0]
    for a in arrays:
        if (type(a) is not np.ndarray or a.ndim != 4 or a.dtype != a0.dtype or a.shape[:2] != a0.shape[:2]
                or min(a.shape) == 0 or a.strides[-1] != a.itemsize or a.strides[-2] % a.itemsize
                or a.strides[-2] < a.shape[-1] * a.itemsize):
            return None
    return cpu_kernels.gemm_address(a0.dtype)


def _keeps_probabilities(L, S, E, Ev):
    """Whether the fused forward keeps P for backward. Only where P is no larger than q, k and v
    together (short sequences: a baby GPT's 64 x 64 per head against 3 x 64 x 32); for longer ones the
    backward makes P again (one more product per item) rather than hold an (L, S) array per head,
    as PyTorch's flash attention does: at block 256 that is 100 MB a layer."""
    return L * S <= L * E + S * E + S * Ev


def _fused_forward(out, P3, p0, q, k, v, keep, dscale, lo, hi, scale, spans, causal, gemm, with_output, team=None):
    """Items lo:hi of the fused forward, on the kernels' thread team or on this thread (`team`; by
    default, by their size); item i's probabilities into P3[i - p0], or, where P3 is empty (none
    kept), into a scratch array of each item's own. `keep`: dropout's mask (B, H, L, S) of the
    probabilities, kept ones scaled by `dscale`, or None."""
    dt = q.dtype.type
    if team is None:  # on the thread team or on this thread (see _shared_out)
        team = _shared_out(hi - lo, q, k)
    run = _attention_items if team else _attention_items.plain
    with cpu_kernels.one_blas_thread():
        run(out, P3, p0, q, k, v, _no_mask() if keep is None else keep, dt(dscale), spans, lo, hi, dt(scale), causal,
            dt(0), dt(1), with_output, *gemm)


def _shared_out(n_items, q, k):
    """Whether items go to the thread team: from 4M multiply-adds of scores (a baby GPT layer's 6M);
    less (a generated sequence's cache rebuilt from 32 positions) costs less on this thread."""
    return n_items * q.shape[-2] * k.shape[-2] * q.shape[-1] >= 1 << 22


def _no_mask():
    return np.empty((0, 0, 0, 0), dtype=bool)


def _items_per_group(L, S, itemsize):
    """Items whose probabilities backward makes again at once (when they were not kept): a multiple of
    the team's threads, their (L, S) arrays together about 8 MiB."""
    team = max(1, cpu_kernels.threads())
    return max(team, (8 << 20) // (L * S * itemsize) // team * team)


# The forward of one (batch, head) item after another, each start to end in one compiled call: two
# BLAS products and the softmax between them, with no GIL, the items shared by the kernels' thread
# team (each item is computed alike on any thread). Scores and exp only for the keys a row sees
# (causal), in row chunks (as _causal_chunks cuts them).
@cpu_kernels.kernel(parallel=True)
def _attention_items(out, P, p0, q, k, v, keep, dscale, spans, lo, hi, scale, causal, zero, one, with_output,
                     address, ilp64):
    B, H, L, E = q.shape  # P: (items, L, S), item i's probabilities at P[i - p0]; empty: not kept
    S, Ev = k.shape[2], v.shape[3]  # keep: dropout's (B, H, L, S) mask, or empty
    it = q.itemsize
    for item in cpu_kernels.prange(lo, hi):
        b = item // H
        h = item - b * H
        Pi = P[item - p0] if P.shape[0] else np.empty((L, S), dtype=q.dtype)
        Pd = np.empty((L if keep.size else 0, S), dtype=q.dtype)  # the dropped-out probabilities
        qi, ki, vi, oi = q[b, h], k[b, h], v[b, h], out[b, h]
        for c in range(spans.shape[0]):
            r0, r1, c1 = spans[c, 0], spans[c, 1], spans[c, 2]
            # P[r0:r1, :c1] = scale q[r0:r1] k[:c1]^T
            cpu_kernels.gemm(address, ilp64, 111, 112, r1 - r0, c1, E, scale, qi[r0:], qi.strides[0] // it,
                             ki, ki.strides[0] // it, zero, Pi[r0:], S)
            for i in range(r0, r1):  # softmax over the keys row i sees; zeros after them
                end = min(c1, i + 1) if causal else c1
                m = Pi[i, 0]
                for j in range(end):
                    m = max(m, Pi[i, j])
                if m != m or m > zero and not np.isfinite(m):  # a NaN or +inf score: a row of NaN, as PyTorch's
                    for j in range(end):
                        Pi[i, j] = zero / zero
                    m = zero
                elif not np.isfinite(m):  # every score -inf: zeros, as the numpy form
                    m = zero
                d = zero
                for j in range(end):
                    e = cpu_kernels.exp_nonpositive(Pi[i, j] - m)
                    Pi[i, j] = e
                    d += e
                r = one / d if d != zero else one
                for j in range(end):
                    Pi[i, j] *= r
                for j in range(end, S):
                    Pi[i, j] = zero
            if with_output:  # out[r0:r1] = P'[r0:r1, :c1] v[:c1], P' = P (keep dscale with dropout)
                Po = Pi
                if keep.size:
                    _dropped(Pd[r0:r1], Pi[r0:r1], keep[b, h, r0:r1], c1, dscale)
                    Po = Pd
                cpu_kernels.gemm(address, ilp64, 111, 111, r1 - r0, Ev, c1, one, Po[r0:], S, vi, vi.strides[0] // it,
                                 zero, oi[r0:], oi.strides[0] // it)


@cpu_kernels.kernel
def _dropped(out, x, keep, cols, dscale):  # out[:, :cols] = x keep dscale: dropout's kept values, scaled
    for i in range(x.shape[0]):
        for j in range(cols):
            out[i, j] = x[i, j] * keep[i, j] * dscale


# The backward of one item after another, each in one compiled call (as _attention_items): four
# BLAS products and the softmax's gradient, on the saved P (zero where a row sees no key).
@cpu_kernels.kernel(parallel=True)
def _attention_items_backward(gq, gk, gv, g, P, p0, q, k, v, keep, dscale, spans, lo, hi, scale, zero, one, address,
                              ilp64):
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    it = q.itemsize
    whole = spans.shape[0] == 1
    for item in cpu_kernels.prange(lo, hi):
        gP = np.empty((L, S), dtype=P.dtype)  # each item's own (numba makes it once per thread)
        Pd = np.empty((L if keep.size else 0, S), dtype=P.dtype)  # the dropped-out probabilities
        b = item // H
        h = item - b * H
        Pi, gi, qi, ki, vi = P[item - p0], g[b, h], q[b, h], k[b, h], v[b, h]
        gqi, gki, gvi = gq[b, h], gk[b, h], gv[b, h]
        if not whole:  # key and value rows gather gradient from every chunk of queries after them
            gki[:, :] = zero
            gvi[:, :] = zero
        beta = zero if whole else one
        for c in range(spans.shape[0]):
            r0, r1, c1 = spans[c, 0], spans[c, 1], spans[c, 2]
            n = r1 - r0
            # gv[:c1] (+)= P'[r0:r1, :c1]^T g[r0:r1], P' = P (keep dscale with dropout)
            Po = Pi
            if keep.size:
                _dropped(Pd[r0:r1], Pi[r0:r1], keep[b, h, r0:r1], c1, dscale)
                Po = Pd
            cpu_kernels.gemm(address, ilp64, 112, 111, c1, Ev, n, one, Po[r0:], S, gi[r0:], gi.strides[0] // it,
                             beta, gvi, gvi.strides[0] // it)
            # gP = g[r0:r1] v[:c1]^T (keep dscale with dropout)
            cpu_kernels.gemm(address, ilp64, 111, 112, n, c1, Ev, one, gi[r0:], gi.strides[0] // it, vi,
                             vi.strides[0] // it, zero, gP, S)
            if keep.size:
                _dropped(gP[:n], gP[:n], keep[b, h, r0:r1], c1, dscale)
            for i in range(n):  # gS = P (gP - rowsum(gP P)), into gP
                d = zero
                for j in range(c1):
                    d += gP[i, j] * Pi[r0 + i, j]
                for j in range(c1):
                    gP[i, j] = Pi[r0 + i, j] * (gP[i, j] - d)
            # gq[r0:r1] = scale gS k[:c1];  gk[:c1] (+)= scale gS^T q[r0:r1]
            cpu_kernels.gemm(address, ilp64, 111, 111, n, E, c1, scale, gP, S, ki, ki.strides[0] // it, zero,
                             gqi[r0:], gqi.strides[0] // it)
            cpu_kernels.gemm(address, ilp64, 112, 111, c1, E, n, scale, gP, S, qi[r0:], qi.strides[0] // it,
                             beta, gki, gki.strides[0] // it)


def _causal_chunks(L, S, is_causal, xp):
    """[(r0, r1, c1)]: query rows r0:r1 attend to keys 0:c1. Causal attention over a long square
    block is cut into row chunks that skip the keys after their last row: about 40% less work
    than scoring every pair and masking half of them. Short sequences stay one chunk."""
    if not (is_causal and L == S and L >= 128 and xp is np):
        return [(0, L, S)]
    n = 4 if L < 512 else 8
    bounds = [L * i // n for i in range(n + 1)]
    return [(bounds[i], bounds[i + 1], bounds[i + 1]) for i in range(n)]


def _grads_like(q, k, v, batch, dtype, xp):
    """Empty arrays for the gradients of q, k, v. When q, k and v are views that tile one contiguous
    array between them (heads split off a fused qkv projection's output), their gradients are laid
    out the same way in one new array, so that the gradient flows back through the views and the
    split without copies (`Split.backward` sees them side by side). Otherwise, three contiguous arrays."""
    base = q.base
    if (xp is np and type(base) is np.ndarray and k.base is base and v.base is base and base.dtype == dtype
            and base.flags.c_contiguous and q.shape[:-2] == k.shape[:-2] == v.shape[:-2] == batch
            and q.size + k.size + v.size == base.size  # nothing else in it: no memory wasted on a larger array
            and all(_one_to_one(a) for a in (q, k, v))  # no stride-0 (expanded) or self-overlapping view
            and not (_overlap(q, k) or _overlap(k, v) or _overlap(q, v))):  # q = k = v: three separate gradients
        flat = np.empty(base.size, dtype=dtype)
        start = base.__array_interface__["data"][0]
        return [np.ndarray(a.shape, dtype, buffer=flat, offset=a.__array_interface__["data"][0] - start,
                           strides=a.strides) for a in (q, k, v)]
    return [xp.empty(batch + a.shape[-2:], dtype) for a in (q, k, v)]


def _one_to_one(a):
    """True when no two elements of the view `a` share memory: its axes, by increasing stride, each
    step over the whole extent of the ones before (a sufficient test)."""
    extent = a.itemsize
    for stride, n in sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n > 1):
        if stride < extent:
            return False
        extent = stride * n
    return True


def _overlap(a, b):
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True


def _empty_in_order_of(ref, shape, dtype):
    """An empty numpy array of `shape` (as many dims as `ref`) whose memory is ordered like `ref`'s:
    dims with larger strides outer, an expanded (stride-0) dim outermost, as PyTorch orders them."""
    big = [d for d in range(ref.ndim) if ref.shape[d] > 1]  # size-1 dims stay where they are
    order = list(range(ref.ndim))
    for at, d in zip(big, sorted(big, key=lambda d: -abs(ref.strides[d]) if ref.strides[d] else -np.inf)):
        order[at] = d
    if order == sorted(order):
        return np.empty(shape, dtype)
    return np.empty(tuple(shape[d] for d in order), dtype).transpose(np.argsort(order))


def _to_shape(a, shape):
    return a if a.shape == shape else a.reshape(shape)


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: batch dims of query, key and value do not broadcast: "
                           f"{[list(s) for s in shapes]}") from None


def _causal_mask(L, S, xp):
    """The (L, S) 'masked out' array of causal attention (keys after the query). Every layer of every
    step asks for the same one, so on the CPU up to 4 MiB of them are made once and shared (read-only)."""
    if xp is np and L * S <= 1 << 22:
        return _shared_causal_mask(L, S)
    return _keys_after(L, S, xp)


def _keys_after(L, S, xp):
    return xp.triu(xp.ones((L, S), dtype=bool), 1)


@functools.lru_cache(maxsize=4)
def _shared_causal_mask(L, S):
    m = _keys_after(L, S, np)
    m.flags.writeable = False
    return m


def _mask_arrays(mask, is_causal, L, S, batch, out_batch, xp):
    """(neg, add): a bool 'masked out' array, or a float one to add: (L, S) or a view of shape batch + (L, S)."""
    if is_causal:
        return _causal_mask(L, S, xp), None
    if mask is None:
        return None, None
    full = out_batch + (L, S)
    try:
        if np.broadcast_shapes(mask.data.shape, full) != full:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape {list(mask.shape)} does not broadcast "
                           f"to the attention scores' shape {list(full)}") from None
    m = xp.broadcast_to(mask.data, full).reshape(batch + (L, S))  # a view (splits or adds dims only)
    if m.dtype == np.bool_:
        return xp.logical_not(m), None
    return None, m


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
