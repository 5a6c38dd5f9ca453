"""An LSTM's or a GRU's time step gate math on the CPU: one compiled loop each way instead of ~15 small
numpy ops.

nn/_functional/rnn.py asks these kernels for what sits between the per-step products (h W_hh^T,
d W_hh). At a small model's shapes (batch 10, hidden 32) each numpy op is a microsecond or two of
overhead on a few hundred elements, so one call per step is most of the win; an LSTM layer without a
projection goes further, all its steps in one call (`lstm_sequence`), the products by BLAS's gemm
from inside the loop (team.gemm), where numpy's matmul and a kernel call per step cost ~10 us.
The formulas are nn/_functional/rnn.py's (its comments carry the math); sigmoid is minigrad's
exp(-|a|) form, which overflows nowhere. The exp and tanh are team's, which LLVM vectorizes (in float32
within a few ulp of the C library's; float64 calls numba's own, as before).
"""
import numpy as np

from . import blas, linear, team


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


def lstm_sequence(gates, h0, c0, w_hh, out, cells, reverse):
    """A whole LSTM layer's steps in one call, when BLAS's gemm is at hand (else False, and the caller
    steps in Python): for each step t (last to first if reverse), gh = h_{t-1} W_hh^T by gemm, then
    lstm_step(gates[t], gh, c_{t-1}, cells[t], out[t]). gates (T, B, 4H) holds x W_ih^T + b and gets
    the activations; h0, c0 (B, H); all C-contiguous, of one dtype."""
    plan = _gemm_for(gates, h0, c0, w_hh, out, cells)
    if plan is None:
        return False
    gh = np.empty(gates.shape[1:], dtype=gates.dtype)
    B, G = gh.shape
    rows, cols = linear.nt_blocks(B, G, w_hh.shape[1], gates.dtype)  # (0: one gemm a step)
    with blas.team_gemm_context(gates.dtype):
        _lstm_sequence(gates, h0, c0, w_hh, out, cells, gh, reverse, rows, cols, *plan)
    return True


def lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse):
    """Backpropagation through a whole LSTM layer's steps in one call (else False): for each step from
    the last, dh += g_out[t]; lstm_step_backward(gates[t], tanh_c[t], c_{t-1}, dh, dc, da[t]); then
    dh = da[t] W_hh by gemm. dh, dc (B, H) come in as the last states' gradients and leave as h0's, c0's."""
    plan = _gemm_for(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh)
    if plan is None:
        return False
    with blas.team_gemm_context(gates.dtype):
        _lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse, *plan)
    return True


def _gemm_for(*arrays):
    """(gemm address, ilp64) when every array is C-contiguous and gemm is at hand for their dtype."""
    for a in arrays:
        if not a.flags.c_contiguous:
            return None
    return blas.gemm_address(arrays[0].dtype)


@team.kernel
def _lstm_sequence(gates, h0, c0, w_hh, out, cells, gh, reverse, rows, cols, address, ilp64):
    T, B, G = gates.shape
    H = G // 4
    one = gates.dtype.type(1)
    zero = one - one
    prev = 0
    for k in range(T):
        t = T - 1 - k if reverse else k
        h = h0 if k == 0 else out[prev]  # gh = h_{t-1} W_hh^T: (B, H) x (4H, H)^T (in small-path blocks where they pay)
        if rows:
            linear.nt_product(gh, h, w_hh, rows, cols, address, ilp64)
        else:
            team.gemm(address, ilp64, 111, 112, B, G, H, one, h, H, w_hh, H, zero, gh, G)
        _lstm_step(gates[t], gh, c0 if k == 0 else cells[prev], cells[t], out[t])
        prev = t


@team.kernel
def _lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse, address, ilp64):
    T, B, G = gates.shape
    H = G // 4
    one = gates.dtype.type(1)
    zero = one - one
    for k in range(T - 1, -1, -1):
        t = T - 1 - k if reverse else k
        for b in range(B):
            for j in range(H):
                dh[b, j] += g_out[t, b, j]
        if k == 0:
            _lstm_step_backward(gates[t], tanh_c[t], c0, dh, dc, da[t])
        else:  # c_{t-1}: the cell of the step before t in the order the steps ran
            _lstm_step_backward(gates[t], tanh_c[t], cells[t + 1 if reverse else t - 1], dh, dc, da[t])
        # dh_{t-1} = da_t W_hh: (B, 4H) x (4H, H)
        team.gemm(address, ilp64, 111, 111, B, H, G, one, da[t], G, w_hh, H, zero, dh, H)


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
