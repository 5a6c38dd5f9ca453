"""Adagrad, as `torch.optim.Adagrad` (lr decay, weight decay, initial accumulator, maximize)."""
from minigrad.device import array_module

from .optimizer import Optimizer, check_implementation, grad_for_update, next_step, scalar_tensor


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.). Per parameter p with gradient g, at step t (from 1):

        g = -g                                      (maximize)
        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) lr_decay)
        sum = sum + g^2
        p = p - clr g / (sqrt(sum) + eps)

    State per parameter, PyTorch's names: `step` (a 0-d tensor) and `sum` (the shape of p, starting at
    `initial_accumulator_value`), made at construction as PyTorch makes them, so a fresh optimizer's
    state_dict already holds them. `foreach`, `fused` and `differentiable` are accepted and kept in
    the groups, as PyTorch's, and change nothing: there is one implementation, array code over each
    parameter, in place.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_implementation(foreach, fused, differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = scalar_tensor(0.0)
        value = float(group["initial_accumulator_value"])  # (complex: both parts start there, as PyTorch's)
        state["sum"] = p.new_full(p.shape, complex(value, value) if p.is_complex() else value)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, lr_decay, eps = float(group["lr"]), float(group["lr_decay"]), float(group["eps"])
        wd, maximize = float(group["weight_decay"]), group["maximize"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:  # a parameter of a group added after construction
                self._init_state(p, group)
            clr = lr / (1 + (next_step(state) - 1) * lr_decay)
            if p.grad.is_sparse:
                self._step_sparse(p, state["sum"], clr, eps, wd, maximize)
                continue
            self._update_arrays([p.array, p.grad.array, state["sum"].array], clr, eps, wd, maximize)
            p._bump_version()

    def _step_sparse(self, p, acc, clr, eps, wd, maximize):
        """A sparse gradient's step: only its rows' sums and values change (repeated ids summed first)."""
        if wd != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        g = (-p.grad if maximize else p.grad).coalesce()
        rows, values = tuple(g.indices().array), g.values().array
        acc.array[rows] += values * values
        acc._bump_version()
        std = array_module(acc.array).sqrt(acc.array[rows]) + eps
        p.array[rows] += (values / std) * -clr
        p._bump_version()

    def _update_arrays(self, arrays, clr, eps, wd, maximize):
        """The step on arrays [p, g, sum], in place."""
        xp = array_module(arrays[0])

        def update(blk, tmp):
            w, g, acc = blk
            s, d = tmp
            g = grad_for_update(xp, w, g, wd, maximize, d)
            xp.multiply(g, g, out=s)
            acc += s
            xp.sqrt(acc, out=s)
            s += eps
            xp.divide(g, s, out=s)
            s *= -clr
            w += s

        self._for_blocks(arrays, update, 2)
