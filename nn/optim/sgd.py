"""SGD with momentum, dampening, Nesterov, (L2) weight decay and maximize, as `torch.optim.SGD`."""
from minigrad.device import array_module

from .optimizer import Optimizer, add_sparse_, check_implementation, sparse_grads


class SGD(Optimizer):
    """Stochastic gradient descent. Per parameter p with gradient g:

        g = -g                                    (maximize)
        d = g + weight_decay * p
        buf = d (first step), else momentum * buf + (1 - dampening) * d
        d = d + momentum * buf (nesterov) or buf (momentum) or d (plain)
        p = p - lr * d

    State: `momentum_buffer` (shape of p) when momentum != 0. `foreach` as Adam's; `differentiable`
    is accepted and kept in the groups, as PyTorch's, and changes nothing.
    """

    scalar_state = ()  # (no step, as PyTorch's)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_implementation(foreach, fused, differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        lr, wd, momentum = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
        dampening, nesterov = float(group["dampening"]), group["nesterov"]
        maximize = group.get("maximize", False)  # (a group saved before the key existed: False)
        lists = None if sparse_grads(group["params"]) else self._foreach_params(group, momentum != 0)  # (PyTorch's rule too)
        if lists is not None:  # foreach: one update over each list's concatenated parameters
            for params in lists:
                if len(params) == 1:  # (a large parameter: in place, with no copies)
                    self._step_params(params, lr, wd, momentum, dampening, nesterov, maximize)
                    continue
                # some buffers new, some not (params added later); (no state at all without momentum, as PyTorch's)
                if momentum != 0 and len({"momentum_buffer" in self.state[p] for p in params}) == 2:
                    self._step_params(params, lr, wd, momentum, dampening, nesterov, maximize)
                    continue
                w = self._concat([p.array for p in params], 0)
                arrays = [w, self._concat([p.grad.array for p in params], 1)]
                first = False
                if momentum != 0:
                    bufs, first = self._flat(params, ("momentum_buffer",))
                    arrays.append(bufs["momentum_buffer"])
                self._update_arrays(arrays, first, lr, wd, momentum, dampening, nesterov, maximize)
                self._scatter(params, w)
            return
        self._step_params(group["params"], lr, wd, momentum, dampening, nesterov, maximize)

    def _step_params(self, params, lr, wd, momentum, dampening, nesterov, maximize):
        for p in params:
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                self._step_sparse(p, lr, wd, momentum, dampening, nesterov, maximize)
                continue
            arrays = [p.array, p.grad.array]
            first = False
            if momentum != 0:
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = p.new_empty(p.shape)
                    first = True
                arrays.append(state["momentum_buffer"].array)
            self._update_arrays(arrays, first, lr, wd, momentum, dampening, nesterov, maximize)
            p._bump_version()

    def _step_sparse(self, p, lr, wd, momentum, dampening, nesterov, maximize):
        """The step for a sparse gradient, in PyTorch's sparse arithmetic: the momentum buffer is sparse
        too (a copy of the first gradient, then every later one's elements added to it), and only the
        rows present in it change."""
        d = -p.grad if maximize else p.grad
        if wd != 0:  # (p + g: dense + sparse is the sum PyTorch's sparse backend refuses)
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = d.detach().clone()
            else:
                buf = buf * momentum + (d * (1 - dampening) if dampening != 0 else d)
            state["momentum_buffer"] = buf
            d = d + buf * momentum if nesterov else buf
        add_sparse_(p, d, -lr)

    def _update_arrays(self, arrays, first, lr, wd, momentum, dampening, nesterov, maximize=False):
        """The step on arrays [p, g(, momentum_buffer)], in place; `first`: the buffer is new."""
        xp = array_module(arrays[0])

        def update(blk, tmp):  # one block of (p, d_p[, momentum_buffer]), temporaries tmp
            s, s2 = tmp
            w, d = blk[0], blk[1]
            if wd != 0:
                xp.multiply(w, wd, out=s)
                if maximize:
                    s -= d
                else:
                    s += d
                d = s
            elif maximize:
                xp.negative(d, out=s)
                d = s
            if momentum != 0:
                buf = blk[2]
                if first:
                    buf[...] = d
                else:
                    buf *= momentum
                    if dampening != 0:
                        xp.multiply(d, 1 - dampening, out=s2)
                        buf += s2
                    else:
                        buf += d
                if nesterov:
                    xp.multiply(buf, momentum, out=s2)
                    s2 += d
                    d = s2
                else:
                    d = buf
            xp.multiply(d, -lr, out=s)
            w += s

        self._for_blocks(arrays, update, 2)
