"""One new position through a pre-LayerNorm transformer block (GPT-2's), with a KV cache, in one call.

A generated token runs each block as ~25 small ops (two layer norms, four products, the heads'
split, the cache's append, attention, GELU, two adds), each a few microseconds of calls around
less arithmetic than that. Here the block is one compiled loop over the rows:

    h = ln_1(x);  q, k, v = h W_qkv^T + b_qkv;  k, v written at position t of the cache
    y = softmax(q k_0..t^T / sqrt(hs)) v_0..t  (each head);  x = x + (y W_o^T + b_o)
    out = x + (gelu(ln_2(x) W_fc^T + b_fc) W_proj^T + b_proj)

The layer norms and the exact GELU are layer_norm's and gelu's own loops (their bits); the products
are dot products of W's rows, four rows at a time (x read once for the four), summed in vector lanes,
so their last bits are not BLAS's. float32 rows on this thread: generation's case.
"""
import functools
import math

import numpy as np

from .. import process
from . import gelu as _gelu
from . import layer_norm as _layer_norm
from . import team

MAX_WIDTH = 1024  # widths up to which a block's products run here, on this thread...
WIDTH_ANY_THREADS = 384  # ... beyond which only where BLAS's products of a row would run on one thread too
MAX_ROWS = 16  # rows (sequences generated at once) up to which W's blocks are read once for all of them
_F32 = np.dtype(np.float32)
_NONE = np.empty(0, np.float32)  # stands for a bias or weight that is not there


def supports(x, *weights):
    """float32 numpy rows x (B, C) and the block's four weight matrices, contiguous; C <= MAX_WIDTH, and
    above WIDTH_ANY_THREADS only where a row's products would run on one thread anyway (one thread
    set, or tune_process() holding BLAS at one: sample.py's), as they do here."""
    if type(x) is not np.ndarray or x.dtype is not _F32 or x.ndim != 2 or not 0 < x.shape[0] <= MAX_ROWS \
            or x.shape[1] > MAX_WIDTH:
        return False
    if x.shape[1] > WIDTH_ANY_THREADS and team.threads() > 1 and not process.blas_held_at_one():
        return False  # (a wide layer's products go faster on BLAS's threads)
    for w in weights:
        if type(w) is not np.ndarray or w.dtype is not _F32 or not w.flags.c_contiguous:
            return False
    return True


def forward(out, x, k, v, t, params, eps, approximate):
    """Into out (B, C): the block applied to rows x (B, C) at position t, writing k and v (B, nh, >t, hs)
    at t. params: ln_1's weight and bias, then c_attn's, attention's c_proj's, ln_2's, c_fc's and the
    MLP's c_proj's (12 arrays; None for one that is not there)."""
    B, C = x.shape
    work = np.empty(B * (11 * C + 2) + t + 1, np.float32)
    _step(out, x, k, v, t, *[_NONE if a is None else a for a in params], _constants(eps, C, k.shape[3]),
          approximate == "tanh", work)


@functools.lru_cache(maxsize=32)
def _constants(eps, C, hs):
    # eps, 1 / C (the layer norms') and 1 / sqrt(hs) (attention's scale) in float32, made once
    return np.array([eps, 1.0 / C, 1.0 / math.sqrt(hs)], np.float32)


@team.kernel
def _step(out, x, k, v, t, w1, b1, wa, ba, wp, bp, w2, b2, wf, bf, wm, bm, constants, tanh_gelu, work):
    eps, inv_c, scale = constants[0], constants[1], constants[2]
    B, C = x.shape
    nh, hs = k.shape[1], k.shape[3]
    n = B * C
    h = work[:n].reshape((B, C))
    stats = work[n:n + 2 * B].reshape((2, B, 1))
    qkv = work[n + 2 * B:4 * n + 2 * B].reshape((B, 3 * C))
    y = work[4 * n + 2 * B:5 * n + 2 * B].reshape((B, C))
    o = work[5 * n + 2 * B:6 * n + 2 * B].reshape((B, C))
    f = work[6 * n + 2 * B:10 * n + 2 * B].reshape((B, 4 * C))
    r = work[10 * n + 2 * B:11 * n + 2 * B].reshape((B, C))  # the residual stream after attention
    p = work[11 * n + 2 * B:]
    _layer_norm._rows(h, stats[0], stats[1], x, w1, b1, eps, inv_c)
    _products(qkv, h, wa, ba)
    for b in range(B):
        for head in range(nh):
            q0 = head * hs
            for d in range(hs):
                k[b, head, t, d] = qkv[b, C + q0 + d]
                v[b, head, t, d] = qkv[b, 2 * C + q0 + d]
            _attend(y[b, q0:q0 + hs], qkv[b, q0:q0 + hs], k[b, head, :t + 1], v[b, head, :t + 1], scale, p)
    _products(o, y, wp, bp)
    for b in range(B):
        for j in range(C):
            r[b, j] = x[b, j] + o[b, j]
    _layer_norm._rows(h, stats[0], stats[1], r, w2, b2, eps, inv_c)
    _products(f, h, wf, bf)
    flat = f.reshape(f.size)
    if tanh_gelu:
        _gelu_tanh(flat)
    else:
        _gelu._forward(flat, flat)
    _products(o, f, wm, bm)
    for b in range(B):
        for j in range(C):
            out[b, j] = r[b, j] + o[b, j]


@team.kernel
def _products(out, x, w, bias):  # out = x w^T (+ bias): four of w's rows at a time, each row of x against them
    B, K = x.shape
    N = w.shape[0]
    zero = np.float32(0.0)
    j = 0
    while j + 4 <= N:
        for b in range(B):
            a0, a1, a2, a3 = zero, zero, zero, zero
            for i in range(K):
                xi = x[b, i]
                a0 += w[j, i] * xi
                a1 += w[j + 1, i] * xi
                a2 += w[j + 2, i] * xi
                a3 += w[j + 3, i] * xi
            out[b, j], out[b, j + 1], out[b, j + 2], out[b, j + 3] = a0, a1, a2, a3
        j += 4
    while j < N:
        for b in range(B):
            a = zero
            for i in range(K):
                a += w[j, i] * x[b, i]
            out[b, j] = a
        j += 1
    if bias.size:
        for b in range(B):
            for j in range(N):
                out[b, j] += bias[j]


@team.kernel
def _attend(y, q, k, v, scale, p):  # y = softmax(q k^T scale) v for one query against keys k (S, hs)
    S, hs = k.shape
    zero = np.float32(0.0)
    top = -np.inf
    for s in range(S):
        a = zero
        for d in range(hs):
            a += q[d] * k[s, d]
        a *= scale
        p[s] = a
        top = max(top, a)
    total = zero
    for s in range(S):
        e = team.exp_nonpositive(p[s] - top)
        p[s] = e
        total += e
    for d in range(hs):
        y[d] = zero
    for s in range(S):
        w = p[s] / total
        for d in range(hs):
            y[d] += w * v[s, d]


@team.kernel
def _gelu_tanh(x):  # x = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in place
    c, a, half, one = np.float32(0.7978845608028654), np.float32(0.044715), np.float32(0.5), np.float32(1.0)
    for i in range(x.size):
        u = x[i]
        x[i] = half * u * (one + team.tanh(c * (u + a * u * u * u)))
