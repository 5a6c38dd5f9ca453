"""`torch.overrides`' checks for a script's own ops. minigrad's functions have no `__torch_function__` protocol: no
argument overrides them, so the `has_torch_function*` checks are False; a script's `handle_torch_function` branch,
when taken anyway, runs the function itself on plain tensors, as PyTorch's Tensor.__torch_function__ does."""
from .tensor import Tensor

__all__ = ["get_ignored_functions", "get_overridable_functions", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "resolve_name", "wrap_torch_function"]


def has_torch_function(relevant_args):
    return False


def has_torch_function_unary(arg):
    return False


def has_torch_function_variadic(*args):
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    if any(is_tensor_like(a) for a in relevant_args):
        return public_api(*args, **kwargs)
    raise TypeError(f"no implementation found for '{resolve_name(public_api)}' on types that implement "
                    "__torch_function__: []")


def is_tensor_like(inp):
    """A tensor, or the Tensor class (or a subclass): what PyTorch counts as taking part in __torch_function__."""
    return isinstance(inp, Tensor) or (isinstance(inp, type) and issubclass(inp, Tensor))


def is_tensor_method_or_property(func):
    return any(getattr(Tensor, name, None) is func for name in dir(Tensor))


def resolve_name(f):
    """`f`'s public name (minigrad.add, minigrad.Tensor.add), or None for a function minigrad has not."""
    import minigrad

    name = getattr(f, "__name__", None)
    if name is None:
        return None
    if getattr(minigrad, name, None) is f:
        return f"minigrad.{name}"
    if getattr(Tensor, name, None) is f:
        return f"minigrad.Tensor.{name}"
    return None


def get_ignored_functions():
    """The functions __torch_function__ cannot override: every one here, as minigrad has no such protocol."""
    import minigrad

    names = [getattr(minigrad, n) for n in dir(minigrad) if not n.startswith("_")]
    methods = [getattr(Tensor, n) for n in dir(Tensor) if not n.startswith("_")]
    return {f for f in names + methods if callable(f) and not isinstance(f, type)}


def get_overridable_functions():
    """Namespace -> the functions in it that __torch_function__ can override: none here."""
    return {}


def wrap_torch_function(dispatcher):
    """A decorator that would route a function through __torch_function__: with no such protocol, the function
    itself."""
    def wrapper(func):
        return func

    return wrapper
