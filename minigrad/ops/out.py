"""PyTorch's `out=` argument of the top-level functions (`minigrad.add(x, y, out=z)`, the 60-minute
blitz's way): the function's result written into `out`, which is returned.

As PyTorch: not under autograd (an argument that requires grad, with grad mode on, is an error); the
result cast to out's dtype where PyTorch casts in place (not float into an integer tensor); an `out` of
another shape resized (with PyTorch's warning unless it was empty), keeping its identity. A function
that returns a (values, indices) pair takes a pair of tensors.
"""
import functools
import warnings

import numpy as np

from ..autograd import recording
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ..typeinfo import can_cast
from ._util import return_type, type_name

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


# PyTorch's rule for out's dtype, by function: "cast" (the default) casts the result into out where can_cast
# allows; the others want one dtype exactly, each with its own text
_DTYPE_RULES = {
    "cast": (lambda r, o, i: can_cast(r, o), "result type {r} can't be cast to the desired output type {o}"),
    "opmath": (lambda r, o, i: can_cast(r, o), "result type {r_opmath} can't be cast to the desired output type {o}"),
    "same": (lambda r, o, i: o == r, "Found dtype {o} but expected {r}"),
    "exact": (lambda r, o, i: o == r, "Expected out tensor to have dtype {r_cpp}, but got {o_cpp} instead"),
    "input": (lambda r, o, i: o == i, "Expected the dtype for input and out to match, but got {i} for input's dtype "
                                      "and {o} for out's dtype."),
    "dot": (lambda r, o, i: o == i, "result dtype {o} does not match input dtype {i}"),
    "floating": (lambda r, o, i: o.is_floating_point or o.is_complex,
                 "{name}(): Expected floating point type for result tensor, but got: {o}"),
}
_DTYPE_RULE = {**dict.fromkeys("abs absolute ceil floor frac neg negative round sign trunc".split(), "same"),
               **dict.fromkeys("matmul mm bmm mv addmm addmv norm max min sort topk argmax argmin".split(), "exact"),
               "amax": "input", "amin": "input", "mean": "opmath", "dot": "dot", "logsumexp": "floating"}
_IN_OUT_DTYPE = {"sum", "prod", "cumsum", "cumprod"}  # computed in out's dtype (as their dtype= argument)
_NOT_DIFFERENTIABLE = set("eq ne lt le gt ge logical_and logical_or logical_xor logical_not floor_divide argmax "
                          "argmin".split())  # (an input that requires grad is no error)
# the reductions and products that write out without PyTorch's overlap checks (the pointwise functions check)
_NO_OVERLAP_CHECK = set("sum mean prod amax amin logsumexp std var argmax argmin norm max min sort topk mv dot matmul "
                        "mm bmm".split())
# the name PyTorch's autograd refusal gives, where it is another function's
_ATEN_NAME = {"absolute": "abs", "negative": "neg", "square": "pow", "outer": "mul", "norm": "linalg_vector_norm",
              "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div"}
_CPP_NAME = {"Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
             "Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
             "Bool": "bool", "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>"}


def with_out(fn, name=None):
    """`fn` taking PyTorch's keyword `out=` as well (None: fn itself); `name`: the public name it has."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        inputs = args + tuple(kwargs.values())
        if (state.grad_enabled and name not in _NOT_DIFFERENTIABLE
                and any(_requires_grad(a) for a in inputs + (out,))):
            raise RuntimeError(f"{_ATEN_NAME.get(name, name)}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        if name in _IN_OUT_DTYPE and isinstance(out, Tensor):
            kwargs = {**kwargs, "dtype": out.dtype}
        result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)):
                raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type_name(out)}")
            if len(out) != len(result):
                raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
            for r, o in zip(result, out):
                write(name, r, o, inputs)
            return _return_type(result, name)(*out) if hasattr(result, "_fields") else tuple(out)
        return write(name, result, out, inputs)

    return call


def _return_type(result, name):  # PyTorch's return_types.<op>_out, the named tuple of the out= form
    return return_type(f"{type(result).__name__}_out", result._fields)


def _requires_grad(a):
    if isinstance(a, Tensor):
        return a.requires_grad
    return isinstance(a, (tuple, list)) and any(isinstance(t, Tensor) and t.requires_grad for t in a)


def write(name, result, out, inputs=()):
    """result's values into `out` (resized to result's shape where it differs); returns out. minigrad.compile
    replays the write as an in-place call on that call's `out` (a write to its array outside an op would
    happen at the capture only: a replay would read `out` as it was)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
    if name not in _NO_OVERLAP_CHECK:
        _check_overlap(out, inputs)
    allowed, text = _DTYPE_RULES[_DTYPE_RULE.get(name, "cast")]
    first = next((a for a in inputs if isinstance(a, Tensor)), result)
    if not allowed(result.dtype, out.dtype, first.dtype):
        r, o, i = (d._legacy[:-6] for d in (result.dtype, out.dtype, first.dtype))
        raise RuntimeError(text.format(name=name, r=r, o=o, i=i, r_cpp=_CPP_NAME.get(r, r), o_cpp=_CPP_NAME.get(o, o),
                                       r_opmath="Float" if r in ("Half", "BFloat16") else r))  # (mean's half: in float)
    if recording.hook.recorder is not None:
        if out.shape != result.shape:
            recording.escape(f"{name}(out=...) resizing its out tensor", "a replay would not resize it again")
        else:
            return recording.hook.recorder.on_inplace(_write_into, out, (result,), {})
    return _write_into(out, result, name)


def _check_overlap(out, inputs):
    """PyTorch's refusals of an out that overlaps itself or shares some, not all, of its memory with an input."""
    dst = out.array
    if dst.size > 1 and any(st == 0 and n > 1 for st, n in zip(dst.strides, dst.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    for a in inputs:
        src = a.array if isinstance(a, Tensor) else None
        if src is None or src is dst or not np.may_share_memory(src, dst):
            continue
        same = (src.__array_interface__["data"][0] == dst.__array_interface__["data"][0]
                and src.shape == dst.shape and src.strides == dst.strides)
        if not same:
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


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
