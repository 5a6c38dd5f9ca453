"""The older, hook-based spectral normalization, as `torch.nn.utils.spectral_norm`.

`spectral_norm(module)` renames the parameter `weight` to `weight_orig`, adds the power iteration's
vectors as buffers `weight_u` and `weight_v`, and a forward pre-hook sets `module.weight = weight_orig /
sigma` (a plain tensor attribute), sigma = u . (W v) estimated by `n_power_iterations` steps of power
iteration at each call in training mode (none in eval mode). Not there: loading the state dicts of
PyTorch before 1.1 (format version 0, which stored `weight` and no `weight_v`).
"""
import minigrad

from .. import functional as F
from ..parameter import Parameter
from .parametrizations import _default_dim
from ._weight_norm import _find

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook: recomputes `module.<name>` from `<name>_orig` and the `<name>_u` / `_v` buffers."""

    _version = 1  # (recorded in the state dict's metadata, as PyTorch's)

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name, self.dim, self.eps = name, dim, eps
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations

    def reshape_weight_to_matrix(self, weight):
        """(d_dim, product of the other dims), `dim` moved to the front."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        """weight_orig / sigma; the power iteration (v <- normalize(W^T u), u <- normalize(W v)) updates the
        buffers in place first when asked."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with minigrad.no_grad():
                w = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(minigrad.mv(w.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(minigrad.mv(w, v), dim=0, eps=self.eps))
        u, v = u.clone(), v.clone()  # (copies: the next call updates the buffers in place)
        sigma = minigrad.dot(u, minigrad.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with minigrad.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        if _find(module, name, SpectralNorm) is not None:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with minigrad.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        return fn


class SpectralNormStateDictHook:
    """Records the format version in the state dict's metadata (`spectral_norm` -> '<name>.version')."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide `module.<name>` by its largest singular value (as a (shape[dim], -1) matrix) before each forward;
    dim None: 0, or 1 for ConvTranspose. Returns the module."""
    SpectralNorm.apply(module, name, n_power_iterations, _default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Make `module.<name>` a plain parameter again, holding the current weight / sigma. Returns the module."""
    key = _find(module, name, SpectralNorm)
    if key is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    hooks = module.__dict__["_forward_pre_hooks"]
    hooks[key].remove(module)
    del hooks[key]
    state_hooks = module.__dict__.get("_state_dict_hooks", {})
    for k, hook in list(state_hooks.items()):
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del state_hooks[k]
            break
    return module
