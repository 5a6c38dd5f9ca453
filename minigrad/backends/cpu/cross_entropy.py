"""cross_entropy's forward on the CPU: one loop over the rows, each row's passes while it is in cache,
instead of the op's ~20 numpy calls. The exp is team.exp_nonpositive, which vectorizes (numba's own
exp is a scalar call). Scalars in the logits' precision.
"""
import numpy as np

from . import floats, team


def supports(D, x, t, w, ignore_index, ls, inv, need_grad):
    """numpy float logits (and weights) of one dtype, integer targets."""
    return floats(x, D, w) and t.dtype.kind in "iu"


def forward(D, x, t, w, ignore_index, ls, inv, need_grad):
    """(per-row losses (M,), kept) of logits x (M, C) against targets t (M,), class weights w (C,) or None,
    label smoothing ls; with need_grad, D (M, C) gets the gradient of the rows' losses times `inv` (the
    op's 1 / 'mean' denominator). kept: the number of targets that are not ignore_index, or -1 where one
    is outside [0, C) (then nothing else is done: the op raises). The targets are checked here, in one
    compiled loop, not by the op's numpy reductions."""
    M, C = x.shape
    loss = np.empty(M, dtype=x.dtype)
    if w is None:  # (the usual: its constants made once)
        key = (x.dtype, C, ls, inv)
        w_, k = _constants.get(key) or _constants_for(key)
    else:
        w_ = w.astype(x.dtype, copy=False)
        k = np.array((ls, ls / C if C else 0.0, w_.sum(), inv, 1.0), dtype=x.dtype)
    kept = _kept_rows(t, C, ignore_index)  # (its own call: the rows' compiled loop, and so its bits, as they were)
    if kept < 0:
        return loss, kept
    if x.size >= team.TEAM_MIN_ELEMENTS and _cross_entropy_team.on_team():
        _cross_entropy_team(D, loss, x, t, w_, ignore_index, k, need_grad, _cross_entropy_team.threads())
    else:
        _cross_entropy_rows(D, loss, x, t, w_, ignore_index, k, need_grad)
    return loss, kept


# the scalars in the logits' precision, in one array (one object to pass, not five): (ls, ls / C, the sum of
# the weights (C without weights), inv, 1); and no class weights as an array of size 0
_constants = {}


def _constants_for(key):
    dtype, C, ls, inv = key
    if len(_constants) > 256:  # (batches of every size, say)
        _constants.clear()
    _constants[key] = (np.empty(0, dtype=dtype), np.array((ls, ls / C if C else 0.0, C, inv, 1.0), dtype=dtype))
    return _constants[key]


@team.kernel
def _kept_rows(t, C, ignore_index):  # the number of targets not ignore_index; -1 where one is outside [0, C)
    kept = 0
    for i in range(t.size):
        ti = t[i]
        if ti != ignore_index:
            if ti < 0 or ti >= C:
                return -1
            kept += 1
    return kept


@team.kernel
def _cross_entropy_rows(D, loss, x, t, w, ignore_index, k, need_grad):
    # k = (ls, vs = ls / C, W = sum_c w_c (C without weights), inv, 1);  per row i, with m_i = max_c x_ic:
    # D_ic = exp(x_ic - m_i), s_i = sum_c D_ic, lse_i = m_i + log s_i; then the loss, and D scaled in place
    ls, vs, W, inv, one = k[0], k[1], k[2], k[3], k[4]
    M, C = x.shape
    zero = one - one
    for i in range(M):
        ti = t[i]
        if ti != ignore_index and (ti < 0 or ti >= C):  # cross_entropy checks first: never read outside a row
            raise IndexError("cross_entropy: a target class id is out of range")
        if ti == ignore_index:  # no loss, a zero gradient row
            loss[i] = zero
            if need_grad:
                for c in range(C):
                    D[i, c] = zero
            continue
        m = team.max_of(x[i], C)  # (a NaN it passes over still makes the row's loss NaN, through exp)
        for c in range(C):
            D[i, c] = team.exp_nonpositive(x[i, c] - m)
        hit = (w[ti] if w.size else one) * (one - ls)  # (1 - ls) w[t_i]
        s = zero
        for c in range(C):
            s += D[i, c]
        lse = m + np.log(s)
        li = hit * (lse - x[i, ti])
        if ls:
            sm = zero
            for c in range(C):
                sm += (w[c] if w.size else one) * (lse - x[i, c])
            li += vs * sm
        loss[i] = li
        if need_grad:
            r = (hit + vs * W) * inv / s  # a_i / s_i: a_i p_ic = r exp(x_ic - m_i)
            if ls:
                u = vs * inv
                for c in range(C):
                    D[i, c] = D[i, c] * r - u * (w[c] if w.size else one)
            else:
                for c in range(C):
                    D[i, c] *= r
            D[i, ti] -= hit * inv


@team.kernel(parallel=True)
def _cross_entropy_team(D, loss, x, t, w, ignore_index, k, need_grad, parts):
    # each thread on its share of the rows (numba drops an exception raised inside a team: forward has
    # checked the targets before this runs)
    M = x.shape[0]
    for p in team.prange(parts):
        lo, hi = team.share(M, p, parts, 1)
        _cross_entropy_rows(D[lo:hi], loss[lo:hi], x[lo:hi], t[lo:hi], w, ignore_index, k, need_grad)
