"""Adam and AdamW, as `torch.optim.Adam` / `torch.optim.AdamW` (betas, eps, weight decay, amsgrad, maximize)."""
from operator import is_

from minigrad import Tensor, backends
from minigrad.device import array_module
from nn._functional import reference

from .optimizer import (Optimizer, check_implementation, grad_for_update, next_step, real_views, scalar_tensor,
                        update_moments)


class Adam(Optimizer):
    """Adam. Per parameter p with gradient g, at step t:

        g = -g                                    (maximize)
        g = g + weight_decay * p                  (Adam: L2 penalty in the gradient)
        p = p * (1 - lr * weight_decay)           (AdamW, or decoupled_weight_decay=True: decoupled decay, instead)
        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2   (v_max = max(v_max, v) with amsgrad)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    State per parameter: `step` (a 0-d tensor, as PyTorch's), `exp_avg` m, `exp_avg_sq` v (and
    `max_exp_avg_sq` with amsgrad), each the shape of p. The update is written three times: with
    minigrad's ops (nn/_functional/reference.py's adam_update, for reading), as array code below
    (MINIGRAD_KERNELS=numpy), and in the backends (minigrad/backends/{cpu,cuda}/adamw.py).
    `foreach` as PyTorch's, a choice of speed with the same bits: True and None (the default) run it
    once over a group's small parameters concatenated (their m, v in flat buffers) and once per large
    parameter, in place, or once per parameter where the small ones add up to much; False always once
    per parameter (Optimizer._foreach_params). `maximize`
    runs the array code (the backend kernels take no sign); `capturable` and `differentiable` are
    accepted and kept in the groups, as PyTorch's, and change nothing.
    """

    sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

    decoupled_weight_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):  # (PyTorch's checks: its foreach kernels take a tensor lr only when capturable)
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:  # (PyTorch's comparisons, in its order: a string lr is refused in its words too)
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_implementation(foreach, fused, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _step_group(self, group):
        # Python floats: numpy treats them as weak scalars, so float32 arrays stay float32 throughout
        beta1, beta2 = group["betas"]  # (exactly two, as PyTorch unpacks them; a plain unpack costs least)
        lr, beta1, beta2, eps = float(group["lr"]), float(beta1), float(beta2), float(group["eps"])
        wd, amsgrad = float(group["weight_decay"]), group["amsgrad"]
        # (groups of a state dict saved before these keys existed: the class's behaviour)
        flags = (group.get("decoupled_weight_decay", self.decoupled_weight_decay), group.get("maximize", False))
        try:  # (the backend's update is looked up once for the group: _find_kernel)
            self._step_lists(group, lr, beta1, beta2, eps, wd, amsgrad, flags)
        finally:
            self._kernel = None  # (a module: not kept, so that the optimizer pickles and deep-copies)

    def _step_lists(self, group, lr, beta1, beta2, eps, wd, amsgrad, flags):
        lists = self._foreach_params(group)
        if lists is not None:
            for params in lists:
                if len(params) == 1:  # (a large parameter: in place, with no copies)
                    self._step_one(self._update, params[0], lr, beta1, beta2, eps, wd, amsgrad, flags)
                else:
                    self._step_foreach(params, lr, beta1, beta2, eps, wd, amsgrad, flags)
            return
        update = backends.pick(self._update, _reference_update)
        for p in group["params"]:
            if p.grad is not None:
                self._step_one(update, p, lr, beta1, beta2, eps, wd, amsgrad, flags)

    def _step_one(self, update, p, lr, beta1, beta2, eps, wd, amsgrad, flags):
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_avg_sq"] = p.new_zeros(p.shape)
            if amsgrad:
                state["max_exp_avg_sq"] = p.new_zeros(p.shape)
        update(p, state, next_step(state), lr, beta1, beta2, eps, wd, flags)

    def _step_foreach(self, params, lr, beta1, beta2, eps, wd, amsgrad, flags):
        """foreach: one update over the concatenation of `params` (one device and dtype; their m, v
        live in flat buffers), which is the per-parameter update element by element."""
        names = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("step", "exp_avg", "exp_avg_sq")
        bufs, _ = self._flat(params, names)
        if bufs is None:  # parameters at different steps (some stepped without the others): one at a time
            for p in params:
                self._step_one(self._update, p, lr, beta1, beta2, eps, wd, amsgrad, flags)
            return
        steps = bufs["step"]
        steps.fill(float(steps[0]) + 1)  # (each parameter's step tensor is a view of it)
        step = float(steps[0])
        w = self._concat([p.array for p in params], 0)
        g = self._concat([p.grad.array for p in params], 1)
        self._update_arrays([w, g, bufs["exp_avg"], bufs["exp_avg_sq"]], bufs.get("max_exp_avg_sq"), step, lr, beta1,
                            beta2, eps, wd, *flags)
        self._scatter(params, w)

    def _update(self, p, state, step, lr, beta1, beta2, eps, wd, flags):
        """One parameter's step (its count `step`) on its arrays, in place."""
        v_max = state["max_exp_avg_sq"].array if "max_exp_avg_sq" in state else None
        arrays = [p.array, p.grad.array, state["exp_avg"].array, state["exp_avg_sq"].array]
        self._update_arrays(arrays, v_max, step, lr, beta1, beta2, eps, wd, *flags)
        p._bump_version()

    def _update_arrays(self, arrays, v_max, step, lr, beta1, beta2, eps, wd, decoupled, maximize=False):
        """The step on arrays [p, g, m, v] (and v_max), in place: a backend's where one takes them
        (not with maximize: the kernels take the gradient as it is), else numpy's."""
        if arrays[0].dtype.kind == "c":
            arrays, v_max = real_views(arrays), real_views([v_max])[0]
        step_scale, eps_scaled = _bias_corrected(step, lr, beta1, beta2, eps)
        args = (*arrays, v_max, lr, beta1, beta2, wd, decoupled, step_scale, eps_scaled)
        impl = None if maximize else self._find_kernel(args)
        if impl is not None:
            impl.forward(*args)
            return
        if v_max is not None:
            arrays.append(v_max)
        xp = array_module(arrays[0])
        l2 = wd != 0 and not decoupled

        def update(blk, tmp):  # one block of (p, g, m, v[, v_max])
            w, g, m, v = blk[:4]
            s = tmp[0]
            if wd != 0 and decoupled:
                w *= 1 - lr * wd
            if l2 or maximize:  # the gradient used below, in tmp[1] (g itself is left as it is)
                g = grad_for_update(xp, w, g, wd if l2 else 0.0, maximize, tmp[1])
            update_moments(xp, g, m, v, beta1, beta2, s)
            if v_max is not None:
                xp.maximum(blk[4], v, out=blk[4])
                v = blk[4]
            xp.sqrt(v, out=s)
            s += eps_scaled
            xp.divide(m, s, out=s)
            s *= step_scale
            w += s

        self._for_blocks(arrays, update, 2 if l2 or maximize else 1)

    def _replay_form(self):
        """The step of the parameters that have a gradient now, each group one call of its backend's
        `prepared_forward` on their arrays, as a function that steps them again (the group's hyperparameters
        read at each call, the step counts counted as eager's) or returns False, having written nothing,
        where anything it holds has changed: a parameter's or its state's array, a gradient come or gone,
        a flag with its own code (amsgrad, maximize, ...). None where there is no such form: a subclass, a
        backend without one (MINIGRAD_KERNELS=numpy), complex or mixed parameters, steps counted apart."""
        if type(self) not in (Adam, AdamW):
            return None
        state, groups, plans, held = self.state, self.param_groups, [], []
        for group in groups:
            if _own_code(group):
                return None
            stepped = [p for p in group["params"] if p._grad is not None]
            unstepped = [p for p in group["params"] if p._grad is None]
            if not stepped:
                plans.append((group, tuple(group["params"]), (), unstepped, None, None))
                continue
            try:
                arrays = [(p.array, state[p]["step"].array, state[p]["exp_avg"].array, state[p]["exp_avg_sq"].array)
                          for p in stepped]
            except (KeyError, AttributeError):
                return None
            if len({id(p) for p in stepped}) != len(stepped):
                return None
            # (forward's arguments, for find and supports, which read the arrays only)
            args = [(w, p._grad.array, m, v, None, 0.0, 0.0, 0.0, 0.0, True, 0.0, 0.0)
                    for p, (w, _, m, v) in zip(stepped, arrays)]
            impl = backends.find("adamw", *args[0])
            prepare = getattr(impl, "prepared_forward", None)
            if prepare is None or args[0][0].dtype.kind != "f" or not all(impl.supports(*a) for a in args) \
                    or any(type(p._grad) is not Tensor or a[0].dtype != args[0][0].dtype for p, a in zip(stepped, args)):
                return None
            plans.append((group, tuple(group["params"]), list(zip(stepped, [state[p] for p in stepped])), unstepped,
                          args[0][0].dtype, prepare(*zip(*[(w, m, v) for w, _, m, v in arrays]))))
            held += [a for four in arrays for a in four]
        if not held:
            return None
        keys, entries = list(state), list(state.values())  # (held by identity: no parameter hashed per replay)

        def replay():
            if self.param_groups is not groups or self.state is not state or len(groups) != len(plans) \
                    or len(state) != len(keys) or not all(map(is_, state, keys)) \
                    or not all(map(is_, state.values(), entries)):
                return False
            now, work = [], []
            try:
                for group, order, stepped, unstepped, dtype, run in plans:
                    params = group["params"]
                    if _own_code(group) or len(params) != len(order) or not all(map(is_, params, order)) \
                            or any(p._grad is not None for p in unstepped):
                        return False
                    counts, grads = [], []
                    for p, st in stepped:
                        g = p._grad
                        if type(g) is not Tensor or g.array.dtype != dtype:  # (None: frozen since; sparse)
                            return False
                        count = st["step"].array
                        now += (p.array, count, st["exp_avg"].array, st["exp_avg_sq"].array)
                        counts.append(count)
                        grads.append(g.array)
                    work.append((group, stepped, counts, grads, run))
            except (KeyError, TypeError):  # (a state entry gone)
                return False
            if len(now) != len(held) or not all(map(is_, now, held)):
                return False
            steps = [[float(a) for a in counts] for _, _, counts, _, _ in work]
            if any(s.count(s[0]) != len(s) for s in steps if s):  # (some stepped apart since: eager counts each)
                return False
            for (group, stepped, counts, grads, run), s in zip(work, steps):
                if not stepped:
                    continue
                for a in counts:  # (PyTorch's step += 1, each parameter's)
                    a[()] = s[0] + 1
                step = float(counts[0])  # (read back as eager reads it: in the count's own dtype)
                beta1, beta2 = group["betas"]
                lr, beta1, beta2, eps = float(group["lr"]), float(beta1), float(beta2), float(group["eps"])
                wd, decoupled = float(group["weight_decay"]), group.get("decoupled_weight_decay", self.decoupled_weight_decay)
                run(grads, lr, beta1, beta2, wd, decoupled, *_bias_corrected(step, lr, beta1, beta2, eps))
                for p, _ in stepped:
                    p._version_counter[0] += 1  # (p._bump_version())
            return True

        return replay

    def _find_kernel(self, args):
        """The backend's update for `args`: the one found for the group's previous parameter where it takes
        them too (a parameter of the group's dtype and layout), else backends.find's answer."""
        impl = getattr(self, "_kernel", None)
        if impl is None or not impl.supports(*args):
            impl = self._kernel = backends.find("adamw", *args)
        return impl


def _own_code(group):
    """Whether a group's flags take code of their own (not the backend's update alone)."""
    return group["amsgrad"] or group.get("maximize") or group.get("capturable") or group.get("differentiable")


def _bias_corrected(step, lr, beta1, beta2, eps):
    """The bias corrections folded into two scalars (step_scale, eps_scaled):
    p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) = p + (-lr sqrt(bc2)/bc1) * m / (sqrt(v) + eps sqrt(bc2))"""
    bc2_sqrt = (1 - beta2**step) ** 0.5
    return -lr / (1 - beta1**step) * bc2_sqrt, eps * bc2_sqrt


def _reference_update(p, state, step, lr, beta1, beta2, eps, wd, flags):
    decoupled, maximize = flags
    grad = -p.grad if maximize else p.grad  # (under the step's no_grad: no graph)
    tensors = [p, grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq")]
    if p.is_complex():  # stepped through its real views, as the array update
        arrays = real_views([None if t is None else t.array for t in tensors])
        tensors = [None if a is None else Tensor._wrap(a) for a in arrays]
    w, g, m, v, v_max = tensors
    reference.adam_update(w, g, m, v, lr, beta1, beta2, eps, wd, decoupled, step, v_max)
    if w is not p:
        p._bump_version()


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay before the
    Adam step, instead of adding weight_decay * p to the gradient. Default weight_decay 1e-2."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
