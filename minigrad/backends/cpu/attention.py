"""scaled_dot_product_attention on the CPU: each (batch, head) item start to end in one compiled call.

Two BLAS products and the softmax between them (forward), four and the softmax's gradient
(backward), with no GIL, the items shared by the thread team (each item is computed alike on any
thread). Scores and exp only for the keys a row sees (causal), in row chunks (`_causal_chunks`). It
takes 4-D (B, H, L, E) numpy arrays of one float dtype whose rows are unit-stride (as BLAS reads
them), no mask but the causal one and no grouped heads (the op's checks); with dropout, the op's
keep-mask. P is kept for backward only where it is no larger than q, k and v (`_keeps_probabilities`),
else backward makes it again.
"""
import functools

import numpy as np

from . import blas, team


def supports(out, q, k, v, mask, gqa):
    """4-D numpy float arrays of one dtype and batch whose rows are unit-stride (as BLAS reads them),
    no mask but the causal one, no grouped heads, and BLAS's gemm there."""
    return mask is None and gqa == 1 and _fused_gemm(True, q, k, v, out) is not None


def forward(out, q, k, v, keep, dscale, scale, is_causal):
    """Into out (B, H, L, Ev): dropout(softmax(q k^T scale)) v. Returns the probabilities
    (B, H, L, S) kept for backward, or None (backward makes them again)."""
    B, H, L, _ = q.shape
    S = k.shape[-2]
    n_items = B * H
    P = np.empty((B, H, L, S), dtype=q.dtype) if _keeps_probabilities(L, S, q.shape[-1], v.shape[-1]) else None
    # the items in groups where each needs room of its own (probabilities not kept, or dropout's), else in one call
    group = n_items if P is not None and keep is None else _items_per_group(L, S, q.itemsize)
    P3 = P.reshape(n_items, L, S) if P is not None else np.empty((min(group, n_items), L, S), q.dtype)
    spans = _spans(L, S, is_causal)
    plan = blas.gemm_address(q.dtype)
    on_team = _shared_out(n_items, q, k)  # (decided for the whole job: any grouping gives the same bits)
    for lo in range(0, n_items, group):
        hi = min(n_items, lo + group)
        _fused_forward(out, P3, 0 if P is not None else lo, q, k, v, keep, dscale, lo, hi, scale, spans, is_causal,
                       plan, True, on_team)
    return P


def prepared_forward(q, k, v, scale, is_causal):
    """`forward` without dropout for arrays laid out as q, k, v are, its choices for that layout made
    once: a function (out, q, k, v) -> None. A generated token calls it once a layer with one key more
    each time (a KV cache's), where its items are few and run on this thread, their probabilities in
    room of their own: the kernel alone then, with what `forward` would decide again per call
    decided here; other key counts run `forward` itself (the same kernel: the same bits)."""
    B, H, L, E = q.shape
    n_items, Ev = B * H, v.shape[-1]
    dscale_, scale_, zero, one = _constants(q.dtype, 1.0, scale)
    run = _attention_items.plain

    def forward_(out, q, k, v):
        S = k.shape[-2]
        if _shared_out(n_items, q, k) or not _keeps_probabilities(L, S, E, Ev):
            forward(out, q, k, v, None, 1.0, scale, is_causal)
            return
        P3 = np.empty((n_items, L, S), q.dtype)
        with blas.team_gemm_context(q.dtype):
            run(out, P3, 0, P3, q, k, v, _NO_MASK, dscale_, _spans(L, S, is_causal), 0, n_items, scale_, is_causal,
                zero, one, True, *blas.gemm_address(q.dtype))  # (at each call: the library may be switched)

    return forward_


def backward(g, P, q, k, v, keep, dscale, scale, is_causal, gq, gk, gv):
    """Into gq, gk, gv: the gradients of forward's q, k, v for the output's gradient g (P: forward's
    return). The gradients are laid out as q, k, v are (nn/_functional/attention.py), which BLAS reads."""
    B, H, L, _ = q.shape
    S = k.shape[-2]
    n_items = B * H
    if g.dtype != q.dtype or _fused_gemm(True, g) is None:
        # a gradient BLAS cannot read (sum's stride-0 one, say) or of another dtype: a copy in the
        # output's dtype (as PyTorch casts it)
        g = np.ascontiguousarray(g, dtype=q.dtype)
    plan = _fused_gemm(True, g, gq, gk, gv)
    if plan is None:
        raise RuntimeError("scaled_dot_product_attention backward: gradients laid out unlike q, k and v")
    spans = _spans(L, S, is_causal)
    dscale_, scale_, zero, one = _constants(q.dtype, dscale, scale)
    # forward's probabilities: kept, or made again, exactly as the forward made them, for a group
    # of items at a time (`gq` stands in for the output, which is not written)
    group = _items_per_group(L, S, q.itemsize)
    P3 = P.reshape(n_items, L, S) if P is not None else np.empty((min(group, n_items), L, S), q.dtype)
    gP = np.empty((min(group, n_items), L, S), q.dtype)  # each item's gradient of its probabilities
    dropped = _dropped_scratch(keep, min(group, n_items), P3)
    on_team = _shared_out(n_items, q, k)  # (decided for the whole job: any grouping gives the same bits)
    for lo in range(0, n_items, group):
        hi = min(n_items, lo + group)
        p0 = 0 if P is not None else lo
        if P is None:
            _fused_forward(gq, P3, p0, q, k, v, None, 1.0, lo, hi, scale, spans, is_causal, plan, False, on_team)
        run = _attention_items_backward if on_team else _attention_items_backward.plain
        with blas.team_gemm_context(q.dtype):
            run(gq, gk, gv, g, P3, p0, gP, dropped, q, k, v, _NO_MASK if keep is None else keep, dscale_, spans,
                lo, hi, scale_, zero, one, *plan)


def _fused_gemm(ok, *arrays):
    """(gemm address, ilp64) for the one-call-per-item forward, or None. It needs the compiled
    kernels, OpenBLAS, (B, H, rows, cols) arrays of one float dtype whose rows are unit-stride (as
    BLAS reads them), and no mask but the causal one, no dropout, no grouped heads (the caller's `ok`)."""
    if not ok:
        return None
    a0 = arrays[0]
    if type(a0) is not np.ndarray or a0.ndim != 4:
        return None
    dtype, it, (B, H, _, _) = a0.dtype, a0.itemsize, a0.shape
    if not B or not H:
        return None
    for a in arrays:
        if type(a) is not np.ndarray or a.ndim != 4 or a.dtype != dtype:
            return None
        (b, h, r, c), (_, _, row, col) = a.shape, a.strides
        if b != B or h != H or not r or not c or col != it or row % it or row < c * it:
            return None
    return blas.gemm_address(dtype)


def _keeps_probabilities(L, S, E, Ev):
    """Whether the fused forward keeps P for backward. Where P is no larger than q, k and v together
    (a baby GPT's 64 x 64 per head against 3 x 64 x 32), or an item's P is at most 64 x 64 (narrow
    heads over a short block: a 2x64 GPT's 16-wide heads, whose backward spent a third of its time
    making P again, for 0.8 MB a layer); for longer sequences the backward makes P again (one more
    product per item) rather than hold an (L, S) array per head, as PyTorch's flash attention does:
    at block 256 that is 100 MB a layer."""
    return L * S <= L * E + S * E + S * Ev or L * S <= SHORT


def _fused_forward(out, P3, p0, q, k, v, keep, dscale, lo, hi, scale, spans, causal, gemm, with_output, on_team=None):
    """Items lo:hi of the fused forward, on the kernels' thread team or on this thread (`on_team`; by
    default, by their size); item i's probabilities into P3[i - p0]. `keep`: dropout's mask
    (B, H, L, S) of the probabilities, kept ones scaled by `dscale`, or None."""
    if on_team is None:  # on the thread team or on this thread (see _shared_out)
        on_team = _shared_out(hi - lo, q, k)
    run = _attention_items if on_team else _attention_items.plain
    dropped = _dropped_scratch(keep if with_output else None, hi - lo, P3)
    dscale, scale, zero, one = _constants(q.dtype, dscale, scale)
    with blas.team_gemm_context(q.dtype):
        run(out, P3, p0, dropped, q, k, v, _NO_MASK if keep is None else keep, dscale, spans, lo, hi, scale, causal,
            zero, one, with_output, *gemm)


def _dropped_scratch(keep, n, P3):
    """Room for the dropped-out probabilities of n items, (n, L, S) as P3's items; without dropout the
    kernels read none of it, and P3 itself stands in. The kernels take their scratch arrays from here
    rather than make them: an array made inside a numba function makes loading it from numba's cache
    import numba's array module (~30 ms of a first step)."""
    return np.empty((n,) + P3.shape[1:], P3.dtype) if keep is not None else P3


@functools.lru_cache(maxsize=64)
def _constants(dtype, dscale, scale):
    """dscale, scale, 0 and 1 in the arrays' precision (float64 ones would make the loops float64),
    made once per (dtype, dscale, scale), for forward and backward alike (a generated token calls the
    forward once a layer: the conversions were a good part of its Python)."""
    dt = dtype.type
    return dt(dscale), dt(scale), dt(0), dt(1)


def _shared_out(n_items, q, k):
    """Whether items go to the thread team: from 4M multiply-adds of scores (a baby GPT layer's 6M);
    less (a generated sequence's cache rebuilt from 32 positions) costs less on this thread."""
    return n_items * q.shape[-2] * k.shape[-2] * q.shape[-1] >= 1 << 22


SHORT = 64 * 64  # scores an item from which P is kept only where q, k and v are as large (_keeps_probabilities)
_NO_MASK = np.empty((0, 0, 0, 0), dtype=bool)  # no dropout: the kernels' stand-in for the keep-mask


@functools.lru_cache(maxsize=16)
def _spans(L, S, is_causal):
    """_causal_chunks as the kernels read it, an (n, 3) int64 array, made once per shape and shared
    (the kernels only read it; left writeable, so they keep their compiled signature)."""
    return np.array(_causal_chunks(L, S, is_causal, np), dtype=np.int64)


def _items_per_group(L, S, itemsize):
    """Items whose probabilities backward makes again at once (when they were not kept): a multiple of
    the team's threads, their (L, S) arrays together about 8 MiB."""
    n = max(1, team.threads())
    return max(n, (8 << 20) // (L * S * itemsize) // n * n)


# The forward of one (batch, head) item after another, each start to end in one compiled call: two
# BLAS products and the softmax between them, with no GIL, the items shared by the kernels' thread
# team (each item is computed alike on any thread). Scores and exp only for the keys a row sees
# (causal), in row chunks (as _causal_chunks cuts them).
@team.kernel(parallel=True)
def _attention_items(out, P, p0, D, q, k, v, keep, dscale, spans, lo, hi, scale, causal, zero, one, with_output,
                     address, ilp64):
    B, H, L, E = q.shape  # P: (items, L, S), item i's probabilities at P[i - p0]
    S, Ev = k.shape[2], v.shape[3]  # keep: dropout's (B, H, L, S) mask, or empty
    it = q.itemsize
    for item in team.prange(lo, hi):
        b = item // H
        h = item - b * H
        Pi = P[item - p0]
        Pd = D[item - lo]  # room for the dropped-out probabilities (with dropout: else unused)
        qi, ki, vi, oi = q[b, h], k[b, h], v[b, h], out[b, h]
        for c in range(spans.shape[0]):
            r0, r1, c1 = spans[c, 0], spans[c, 1], spans[c, 2]
            # P[r0:r1, :c1] = scale q[r0:r1] k[:c1]^T
            team.gemm(address, ilp64, 111, 112, r1 - r0, c1, E, scale, qi[r0:], qi.strides[0] // it,
                             ki, ki.strides[0] // it, zero, Pi[r0:], S)
            for i in range(r0, r1):  # softmax over the keys row i sees; zeros after them
                end = min(c1, i + 1) if causal else c1
                row = Pi[i]
                m = team.max_of(row, end)
                if m != m or m > zero and not np.isfinite(m):  # a NaN or +inf score: a row of NaN, as PyTorch's
                    for j in range(end):
                        row[j] = zero / zero
                    m = zero
                elif not np.isfinite(m):  # every score -inf: zeros, as the numpy form
                    m = zero
                # over all c1 columns, those from `end` on computed and dropped: a loop of one length for
                # every row vectorizes whole, where a loop to `end` runs up to 15 elements of each row scalar.
                # (Dropped scores may exceed m: clamped to 0, or exp's arithmetic overflows, which is slow.)
                d = zero
                for j in range(c1):
                    e = team.exp_nonpositive(min(row[j] - m, zero))
                    e = e if j < end else zero
                    row[j] = e
                    d += e
                r = one / d if d != zero else one
                for j in range(c1):  # (the dropped columns stay 0 where r is NaN: not 0 * r)
                    row[j] = row[j] * r if j < end else zero
                for j in range(c1, S):
                    row[j] = zero
            if with_output:  # out[r0:r1] = P'[r0:r1, :c1] v[:c1], P' = P (keep dscale with dropout)
                Po = Pi
                if keep.size:
                    _dropped(Pd[r0:r1], Pi[r0:r1], keep[b, h, r0:r1], c1, dscale)
                    Po = Pd
                team.gemm(address, ilp64, 111, 111, r1 - r0, Ev, c1, one, Po[r0:], S, vi, vi.strides[0] // it,
                                 zero, oi[r0:], oi.strides[0] // it)


@team.kernel
def _dropped(out, x, keep, cols, dscale):  # out[:, :cols] = x keep dscale: dropout's kept values, scaled
    for i in range(x.shape[0]):
        for j in range(cols):
            out[i, j] = x[i, j] * keep[i, j] * dscale


# The backward of one item after another, each in one compiled call (as _attention_items): four
# BLAS products and the softmax's gradient, on the saved P (zero where a row sees no key).
@team.kernel(parallel=True)
def _attention_items_backward(gq, gk, gv, g, P, p0, GP, D, q, k, v, keep, dscale, spans, lo, hi, scale, zero, one,
                              address, ilp64):
    B, H, L, E = q.shape  # GP: (hi - lo, L, S), room for each item's gradient of its probabilities
    S, Ev = k.shape[2], v.shape[3]
    it = q.itemsize
    whole = spans.shape[0] == 1
    for item in team.prange(lo, hi):
        b = item // H
        h = item - b * H
        Pi, gi, qi, ki, vi = P[item - p0], g[b, h], q[b, h], k[b, h], v[b, h]
        gP = GP[item - lo]
        Pd = D[item - lo]  # room for the dropped-out probabilities (with dropout: else unused)
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
            team.gemm(address, ilp64, 112, 111, c1, Ev, n, one, Po[r0:], S, gi[r0:], gi.strides[0] // it,
                             beta, gvi, gvi.strides[0] // it)
            # gP = g[r0:r1] v[:c1]^T (keep dscale with dropout)
            team.gemm(address, ilp64, 111, 112, n, c1, Ev, one, gi[r0:], gi.strides[0] // it, vi,
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
            team.gemm(address, ilp64, 111, 111, n, E, c1, scale, gP, S, ki, ki.strides[0] // it, zero,
                             gqi[r0:], gqi.strides[0] // it)
            team.gemm(address, ilp64, 112, 111, c1, E, n, scale, gP, S, qi[r0:], qi.strides[0] // it,
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
