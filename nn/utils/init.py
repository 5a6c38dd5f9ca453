"""skip_init, as torch.nn.utils.skip_init."""
import inspect

from ..module import Module


def skip_init(module_cls, *args, **kwargs):
    """`module_cls(*args, **kwargs)` with its parameters and buffers left uninitialized (whatever memory held: load
    or initialize them next). The class must take a `device` argument, as PyTorch asks. (minigrad has no meta
    device to build on: the initializers run, and their values are then dropped.)"""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.get("device")
    return module_cls(*args, **kwargs).to_empty(device=device)
