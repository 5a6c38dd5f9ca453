"""`torch.overrides`' checks for a script's own ops. minigrad's functions have no `__torch_function__` protocol: no
argument overrides them, so the `has_torch_function*` checks are False, and a script's `handle_torch_function` branch
(taken only when they are True) is never reached."""
from .tensor import Tensor

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like"]


def has_torch_function(relevant_args):
    return False


def has_torch_function_unary(arg):
    return False


def has_torch_function_variadic(*args):
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    raise TypeError(f"handle_torch_function: minigrad has no __torch_function__ protocol, so nothing can handle "
                    f"'{getattr(public_api, '__name__', public_api)}' (has_torch_function is always False here)")


def is_tensor_like(inp):
    return isinstance(inp, Tensor)
