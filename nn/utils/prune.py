"""Pruning, as `torch.nn.utils.prune`: zero some entries of a module's parameter, and keep them zero while training.

Pruning `module.weight` splits it in two: the parameter that keeps learning, `weight_orig`, and a buffer of
0s and 1s, `weight_mask`. A forward pre-hook (the pruning method itself) sets `module.weight = weight_orig *
weight_mask` before each forward, so the pruned entries are zero in every forward and get no gradient.
Pruning the same parameter again combines the masks (a `PruningContainer`): each new method prunes among the
entries (or, for a structured method, the channels) still there. `remove(module, name)` makes it permanent:
`weight` a Parameter again holding the pruned values, and the mask and hook gone.

    prune.l1_unstructured(conv, name="weight", amount=0.3)   # the 30% of smallest |w|
    prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)   # then half the filters, by L2 norm
    prune.remove(conv, "weight")
"""
import numbers
from abc import ABC, abstractmethod

import minigrad


def _entries_to_prune(amount, total):
    """How many of `total` entries (or channels) `amount` names: a count, or a fraction rounded to one."""
    if isinstance(amount, numbers.Integral) and not isinstance(amount, bool):
        count = int(amount)
    else:
        count = round(amount * total)
    if count > total:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={total}")
    return count


def _check_amount(amount):
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _check_structured(t, dim):
    """The channel dim, checked: PyTorch's texts (a dim below -ndim fails as its tuple indexing does)."""
    if t.ndim <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    if dim < -t.ndim:
        raise IndexError("tuple index out of range")
    return dim % t.ndim


def _clear_lowest(default_mask, scores, count):
    """`default_mask` with its `count` entries of lowest score (scores: one an entry) cleared."""
    mask = default_mask.clone()
    if count:
        mask.view(-1)[minigrad.topk(scores.reshape(-1), k=count, largest=False).indices] = 0
    return mask


def _keep_channels(default_mask, scores, dim, keep):
    """`default_mask` with the channels along `dim` cleared but the `keep` ones whose scores (one a channel) are
    largest."""
    kept = minigrad.zeros_like(scores)
    if keep:
        kept[minigrad.topk(scores, k=keep).indices] = 1
    shape = [1] * default_mask.ndim
    shape[dim] = scores.numel()
    return default_mask * kept.view(shape).to(dtype=default_mask.dtype)


def _take_out(module, key):
    """A pruning hook out of the module's pre-hook table (a change the module's compiled calls see)."""
    del module._forward_pre_hooks[key]
    module._changes[0] += 1


class BasePruningMethod(ABC):
    """A way of choosing what to prune: subclasses set PRUNING_TYPE ('unstructured', 'structured' or 'global')
    and write `compute_mask(t, default_mask)`, the new mask given the mask so far. As the module's forward
    pre-hook, it recomputes `module.<name>` from `<name>_orig` and `<name>_mask` before each forward."""

    _tensor_name: str

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        ...

    def apply_mask(self, module):
        """The pruned tensor: `<name>_orig * <name>_mask` of `module`."""
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * getattr(module, self._tensor_name + "_mask").to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with a new `cls(*args, **kwargs)` (combined with a pruning already there);
        the entries are ranked by `importance_scores` (the parameter itself by default). Returns the method
        now in charge of that parameter (a PruningContainer where there were several)."""
        method = cls(*args, **kwargs)
        method._tensor_name = name
        earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
                   if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        if len(earlier) > 1:
            raise ValueError(f"More than one pruning hook found for parameter {name} of module {module}")
        if earlier:
            key, old = earlier[0]
            _take_out(module, key)
            if isinstance(old, PruningContainer):
                old.add_pruning_method(method)
                method = old
            else:
                container = PruningContainer(old)
                container.add_pruning_method(method)
                method = container

        first_time = not earlier
        param = getattr(module, name)
        scores = param if importance_scores is None else importance_scores
        if scores.shape != param.shape:  # (PyTorch's assertion)
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {scores.shape} vs {param.shape}")
        if first_time:  # the parameter becomes <name>_orig; the mask so far, all ones
            module.register_parameter(name + "_orig", param)
            del module._parameters[name]
            so_far = minigrad.ones_like(param)
        else:
            so_far = getattr(module, name + "_mask").detach().clone()
        try:
            with minigrad.no_grad():
                mask = method.compute_mask(scores.detach(), default_mask=so_far)
        except Exception:
            if first_time:  # the module as it was
                orig = module._parameters.pop(name + "_orig")
                module.register_parameter(name, orig)
            raise
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask this method computes for it (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, default_mask=minigrad.ones_like(t) if default_mask is None else default_mask)
        return t * mask

    def remove(self, module):
        """Make the pruning permanent: `<name>` a Parameter holding the pruned values; `_orig`, `_mask` and the
        hook's use of them gone (the caller takes the hook out of the module's table)."""
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """Several pruning methods on one parameter, applied in turn: each computes its mask among what the
    ones before it left (the entries still there; for a structured method, the channels not pruned whole)."""

    def __init__(self, *methods):
        self._pruning_methods = ()
        if len(methods) == 1 and not isinstance(methods[0], BasePruningMethod):  # an iterable of methods
            methods = tuple(methods[0])
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._pruning_methods and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer. Found '{method._tensor_name}'")
        if method is not None:
            self._tensor_name = method._tensor_name
            self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, i):
        return self._pruning_methods[i]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed on what the earlier masks (`default_mask`) left."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        mask = default_mask.clone()
        if kind == "unstructured":  # among the entries still there
            alive = default_mask == 1
            mask[alive] = method.compute_mask(t[alive], default_mask=default_mask[alive]).to(dtype=mask.dtype)
        elif kind == "structured":  # among the channels along method.dim not pruned whole
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim if method.dim >= 0 else method.dim + t.ndim
            others = tuple(d for d in range(t.ndim) if d != dim)
            kept = (default_mask.sum(dim=others) != 0).nonzero().view(-1)
            index = [slice(None)] * t.ndim
            index[dim] = kept
            index = tuple(index)
            mask[index] = method.compute_mask(t[index], default_mask=default_mask[index]).to(dtype=mask.dtype)
        elif kind == "global":  # over everything
            mask = method.compute_mask(t, default_mask=default_mask)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones (the parameter reparametrized, ready for later methods)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the entries, drawn at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _clear_lowest(default_mask, minigrad.rand_like(t), _entries_to_prune(self.amount, t.numel()))

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the entries: those smallest in absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _clear_lowest(default_mask, t.abs(), _entries_to_prune(self.amount, t.numel()))

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the channels along `dim`, drawn at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        dim = _check_structured(t, self.dim)
        channels = t.shape[dim]
        count = _entries_to_prune(self.amount, channels)
        if not count:
            return default_mask
        return _keep_channels(default_mask, minigrad.rand(channels), dim, channels - count)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the channels along `dim`: those of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        dim = _check_structured(t, self.dim)
        channels = t.shape[dim]
        count = _entries_to_prune(self.amount, channels)
        norms = minigrad.norm(t, p=self.n, dim=tuple(d for d in range(t.ndim) if d != dim))
        return _keep_channels(default_mask, norms, dim, channels - count)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:  # (PyTorch's assertion)
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ---- the functions the tutorials call ------------------------------------------------------------------------

def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune (module, name) pairs together: the method ranks all their entries as one vector (the 20%
    smallest weights of the whole network, not of each layer)."""
    parameters = list(parameters)
    if not parameters:
        raise TypeError("global_unstructured(): parameters should be a non-empty iterable of (module, name) pairs")
    importance_scores = importance_scores or {}
    scores, masks = [], []
    for module, name in parameters:
        scores.append(importance_scores.get((module, name), getattr(module, name)).detach().reshape(-1))
        so_far = getattr(module, name + "_mask", None)
        masks.append(minigrad.ones_like(scores[-1]) if so_far is None else so_far.detach().reshape(-1))
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    method._tensor_name = "temp"
    combined = PruningContainer(method)
    with minigrad.no_grad():
        mask = combined.compute_mask(minigrad.cat(scores), default_mask=minigrad.cat(masks))
    start = 0
    for (module, name), flat in zip(parameters, scores):
        piece = mask[start:start + flat.numel()].view(getattr(module, name).shape)
        custom_from_mask(module, name, mask=piece)
        start += flat.numel()


def remove(module, name):
    """Make `module.<name>`'s pruning permanent (see the module docstring)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            _take_out(module, key)
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any of the module's (or its submodules') parameters is pruned."""
    return any(isinstance(hook, BasePruningMethod) for m in module.modules() for hook in m._forward_pre_hooks.values())


__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "custom_from_mask", "global_unstructured",
           "remove", "is_pruned"]
