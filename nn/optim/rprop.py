"""Rprop, as `torch.optim.Rprop` (etas, step-size bounds, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, grad_for_update, next_step, scalar_tensor


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun): each element has its own step size, grown
    while its gradient keeps its sign and shrunk when the sign flips. Per parameter p with gradient g:

        g = -g                                          (maximize)
        step_size = clamp(step_size * f, step_sizes), f = etaplus where g prev > 0,
                                                           etaminus where g prev < 0, 1 where g prev = 0
        g = 0 where g prev < 0                          (after a sign flip: no step, and the next
                                                          step counts as neither)
        p = p - sign(g) * step_size ;  prev = g

    State per parameter, PyTorch's names: `step` (a 0-d tensor), `prev` (zeros at first) and
    `step_size` (the group's lr at first), each the shape of p. `foreach`, `capturable` and
    `differentiable` are accepted and kept in the groups, as PyTorch's, and change nothing.
    """

    sparse_refusal = "Rprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        etaminus, etaplus = float(group["etas"][0]), float(group["etas"][1])
        step_min, step_max = float(group["step_sizes"][0]), float(group["step_sizes"][1])
        maximize = group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = scalar_tensor(0.0)
                state["prev"] = p.new_zeros(p.shape)
                lr = float(group["lr"])  # a complex parameter's imaginary parts step too (PyTorch's lr + lr i)
                state["step_size"] = p.new_full(p.shape, complex(lr, lr) if p.is_complex() else lr)
            next_step(state)
            arrays = [p.array, p.grad.array, state["prev"].array, state["step_size"].array]
            self._update_arrays(arrays, etaminus, etaplus, step_min, step_max, maximize)
            p._bump_version()

    def _update_arrays(self, arrays, etaminus, etaplus, step_min, step_max, maximize):
        """The step on arrays [p, g, prev, step_size], in place."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, prev, step_size = blk
            d, s, factor = tmp
            g = grad_for_update(xp, w, g, 0.0, maximize, d)
            xp.multiply(g, prev, out=s)  # its sign: did the gradient keep its sign?
            factor.fill(1.0)
            xp.copyto(factor, etaplus, where=s > 0)
            flipped = s < 0
            xp.copyto(factor, etaminus, where=flipped)
            step_size *= factor
            xp.clip(step_size, step_min, step_max, out=step_size)
            prev[...] = g
            xp.copyto(prev, 0.0, where=flipped)
            xp.sign(prev, out=s)
            s *= step_size
            w -= s

        self._for_blocks(arrays, update, 3)
