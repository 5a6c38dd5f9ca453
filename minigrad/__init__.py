"""minigrad: a define-by-run autograd engine on numpy (and cupy), named and behaving like PyTorch's.

    >>> import minigrad
    >>> x = minigrad.tensor(3.0, requires_grad=True)
    >>> loss = (x * 2 + 1) ** 2
    >>> loss.backward()
    >>> x.grad
    tensor(28.)
"""
from . import autograd, dtypes, ops, random  # noqa: F401
from .backends import get_kernels, get_num_threads, kernels, set_kernels, set_num_threads  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .device import cuda_is_available, device  # noqa: F401
from .dtypes import (  # noqa: F401
    bool_ as bool, double, dtype, float, float16, float32, float64, half, int, int8, int16, int32, int64, long,
    uint8, uint16,
)
from .factory import (  # noqa: F401
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like, rand,
    rand_like, randint, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
from .ops import *  # noqa: F401,F403
from .ops import _bind_methods
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from .tensor import Size, Tensor  # noqa: F401
from .typeinfo import can_cast, finfo, get_default_dtype, iinfo, promote_types, result_type, set_default_dtype  # noqa: F401

_bind_methods(Tensor)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


def detach(t):
    return t.detach()


__version__ = "0.1.0"


def __getattr__(name):
    # minigrad.cuda, .memory, .viz and .utils load on first use: the engine itself needs none of them
    if name in ("cuda", "memory", "viz", "utils"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minigrad' has no attribute '{name}'")
