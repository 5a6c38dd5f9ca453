"""Adafactor, as `torch.optim.Adafactor` (relative step size, factored second moment, update clipping)."""
import numpy as np

from minigrad.device import array_module

from .optimizer import Optimizer, next_step, scalar_tensor


def lerp_(start, end, weight):
    """start = lerp(start, end, weight), in place, with PyTorch's two formulas (exact at weight 0 and 1)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), PyTorch's variant. Per parameter p with gradient g, at step t:

        g = -g                                         (maximize)
        beta = 1 - t^beta2_decay ;  rho = min(lr, 1/sqrt(t))
        alpha = max(eps2, RMS(p)) * rho                (the step, relative to p's size)
        p = p * (1 - lr * weight_decay)
        p 2-D or more: R = lerp(R, mean(g^2, last dim), 1 - beta) ; C = lerp(C, mean(g^2, dim -2), 1 - beta)
                       v = R C / max(mean(R, dim -2), eps1)   (the second moment, from a row and a column)
        p 1-D:         v = lerp(v, g^2, 1 - beta)
        u = g / max(sqrt(v), eps1) ;  p = p - alpha * u / max(1, RMS(u) / d)

    eps1 None is the parameter dtype's machine epsilon. State per parameter, PyTorch's names: `step`
    (a Python int), and `row_var` (p's shape, last dim 1) with `col_var` (dim -2 of size 1), or
    `variance` (p's shape) for a vector. `foreach` is accepted and kept in the groups, as PyTorch's:
    the update runs once per parameter (its norms are each parameter's own).
    """

    sparse_refusal = "Adafactor does not support sparse gradients"

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _state_shape(self, p, name):
        shape = list(p.shape)
        if name in ("row_var", "col_var"):
            shape[-1 if name == "row_var" else -2] = 1
        return shape

    def _step_group(self, group):
        lr, d, wd = float(group["lr"]), float(group["d"]), float(group["weight_decay"])
        beta2_decay, maximize = float(group["beta2_decay"]), group["maximize"]
        eps1, eps2 = group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                if p.ndim > 1:
                    state["row_var"] = p.new_zeros(self._state_shape(p, "row_var"))
                    state["col_var"] = p.new_zeros(self._state_shape(p, "col_var"))
                else:
                    state["variance"] = p.new_zeros(p.shape)
            next_step(state)
            if eps1 is None:  # (PyTorch's: the first parameter's dtype, for the whole group)
                eps1 = float(np.finfo(p.array.dtype).eps)
            self._update(p, state, lr, beta2_decay, float(eps1), float(eps2), d, wd, maximize)
            p._bump_version()

    @staticmethod
    def _update(p, state, lr, beta2_decay, eps1, eps2, d, wd, maximize):
        """One parameter's step on its arrays, in place."""
        w, g = p.array, p.grad.array
        xp = array_module(w)
        if maximize:
            g = -g
        step = float(state["step"].array)
        weight = step ** beta2_decay  # 1 - beta2 at step t
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, float(xp.linalg.norm(w.reshape(-1))) / w.size ** 0.5) * rho
        if wd != 0:
            w *= 1 - lr * wd
        g2 = g * g
        if g.ndim > 1:
            row_var, col_var = state["row_var"].array, state["col_var"].array
            lerp_(row_var, g2.mean(axis=-1, keepdims=True), weight)
            lerp_(col_var, g2.mean(axis=-2, keepdims=True), weight)
            v = row_var @ col_var  # (..., m, 1) @ (..., 1, n): the rank-1 estimate of E[g^2]
            v /= xp.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"].array
            lerp_(variance, g2, weight)
            v = variance.copy()
        u = xp.maximum(v, eps1 * eps1, out=v)
        xp.sqrt(u, out=u)
        xp.divide(g, u, out=u)
        denom = max(1.0, float(xp.linalg.norm(u.reshape(-1))) / (u.size ** 0.5 * d))
        u *= -alpha / denom
        w += u


Adafactor.__module__ = __name__.rpartition(".")[0]  # nn.optim (PyTorch's: its module is private)
