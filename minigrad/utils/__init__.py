"""Utilities built on the engine, named as in `torch.utils`: `minigrad.utils.checkpoint`,
`minigrad.utils.data` (datasets and the DataLoader), `minigrad.utils.tensorboard`, `minigrad.utils.benchmark`, `minigrad.utils.dlpack`."""
from . import checkpoint  # noqa: F401


def __getattr__(name):
    # data, tensorboard and benchmark load on first use (tensorboard needs the optional package of that name)
    if name in ("data", "tensorboard", "benchmark", "dlpack"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minigrad.utils' has no attribute '{name}'")
