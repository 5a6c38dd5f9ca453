"""Adam and AdamW, as `torch.optim.Adam` / `torch.optim.AdamW` (betas, eps, weight decay, amsgrad)."""

from minigrad import backends
from minigrad.device import array_module
from nn._functional import reference

from .optimizer import Optimizer, check_implementation


class Adam(Optimizer):
    """Adam. Per parameter p with gradient g, at step t:

        g = g + weight_decay * p                  (Adam: L2 penalty in the gradient)
        p = p * (1 - lr * weight_decay)           (AdamW: decoupled decay, instead)
        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2   (v_max = max(v_max, v) with amsgrad)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    State per parameter: `step` (a Python int), `exp_avg` m, `exp_avg_sq` v (and
    `max_exp_avg_sq` with amsgrad), each the shape of p. The update is written three times: with
    minigrad's ops (nn/_functional/reference.py's adam_update, for reading), as array code below
    (MINIGRAD_KERNELS=numpy), and in the backends (minigrad/backends/{cpu,cuda}/adamw.py).
    """

    decoupled_weight_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_implementation(foreach, fused)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, fused=fused)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, beta1, beta2, eps = float(group["lr"]), float(group["betas"][0]), float(group["betas"][1]), float(group["eps"])
        wd, amsgrad = float(group["weight_decay"]), group["amsgrad"]
        update = backends.pick(self._update, _reference_update)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_avg_sq"] = p.new_zeros(p.shape)
                if amsgrad:
                    state["max_exp_avg_sq"] = p.new_zeros(p.shape)
            state["step"] += 1
            update(p, state, lr, beta1, beta2, eps, wd, self.decoupled_weight_decay)

    def _update(self, p, state, lr, beta1, beta2, eps, wd, decoupled):
        """One parameter's step on its arrays, in place: a backend's where one takes them, else numpy's."""
        step = state["step"]
        # the bias corrections folded into two scalars:
        #   p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) = p + (-lr sqrt(bc2)/bc1) * m / (sqrt(v) + eps sqrt(bc2))
        bc2_sqrt = (1 - beta2**step) ** 0.5
        step_scale = -lr / (1 - beta1**step) * bc2_sqrt
        eps_scaled = eps * bc2_sqrt
        v_max = state["max_exp_avg_sq"].array if "max_exp_avg_sq" in state else None
        arrays = [p.array, p.grad.array, state["exp_avg"].array, state["exp_avg_sq"].array]
        args = (*arrays, v_max, lr, beta1, beta2, wd, decoupled, step_scale, eps_scaled)
        impl = backends.find("adamw", *args)
        if impl is not None:
            impl.forward(*args)
            p._bump_version()
            return
        if v_max is not None:
            arrays.append(v_max)
        xp = array_module(p.array)
        l2 = wd != 0 and not decoupled

        def update(blk, tmp):  # one block of (p, g, m, v[, v_max])
            w, g, m, v = blk[:4]
            s = tmp[0]
            if wd != 0:
                if decoupled:
                    w *= 1 - lr * wd
                else:
                    xp.multiply(w, wd, out=tmp[1])
                    tmp[1] += g
                    g = tmp[1]
            xp.subtract(g, m, out=s)  # m = m + (1 - beta1) (g - m), PyTorch's lerp
            s *= 1 - beta1
            m += s
            xp.multiply(g, 1 - beta2, out=s)  # v = beta2 v + (1 - beta2) g g
            s *= g
            v *= beta2
            v += s
            if v_max is not None:
                xp.maximum(blk[4], v, out=blk[4])
                v = blk[4]
            xp.sqrt(v, out=s)
            s += eps_scaled
            xp.divide(m, s, out=s)
            s *= step_scale
            w += s

        self._for_blocks(arrays, update, 2 if l2 else 1)
        p._bump_version()


def _reference_update(p, state, lr, beta1, beta2, eps, wd, decoupled):
    reference.adam_update(p, p.grad, state["exp_avg"], state["exp_avg_sq"], lr, beta1, beta2, eps, wd, decoupled,
                          state["step"], state.get("max_exp_avg_sq"))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay before the
    Adam step, instead of adding weight_decay * p to the gradient. Default weight_decay 1e-2."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 foreach=None, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, fused=fused)
