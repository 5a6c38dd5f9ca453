"""`torch._dynamo`'s names that PyTorch scripts use around torch.compile, for minigrad.compile.

    minigrad._dynamo.config.cache_size_limit = 16   # programs kept per compiled function
    minigrad._dynamo.reset()                        # forget every captured program
"""
import importlib
import types

from . import compiler
from .compiler import (allow_in_graph, assume_constant_result, disable, graph_break, is_compiling,  # noqa: F401
                       list_backends, reset, set_stance)

# `torch._dynamo.eval_frame.OptimizedModule`, which scripts test for to reach a compiled model's `_orig_mod`: the
# submodule `eval_frame` is nn's optimized_module under PyTorch's path (_aliases.RENAMES), so this module has a
# package's (empty) path, and the attribute imports it on first use (the engine imports no nn)
__path__ = []


def __getattr__(name):
    if name == "eval_frame":
        return importlib.import_module(__name__ + ".eval_frame")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Settings:
    """A config namespace of PyTorch's (`torch._dynamo.config`, `torch._inductor.config`) for the settings
    scripts set that change nothing here: each is accepted, read back as set (else its PyTorch default);
    a name PyTorch has not is its AttributeError."""

    def __init__(self, name, defaults, **namespaces):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", dict(defaults))
        for key, value in namespaces.items():  # (`torch._inductor.config.triton.cudagraphs`)
            object.__setattr__(self, key, value)

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        if name in values:
            return values[name]
        raise AttributeError(f"{self._name}.{name} does not exist")

    def __setattr__(self, name, value):
        if name in self.__dict__ or name in type(self).__dict__:
            object.__setattr__(self, name, value)
        elif name in self._values:
            self._values[name] = value
        else:
            raise AttributeError(f"{self._name}.{name} does not exist")


class _Config(Settings):
    """`torch._dynamo.config`: `cache_size_limit` (alias `recompile_limit`) is minigrad.compile's cache of
    programs per function; the others are accepted and change nothing (shapes are always static here)."""

    def __init__(self):
        super().__init__("torch._dynamo.config", {
            "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256, "suppress_errors": False,
            "verbose": False, "optimize_ddp": True, "automatic_dynamic_shapes": True,
            "assume_static_by_default": True, "capture_scalar_outputs": False,
            "capture_dynamic_output_shape_ops": False, "inline_inbuilt_nn_modules": True,
            "compiled_autograd": False})

    @property
    def cache_size_limit(self):
        return compiler.CACHE_SIZE_LIMIT

    @cache_size_limit.setter
    def cache_size_limit(self, n):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"cache_size_limit must be a positive int, got {n!r}")
        compiler.CACHE_SIZE_LIMIT = n

    recompile_limit = cache_size_limit


config = _Config()


def mark_dynamic(t, index, min=None, max=None):
    """PyTorch's hint that a dim changes between calls: accepted; minigrad.compile captures one program per
    shape (a new shape is a new capture, at most config.cache_size_limit of them)."""


def maybe_mark_dynamic(t, index):
    """PyTorch's softer mark_dynamic (a dim that may yet be specialised): accepted, as mark_dynamic."""


def mark_static(t, index=None):
    """PyTorch's hint that a dim never changes: every dim is static here."""


exc = types.SimpleNamespace(InvalidBackend=compiler.InvalidBackend)  # (torch._dynamo.exc's, for an `except`)
