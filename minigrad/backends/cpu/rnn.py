"""A recurrent layer's time step gate math on the CPU (LSTM, GRU, RNN with tanh or relu): one compiled
loop each way instead of up to ~15 small numpy ops.

nn/_functional/rnn.py asks these kernels for what sits between the per-step products (h W_hh^T,
d W_hh). At a small model's shapes (batch 10, hidden 32) each numpy op is a microsecond or two of
overhead on a few hundred elements, so one call per step is most of the win; a layer (an LSTM's
without a projection) goes further, all its steps in one call (`lstm_sequence`, `gru_sequence`,
`rnn_sequence`), the products by BLAS's gemm from inside the loop (team.gemm), where numpy's matmul
and a kernel call per step cost ~10 us. The per-step kernels remain the step loop's, which runs where
gemm is not at hand; both compute each step alike, so where gemm gives numpy's matmul's bits for the
same operands the two give the same bits.
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


def lstm_step(a, gh, c_prev, c, m, tanh_c):
    """a (B, 4H): x W_ih^T + b at this step, overwritten by the activations i, f, g, o; gh (B, 4H) = h W_hh^T;
    c (B, H) <- f c_prev + i g; m (B, H) <- o tanh(c) (the output before any projection); tanh_c (B, H) <-
    tanh(c), which backward reads."""
    _lstm_step(a, gh, c_prev, c, m, tanh_c)


def lstm_step_backward(a, tanh_c, c_prev, dm, dc, d):
    """From the activations a, tanh(c_t), c_{t-1}, dm = dL/d(o tanh c_t) and dc = dL/dc_t (updated in place
    to dL/dc_{t-1}): d (B, 4H) <- the gradient of the step's pre-activations."""
    _lstm_step_backward(a, tanh_c, c_prev, dm, dc, d)


def lstm_sequence(gates, h0, c0, w_hh, out, cells, tanh_c, reverse):
    """A whole LSTM layer's steps in one call, when BLAS's gemm is at hand (else False, and the caller
    steps in Python): for each step t (last to first if reverse), gh = h_{t-1} W_hh^T by gemm, then
    lstm_step(gates[t], gh, c_{t-1}, cells[t], out[t], tanh_c[t]). gates (T, B, 4H) holds x W_ih^T + b
    and gets the activations; h0, c0 (B, H); all C-contiguous, of one dtype."""
    plan = _gemm_for(gates, h0, c0, w_hh, out, cells, tanh_c)
    if plan is None:
        return False
    gh, rows, cols = _hidden_product_plan(gates, w_hh)
    with blas.team_gemm_context(gates.dtype):
        _lstm_sequence(gates, h0, c0, w_hh, out, cells, tanh_c, gh, reverse, rows, cols, *plan)
    return True


def lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse):
    """Backpropagation through a whole LSTM layer's steps in one call (else False): for each step from
    the last, dh += g_out[t]; lstm_step_backward(gates[t], tanh_c[t], c_{t-1}, dh, dc, da[t]); then
    dh = da[t] W_hh by gemm. dh, dc (B, H) come in as the last states' gradients and leave as h0's, c0's.
    g_out may be strided (a batch_first output's gradient, a half of the next layer's input's): the loop reads
    it by index, gemm never sees it; of no steps (T = 0) where the output went unused: nothing added."""
    plan = _gemm_for(gates, tanh_c, cells, c0, dh, dc, da, w_hh)
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


def _hidden_product_plan(gates, w_hh):
    """A step's h W_hh^T: its (B, G) output, and the blocks it runs in (linear.nt_blocks: those of the step
    loop's linear_arrays, so that both give the same bits; (0, 0): one gemm a step)."""
    gh = np.empty(gates.shape[1:], dtype=gates.dtype)
    return (gh, *linear.nt_blocks(gh.shape[0], gh.shape[1], w_hh.shape[1], gates.dtype))


@team.kernel
def _hidden_product(gh, h, w_hh, rows, cols, address, ilp64):  # gh = h W_hh^T: (B, H) x (G, H)^T
    B, G = gh.shape
    H = h.shape[1]
    one = gh.dtype.type(1)
    if rows:  # (in small-path blocks where they pay)
        linear.nt_product(gh, h, w_hh, rows, cols, address, ilp64)
    else:
        team.gemm(address, ilp64, 111, 112, B, G, H, one, h, H, w_hh, H, one - one, gh, G)


@team.kernel
def _lstm_sequence(gates, h0, c0, w_hh, out, cells, tanh_c, gh, reverse, rows, cols, address, ilp64):
    T = gates.shape[0]
    prev = 0
    for k in range(T):
        t = T - 1 - k if reverse else k
        _hidden_product(gh, h0 if k == 0 else out[prev], w_hh, rows, cols, address, ilp64)  # h_{t-1} W_hh^T
        _lstm_step(gates[t], gh, c0 if k == 0 else cells[prev], cells[t], out[t], tanh_c[t])
        prev = t


@team.kernel
def _lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse, address, ilp64):
    T, B, G = gates.shape
    H = G // 4
    one = gates.dtype.type(1)
    zero = one - one
    for k in range(T - 1, -1, -1):
        t = T - 1 - k if reverse else k
        if g_out.shape[0]:  # (none: an unused output's)
            _add_into(dh, g_out[t])
        if k == 0:
            _lstm_step_backward(gates[t], tanh_c[t], c0, dh, dc, da[t])
        else:  # c_{t-1}: the cell of the step before t in the order the steps ran
            _lstm_step_backward(gates[t], tanh_c[t], cells[t + 1 if reverse else t - 1], dh, dc, da[t])
        # dh_{t-1} = da_t W_hh: (B, 4H) x (4H, H)
        team.gemm(address, ilp64, 111, 111, B, H, G, one, da[t], G, w_hh, H, zero, dh, H)


@team.kernel
def _lstm_step(a, gh, c_prev, c, m, tanh_c):
    B, H = c.shape
    one = a.dtype.type(1)
    for b in range(B):  # a row's gates in passes of one function each, which LLVM vectorizes: each pass on its
        # gate's own slice from 0 (LLVM leaves a loop over `range(3 * H, 4 * H)` of the row scalar)
        ab, gb = a[b], gh[b]
        i, f, g, o = ab[:H], ab[H:2 * H], ab[2 * H:3 * H], ab[3 * H:]
        gi, gf, gg, go = gb[:H], gb[H:2 * H], gb[2 * H:3 * H], gb[3 * H:]
        for j in range(H):
            i[j] = _sigmoid(i[j] + gi[j], one)
        for j in range(H):
            f[j] = _sigmoid(f[j] + gf[j], one)
        for j in range(H):
            g[j] = team.tanh(g[j] + gg[j])
        for j in range(H):
            o[j] = _sigmoid(o[j] + go[j], one)
        cpb, cb, mb, tcb = c_prev[b], c[b], m[b], tanh_c[b]
        for j in range(H):
            cj = f[j] * cpb[j] + i[j] * g[j]
            cb[j] = cj
            tc = team.tanh(cj)
            tcb[j] = tc
            mb[j] = o[j] * tc


@team.kernel
def _lstm_step_backward(a, tanh_c, c_prev, dm, dc, d):
    B, H = dc.shape
    one = a.dtype.type(1)
    for b in range(B):  # (on each gate's slice, as _lstm_step, so that the loop vectorizes)
        ab, db = a[b], d[b]
        i_, f_, g_, o_ = ab[:H], ab[H:2 * H], ab[2 * H:3 * H], ab[3 * H:]
        di, df, dg, do = db[:H], db[H:2 * H], db[2 * H:3 * H], db[3 * H:]
        tcb, cpb, dmb, dcb = tanh_c[b], c_prev[b], dm[b], dc[b]
        for j in range(H):
            i, f, g, o = i_[j], f_[j], g_[j], o_[j]
            tc = tcb[j]
            dcj = dcb[j] + dmb[j] * o * (one - tc * tc)
            do[j] = dmb[j] * tc * o * (one - o)
            di[j] = dcj * g * i * (one - i)
            df[j] = dcj * cpb[j] * f * (one - f)
            dg[j] = dcj * i * (one - g * g)
            dcb[j] = dcj * f


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
    for b in range(B):  # as the LSTM's: passes on each gate's slice, which vectorize
        ab, gb = a[b], gh[b]
        r, z, n_ = ab[:H], ab[H:2 * H], ab[2 * H:]
        gr, gz, gn = gb[:H], gb[H:2 * H], gb[2 * H:]
        hnb, hb, hpb = hidden_n[b], h[b], h_prev[b]
        for j in range(H):
            r[j] = _sigmoid(r[j] + gr[j], one)
        for j in range(H):
            z[j] = _sigmoid(z[j] + gz[j], one)
        for j in range(H):
            hn = gn[j]
            n = team.tanh(n_[j] + r[j] * hn)
            n_[j] = n
            hnb[j] = hn
            hb[j] = n + z[j] * (hpb[j] - n)


@team.kernel
def _gru_step_backward(a, hidden_n, h_prev, dh, d, dah):
    B, H = dh.shape
    one = a.dtype.type(1)
    for b in range(B):
        ab, db, dab = a[b], d[b], dah[b]
        r_, z_, n_ = ab[:H], ab[H:2 * H], ab[2 * H:]
        dr_, dz_, dn_ = db[:H], db[H:2 * H], db[2 * H:]
        ar, az, an = dab[:H], dab[H:2 * H], dab[2 * H:]
        hnb, hpb, dhb = hidden_n[b], h_prev[b], dh[b]
        for j in range(H):
            r, z, n = r_[j], z_[j], n_[j]
            g = dhb[j]
            dn = g * (one - z) * (one - n * n)
            dr = dn * hnb[j] * r * (one - r)
            dz = g * (hpb[j] - n) * z * (one - z)
            dr_[j], dz_[j], dn_[j] = dr, dz, dn
            ar[j], az[j], an[j] = dr, dz, dn * r
            dhb[j] = g * z


def gru_sequence(gates, h0, w_hh, b_hh, out, hidden_n, reverse):
    """A whole GRU layer's steps in one call, when BLAS's gemm is at hand (else False, and the caller steps
    in Python): for each step t (last to first if reverse), gh = h_{t-1} W_hh^T by gemm, + b_hh (b_hh (3H,)
    or None), then gru_step(gates[t], gh, h_{t-1}, hidden_n[t], out[t]). gates (T, B, 3H) holds x W_ih^T +
    b_ih and gets r, z, n; h0 (B, H); all C-contiguous, of one dtype."""
    plan = _gemm_for(gates, h0, w_hh, out, hidden_n)
    if plan is None:
        return False
    gh, rows, cols = _hidden_product_plan(gates, w_hh)
    bias = _no_bias(gates.dtype) if b_hh is None else b_hh
    with blas.team_gemm_context(gates.dtype):
        _gru_sequence(gates, h0, w_hh, bias, out, hidden_n, gh, reverse, rows, cols, *plan)
    return True


def gru_sequence_backward(gates, hidden_n, out, h0, g_out, dh, da, dah, w_hh, reverse):
    """Backpropagation through a whole GRU layer's steps in one call (else False): for each step from the
    last, dh += g_out[t]; gru_step_backward(gates[t], hidden_n[t], h_{t-1}, dh, da[t], dah[t]); then dh +=
    dah[t] W_hh by gemm. dh (B, H) comes in as the last state's gradient and leaves as h0's; g_out may be
    strided (read by index, as the LSTM's)."""
    plan = _gemm_for(gates, hidden_n, out, h0, dh, da, dah, w_hh)
    if plan is None:
        return False
    dhh = np.empty_like(dh)  # (the product apart, then added: the step loop's two roundings)
    with blas.team_gemm_context(gates.dtype):
        _gru_sequence_backward(gates, hidden_n, out, h0, g_out, dh, da, dah, w_hh, dhh, reverse, *plan)
    return True


_NO_BIAS = {np.dtype(np.float32): np.empty(0, np.float32), np.dtype(np.float64): np.empty(0, np.float64)}


def _no_bias(dtype):
    """A bias of no entries: the kernels' 'none' (numba compiles one signature for both)."""
    return _NO_BIAS[dtype]


@team.kernel
def _gru_sequence(gates, h0, w_hh, b_hh, out, hidden_n, gh, reverse, rows, cols, address, ilp64):
    T, B, G = gates.shape
    prev = 0
    for k in range(T):
        t = T - 1 - k if reverse else k
        h = h0 if k == 0 else out[prev]
        _hidden_product(gh, h, w_hh, rows, cols, address, ilp64)  # h_{t-1} W_hh^T
        if b_hh.shape[0]:
            for b in range(B):
                for j in range(G):
                    gh[b, j] += b_hh[j]  # (added after the product, as numpy's `gh += b`: the same bits)
        _gru_step(gates[t], gh, h, hidden_n[t], out[t])
        prev = t


@team.kernel
def _gru_sequence_backward(gates, hidden_n, out, h0, g_out, dh, da, dah, w_hh, dhh, reverse, address, ilp64):
    T, B, G = gates.shape
    H = G // 3
    one = gates.dtype.type(1)
    for k in range(T - 1, -1, -1):
        t = T - 1 - k if reverse else k
        if g_out.shape[0]:  # (none: an unused output's)
            _add_into(dh, g_out[t])
        # h_{t-1}: the output of the step before t in the order the steps ran
        _gru_step_backward(gates[t], hidden_n[t], h0 if k == 0 else out[t + 1 if reverse else t - 1], dh, da[t],
                           dah[t])
        # dh_{t-1} = dh z + dah W_hh: (B, 3H) x (3H, H)
        team.gemm(address, ilp64, 111, 111, B, H, G, one, dah[t], G, w_hh, H, one - one, dhh, H)
        _add_into(dh, dhh)


def rnn_step(a, gh, relu):
    """a (B, H): x W_ih^T + b at this step <- tanh(a + gh) (relu(a + gh) if relu), gh = h W_hh^T: the new
    state."""
    _rnn_step(a, gh, relu)


def rnn_step_backward(h, dh, d, relu):
    """d (B, H) <- dh tanh'(the step's pre-activation) (relu's), from the step's output h: 1 - h^2, [h > 0]."""
    _rnn_step_backward(h, dh, d, relu)


def rnn_sequence(gates, h0, w_hh, relu, reverse):
    """A whole RNN layer's steps in one call, when BLAS's gemm is at hand (else False): for each step t
    (last to first if reverse), gh = h_{t-1} W_hh^T by gemm, then rnn_step(gates[t], gh, relu). gates
    (T, B, H) holds x W_ih^T + b_ih + b_hh and becomes the output; h0 (B, H); C-contiguous, one dtype."""
    plan = _gemm_for(gates, h0, w_hh)
    if plan is None:
        return False
    gh, rows, cols = _hidden_product_plan(gates, w_hh)
    with blas.team_gemm_context(gates.dtype):
        _rnn_sequence(gates, h0, w_hh, gh, relu, reverse, rows, cols, *plan)
    return True


def rnn_sequence_backward(out, g_out, dh, da, w_hh, relu, reverse):
    """Backpropagation through a whole RNN layer's steps in one call (else False): for each step from the
    last, dh += g_out[t]; rnn_step_backward(out[t], dh, da[t], relu); then dh = da[t] W_hh by gemm. dh (B, H)
    comes in as the last state's gradient and leaves as h0's; g_out may be strided."""
    plan = _gemm_for(out, dh, da, w_hh)
    if plan is None:
        return False
    with blas.team_gemm_context(out.dtype):
        _rnn_sequence_backward(out, g_out, dh, da, w_hh, relu, reverse, *plan)
    return True


@team.kernel
def _rnn_sequence(gates, h0, w_hh, gh, relu, reverse, rows, cols, address, ilp64):
    T = gates.shape[0]
    prev = 0
    for k in range(T):
        t = T - 1 - k if reverse else k
        _hidden_product(gh, h0 if k == 0 else gates[prev], w_hh, rows, cols, address, ilp64)  # h_{t-1} W_hh^T
        _rnn_step(gates[t], gh, relu)
        prev = t


@team.kernel
def _rnn_sequence_backward(out, g_out, dh, da, w_hh, relu, reverse, address, ilp64):
    T, B, H = out.shape
    one = out.dtype.type(1)
    for k in range(T - 1, -1, -1):
        t = T - 1 - k if reverse else k
        if g_out.shape[0]:  # (none: an unused output's)
            _add_into(dh, g_out[t])
        _rnn_step_backward(out[t], dh, da[t], relu)
        team.gemm(address, ilp64, 111, 111, B, H, H, one, da[t], H, w_hh, H, one - one, dh, H)  # dh_{t-1} = da W_hh


@team.kernel
def _rnn_step(a, gh, relu):
    B, H = a.shape
    zero = a.dtype.type(0)
    for b in range(B):  # (a loop per activation, which vectorizes)
        ab, gb = a[b], gh[b]
        if relu:
            for j in range(H):
                v = ab[j] + gb[j]
                ab[j] = zero if v < zero else v  # (NaN stays NaN, as numpy's maximum)
        else:
            for j in range(H):
                ab[j] = team.tanh(ab[j] + gb[j])


@team.kernel
def _rnn_step_backward(h, dh, d, relu):
    B, H = h.shape
    one = h.dtype.type(1)
    zero = one - one
    for b in range(B):
        hb, gb, db = h[b], dh[b], d[b]
        if relu:
            for j in range(H):
                db[j] = gb[j] * (one if hb[j] > zero else zero)  # (a product, as numpy's dh * (h > 0): NaN, inf kept)
        else:
            for j in range(H):
                db[j] = gb[j] * (one - hb[j] * hb[j])


@team.kernel
def _add_into(a, b):  # a += b, (B, H); b may be strided
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] += b[i, j]


@team.kernel
def _sigmoid(x, one):
    e = team.exp_nonpositive(-abs(x))
    r = one / (one + e)
    return r if x >= 0 else e * r
