"""`Optimizer`: parameter groups, per-parameter state, state dicts; subclasses write the update.

Updates run on the raw arrays (`p.array`, `p.grad.array`), in place, with numpy's `out=` ufuncs.
Two mechanisms here keep them fast and allocation-free:

* `_for_blocks` walks a parameter and its state arrays in matching blocks of `BLOCK` elements, so
  the half-dozen passes an update makes over a block hit the CPU cache instead of memory, and
  keeps the per-block Python overhead small.
* Temporaries come from preallocated buffers (`_scratch`, and the thread's own in
  `minigrad.backends.arrays.scratch`), never part of the saved state.
"""
import warnings
from collections import OrderedDict, defaultdict
from functools import partial, wraps

import numpy as np

from minigrad import Tensor, enable_grad, no_grad
from minigrad._fp_errors import quiet as fp_quiet, restore as fp_restore
from minigrad.autograd import recording
from minigrad.autograd.function import RemovableHandle
from minigrad.device import array_module, to_device

from minigrad.backends.arrays import for_blocks, scratch
from ..utils import _CompiledZeroGrad, _zero_grad

# 128K elements: the 5 float32 arrays of one AdamW block (512 KiB each) stay in the L2/L3 cache across its
# 13 passes, and blocks are big enough that the per-block Python overhead is noise (docs/performance.md)
BLOCK = 1 << 17
# foreach: a parameter of this many elements or more is stepped on its own, in place: copying it into
# the concatenation and back costs more than one more kernel call
ALONE = 1 << 12


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()  # a default that a parameter group must provide (e.g. SGD's lr, in PyTorch)


_SET_ERROR = ("optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
              "sets will change between runs. Please use a list instead.")


def scalar_dtype():
    """The numpy type of per-parameter scalars in the state (`step`, NAdam's mu_product, ASGD's eta and mu).
    PyTorch holds them as 0-d tensors of its default scalar dtype, float32 unless the default dtype is
    float64, and their rounding shows in the trajectory; minigrad's default dtype stands in for PyTorch's."""
    import minigrad

    return np.float64 if minigrad.get_default_dtype() == minigrad.float64 else np.float32


def scalar_tensor(value, dtype=None):
    """A new per-parameter scalar of the state: a 0-d tensor, as PyTorch's."""
    return Tensor._wrap(np.array(value, dtype=dtype or scalar_dtype()))


def set_scalar(state, name, value):
    """Write `value` into the state's 0-d tensor `name` in place (rounded to its dtype); returns what it holds.
    Through the array, as a Python float: an update writes a step or two per parameter, and a numpy ufunc
    on a 0-d array costs many times this. A float32 sum or product of float32 values is exact in a Python
    float, so rounding it once on the write gives the bits of the tensor's own in-place op."""
    a = state[name].array
    a[()] = value
    return float(a)


def next_step(state):
    """state["step"] one more, in place (PyTorch's `step += 1`); returns the new count, for the caller to use
    rather than read the tensor again. Below 2^24 a count is exact in float32 (and wider), so the float
    written is what the tensor holds; past it the tensor's rounding is read back."""
    a = state["step"].array
    t = float(a) + 1
    a[()] = t
    return t if t < 16777216 else float(a)


def grad_for_update(xp, w, g, wd, maximize, out):
    """The gradient an update uses, PyTorch's order: -g (maximize), then + weight_decay * w (L2).
    Written into `out` where it differs from g (g itself is left as it is); returns the array to use."""
    if not maximize and wd == 0:
        return g
    if wd == 0:
        return xp.negative(g, out=out)
    xp.multiply(w, wd, out=out)
    if maximize:
        out -= g
    else:
        out += g
    return out


def real_views(arrays):
    """A complex parameter's arrays as real ones, (..., n) complex -> (..., 2n) real parts side by side, as
    PyTorch's optimizers step complex parameters through view_as_real: each part gets its own moments.
    The written arrays (parameter, state) are views; the gradient, only read, may be a copy."""
    return [a if a is None else array_module(a).ascontiguousarray(a).view(a.real.dtype) if i == 1 else a.view(a.real.dtype)
            for i, a in enumerate(arrays)]


def update_moments(xp, g, m, v, beta1, beta2, scratch):
    """Adam's two moments, in place and in PyTorch's order: m = m + (1 - beta1) (g - m) (its lerp),
    v = beta2 v + ((1 - beta2) g) g (its addcmul)."""
    xp.subtract(g, m, out=scratch)
    scratch *= 1 - beta1
    m += scratch
    xp.multiply(g, 1 - beta2, out=scratch)
    scratch *= g
    v *= beta2
    v += scratch


def check_betas(betas):
    """PyTorch's check of Adam-style (beta1, beta2): each in [0, 1)."""
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def sparse_grads(params):
    """The parameters whose gradient is sparse (Embedding(sparse=True)'s), read without the `.grad`
    property's checks: optimizers step those row by row, or refuse them."""
    return [p for p in params if p._grad is not None and p._grad.is_sparse]


def add_sparse_(p, grad, alpha):
    """p += alpha * grad for a sparse grad, each element added in its order (repeats add up), in place."""
    xp = array_module(p.array)
    idx = tuple(grad._indices().array)
    xp.add.at(p.array, idx, grad._values().array * alpha)
    p._bump_version()


def check_implementation(foreach, fused, differentiable=False):
    """PyTorch's `foreach=` / `fused=` pick among implementations of one update; minigrad has one
    (array code over each parameter, or a backend kernel), so both are accepted and give its result."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if foreach and fused:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


_global_optimizer_pre_hooks = OrderedDict()  # every optimizer's, run before its own (PyTorch's order)
_global_optimizer_post_hooks = OrderedDict()  # every optimizer's, run after its own


def register_optimizer_step_pre_hook(hook):
    """`hook(optimizer, args, kwargs)` before every optimizer's step; it may return (new_args, new_kwargs)."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """`hook(optimizer, args, kwargs)` after every optimizer's step."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _add_hook(table, hook, prepend=False):
    handle = RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def _with_step_hooks(step):
    """An optimizer class's `step` wrapped, as PyTorch wraps each: the global then the optimizer's pre-hooks
    (args include the optimizer), the step, the optimizer's then the global post-hooks; without hooks, the
    step alone. While minigrad.compile records, the whole step (hooks included) is one call, re-run at each
    replay: it reads the live lr, state and gradients, a user's optimizer class as the library's."""

    @wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        rec = recording.hook.recorder
        if rec is not None:  # (a closure given by keyword is passed on positionally, so that on_call refuses it)
            closure, call = kwargs.pop("closure", None), wrapper.__get__(self)
            call = partial(call, **kwargs) if kwargs else _CompiledStep(self, call) if not args[1:] else call
            return rec.on_call(call, *args[1:], *([closure] if closure else []))
        pre, post = self._optimizer_step_pre_hooks, self._optimizer_step_post_hooks
        if not (pre or post or _global_optimizer_pre_hooks or _global_optimizer_post_hooks):
            return step(*args, **kwargs)
        for hook in (*_global_optimizer_pre_hooks.values(), *pre.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"<function {type(self).__name__}.step at {hex(id(step))}> must return None or "
                                       f"a tuple of (new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in (*post.values(), *_global_optimizer_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._step_hooks_wrapped = True
    return wrapper


class _CompiledStep:
    """`optimizer.step()` as a minigrad.compile replay calls it: the optimizer's replay form where it has
    one (`_replay_form`, made after a full step, when the state exists) and nothing it reads has changed
    (it says so by returning False, before writing anything), else the whole step, hooks included."""

    def __init__(self, optimizer, step):
        self.optimizer, self.step, self.replay = optimizer, step, None
        self.__qualname__ = getattr(step, "__qualname__", "Optimizer.step")

    def __call__(self):
        opt = self.optimizer
        hooked = (opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks or _global_optimizer_pre_hooks
                  or _global_optimizer_post_hooks)
        if not hooked and self.replay is not None and self.replay():
            return None
        out = self.step()
        self.replay = None if hooked else opt._replay_form()
        return out


class Optimizer:
    """Base class: holds `param_groups` (dicts of params + hyperparameters) and `state` (per parameter).

    `params` is an iterable of Tensors, or of dicts {"params": [...], <hyperparameter overrides>}.
    Subclasses implement `_step_group(group)`; `scalar_state` names the per-parameter state entries
    that are 0-d tensors, as PyTorch's (a `step` not named there is a Python int: SparseAdam's).
    """

    scalar_state = ("step",)
    _state_as_saved = False
    sparse_refusal = None  # PyTorch's text for a step given a sparse gradient, where it refuses one

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_step_hooks_wrapped", False):
            cls.step = _with_step_hooks(step)
        if step is not None:  # its own step keeps state of its own shapes and types: restored as saved, as PyTorch's
            cls._state_as_saved = True

    def __init__(self, params, defaults):
        self._init_hooks()
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._scratch_buffers = {}
        self._flat_state = {}  # foreach: (parameter ids, state names) -> their state's flat buffers
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params.type()}")  # PyTorch names the tensor type
        groups = list(params)  # a set of tensors is taken as PyTorch takes it; only a group's set is refused
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def _init_hooks(self):
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __setstate__(self, state):  # (an optimizer pickled without the hook tables gets empty ones)
        self.__dict__.update(state)
        self._init_hooks()

    def register_step_pre_hook(self, hook):
        """`hook(optimizer, args, kwargs)` before each step; it may return (new_args, new_kwargs) for the step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """`hook(optimizer, args, kwargs)` after each step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """`hook(optimizer)` before `state_dict()` builds the dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """`hook(optimizer, state_dict)` after; a dict it returns is the result instead."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """`hook(optimizer, state_dict)` before loading (a shallow copy); a dict it returns is loaded instead."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """`hook(optimizer)` after loading."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def __repr__(self):  # PyTorch's: a blank line between groups
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
        return text + ")"

    def add_param_group(self, param_group):
        """Add a group {"params": [...], hyperparameter: value, ...}; missing hyperparameters take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(_SET_ERROR)
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]  # named_parameters()' (name, parameter) pairs
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            params = [p[1] for p in params]
        for p in params:
            if not isinstance(p, Tensor):
                kind = type(p).__name__ if type(p).__module__ == "builtins" else f"{type(p).__module__}.{type(p).__qualname__}"
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {kind}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                          "error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        named = bool(names) or "param_names" in param_group
        if any(("param_names" in g) != named for g in self.param_groups):
            raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                             f"{'with' if named else 'without'} names to the optimizer")
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        if taken.intersection(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        # the caller's dict becomes the group, as in PyTorch: its own keys first, then the defaults it lacks
        param_group["params"] = params
        if names:
            param_group["param_names"] = names
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (default, frees memory) or to zeros."""
        if recording.hook.recorder is not None:  # (a subclass's own zero_grad is re-run as it is)
            own = type(self).zero_grad is Optimizer.zero_grad
            call = _CompiledZeroGrad("Optimizer.zero_grad", self) if own else self.zero_grad
            return recording.hook.recorder.on_call(call, set_to_none)
        _zero_grad((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place. `closure()` (optional) recomputes
        and returns the loss, with grad enabled; its result is returned."""
        self._opt_called = True  # (a scheduler's step warns when it comes before any optimizer step)
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        fp = fp_quiet()  # (the steps' array arithmetic: an inf or nan gradient's, silent as in PyTorch)
        try:
            with no_grad():
                for group in self.param_groups:
                    if self.sparse_refusal is not None and sparse_grads(group["params"]):
                        raise RuntimeError(self.sparse_refusal)
                    self._step_group(group)
        finally:
            fp_restore(fp)
        return loss

    def _step_group(self, group):
        raise NotImplementedError

    def _replay_form(self):
        """A function that steps again what the last step stepped, with less Python, for a minigrad.compile
        replay (_CompiledStep), returning False where what it would read has changed; None: no such form."""
        return None

    def _foreach_params(self, group, keeps_state=True):
        """foreach: the group's parameters with gradients in lists of one device and dtype, or None
        where the per-parameter loop runs instead: foreach=False, MINIGRAD_KERNELS=reference, or
        more than BLOCK elements to concatenate (foreach=True or None), where the loop's per-parameter
        cost is noise beside the copies the concatenation makes and the two flat buffers it keeps. A
        parameter of ALONE elements or more, or the only one of its kind, is a list of its own, which
        the caller steps with its per-parameter code (no copies). Both give the same bits. `keeps_state`:
        the step makes state for each parameter (made here in the group's order, as state_dict lists it);
        False for one that makes none (SGD without momentum), as PyTorch's."""
        from minigrad import backends

        foreach = group.get("foreach")
        if foreach is False or backends.get_kernels() == "reference":
            return None
        lists, alone, total, n = {}, [], 0, 0
        for p in group["params"]:
            if p.grad is not None:
                a = p.array
                n += 1
                if keeps_state and p not in self.state:  # (in the group's order, whichever list steps first)
                    self.state[p] = {}
                if a.size >= ALONE:
                    alone.append([p])
                    continue
                lists.setdefault((type(a), a.dtype), []).append(p)  # (the array's type: its device)
                total += a.size
                if total > BLOCK:
                    return None
        if len({id(p) for ps in lists.values() for p in ps} | {id(ps[0]) for ps in alone}) != n:
            return None  # a parameter listed twice (warned of) is stepped twice, as the loop does
        return list(lists.values()) + alone

    def _flat(self, params, names):
        """foreach: one flat buffer per state name over `params` (one device and dtype), their state
        arrays views of it (made, from the state there is or zeros, on the first call and whenever the
        state was replaced, e.g. by load_state_dict) -> (buffers, whether the state was new).

        A "step" among `names` is one element per parameter (0-d views, in the scalar dtype, on the
        CPU as PyTorch's), so that the caller counts every parameter's step with one write; where the
        parameters' steps differ (some were stepped without the others) the buffers are None, and the
        caller steps them one at a time (also where one was stepped alone since, through its view)."""
        key = (tuple(id(p) for p in params), names)
        bufs = self._flat_state.get(key)
        if bufs is not None and self._state_in(bufs, params, names):
            if "step" in names and not (bufs["step"] == bufs["step"][0]).all():
                return None, False  # one of them was stepped alone since (its step view counted in place)
            return bufs, False
        if "step" in names and len({float(self.state[p]["step"].array) if "step" in self.state[p] else 0.0
                                    for p in params}) != 1:
            return None, False
        xp = array_module(params[0].array)
        total = sum(p.array.size for p in params)
        fresh = not any(n in self.state[p] for p in params for n in names)
        bufs = {n: np.zeros(len(params), scalar_dtype()) if n == "step" else xp.zeros(total, dtype=params[0].array.dtype)
                for n in names}
        offset = 0
        for i, p in enumerate(params):
            size = p.array.size
            for n in names:
                lo, hi, shape = (i, i + 1, ()) if n == "step" else (offset, offset + size, p.array.shape)
                view = bufs[n][lo:hi]
                t = self.state[p].get(n)
                if t is not None:
                    view[...] = t.array.reshape(-1)
                if t is not None and t.array.dtype == view.dtype:
                    t.array = view.reshape(shape)  # the same tensor: a state_dict() taken before still sees the steps
                else:
                    self.state[p][n] = Tensor._wrap(view.reshape(shape))
            offset += size
        self._flat_state[key] = bufs
        return bufs, fresh

    def _state_in(self, bufs, params, names):
        """Whether every state array `names` of `params` is still a view of its flat buffer."""
        for p in params:
            state = self.state[p]
            for n in names:
                t = state.get(n)
                if t is None or t.array.base is not bufs[n]:
                    return False
        return True

    def _concat(self, arrays, slot):
        """`arrays` one after another in a flat buffer kept from step to step (slot 0: the parameters,
        1: the gradients), which the caller may overwrite: a new one each step would be memory the
        system maps afresh (page faults) every time."""
        like, total = arrays[0], sum(a.size for a in arrays)
        xp = array_module(like)
        key = ("concat", slot, type(like), like.dtype)
        buf = self._scratch_buffers.get(key)
        if buf is None or buf.size < total:
            buf = self._scratch_buffers[key] = xp.empty(total, dtype=like.dtype)
        return xp.concatenate([a.reshape(-1) for a in arrays], out=buf[:total])

    @staticmethod
    def _scatter(params, flat):
        """Copy the updated flat parameter values back into each parameter, in place."""
        offset = 0
        for p in params:
            size = p.array.size
            p.array[...] = flat[offset:offset + size].reshape(p.array.shape)
            p._bump_version()
            offset += size

    def _for_blocks(self, arrays, update, n_scratch):
        """Call update(views, scratch) on matching views of the same-shape `arrays` (a parameter and its
        state), BLOCK elements at a time, one block after another; `scratch` is `n_scratch`
        temporaries shaped like the views. Whole arrays in one call when they are small, not
        contiguous (no flat view exists) or on a GPU (where one kernel per pass is what is fast).
        A complex parameter's arrays (the gradient second) are stepped as their real views, as PyTorch's
        optimizers step complex parameters."""
        first = arrays[0]
        if first.dtype.kind == "c":
            arrays = real_views(arrays)
            first = arrays[0]
        if first.size <= BLOCK or not isinstance(first, np.ndarray) or not all(a.flags.c_contiguous for a in arrays):
            update(arrays, self._scratch(first, n_scratch))
            return
        flats = [a.reshape(-1) for a in arrays]

        def run(lo, hi):  # the thread's own scratch buffers
            update([f[lo:hi] for f in flats], [scratch(i, hi - lo, first.dtype) for i in range(n_scratch)])

        for_blocks(first.size, run, BLOCK)

    def _scratch(self, like, count):
        """`count` temporaries shaped like array `like`: views of buffers kept across steps.

        One set of buffers per (device, dtype), grown to the largest block seen; a parameter's
        update may overwrite them freely, since parameters are updated one after another."""
        if count == 0:
            return []
        xp = array_module(like)
        key = (xp.__name__, like.dtype.str)
        bufs = self._scratch_buffers.get(key)
        if bufs is None or len(bufs) < count or bufs[0].size < like.size:
            n = max(like.size, bufs[0].size if bufs else 0)
            bufs = [xp.empty(n, dtype=like.dtype) for _ in range(max(count, len(bufs) if bufs else 0))]
            self._scratch_buffers[key] = bufs
        return [b[:like.size].reshape(like.shape) for b in bufs[:count]]

    # ---- state dicts --------------------------------------------------------------------
    def state_dict(self):
        """PyTorch's layout: {"state": {index: {name: value}}, "param_groups": [{..., "params": [index]}]}.

        Parameters are numbered in group order; state tensors are shared with the optimizer (not
        copied), as PyTorch's."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [index[id(p)] for p in group["params"]]})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore `state_dict()`'s output (also one saved by PyTorch). Everything is checked first:
        on any error the optimizer is unchanged. State arrays are copied, cast to each parameter's
        floating dtype and moved to its device."""
        if isinstance(state_dict, dict):
            state_dict = state_dict.copy()  # (PyTorch's: a hook may change its keys without changing the caller's)
            for hook in self._optimizer_load_state_dict_pre_hooks.values():
                result = hook(self, state_dict)
                if result is not None:
                    state_dict = result
        if not isinstance(state_dict, dict):
            raise ValueError("optimizer state_dict must be a dict with 'state' and 'param_groups' entries")
        for key in ("param_groups", "state"):  # (a model's state_dict given by mistake: PyTorch's KeyError)
            if key not in state_dict:
                raise KeyError(key)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        by_index = {}
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            by_index.update(zip(saved["params"], group["params"]))
        new_state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            p = by_index.get(int(key))
            if p is not None:
                new_state[p] = {name: _restore_as_saved(v, p, name) if self._state_as_saved else
                                _restore(v, p, name, key, self.scalar_state, self._state_shape(p, name))
                                for name, v in values.items()}
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new = {**saved, "params": group["params"]}  # the saved group's keys and order, as PyTorch's
            for k, v in group.items():  # (and a key it lacks, kept from this optimizer's group)
                new.setdefault(k, v)
            new_groups.append(new)
        self.state, self.param_groups = new_state, new_groups
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def _state_shape(self, p, name):
        """The shape of parameter `p`'s state tensor `name` (p's own, unless a subclass's state is shaped otherwise)."""
        return p.shape


def _restore_as_saved(value, p, name):
    """A saved state value of an optimizer that writes its own step (a user's, LBFGS): a tensor copied to p's
    device, and to p's dtype where p is floating (integer state too, as PyTorch's), whatever its shape; a `step`
    or any other value kept as it is."""
    if not isinstance(value, Tensor) or name == "step":
        return value.clone() if isinstance(value, Tensor) else value
    arr = to_device(value.array, p.device)
    dtype = p.array.dtype if p.array.dtype.kind == "f" else arr.dtype
    return Tensor._wrap(array_module(arr).array(arr, dtype=dtype, copy=True, order="C"))


def _restore(value, p, name, key, scalars=(), shape=None):
    """A saved state value made ready for parameter `p`: an owned copy, on p's device and cast to its
    floating dtype (a 0-d scalar of `scalars` keeps its own). A Python number of `scalars` (a
    state dict saved when minigrad kept them as numbers, or by hand) becomes a 0-d tensor of the scalar dtype.
    `shape`: the state's shape where it is not p's (Adafactor's row and column variances)."""
    if name in scalars and not isinstance(value, Tensor):
        return scalar_tensor(float(value))
    if name == "step" and name not in scalars:
        return int(value.item() if isinstance(value, Tensor) else value)
    if not isinstance(value, Tensor):
        return value
    if name in scalars:  # (their dtype kept, as PyTorch keeps a step's: a resumed run goes on as it would have)
        return scalar_tensor(value.array.reshape(()), value.array.dtype)
    if tuple(value.shape) != tuple(p.shape if shape is None else shape):
        raise ValueError(f"loaded optimizer state for parameter {key} has '{name}' of shape {list(value.shape)}, "
                         f"but the parameter has shape {list(p.shape)}")
    arr = to_device(value.array, p.device)
    xp = array_module(arr)
    dtype = p.array.dtype if value.array.dtype.kind == "f" else arr.dtype
    return Tensor._wrap(xp.array(arr, dtype=dtype, copy=True, order="C"))


Optimizer.step = _with_step_hooks(Optimizer.step)
