"""`torch._dynamo`'s names that PyTorch scripts use around torch.compile, for minigrad.compile.

    minigrad._dynamo.config.cache_size_limit = 16   # programs kept per compiled function
    minigrad._dynamo.reset()                        # forget every captured program
"""
import types

from . import compiler
from .compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset  # noqa: F401


class _Config:
    """The settings scripts set: `cache_size_limit` (alias `recompile_limit`) is minigrad.compile's cache of
    programs per function; the others are accepted and change nothing (shapes are always static here)."""

    _others = {"accumulated_cache_size_limit": 256, "suppress_errors": False, "verbose": False,
               "optimize_ddp": True, "automatic_dynamic_shapes": True, "assume_static_by_default": True,
               "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False}

    @property
    def cache_size_limit(self):
        return compiler.CACHE_SIZE_LIMIT

    @cache_size_limit.setter
    def cache_size_limit(self, n):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"cache_size_limit must be a positive int, got {n!r}")
        compiler.CACHE_SIZE_LIMIT = n

    recompile_limit = cache_size_limit

    def __getattr__(self, name):
        if name in _Config._others:
            return self.__dict__.get(name, _Config._others[name])
        raise AttributeError(f"minigrad._dynamo.config has no setting {name!r}")

    def __setattr__(self, name, value):
        if name in ("cache_size_limit", "recompile_limit"):
            object.__setattr__(self, name, value)
        elif name in _Config._others:
            self.__dict__[name] = value
        else:
            raise AttributeError(f"minigrad._dynamo.config has no setting {name!r}")


config = _Config()


def mark_dynamic(t, index, min=None, max=None):
    """PyTorch's hint that a dim changes between calls: accepted; minigrad.compile captures one program per
    shape (a new shape is a new capture, at most config.cache_size_limit of them)."""


def mark_static(t, index=None):
    """PyTorch's hint that a dim never changes: every dim is static here."""


exc = types.SimpleNamespace(InvalidBackend=compiler.InvalidBackend)  # (torch._dynamo.exc's, for an `except`)
