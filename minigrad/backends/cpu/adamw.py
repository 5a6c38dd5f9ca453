"""Adam / AdamW's update on the CPU: one compiled pass over a parameter and its state, in place, with
the scalars in the parameter's precision (as PyTorch's float32 math); on the team for large ones."""
import functools

import numpy as np

from . import floats, team


def supports(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *scalars):
    """numpy float arrays of one dtype, contiguous but for the gradient."""
    return (floats(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq) and param.flags.c_contiguous
            and exp_avg.flags.c_contiguous and exp_avg_sq.flags.c_contiguous
            and (max_exp_avg_sq is None or max_exp_avg_sq.flags.c_contiguous))


def forward(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale,
            eps_scaled):
    """One Adam (decoupled=False) / AdamW step on one parameter, in place.
    `step_scale` = -lr sqrt(1 - beta2^t) / (1 - beta1^t) and `eps_scaled` = eps sqrt(1 - beta2^t), as
    nn/optim/adam.py folds the bias corrections; max_exp_avg_sq: amsgrad's running max (or None)."""
    scalars = _scalars(param.dtype.type, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled)
    # views, but of a strided gradient (read only): a copy
    w, g, m, v = param.reshape(-1), grad.reshape(-1), exp_avg.reshape(-1), exp_avg_sq.reshape(-1)
    v_max = w[:0] if max_exp_avg_sq is None else max_exp_avg_sq.reshape(-1)
    if param.size >= team.TEAM_MIN_ELEMENTS and _adam_team.on_team():
        _adam_team(w, g, m, v, v_max, *scalars, _adam_team.threads())
    else:
        _adam(w, g, m, v, v_max, *scalars)


def prepared_forward(params, exp_avgs, exp_avg_sqs):
    """`forward` over several parameters of one dtype (no amsgrad), their arrays flattened and the team
    chosen once: a function (grads, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled)
    -> None stepping them all with one set of scalars, for an optimizer step that minigrad.compile
    replays (the same kernels: the same bits)."""
    dt, dtype, ndarray = params[0].dtype.type, params[0].dtype, np.ndarray
    flats = [(w.reshape(-1), m.reshape(-1), v.reshape(-1), w.reshape(-1)[:0], w.shape,
              w.size >= team.TEAM_MIN_ELEMENTS and _adam_team.on_team()) for w, m, v in zip(params, exp_avgs, exp_avg_sqs)]
    plain = _adam._plain()  # (numba's dispatcher itself: the kernel wrapper's checks made here, once)
    # the compiled function for flat arrays of this dtype, looked up once (numba checks no types when it is
    # called: every array here, and each gradient at each call, is checked to be one); else the dispatcher
    entry = None
    if all(team.prepared_flat(a, dtype, a.shape) is not None and a.flags.c_contiguous for f in flats for a in f[:4]):
        w, _, _, none, _, _ = flats[0]
        entry = _adam.entry(w, w, w, w, none, *_scalars(dt, 0.0, 0.0, 0.0, 0.0, True, 0.0, 0.0))

    def run(grads, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled):
        scalars = _scalars(dt, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled)
        for (w, m, v, none, shape, on_team), g in zip(flats, grads):
            if on_team:
                _adam_team(w, g.reshape(-1), m, v, none, *scalars, _adam_team.threads())
            elif entry is not None and type(g) is ndarray and g.dtype is dtype and g.shape == shape and g.flags.aligned:
                entry(w, g.ravel(), m, v, none, *scalars)  # (g is only read: a read-only one is read as any)
            else:
                plain(w, g.reshape(-1), m, v, none, *scalars)

    return run


@functools.lru_cache(maxsize=16)
def _scalars(dt, lr, beta1, beta2, wd, decoupled, step_scale, eps_scaled):
    # kept: an optimizer's step calls this once per parameter with the same numbers, and making seven
    # numpy scalars costs as much as the update of a small parameter
    return (dt(1 - lr * wd) if decoupled else dt(1), dt(wd if wd != 0 and not decoupled else 0), dt(1 - beta1),
            dt(beta2), dt(1 - beta2), dt(step_scale), dt(eps_scaled))


@team.kernel
def _adam(w, g, m, v, v_max, decay, l2, one_minus_beta1, beta2, one_minus_beta2, step_scale, eps_scaled):
    # Adam's update (nn/optim/adam.py) in one pass per element (v_max of size 0: no amsgrad); `decay` is AdamW's
    # 1 - lr wd (1 for Adam), `l2` Adam's weight decay (0 for AdamW)
    for i in range(w.size):
        wi = w[i] * decay
        gi = g[i] + l2 * wi if l2 != 0 else g[i]  # not 0 * w: an inf weight would turn the state NaN
        mi = m[i] + one_minus_beta1 * (gi - m[i])
        vi = beta2 * v[i] + one_minus_beta2 * gi * gi
        m[i] = mi
        v[i] = vi
        if v_max.size:
            vi = max(v_max[i], vi)
            v_max[i] = vi
        w[i] = wi + step_scale * mi / (np.sqrt(vi) + eps_scaled)


@team.kernel(parallel=True)
def _adam_team(w, g, m, v, v_max, decay, l2, one_minus_beta1, beta2, one_minus_beta2, step_scale, eps_scaled, parts):
    # the same on the kernels' thread team, each thread on its share of the elements
    for p in team.prange(parts):
        lo, hi = team.share(w.size, p, parts, team.GRAIN)
        _adam(w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], v_max[lo:hi] if v_max.size else v_max, decay, l2,
                       one_minus_beta1, beta2, one_minus_beta2, step_scale, eps_scaled)
