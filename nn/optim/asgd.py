"""ASGD, as `torch.optim.ASGD` (averaged SGD: lambd, alpha, t0, weight decay, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, grad_for_update, next_step, scalar_dtype, scalar_tensor, set_scalar


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky), PyTorch's form. Per parameter p with
    gradient g, at step t (from 1), with eta and mu from the previous step (lr and 1 at first):

        g = -g                                          (maximize)
        g = g + weight_decay * p
        p = p (1 - lambd eta) - eta g
        ax = ax + mu (p - ax)   (ax = p when mu = 1)    (the average of the iterates)
        eta = lr / (1 + lambd lr t)^alpha ;  mu = 1 / max(1, t - t0)

    The parameters are the SGD iterates; the average is `ax`, for the caller to use. State per
    parameter, PyTorch's names: `step` (a 0-d tensor), `eta` and `mu` (0-d tensors of PyTorch's
    scalar precision: `scalar_dtype`) and `ax` (the shape of p). `foreach=True` takes PyTorch's foreach
    form, which rounds differently (`_update_arrays`); `capturable` and `differentiable` are accepted and kept
    in the groups, as PyTorch's, and change nothing.
    """

    sparse_refusal = "ASGD does not support sparse gradients"

    scalar_state = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, lambd, alpha, t0 = float(group["lr"]), float(group["lambd"]), float(group["alpha"]), float(group["t0"])
        wd, maximize = float(group["weight_decay"]), group["maximize"]
        dtype = scalar_dtype()
        foreach = group.get("foreach") is True  # (PyTorch's foreach form rounds differently; None is its loop on CPU)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["eta"] = scalar_tensor(lr)
                state["mu"] = scalar_tensor(1.0)
                state["ax"] = p.new_zeros(p.shape)
            t = next_step(state)
            arrays = [p.array, p.grad.array, state["ax"].array]
            self._update_arrays(arrays, float(state["eta"].array), float(state["mu"].array), lambd, wd, maximize,
                                foreach)
            p._bump_version()
            if foreach:  # PyTorch's foreach form computes eta on its step tensor: in the scalar type, lr * (1 / x)
                set_scalar(state, "eta", float(1 / dtype(float(1 + lambd * lr * dtype(t)) ** alpha) * lr))
            else:
                set_scalar(state, "eta", lr / ((1 + lambd * lr * t) ** alpha))
            set_scalar(state, "mu", 1 / max(1, t - t0))

    def _update_arrays(self, arrays, eta, mu, lambd, wd, maximize, foreach=False):
        """The step on arrays [p, g, ax], in place; `foreach`: in the order of PyTorch's foreach form,
        p = p - eta (g + lambd p) and ax = ax + mu (p - ax) even when mu = 1."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, ax = blk
            d, s = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            if foreach:
                xp.multiply(w, lambd, out=s)
                s += g
                s *= -eta
                w += s
                xp.subtract(w, ax, out=s)
                s *= mu
                ax += s
                return
            w *= 1 - lambd * eta
            xp.multiply(g, -eta, out=s)
            w += s
            if mu != 1:
                xp.subtract(w, ax, out=s)
                s *= mu
                ax += s
            else:
                ax[...] = w

        self._for_blocks(arrays, update, 2)
