"""Utilities built on the engine, named as in `torch.utils`: `minigrad.utils.checkpoint`,
`minigrad.utils.data` (datasets and the DataLoader), `minigrad.utils.tensorboard`, `minigrad.utils.benchmark`, `minigrad.utils.dlpack`."""
from . import checkpoint  # noqa: F401


def swap_tensors(t1, t2):
    """Swap everything two tensor objects hold (data, dtype, grad, grad_fn, version, their classes and __dict__s),
    in place: every reference to t1 then sees what t2 was. PyTorch's refusals: a weak reference to either (which
    would then name the other), or classes with different slots."""
    import copyreg
    import weakref

    from ..tensor import Tensor

    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors(): expected {name} to be a Tensor, got {type(t).__name__}")
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))
    if slots != set(copyreg._slotnames(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    if hasattr(t1, "__dict__") and hasattr(t2, "__dict__"):
        t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    missing = object()
    for name in slots | set(Tensor.__slots__) - {"__weakref__"}:
        a, b = getattr(t1, name, missing), getattr(t2, name, missing)
        for t, v in ((t1, b), (t2, a)):
            if v is missing:
                if hasattr(t, name):
                    delattr(t, name)
            else:
                setattr(t, name, v)


def __getattr__(name):
    # data, tensorboard and benchmark load on first use (tensorboard needs the optional package of that name)
    if name in ("data", "tensorboard", "benchmark", "dlpack", "hooks", "deterministic"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minigrad.utils' has no attribute '{name}'")
