"""Adamax, as `torch.optim.Adamax` (betas, eps, weight decay, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, check_betas, grad_for_update, next_step, scalar_tensor


class Adamax(Optimizer):
    """Adamax, Adam with the infinity norm (Kingma & Ba). Per parameter p with gradient g, at step t:

        g = -g                                          (maximize)
        g = g + weight_decay * p
        m = beta1 m + (1 - beta1) g
        u = max(beta2 u, |g| + eps)
        p = p - lr / (1 - beta1^t) * m / u

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `exp_avg` m and `exp_inf` u, each
    the shape of p. `foreach`, `capturable` and `differentiable` are accepted and kept in the groups,
    as PyTorch's, and change nothing.
    """

    sparse_refusal = "Adamax does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = float(group["betas"][0]), float(group["betas"][1])
        maximize = group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_inf"] = p.new_zeros(p.shape)
            t = next_step(state)
            clr = lr / (1 - beta1 ** t)
            arrays = [p.array, p.grad.array, state["exp_avg"].array, state["exp_inf"].array]
            self._update_arrays(arrays, clr, beta1, beta2, eps, wd, maximize)
            p._bump_version()

    def _update_arrays(self, arrays, clr, beta1, beta2, eps, wd, maximize):
        """The step on arrays [p, g, exp_avg, exp_inf], in place."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, m, u = blk
            d, s = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            xp.subtract(g, m, out=s)  # m = m + (1 - beta1) (g - m), PyTorch's lerp
            s *= 1 - beta1
            m += s
            u *= beta2
            xp.abs(g, out=s)
            s += eps
            xp.maximum(u, s, out=u)
            xp.divide(m, u, out=s)
            s *= -clr
            w += s

        self._for_blocks(arrays, update, 2)
