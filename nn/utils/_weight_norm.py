"""The older, hook-based weight normalization, as `torch.nn.utils.weight_norm` (deprecated there in favour
of nn.utils.parametrizations.weight_norm, and warned of as there).

`weight_norm(module)` replaces the parameter `weight` by `weight_g` (the magnitude) and `weight_v` (the
direction), and a forward pre-hook sets `module.weight = weight_g * weight_v / ||weight_v||` (a plain
tensor attribute, recomputed with recorded ops before each call).
"""
import warnings

from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook: recomputes `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        if _find(module, name) is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def _find(module, name, kind=WeightNorm):
    """The id of the `kind` hook on `name` among the module's forward pre-hooks, or None."""
    for key, hook in module.__dict__.get("_forward_pre_hooks", {}).items():
        if isinstance(hook, kind) and hook.name == name:
            return key
    return None


def weight_norm(module, name="weight", dim=0):
    """Split `module.<name>` into `<name>_g` (its norm over every dim but `dim`; dim None: the whole
    tensor's) and `<name>_v` (the tensor), recombined before each forward. Returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Make `module.<name>` a plain parameter again, holding the current g v / ||v||. Returns the module."""
    key = _find(module, name)
    if key is None:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    hooks = module.__dict__["_forward_pre_hooks"]
    hooks[key].remove(module)
    del hooks[key]
    return module
