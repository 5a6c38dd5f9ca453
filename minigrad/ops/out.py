"""PyTorch's `out=` argument of the top-level functions (`minigrad.add(x, y, out=z)`, the 60-minute
blitz's way): the function's result written into `out`, which is returned.

As PyTorch: not under autograd (an argument that requires grad, with grad mode on, is an error); the
result cast to out's dtype where PyTorch casts in place (not float into an integer tensor); an `out` of
another shape resized (with PyTorch's warning unless it was empty), keeping its identity. A function
that returns a (values, indices) pair takes a pair of tensors.
"""
import functools
import warnings

from ..autograd import recording
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ..typeinfo import can_cast
from ._util import type_name

# the top-level functions that take out= (minigrad/__init__.py wraps them with `with_out`). Not the ones
# scripts call once a time step with keywords (cat(..., dim=1), stack, where, clamp, gather): forwarding
# keywords through a wrapper costs ~0.7 us a call, more than out= is worth there
OUT_FUNCTIONS = """add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow atan2 maximum
    minimum fmax fmin abs absolute neg negative exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan sinh cosh
    tanh asin acos atan sigmoid sign floor ceil round trunc frac reciprocal square erf erfc erfinv lgamma digamma eq
    ne lt le gt ge logical_and logical_or logical_xor logical_not sum mean prod amax amin max min argmax argmin
    cumsum cumprod matmul mm bmm mv dot addmm addmv addcmul addcdiv outer lerp logsumexp std var norm sort
    topk""".split()

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0).")


def with_out(fn):
    """`fn` taking PyTorch's keyword `out=` as well (None: fn itself)."""

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        name = fn.__name__
        if state.grad_enabled and any(_requires_grad(a) for a in args + tuple(kwargs.values())):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
            for r, o in zip(result, out):
                write(name, r, o)
            return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
        return write(name, result, out)

    return call


def _requires_grad(a):
    if isinstance(a, Tensor):
        return a.requires_grad
    return isinstance(a, (tuple, list)) and any(isinstance(t, Tensor) and t.requires_grad for t in a)


def write(name, result, out):
    """result's values into `out` (resized to result's shape where it differs); returns out. minigrad.compile
    replays the write as an in-place call on that call's `out` (a write to its array outside an op would
    happen at the capture only: a replay would read `out` as it was)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype._legacy[:-6]} can't be cast to the desired output type "
                           f"{out.dtype._legacy[:-6]}")
    if recording.hook.recorder is not None:
        if out.shape != result.shape:
            recording.escape(f"{name}(out=...) resizing its out tensor", "a replay would not resize it again")
        else:
            return recording.hook.recorder.on_inplace(_write_into, out, (result,), {})
    return _write_into(out, result, name)


def _write_into(out, result, name="out"):
    src, dst = result.array, out.array
    if dst.shape != src.shape:
        if dst.size:
            warnings.warn(_RESIZED.format(list(dst.shape), list(src.shape)), UserWarning, stacklevel=4)
        out.array = src.astype(dst.dtype, copy=True)  # (resized: a new array, the tensor the same)
    else:
        dst[...] = src
    out._bump_version()
    return out
