"""An LSTM's or a GRU's time step gate math on the CPU: one compiled loop each way instead of ~15 small
numpy ops.

nn/_functional/rnn.py keeps the per-step products (h W_hh^T, d W_hh) in numpy's BLAS and asks these
kernels for what sits between them. At a small model's shapes (batch 10, hidden 32) each numpy op is
a microsecond or two of overhead on a few hundred elements, so one call per step is most of the win.
The formulas are nn/_functional/rnn.py's (its comments carry the math); sigmoid is minigrad's
exp(-|a|) form, which overflows nowhere. The exp and tanh are team's, which LLVM vectorizes (in float32
within a few ulp of the C library's; float64 calls numba's own, as before).
"""
import numpy as np

from . import team


def supports(*arrays):
    """numpy float32 / float64 arrays of one dtype (what rnn.py asks with: the gates, states, W_hh)."""
    dtype = arrays[0].dtype
    return dtype.char in "fd" and all(type(a) is np.ndarray and a.dtype == dtype for a in arrays)


def lstm_step(a, gh, c_prev, c, m):
    """a (B, 4H): x W_ih^T + b at this step, overwritten by the activations i, f, g, o; gh (B, 4H) = h W_hh^T;
    c (B, H) <- f c_prev + i g; m (B, H) <- o tanh(c) (the output before any projection)."""
    _lstm_step(a, gh, c_prev, c, m)


def lstm_step_backward(a, tanh_c, c_prev, dm, dc, d):
    """From the activations a, tanh(c_t), c_{t-1}, dm = dL/d(o tanh c_t) and dc = dL/dc_t (updated in place
    to dL/dc_{t-1}): d (B, 4H) <- the gradient of the step's pre-activations."""
    _lstm_step_backward(a, tanh_c, c_prev, dm, dc, d)


@team.kernel
def _lstm_step(a, gh, c_prev, c, m):
    B, H = c.shape
    one = a.dtype.type(1)
    for b in range(B):  # a row's gates in passes of one function each, which LLVM vectorizes
        ab, gb, cb, mb = a[b], gh[b], c[b], m[b]
        for j in range(2 * H):  # i, f
            ab[j] = _sigmoid(ab[j] + gb[j], one)
        for j in range(2 * H, 3 * H):  # g
            ab[j] = team.tanh(ab[j] + gb[j])
        for j in range(3 * H, 4 * H):  # o
            ab[j] = _sigmoid(ab[j] + gb[j], one)
        cpb = c_prev[b]
        for j in range(H):
            cj = ab[H + j] * cpb[j] + ab[j] * ab[2 * H + j]
            cb[j] = cj
            mb[j] = ab[3 * H + j] * team.tanh(cj)


@team.kernel
def _lstm_step_backward(a, tanh_c, c_prev, dm, dc, d):
    B, H = dc.shape
    one = a.dtype.type(1)
    for b in range(B):
        for j in range(H):
            i, f, g, o = a[b, j], a[b, H + j], a[b, 2 * H + j], a[b, 3 * H + j]
            tc = tanh_c[b, j]
            dcj = dc[b, j] + dm[b, j] * o * (one - tc * tc)
            d[b, 3 * H + j] = dm[b, j] * tc * o * (one - o)
            d[b, j] = dcj * g * i * (one - i)
            d[b, H + j] = dcj * c_prev[b, j] * f * (one - f)
            d[b, 2 * H + j] = dcj * i * (one - g * g)
            dc[b, j] = dcj * f


def gru_step(a, gh, h_prev, hidden_n, h):
    """a (B, 3H): x W_ih^T + b_ih at this step, overwritten by r, z, n; gh (B, 3H) = h_prev W_hh^T + b_hh;
    hidden_n (B, H) <- gh's n part (h W_hn^T + b_hn, which backward reads); h (B, H) <- the new state."""
    _gru_step(a, gh, h_prev, hidden_n, h)


def gru_step_backward(a, hidden_n, h_prev, dh, d, dah):
    """From r, z, n (in a), hidden_n and h_{t-1}, and dh = dL/dh_t (scaled in place by z: its part of
    dL/dh_{t-1}, to which the caller adds dah W_hh): d (B, 3H) <- the gradient of x W_ih^T + b_ih's
    gates, dah (B, 3H) <- that of h W_hh^T + b_hh's."""
    _gru_step_backward(a, hidden_n, h_prev, dh, d, dah)


@team.kernel
def _gru_step(a, gh, h_prev, hidden_n, h):
    B, H = h.shape
    one = a.dtype.type(1)
    for b in range(B):  # as the LSTM's: passes that vectorize
        ab, gb, hnb, hb, hpb = a[b], gh[b], hidden_n[b], h[b], h_prev[b]
        for j in range(2 * H):  # r, z
            ab[j] = _sigmoid(ab[j] + gb[j], one)
        for j in range(H):
            hn = gb[2 * H + j]
            n = team.tanh(ab[2 * H + j] + ab[j] * hn)
            ab[2 * H + j] = n
            hnb[j] = hn
            hb[j] = n + ab[H + j] * (hpb[j] - n)


@team.kernel
def _gru_step_backward(a, hidden_n, h_prev, dh, d, dah):
    B, H = dh.shape
    one = a.dtype.type(1)
    for b in range(B):
        for j in range(H):
            r, z, n = a[b, j], a[b, H + j], a[b, 2 * H + j]
            g = dh[b, j]
            dn = g * (one - z) * (one - n * n)
            dr = dn * hidden_n[b, j] * r * (one - r)
            dz = g * (h_prev[b, j] - n) * z * (one - z)
            d[b, j], d[b, H + j], d[b, 2 * H + j] = dr, dz, dn
            dah[b, j], dah[b, H + j], dah[b, 2 * H + j] = dr, dz, dn * r
            dh[b, j] = g * z


@team.kernel
def _sigmoid(x, one):
    e = team.exp_nonpositive(-abs(x))
    r = one / (one + e)
    return r if x >= 0 else e * r
