"""RMSprop, as `torch.optim.RMSprop` (weight decay, momentum, centered, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, grad_for_update, next_step, scalar_tensor


class RMSprop(Optimizer):
    """RMSprop (Hinton). Per parameter p with gradient g:

        g = -g                                          (maximize)
        g = g + weight_decay * p
        v = alpha v + (1 - alpha) g^2
        avg = sqrt(v) + eps, or, centered: g_avg = g_avg + (1 - alpha) (g - g_avg),
                                           avg = sqrt(v - g_avg^2) + eps
        buf = momentum buf + g / avg ; p = p - lr buf   (momentum > 0)
        p = p - lr g / avg                              (otherwise)

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `square_avg` v, `momentum_buffer`
    (momentum > 0) and `grad_avg` (centered), each the shape of p. `capturable`, `foreach` and
    `differentiable` are accepted and kept in the groups, as PyTorch's, and change nothing: there
    is one implementation, array code over each parameter, in place.
    """

    sparse_refusal = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        wd, momentum = float(group["weight_decay"]), float(group["momentum"])
        centered, maximize = group["centered"], group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["square_avg"] = p.new_zeros(p.shape)
            # made when first needed: a scheduler (OneCycleLR) may turn momentum on after the first step
            if momentum > 0 and "momentum_buffer" not in state:
                state["momentum_buffer"] = p.new_zeros(p.shape)
            if centered and "grad_avg" not in state:
                state["grad_avg"] = p.new_zeros(p.shape)
            next_step(state)
            arrays = [p.array, p.grad.array, state["square_avg"].array]
            if momentum > 0:
                arrays.append(state["momentum_buffer"].array)
            if centered:
                arrays.append(state["grad_avg"].array)
            self._update_arrays(arrays, lr, alpha, eps, wd, momentum, centered, maximize)
            p._bump_version()

    def _update_arrays(self, arrays, lr, alpha, eps, wd, momentum, centered, maximize):
        """The step on arrays [p, g, square_avg(, momentum_buffer)(, grad_avg)], in place."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, v = blk[:3]
            rest = list(blk[3:])
            buf = rest.pop(0) if momentum > 0 else None
            g_avg = rest.pop(0) if centered else None
            s, d = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            v *= alpha
            xp.multiply(g, 1 - alpha, out=s)  # PyTorch's addcmul order: ((1 - alpha) g) g
            s *= g
            v += s
            if centered:
                xp.subtract(g, g_avg, out=s)
                s *= 1 - alpha
                g_avg += s
                xp.multiply(g_avg, g_avg, out=s)
                xp.subtract(v, s, out=s)
                xp.sqrt(s, out=s)
            else:
                xp.sqrt(v, out=s)
            s += eps
            xp.divide(g, s, out=s)
            if buf is not None:
                buf *= momentum
                buf += s
                xp.multiply(buf, -lr, out=s)
            else:
                s *= -lr
            w += s

        self._for_blocks(arrays, update, 2)
