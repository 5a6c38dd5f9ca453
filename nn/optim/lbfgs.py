"""L-BFGS, as `torch.optim.LBFGS`: a quasi-Newton method for full-batch problems.

All parameters are seen as one vector x with gradient g. L-BFGS keeps the last `history_size`
pairs s = x_{k+1} - x_k, y = g_{k+1} - g_k and applies the inverse-Hessian approximation they
define to -g without ever forming it: the two-loop recursion (Nocedal & Wright, Numerical
Optimization, Algorithm 7.4), starting from H_0 = (s.y / y.y) I (eq. 7.20). The step along that
direction d is `lr` (the first one scaled to min(1, 1/|g|_1)), or, with
line_search_fn="strong_wolfe", a step t satisfying the strong Wolfe conditions

    f(x + t d) <= f(x) + c1 t g.d        |g(x + t d).d| <= c2 |g.d|        (c1 = 1e-4, c2 = 0.9)

found by bracketing and zooming with cubic interpolation (N&W Algorithms 3.5, 3.6 and eq. 3.59).
These are minFunc's choices, which PyTorch follows, so the two take the same steps.
"""
import functools

import numpy as np

from minigrad import Tensor, enable_grad, no_grad
from minigrad.device import array_module

from .optimizer import Optimizer

# what step() leaves in the state for the next call (PyTorch's names), besides the counters
_CARRIED = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss", "al")


class LBFGS(Optimizer):
    """L-BFGS over every parameter (one parameter group only).

    `step(closure)`: `closure()` clears the gradients, computes the loss, calls backward and
    returns the loss; it is called once per function evaluation. A step runs up to `max_iter`
    iterations (and `max_eval` evaluations, default max_iter * 5 // 4), stopping early when the
    largest gradient entry is at most `tolerance_grad` or the loss or the step changes by less than
    `tolerance_change`; it returns the loss of the first evaluation.

    State (on the first parameter, as PyTorch): `func_evals`, `n_iter`, the last direction `d`
    and step `t`, the history `old_dirs` (y), `old_stps` (s), `ro` (1 / y.s), `H_diag`,
    `prev_flat_grad`, `prev_loss`, and `al` (the two-loop recursion's scratch).
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one vector --------------------------------------------------------------
    def _flat_grad(self):
        xp = array_module(self._params[0].array)
        # (a sparse gradient is taken as its dense equal, as PyTorch's LBFGS)
        return xp.concatenate([_real_flat(xp.zeros(p.numel(), p.array.dtype) if p.grad is None else
                                          (p.grad.to_dense() if p.grad.is_sparse else p.grad).array)
                               for p in self._params])

    def _add(self, t, d):
        """x += t d (a complex parameter's entries are pairs of d's: real, imaginary)."""
        offset = 0
        for p in self._params:
            dt = p.array.dtype
            n = p.numel() * (2 if dt.kind == "c" else 1)
            step = d[offset:offset + n]
            p.array[...] += t * (step.view(dt) if dt.kind == "c" else step).reshape(p.shape)
            p._bump_version()
            offset += n

    def _set(self, x):
        for p, a in zip(self._params, x):
            p.array[...] = a
            p._bump_version()

    def _evaluate(self, closure, x, d, t):
        """phi(t): the loss and gradient at x + t d (the parameters are put back at x)."""
        self._add(t, d)
        loss = float(_call(closure))
        g = self._flat_grad()
        self._set(x)
        return loss, g

    # ---- the step ----------------------------------------------------------------------------------
    def step(self, closure):
        """One optimization step: up to max_iter iterations, each calling closure() (with grad enabled)
        once or more; returns the first call's loss. Runs with grad disabled otherwise, as PyTorch's."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search_fn = group["history_size"], group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _call(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        xp = array_module(g)
        if xp.abs(g).max() <= tolerance_grad:  # already optimal
            return orig_loss
        d, t, old_dirs, old_stps, ro, H_diag, prev_g, prev_loss, al = (_raw(state.get(k)) for k in _CARRIED)

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # steepest descent to start
                d, old_dirs, old_stps, ro, H_diag = -g, [], [], [], 1
            else:
                y, s = g - prev_g, d * t
                ys = y.dot(s)
                if ys > 1e-10:  # the curvature condition: without it the update would not stay positive definite
                    if len(old_dirs) == history_size:  # forget the oldest pair
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if al is None:  # (its place in the state's order, PyTorch's: made in the first quasi-Newton iteration)
                    al, state["al"] = [None] * history_size, None
                d = _two_loop(g, old_dirs, old_stps, ro, H_diag, al)
            prev_g, prev_loss = g.copy(), loss
            t = min(1.0, 1.0 / xp.abs(g).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = g.dot(d)
            if gtd > -tolerance_change:  # not a descent direction (to rounding)
                break

            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x = [p.array.copy() for p in self._params]
                phi = functools.partial(self._evaluate, closure, x, d)
                loss, g, t, ls_evals = _strong_wolfe(phi, d, t, loss, g, gtd)
                self._add(t, d)
                opt_cond = xp.abs(g).max() <= tolerance_grad
            else:
                self._add(t, d)
                ls_evals, opt_cond = 0, False
                if n_iter != max_iter:  # (after the last iteration the next step()'s first evaluation does it)
                    loss = float(_call(closure))
                    g = self._flat_grad()
                    ls_evals, opt_cond = 1, xp.abs(g).max() <= tolerance_grad
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break  # no progress left to make

        carried = (d, t, old_dirs, old_stps, ro, H_diag, prev_g, prev_loss, al)
        state.update({k: _wrap(v) for k, v in zip(_CARRIED, carried) if v is not None or k != "al"})
        return orig_loss

    def load_state_dict(self, state_dict):
        """Restore `state_dict()`'s output: the hyperparameters, and the history copied onto the parameters' device."""
        saved = dict(state_dict.get("state", {})) if isinstance(state_dict, dict) else {}
        super().load_state_dict({**state_dict, "state": {}} if isinstance(state_dict, dict) else state_dict)
        p = self._params[0]
        for key, values in saved.items():
            if int(key) == 0:  # the state lives on the first parameter
                self.state[p] = {k: _copy_to(v, p) for k, v in values.items()}


def _two_loop(g, old_dirs, old_stps, ro, H_diag, alpha):
    """-H g for the L-BFGS inverse Hessian H of the pairs (s_i, y_i), rho_i = 1 / (y_i.s_i) (N&W Algorithm 7.4).
    `alpha` is the first loop's scratch list (PyTorch keeps it in the state, as "al")."""
    q = -g
    for i in reversed(range(len(old_dirs))):  # newest pair first: q <- q - alpha_i y_i
        alpha[i] = old_stps[i].dot(q) * ro[i]
        q -= alpha[i] * old_dirs[i]
    r = q * H_diag
    for i in range(len(old_dirs)):  # oldest first: r <- r + (alpha_i - beta_i) s_i
        beta = old_dirs[i].dot(r) * ro[i]
        r += (alpha[i] - beta) * old_stps[i]
    return r


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2 (N&W eq. 3.59),
    clipped to `bounds` (default: between the two points); their midpoint where the cubic has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(d2_square)  # (np.sqrt: a float32 problem's scalars stay float32, as PyTorch's)
    (a, ga), (b, gb) = ((x1, g1), (x2, g2)) if x1 <= x2 else ((x2, g2), (x1, g1))  # eq. 3.59 with a <= b
    x = b - (b - a) * ((gb + d2 - d1) / (gb - ga + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(phi, d, t, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d meeting the strong Wolfe conditions, from the first guess t.

    phi(t) -> (loss, gradient) at x + t d; f, g, gtd: loss, gradient and slope g.d at t = 0.
    Returns (loss, gradient, t, evaluations)."""
    d_norm = array_module(d).abs(d).max()
    f_new, g_new = phi(t)
    evals, ls_iter = 1, 0
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    # bracketing (Algorithm 3.5): grow t until [t_prev, t] holds a point meeting the conditions
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [(t, f_new, g_new, gtd_new)], True
            break
        if gtd_new >= 0:
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        # extrapolate: the cubic's minimum, at least 1% beyond t and at most 10 t
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [(0, f, g, None), (t, f_new, g_new, None)]

    # zoom (Algorithm 3.6): shrink the bracket; `low` is its end with the lower loss
    low = 0 if bracket[0][1] <= bracket[-1][1] else len(bracket) - 1
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        if abs(b - a) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(a, fa, ga, b, fb, gb)
        # keep away from the ends: a point within 10% of one makes too little progress, twice in a row
        left, right = min(a, b), max(a, b)
        eps = 0.1 * (right - left)
        if min(right - t, t - left) < eps:
            if insufficient_progress or t >= right or t <= left:
                t = right - eps if abs(t - right) < abs(t - left) else left + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        high = 1 - low
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:  # sufficient decrease fails: t is the new high end
            bracket[high] = (t, f_new, g_new, gtd_new)
            low = 0 if bracket[0][1] <= bracket[1][1] else 1
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:  # the minimum lies on the other side of low
                bracket[high] = bracket[low]
            bracket[low] = (t, f_new, g_new, gtd_new)
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _real_flat(a):
    """Array `a` as one real vector: a complex one as its (real, imaginary) pairs, as PyTorch's LBFGS sees it."""
    a = a.reshape(-1)
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


def _call(closure):
    with enable_grad():
        return closure()


def _raw(v):
    """A state value as step() computes with it: Tensors as their arrays (0-d ones too), lists element-wise."""
    if isinstance(v, list):
        return [_raw(x) for x in v]
    return v.array if isinstance(v, Tensor) else v


def _wrap(v):
    """A value step() computed, as the state keeps it (PyTorch's types): arrays and numpy scalars as Tensors."""
    if isinstance(v, list):
        return [_wrap(x) for x in v]
    if isinstance(v, np.generic) or hasattr(v, "__array_interface__") or hasattr(v, "__cuda_array_interface__"):
        return Tensor._wrap(array_module(v).asarray(v))
    return v


def _copy_to(v, p):
    """A saved state value copied onto parameter p's device (floating arrays in p's dtype)."""
    if isinstance(v, list):
        return [_copy_to(x, p) for x in v]
    if not isinstance(v, Tensor):
        return v
    xp = array_module(p.array)
    a = xp.asarray(v.numpy() if xp is np else v.array)
    return Tensor._wrap(xp.array(a, dtype=p.array.dtype if a.dtype.kind == "f" else a.dtype, copy=True))
