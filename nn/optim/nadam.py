"""NAdam, as `torch.optim.NAdam` (momentum decay, L2 or decoupled weight decay, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, check_betas, grad_for_update, next_step, scalar_tensor, set_scalar, update_moments


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat). Per parameter p with gradient g, at step t:

        g = -g                                          (maximize)
        g = g + weight_decay * p                        (L2), or
        p = p (1 - lr weight_decay)                     (decoupled_weight_decay=True)
        mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay))        (and mu_{t+1} likewise)
        mu_product = mu_1 mu_2 ... mu_t
        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2
        denom = sqrt(v / (1 - beta2^t)) + eps
        p = p - lr (1 - mu_t) / (1 - mu_product) * g / denom
              - lr mu_{t+1} / (1 - mu_product mu_{t+1}) * m / denom

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `mu_product` (a 0-d tensor of
    PyTorch's scalar precision: `scalar_dtype`), `exp_avg` m and `exp_avg_sq` v, each the shape of p.
    `foreach`, `capturable` and `differentiable` are accepted and kept in the groups, as PyTorch's,
    and change nothing.
    """

    sparse_refusal = "NAdam does not support sparse gradients"

    scalar_state = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = float(group["betas"][0]), float(group["betas"][1])
        momentum_decay, decoupled, maximize = float(group["momentum_decay"]), group["decoupled_weight_decay"], \
            group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["mu_product"] = scalar_tensor(1.0)
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_avg_sq"] = p.new_zeros(p.shape)
            t = next_step(state)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
            # the product in the scalar's own precision, as PyTorch's in-place multiply of its 0-d tensor
            product = state["mu_product"].array  # (its dtype: the scalar dtype, or a loaded parameter's)
            mu_product = set_scalar(state, "mu_product", float(product) * float(product.dtype.type(mu)))
            scale_g = -lr * (1.0 - mu) / (1.0 - mu_product)
            scale_m = -lr * mu_next / (1.0 - mu_product * mu_next)
            decay = 1 - lr * wd if decoupled else 1.0
            arrays = [p.array, p.grad.array, state["exp_avg"].array, state["exp_avg_sq"].array]
            self._update_arrays(arrays, t, beta1, beta2, eps, 0.0 if decoupled else wd, decay, maximize, scale_g,
                                scale_m)
            p._bump_version()

    def _update_arrays(self, arrays, t, beta1, beta2, eps, wd, decay, maximize, scale_g, scale_m):
        """The step on arrays [p, g, exp_avg, exp_avg_sq], in place; `wd` the L2 penalty (0 when
        decoupled), `decay` the decoupled decay's factor (1.0: none)."""
        xp = array_module(arrays[0])
        bias_correction2 = 1 - beta2**t

        def update(blk, tmp):
            w, g, m, v = blk
            d, s, denom = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            if decay != 1.0:
                w *= decay
            update_moments(xp, g, m, v, beta1, beta2, s)
            xp.divide(v, bias_correction2, out=denom)
            xp.sqrt(denom, out=denom)
            denom += eps
            xp.multiply(g, scale_g, out=s)
            s /= denom
            w += s
            xp.multiply(m, scale_m, out=s)
            s /= denom
            w += s

        self._for_blocks(arrays, update, 3)
