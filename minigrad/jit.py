"""`torch.jit`'s names, so that model code written for TorchScript runs: minigrad has no TorchScript.

A scripted or traced function or module is the Python one, run as written: it computes what TorchScript
computes, without its compiler. Two differences from PyTorch follow from that: `trace` does not run the
function on the example inputs (a traced function in PyTorch is frozen to the branches that input took;
here every call takes its own), and there is no TorchScript archive to `save` or `load` (the weights go
through `minigrad.save(model.state_dict(), path)`).

    @minigrad.jit.script
    def gelu(x):
        return 0.5 * x * (1.0 + minigrad.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
"""
import sys
import typing
import warnings

Final = typing.Final  # TorchScript's annotation of a constant attribute: Python's own


class ScriptModule:
    """TorchScript's module type. Nothing here is one: `isinstance(m, ScriptModule)` is False for every
    module, as in PyTorch for a module that was not scripted."""


class ScriptFunction:
    """TorchScript's function type; as ScriptModule, nothing here is one."""


RecursiveScriptModule = TopLevelTracedModule = ScriptModule


def _deprecated(name, instead="`minigrad.compile`"):
    """PyTorch's DeprecationWarning on its TorchScript entry points, in its words and from this file (hidden
    by Python's default filters, as PyTorch's), so that scripts run with warnings as errors stop as on PyTorch;
    what to switch to names minigrad's own (it has no `export`)."""
    if sys.version_info >= (3, 14):
        warnings.warn(f"`minigrad.jit.{name}` is not supported in Python 3.14+ and may break. "
                      f"Please switch to {instead}.", DeprecationWarning, stacklevel=2)
    else:
        warnings.warn(f"`minigrad.jit.{name}` is deprecated. Please switch to {instead}.", DeprecationWarning,
                      stacklevel=2)


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`obj` itself (a function, a module or a class), run as Python."""
    _deprecated("script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """`func` itself, run as Python at each call (it is not run on `example_inputs`)."""
    _deprecated("trace")
    return func


def trace_module(mod, inputs, *args, **kwargs):
    """`mod` itself, run as Python."""
    _deprecated("trace_method")
    return mod


def _decorator_or_identity(fn=None, **_options):
    """A decorator used with or without arguments (`@ignore`, `@ignore(drop=True)`) that returns the function."""
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


def ignore(drop=False, **kwargs):
    """TorchScript leaves the function to Python: so does minigrad, always."""
    return _decorator_or_identity(drop if callable(drop) else None)


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting():
    """False: no code runs under TorchScript's compiler (model code asks this to take a Python-only branch)."""
    return False


def is_tracing():
    """False: no code runs under TorchScript's tracer."""
    return False


def annotate(the_type, the_value):
    """TorchScript's type hint on a value: the value."""
    return the_value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def enable_onednn_fusion(enabled):
    """Accepted; there is no fuser to set."""


class Future:
    """What `fork` returns: its value computed already (`fork` runs the call at once)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Runs `func(*args, **kwargs)` now (TorchScript may run it on another thread) and returns a Future of it."""
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def save(m, f, _extra_files=None):
    _deprecated("save", "`minigrad.save(model.state_dict(), path)`")
    raise NotImplementedError("minigrad.jit.save: minigrad has no TorchScript archive; save the weights with "
                              "minigrad.save(model.state_dict(), path)")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _deprecated("load", "`minigrad.load` of a saved state_dict")
    raise NotImplementedError("minigrad.jit.load: minigrad cannot read a TorchScript archive; load a state_dict "
                              "saved with torch.save(model.state_dict(), path) through minigrad.load")


class Error(Exception):
    """TorchScript's runtime error: never raised by minigrad, which runs everything as Python; caught as PyTorch's."""


class ScriptWarning(Warning):
    pass


class TracerWarning(Warning):
    pass


class Attribute(typing.NamedTuple):
    """`Attribute(value, type)`: a ScriptModule attribute's declared type; in eager Python the value is all."""
    value: typing.Any
    type: typing.Any


def script_if_tracing(fn):
    """Scripted only when traced: minigrad never traces, so the function runs as Python."""
    return fn


def script_method(fn):
    _deprecated("script_method")
    return fn


class _NoOpContext:
    """A context manager that only runs its block: a TorchScript executor setting with no executor here."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class optimized_execution(_NoOpContext):
    pass


_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


class fuser(_NoOpContext):
    def __init__(self, name):
        if name not in _FUSERS:
            raise Exception(f"unrecognized fuser option (name: {name})")  # (PyTorch raises this plain Exception)
