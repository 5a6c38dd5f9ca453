"""Adadelta, as `torch.optim.Adadelta` (rho, eps, weight decay, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, grad_for_update, next_step, scalar_tensor


class Adadelta(Optimizer):
    """Adadelta (Zeiler). Per parameter p with gradient g:

        g = -g                                          (maximize)
        g = g + weight_decay * p
        v = rho v + (1 - rho) g^2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho u + (1 - rho) delta^2
        p = p - lr delta

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `square_avg` v and `acc_delta` u,
    each the shape of p. `foreach`, `capturable` and `differentiable` are accepted and kept in the
    groups, as PyTorch's, and change nothing: there is one implementation, array code over each
    parameter, in place.
    """

    sparse_refusal = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
        wd, maximize = float(group["weight_decay"]), group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["square_avg"] = p.new_zeros(p.shape)
                state["acc_delta"] = p.new_zeros(p.shape)
            next_step(state)
            arrays = [p.array, p.grad.array, state["square_avg"].array, state["acc_delta"].array]
            self._update_arrays(arrays, lr, rho, eps, wd, maximize)
            p._bump_version()

    def _update_arrays(self, arrays, lr, rho, eps, wd, maximize):
        """The step on arrays [p, g, square_avg, acc_delta], in place."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, v, u = blk
            d, s, delta = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            xp.multiply(g, 1 - rho, out=s)  # PyTorch's addcmul order: ((1 - rho) g) g
            s *= g
            v *= rho
            v += s
            xp.add(v, eps, out=s)
            xp.sqrt(s, out=s)  # std
            xp.add(u, eps, out=delta)
            xp.sqrt(delta, out=delta)
            delta /= s
            delta *= g
            xp.multiply(delta, 1 - rho, out=s)
            s *= delta
            u *= rho
            u += s
            delta *= -lr
            w += delta

        self._for_blocks(arrays, update, 3)
