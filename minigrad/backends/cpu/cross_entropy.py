"""cross_entropy's forward on the CPU: two loops, each a row at a time in cache, instead of the op's
~20 numpy calls. The exp is team.exp_nonpositive, which vectorizes (numba's own exp is a scalar
call). Scalars in the logits' precision.
"""
import numpy as np

from . import floats, team


def supports(D, x, t, w, ignore_index, ls, inv, need_grad):
    """numpy float logits (and weights) of one dtype, integer targets."""
    return floats(x, D, w) and t.dtype.kind in "iu"


def forward(D, x, t, w, ignore_index, ls, inv, need_grad):
    """Per-row losses (M,) of logits x (M, C) against targets t (M,) (checked by the op: in [0, C) or
    ignore_index), class weights w (C,) or None, label smoothing ls; with need_grad, D (M, C) gets the
    gradient of the rows' losses times `inv` (the op's 1 / 'mean' denominator)."""
    M, C = x.shape
    loss, mx = np.empty(M, dtype=x.dtype), np.empty(M, dtype=x.dtype)
    dt = x.dtype.type
    w_ = x[:0, 0] if w is None else w.astype(x.dtype, copy=False)  # size 0: no class weights
    W = dt(C if w is None else w_.sum())
    args = (D, loss, x, mx, t, w_, ignore_index, dt(ls), dt(ls / C), W, dt(inv), dt(1), need_grad)
    if x.size >= team.TEAM_MIN_ELEMENTS and _cross_entropy_team.on_team():
        _cross_entropy_team(*args, _cross_entropy_team.threads())
    else:
        _exp_shifted_rows(D, mx, x)
        _cross_entropy_finish(*args)
    return loss


@team.kernel
def _exp_shifted_rows(D, mx, x):  # mx_i = max_c x_ic;  D_ic = exp(x_ic - mx_i)
    M, C = x.shape
    for i in range(M):
        m = team.max_of(x[i], C)  # (a NaN it passes over still makes the row's loss NaN, through exp)
        mx[i] = m
        for c in range(C):
            D[i, c] = team.exp_nonpositive(x[i, c] - m)


@team.kernel
def _cross_entropy_finish(D, loss, x, mx, t, w, ignore_index, ls, vs, W, inv, one, need_grad):  # D holds exp(x - mx)
    M, C = x.shape  # vs = ls / C;  W = sum_c w_c (C without weights)
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
        hit = (w[ti] if w.size else one) * (one - ls)  # (1 - ls) w[t_i]
        s = zero
        for c in range(C):
            s += D[i, c]
        lse = mx[i] + np.log(s)
        li = hit * (lse - x[i, ti])
        if ls:
            sm = zero
            for c in range(C):
                sm += (w[c] if w.size else one) * (lse - x[i, c])
            li += vs * sm
        loss[i] = li
        if need_grad:
            k = (hit + vs * W) * inv / s  # a_i / s_i: a_i p_ic = k exp(x_ic - mx_i)
            if ls:
                u = vs * inv
                for c in range(C):
                    D[i, c] = D[i, c] * k - u * (w[c] if w.size else one)
            else:
                for c in range(C):
                    D[i, c] *= k
            D[i, ti] -= hit * inv


@team.kernel(parallel=True)
def _cross_entropy_team(D, loss, x, mx, t, w, ignore_index, ls, vs, W, inv, one, need_grad, parts):
    # both loops on the kernels' thread team, each thread on its share of the rows (numba drops an
    # exception raised inside a team: cross_entropy has checked the targets before this runs)
    M = x.shape[0]
    for p in team.prange(parts):
        lo, hi = team.share(M, p, parts, 1)
        _exp_shifted_rows(D[lo:hi], mx[lo:hi], x[lo:hi])
        _cross_entropy_finish(D[lo:hi], loss[lo:hi], x[lo:hi], mx[lo:hi], t[lo:hi], w, ignore_index, ls, vs, W, inv,
                              one, need_grad)
