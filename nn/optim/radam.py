"""RAdam, as `torch.optim.RAdam` (L2 or decoupled weight decay, maximize)."""
import math

from minigrad.device import array_module

from .optimizer import Optimizer, check_betas, grad_for_update, next_step, scalar_tensor, update_moments


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.). Per parameter p with gradient g, at step t:

        g = -g                                          (maximize)
        g = g + weight_decay * p                        (L2), or
        p = p (1 - lr weight_decay)                     (decoupled_weight_decay=True)
        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2
        rho_inf = 2 / (1 - beta2) - 1 ;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        rho_t > 5:  r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
                    p = p - m / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
        otherwise:  p = p - m / (1 - beta1^t) * lr       (the variance is not yet tractable: momentum SGD)

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `exp_avg` m and `exp_avg_sq` v, each
    the shape of p. `foreach`, `capturable` and `differentiable` are accepted and kept in the groups,
    as PyTorch's, and change nothing.
    """

    sparse_refusal = "RAdam does not support sparse gradients"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = float(group["betas"][0]), float(group["betas"][1])
        decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_avg_sq"] = p.new_zeros(p.shape)
            t = next_step(state)
            decay = 1 - lr * wd if decoupled else 1.0
            arrays = [p.array, p.grad.array, state["exp_avg"].array, state["exp_avg_sq"].array]
            self._update_arrays(arrays, t, lr, beta1, beta2, eps, 0.0 if decoupled else wd, decay,
                                maximize)
            p._bump_version()

    def _update_arrays(self, arrays, t, lr, beta1, beta2, eps, wd, decay, maximize):
        """The step on arrays [p, g, exp_avg, exp_avg_sq], in place; `wd` the L2 penalty (0 when
        decoupled), `decay` the decoupled decay's factor (1.0: none)."""
        xp = array_module(arrays[0])
        bias_correction1 = 1 - beta1**t
        bias_correction2 = 1 - beta2**t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / bias_correction2
        rect = None
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))

        def update(blk, tmp):
            w, g, m, v = blk
            d, s, step = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            if decay != 1.0:
                w *= decay
            update_moments(xp, g, m, v, beta1, beta2, s)
            xp.divide(m, bias_correction1, out=step)  # PyTorch's order: ((m / bc1) lr) adaptive_lr rect
            step *= lr
            if rect is not None:
                xp.sqrt(v, out=s)
                s += eps
                xp.divide(bias_correction2**0.5, s, out=s)  # the adaptive lr
                step *= s
                step *= rect
            w -= step

        self._for_blocks(arrays, update, 3)
