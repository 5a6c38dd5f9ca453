"""Every op, grouped by family; `_bind_methods` attaches them to Tensor (as `t.exp()`, `a @ b`, ...)."""
import builtins as _builtins
import functools
import operator as _operator
import sys as _sys
import inspect

import numpy as _np

from . import composite, elementwise, indexing, inplace, movement, pointwise, reduction, scan, scatter, shape  # noqa: F401
from . import extra, linalg, special_ops  # noqa: F401
from .elementwise import (  # noqa: F401
    abs, add, allclose, clamp, clip, cos, div, eq, equal, exp, ge, gt, isfinite, isinf,
    isnan, le, log, logical_and, logical_not, logical_or, logical_xor, lt, masked_fill, maximum, minimum, mul, ne,
    neg, pow, reciprocal, relu, rsqrt, sigmoid, sign, sin, sqrt, square, sub, tanh, where,
)
from .indexing import gather, index_select, multinomial, sort, topk  # noqa: F401
from .matmul import bmm, dot, matmul, mm  # noqa: F401
from .pointwise import (  # noqa: F401
    acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, asin, asinh, atan, atan2, atanh,
    bitwise_left_shift, bitwise_not, bitwise_right_shift, bitwise_xor, ceil, copysign, cosh, erf, erfc, exp2, expm1,
    fix, floor, fmod, frac, frexp, isclose, lerp, log1p, log2, log10, logaddexp, remainder, round, sinh, tan, trunc,
)
from .pointwise import bitwise_and, bitwise_or  # noqa: F401,F811 (integer-keeping versions)
from .pointwise import digamma, erfinv, lgamma, polygamma  # noqa: F401
from .elementwise import floor_divide  # noqa: F401
from .movement import (  # noqa: F401
    argsort, argwhere, diag, diag_embed, diagonal, einsum, flip, fliplr, flipud, masked_select, msort, nonzero,
    repeat_interleave, roll, tile,
)
from .composite import (  # noqa: F401
    absolute, addbmm, addcdiv, addcmul, addmm, addmv, addr, aminmax, atleast_1d, atleast_2d, atleast_3d, baddbmm,
    bincount, block_diag, bucketize, cartesian_prod, cdist, clamp_max, clamp_min, column_stack, corrcoef,
    count_nonzero, cov, cross, deg2rad, diagflat, diff, dist, gradient, divide, dsplit, dstack, float_power, fmax, fmin, gcd,
    ger, greater, greater_equal, heaviside, histc, hsplit, hstack, hypot, index_copy, index_fill, inner, isneginf,
    isposinf, isreal, kron, kthvalue, lcm, ldexp, less, less_equal, logaddexp2, logit, masked_scatter, median,
    meshgrid, mode, moveaxis, movedim, multiply, mv, nan_to_num, nanmean, nanmedian, nansum, narrow, negative,
    not_equal, outer, positive, rad2deg, ravel, renorm, rot90, row_stack, searchsorted, select, sgn, signbit, sinc,
    std_mean, subtract, swapaxes, swapdims, take, take_along_dim, tensor_split, trace, trapezoid, trapz, tril_indices,
    triu_indices, true_divide, unique, unique_consecutive, vander, var_mean, vsplit, vstack,
)
from .composite import (  # noqa: F401
    index_put, is_complex, is_nonzero, is_same_size, is_signed, nanquantile, nextafter, quantile, resolve_conj, resolve_neg,
    split_with_sizes, sum_to_size, type_as, vdot,
)
from .composite import as_strided, diagonal_scatter, select_scatter, slice_scatter  # noqa: F401
from .composite import index_put_into as _index_put_into
from .composite import histogram  # noqa: F401
from .extra import (  # noqa: F401
    as_strided_scatter, cond, eig, frobenius_norm, geqrf, histogramdd, lobpcg, lstsq, matrix_rank, nonzero_static,
    nuclear_norm, ormqr, segment_reduce, solve, symeig, while_loop,
)
from .indexing import put  # noqa: F401
from .quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine  # noqa: F401
from .composite import isin  # noqa: F401
from .composite import broadcast_shapes, broadcast_tensors, tensordot  # noqa: F401
from .composite import _standard_gamma, binomial, combinations, cumulative_trapezoid, poisson  # noqa: F401
from .composite import unravel_index  # noqa: F401
from .composite import fill, is_conj, is_neg, slice_copy  # noqa: F401
from .composite import _weight_norm, detach_copy, native_norm, norm_except_dim  # noqa: F401
from .composite import adjoint, angle, conj, conj_physical, imag, real  # noqa: F401
from .complex import complex, polar, view_as_complex, view_as_real  # noqa: F401
from .composite import unsafe_chunk, unsafe_split, unsafe_split_with_sizes  # noqa: F401
from .composite import (  # noqa: F401
    alias_copy, as_strided_copy, diagonal_copy, expand_copy, narrow_copy, permute_copy, select_copy, split_copy,
    split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy, view_copy,
    view_as_complex_copy, view_as_real_copy,
)
from .elementwise import rsub  # noqa: F401
from .special_ops import i0, igamma, igammac, mvlgamma, xlogy  # noqa: F401 (torch.i0, ...: torch.special's under their top-level names)
from .linalg import det, inverse, logdet, matrix_exp, matrix_power, pinverse, slogdet  # noqa: F401
from .linalg import cholesky_legacy as cholesky, svd_legacy as svd, qr_legacy as qr  # noqa: F401 (torch.cholesky, ...)
from .linalg import chain_matmul, cholesky_inverse, cholesky_solve, lu_unpack, triangular_solve  # noqa: F401
from .linalg import pca_lowrank, svd_lowrank  # noqa: F401
from .linalg import householder_product as orgqr  # noqa: F401 (torch.orgqr)
from .linalg import lu_legacy as lu, lu_solve_legacy as lu_solve  # noqa: F401 (torch.lu, torch.lu_solve)
from .scan import cummax, cummin, cumprod, cumsum, logcumsumexp  # noqa: F401
from .scatter import index_add, index_reduce, scatter, scatter_add, scatter_reduce  # noqa: F401,F811 (the function, not the module)
from .scatter import index_add_ as _index_add_, index_reduce_ as _index_reduce_, scatter_ as _scatter_, scatter_add_ as _scatter_add_
from .scatter import make_inplace as _make_inplace
from .scatter import index_put_read as _index_put_read, index_read as _index_read, tensors_read as _tensors_read
from ._util import arity_error as _arity_error
from ._util import method_form as _method_form
from ._util import operator_form as _op
from ._util import type_name as _type_name
from ..tensor import Tensor as _Tensor, int_argument
from .scatter import make_view_inplace as _make_view_inplace
from .scatter import scatter_reduce_ as _scatter_reduce_
from .reduction import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, log_softmax, logsumexp, max, mean, min, prod, softmax, std, sum, var,
)
from .linalg import norm  # noqa: F401 (the vector norms of reduction.py, and 'nuc')
from .shape import (  # noqa: F401
    broadcast_to, cat, chunk, clone, concat, concatenate, contiguous, expand, expand_as, flatten, permute, reshape,
    split, squeeze, stack, t, transpose, tril, triu, unbind, unflatten, unsqueeze, view,
)

_E, _P = elementwise, pointwise
from .. import dtypes as _dtypes  # noqa: E402


# the value-changing ops that PyTorch also offers in place (`t.exp_()`), made by one wrapper
_INPLACE = (
    "abs absolute acos acosh addbmm addcdiv addcmul addmm addmv addr arccos arccosh arcsin arcsinh arctan2 arctan "
    "arctanh asin asinh atan2 atan atanh baddbmm bitwise_and bitwise_left_shift bitwise_not bitwise_or "
    "bitwise_right_shift bitwise_xor ceil clamp_max clamp_min clip copysign cos cosh cumprod cumsum deg2rad divide "
    "eq erf erfc exp2 exp expm1 fix float_power floor floor_divide fmod frac gcd ge greater greater_equal gt "
    "heaviside hypot index_copy index_fill lcm ldexp le lerp less less_equal log10 log1p log2 log logical_and "
    "logical_not logical_or logical_xor logit lt multiply nan_to_num ne neg negative not_equal pow "
    "rad2deg reciprocal relu remainder renorm round rsqrt sgn sigmoid sign sin sinc sinh sqrt square subtract tan "
    "tanh tril triu true_divide trunc xlogy digamma erfinv lgamma i0 igamma igammac mvlgamma"
).split()
# in-place ops whose refusals do not yield to a broadcast shape larger than self's: their tensor arguments do not
# broadcast with self elementwise (addmm's matrices, index_copy's index), or PyTorch refuses before its shape
# check (addcdiv of integers, ldexp into an integer tensor, bool - bool)
# the in-place ops' arguments PyTorch refuses to see share self's memory (scatter_'s and index_add_'s: scatter.py)
_INPLACE_READS = {"index_copy": _tensors_read, "index_fill": _index_read}
_INPLACE_REFUSALS_FIRST = frozenset(
    "addbmm addmm addmv addr baddbmm cumprod cumsum index_copy index_fill renorm tril triu "
    "addcdiv ldexp subtract".split())
# ... among which those that PyTorch lets read a tensor sharing part of self's memory (the others, as its
# elementwise kernels, refuse it): the matrix products, index ops and scans, and ldexp_ (its 2 ** other a new tensor)
_INPLACE_PARTIAL_READS = frozenset(
    "addbmm addmm addmv baddbmm cumprod cumsum index_copy index_fill renorm tril triu ldexp".split())
# ops PyTorch has no derivative for (not even a zero one, as the comparisons have): their in-place forms write
# into a leaf that requires grad, or a view of one, and leave self's history as it was
_NOT_DIFFERENTIABLE = frozenset("logical_and logical_not logical_or logical_xor".split())
# the in-place ops whose result's dtype PyTorch checks against self's before it looks for a kernel for it: the
# other elementwise ones (comparisons write bool into any dtype; lerp_ and heaviside_ refuse mixed dtypes first)
_INPLACE_NO_CAST_CHECK = frozenset("eq ne lt le gt ge greater greater_equal less less_equal not_equal lerp heaviside "
                                   "logical_and logical_not logical_or logical_xor".split())
# ... and those that take integers to the default float dtype
_INPLACE_FLOAT_RESULT = frozenset("atan2 arctan2 copysign divide true_divide xlogy".split())


def _promoted(*args):
    return _dtypes.result_type(*args)


def _float_promoted(*args):
    r = _dtypes.result_type(*args)
    return r if r.kind in "fc" else _dtypes.default_float.np


# PyTorch's keyword names for the ops whose parameter minigrad spells otherwise (`torch.dot(input, tensor)`,
# `torch.split(tensor, ...)`): PyTorch's name -> minigrad's
_KEYWORD_NAMES = {
    "dot": {"tensor": "other"}, "split": {"tensor": "input"}, "swapaxes": {"axis0": "dim0", "axis1": "dim1"},
    "tensor_split": dict.fromkeys(("sections", "indices", "tensor_indices_or_sections"), "indices_or_sections"),
}


def _numpy_names(fn, renames=None, method=False):
    """PyTorch's numpy-style keyword aliases, `axis=` for `dim=` and `keepdims=` for `keepdim=`, on every op
    that takes a dim, and `renames`, PyTorch's names for the op's own (one wrapper, as PyTorch's argument
    parser does it). `method`: the Tensor method's wrapper, whose refusals count arguments as a method's."""
    code = getattr(inspect.unwrap(fn), "__code__", None)  # (its names: inspect.signature's ~25 us each, 300 ops)
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] if code is not None else ()
    if "dim" not in params and "keepdim" not in params and not renames:
        return fn

    @functools.wraps(fn)
    def op(*args, **kwargs):
        try:
            if not kwargs:
                return fn(*args)
            if "axis" in kwargs:
                if "dim" in kwargs:  # (PyTorch's parser takes axis for dim when dim is not given)
                    raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'axis'")
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
            if renames:
                for theirs, ours in renames.items():
                    if theirs in kwargs:
                        if ours in kwargs:
                            raise TypeError(f"{fn.__name__}() got multiple values for argument '{ours}'")
                        kwargs[ours] = kwargs.pop(theirs)
            return fn(*args, **kwargs)
        except AttributeError:  # (minigrad.sum(ndarray): PyTorch's words, not a missing `.array`)
            if args and not isinstance(args[0], _Tensor):
                raise TypeError(f"{fn.__name__}(): argument 'input' (position 1) must be Tensor, "
                                f"not {_type_name(args[0])}") from None
            raise
        except TypeError as e:  # (a dim that is no int, a keyword the op has not: PyTorch's parser's words,
            # unless the op said them already, of an argument before dim)
            error = None if str(e).startswith((f"{fn.__name__}(): argument", f"{fn.__name__}() received")) else \
                _arity_error(e, fn.__name__, inspect.unwrap(fn), method) or _dim_type_error(fn.__name__, params, args, kwargs, method)
            if error is None:
                raise
            raise error from None

    op._numpy_names = renames, method  # (its Tensor method: the same wrapper with method True, by _bind_methods)
    return op


# PyTorch's overloads for the reductions whose refusal of a dim that is no int lists them: the method's, the
# function's (what else their texts say comes from _dim_type_error)
_SUM_METHOD = (" * (*, torch.dtype dtype = None)\n"
               " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n")
_MAX_METHOD = (" * ()\n{bad}"
               " * (Tensor other)\n{bad}"
               " * (int dim, bool keepdim = False)\n")
_DIM_OVERLOADS = {
    "sum": (_SUM_METHOD, " * (Tensor input, *, torch.dtype dtype = None)\n"
                         " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
                         "Tensor out = None)\n"),
    "mean": (_SUM_METHOD, " * (Tensor input, *, torch.dtype dtype = None, Tensor out = None)\n"
                          " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
                          "Tensor out = None)\n"),
    "max": (_MAX_METHOD, " * (Tensor input, *, Tensor out = None)\n"
                         " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                         " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n"),
    "squeeze": (" * ()\n{bad}"
                " * (int dim)\n{bad}"
                " * (tuple of ints dim)\n{bad}", None),
}
_SORT_METHOD = (" * (*, bool stable, int dim = -1, bool descending = False)\n"
                " * (int dim = -1, bool descending = False)\n")
_ALL_METHOD = (" * ()\n{bad}"
               " * (tuple of ints dim = None, bool keepdim = False)\n"
               " * (int dim, bool keepdim = False)\n")
_ALL_FUNCTION = (" * (Tensor input, *, Tensor out = None)\n"
                 " * (Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)\n"
                 " * (Tensor input, int dim, bool keepdim = False, *, Tensor out = None)\n")
_DIM_OVERLOADS.update(
    sort=(_SORT_METHOD, " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, "
                        "tuple of Tensors out = None)\n"
                        " * (Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)\n"),
    argsort=(_SORT_METHOD, " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)\n"
                           " * (Tensor input, int dim = -1, bool descending = False)\n"),
    prod=(" * (*, torch.dtype dtype = None)\n"
          " * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n",
          " * (Tensor input, *, torch.dtype dtype = None)\n"
          " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n"),
    all=(_ALL_METHOD, _ALL_FUNCTION), any=(_ALL_METHOD, _ALL_FUNCTION))
_DIM_OVERLOADS["min"] = (_MAX_METHOD, _DIM_OVERLOADS["max"][1].replace("max", "min"))
_DIM_TUPLES = frozenset(("amax", "amin", "logsumexp", "nansum"))  # (the ops whose dim PyTorch's parser reads as a tuple)


def _dim_type_error(name, params, args, kwargs, method):
    """PyTorch's argument parser's refusal of the call, where its dim is no int or a keyword is not the op's
    (None where neither): the op's overloads where its text lists them, else the argument named, with its
    position counted from the method's first argument after self, or the function's first."""
    given = args[1:] if method else args
    i = params.index("dim") if "dim" in params else None
    dim = kwargs["dim"] if "dim" in kwargs else args[i] if i is not None and i < len(args) else None
    bad, entry = _not_an_index(dim)
    unknown = not kwargs.keys() - {"axis"} <= set(params)
    if bad is None and not unknown:
        return None
    overloads = _DIM_OVERLOADS.get(name, (None, None))[0 if method else 1]
    if overloads is not None and entry is None:
        got = ", ".join([*map(_type_name, given), *(f"{k}={_type_name(v)}" for k, v in kwargs.items())])
        marked = ("      didn't match because some of the arguments have invalid types: "
                  f"({', '.join(f'!{_type_name(a)}!' for a in given)})\n")
        return TypeError(f"{name}() received an invalid combination of arguments - got ({got}{', ' if not given else ''}"
                         f"), but expected one of:\n" + overloads.format(bad=marked))
    if bad is None:
        return None
    if entry is not None:
        return TypeError(f"{name}(): argument 'dim' failed to unpack the object at pos {entry + 1} with error "
                         f"\"type must be tuple of ints,but got {_type_name(bad)}\"")
    where = "" if "dim" in kwargs else f" (position {i + (not method)})"
    kind = "tuple of ints" if name in _DIM_TUPLES else "int"
    return TypeError(f"{name}(): argument 'dim'{where} must be {kind}, not {_type_name(bad)}")


def _not_an_index(dim):
    """(dim, None) where dim is neither None nor an index; (entry, its place) for a tuple's or a list's first entry
    that is no index; else (None, None)."""
    if isinstance(dim, (tuple, list)):
        for k, d in enumerate(dim):
            if _not_an_index(d)[0] is not None:
                return d, k
        return None, None
    if dim is None:
        return None, None
    if isinstance(dim, _builtins.bool):  # (an int to Python, not to PyTorch's parser)
        return dim, None
    try:
        _operator.index(dim)
    except TypeError:
        return dim, None
    return None, None


for _name, _fn in list(globals().items()):
    if inspect.isfunction(_fn) and not _name.startswith("_"):
        globals()[_name] = _numpy_names(_fn, _KEYWORD_NAMES.get(_name))


# numbers where PyTorch's signature takes only Tensors: its parser's refusal ("argument 'other' (position 2) must be
# Tensor, not int"), for the function, the method and the in-place method alike
_BINARY = ("input", "other")
_TENSOR_PARAMS = {
    "addcdiv": ("input", "tensor1", "tensor2"), "addcmul": ("input", "tensor1", "tensor2"), "arctan2": _BINARY,
    "atan2": _BINARY, "complex": ("real", "imag"), "dist": _BINARY, "fmax": _BINARY, "fmin": _BINARY, "gcd": _BINARY,
    "heaviside": ("input", "values"), "hypot": _BINARY, "igamma": _BINARY, "igammac": _BINARY, "lcm": _BINARY,
    "ldexp": _BINARY, "logaddexp": _BINARY, "logaddexp2": _BINARY, "logical_and": _BINARY, "logical_or": _BINARY,
    "logical_xor": _BINARY, "maximum": _BINARY, "minimum": _BINARY, "nextafter": _BINARY, "polar": ("abs", "angle"),
}
for _name, _params in _TENSOR_PARAMS.items():
    globals()[_name] = composite.tensor_function(globals()[_name], _name, _params)


# `t == None` is False, as in PyTorch (`if hidden == None:`); so is `t == "a"` or `t == [1, 2]`: an operand
# PyTorch does not take, handed back to Python, which compares identities
def _eq_operator(self, other):
    return eq(self, other) if _compares(other) else NotImplemented


def _ne_operator(self, other):
    return ne(self, other) if _compares(other) else NotImplemented


def _compares(other):
    return isinstance(other, (_Tensor, _builtins.int, _builtins.float, _builtins.complex, _np.generic)) or \
        hasattr(other, "shape")


@_numpy_names
def _split_method(self, split_size, dim=0):  # (the method names its size `split_size`, torch.split
    return split(self, split_size, dim)       # `split_size_or_sections`: scripts pass either by keyword)


def _abs_of(abs_):
    def op(self):
        if self.array.dtype.kind == "c":  # (|z| is real: PyTorch will not write it over the complex tensor)
            from .complex import refuse

            refuse("abs_", self)
        return abs_(self)

    op.__name__ = "abs_"
    return op


_index_put_inplace = _make_inplace(index_put, "index_put", _index_put_into, reads=_index_put_read, expanded=True)


def _index_put_(self, indices, values, accumulate=False):
    composite.check_indices(indices, "index_put_")
    return _index_put_inplace(self, indices, values, accumulate)


_masked_scatter_into = _make_inplace(composite.masked_scatter_into, "masked_scatter")


def _masked_scatter_(self, *args, **kwargs):  # (a source sharing self's memory read as PyTorch's kernel reads it)
    if len(args) == 2:
        args = (args[0], composite.read_as_written(self, *args))
    elif not args and kwargs.keys() == {"mask", "source"}:
        kwargs["source"] = composite.read_as_written(self, **kwargs)
    return _masked_scatter_into(self, *args, **kwargs)


def _bind_methods(Tensor):
    methods = dict(
        add=_method_form(add), sub=_method_form(sub), mul=mul, div=div, pow=pow, neg=neg, exp=exp, log=log, sqrt=sqrt, rsqrt=rsqrt, tanh=tanh,
        sigmoid=sigmoid, relu=relu, abs=abs, clamp=clamp, clip=clip, maximum=maximum, minimum=minimum, sin=sin,
        cos=cos, sign=sign, square=square, reciprocal=reciprocal, masked_fill=masked_fill, where=lambda self, condition, other: where(condition, self, other),
        eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, logical_not=logical_not, logical_and=logical_and,
        logical_or=logical_or, isnan=isnan, isinf=isinf, isfinite=isfinite, allclose=allclose, equal=equal,
        sum=sum, mean=mean, var=var, std=std, max=max, min=min, amax=amax, amin=amin, argmax=argmax, argmin=argmin,
        logsumexp=logsumexp, softmax=softmax, log_softmax=log_softmax, all=all, any=any, prod=prod, norm=norm,
        reshape=reshape, view=view, flatten=flatten, unflatten=unflatten, permute=permute, transpose=transpose,
        t=t, squeeze=squeeze, unsqueeze=unsqueeze, expand=expand, expand_as=expand_as, contiguous=contiguous,
        clone=_method_form(clone), split=_split_method, chunk=chunk, unbind=unbind, tril=tril, triu=triu, matmul=matmul, mm=mm, bmm=bmm,
        dot=dot, gather=gather, index_select=index_select, topk=_numpy_names(indexing.topk_method, method=True), sort=sort, multinomial=multinomial,
        view_as=lambda self, other: view(self, other.shape),
        reshape_as=lambda self, other: reshape(self, other.shape),
        zero_=inplace.zero_, fill_=inplace.fill_, copy_=inplace.copy_, masked_fill_=inplace.masked_fill_,
        clamp_=inplace.clamp_, uniform_=inplace.uniform_, normal_=inplace.normal_, bernoulli_=inplace.bernoulli_,
        _regrow_view=inplace.regrow_view,
        exponential_=inplace.exponential_, geometric_=inplace.geometric_, cauchy_=inplace.cauchy_,
        log_normal_=inplace.log_normal_, random_=inplace.random_, fill_diagonal_=inplace.fill_diagonal_,
        __getitem__=indexing.getitem, __setitem__=inplace.setitem,
        __add__=_op(add, "+"), __radd__=_op(add, "+", True), __sub__=_op(sub, "-"), __rsub__=_op(_E.rsub, "-", True),
        __mul__=_op(mul, "*"), __rmul__=_op(mul, "*", True), __truediv__=_op(div, "/"),
        __rtruediv__=_op(_E.rdiv, "/", True), __pow__=_op(pow, "**"),
        __rpow__=_op(lambda self, other: pow(other, self), "**", True), __matmul__=_op(matmul, "@"),
        __rmatmul__=_op(lambda self, other: matmul(other, self), "@", True), __neg__=neg, __abs__=abs,
        __eq__=_eq_operator, __ne__=_ne_operator, __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
        __and__=bitwise_and, __or__=bitwise_or, __xor__=bitwise_xor, __invert__=_P.invert,
        __rand__=bitwise_and, __ror__=bitwise_or, __rxor__=bitwise_xor,
        __lshift__=bitwise_left_shift, __rshift__=bitwise_right_shift,
        __rlshift__=_P._reflected(bitwise_left_shift), __rrshift__=_P._reflected(bitwise_right_shift),
        __floordiv__=floor_divide, __rfloordiv__=_P.rfloordiv, __mod__=remainder, __rmod__=_P.rremainder,
        bitwise_and=bitwise_and, bitwise_or=bitwise_or, bitwise_xor=bitwise_xor, bitwise_not=bitwise_not,
        bitwise_left_shift=bitwise_left_shift, bitwise_right_shift=bitwise_right_shift, logical_xor=logical_xor,
        floor_divide=floor_divide,
    )
    for name in ("acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin",
                 "asinh", "atan", "atan2", "atanh", "ceil", "copysign", "cosh", "erf", "erfc", "exp2", "expm1", "fix",
                 "floor", "fmod", "frac", "frexp", "isclose", "lerp", "log1p", "log2", "log10", "logaddexp", "remainder",
                 "round", "sinh", "tan", "trunc"):
        methods[name] = globals()[name]
    for name in ("argsort", "argwhere", "diag", "diag_embed", "diagonal", "flip", "fliplr", "flipud", "masked_select",
                 "msort", "nonzero", "repeat_interleave", "roll", "tile", "cummax", "cummin", "cumprod", "cumsum",
                 "logcumsumexp", "index_add", "index_reduce", "scatter", "scatter_add", "scatter_reduce"):
        methods[name] = globals()[name]
    for name in ("absolute", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "aminmax", "baddbmm",
                 "bincount", "clamp_max", "clamp_min", "count_nonzero", "cross", "deg2rad", "diagflat", "diff", "dist",
                 "divide", "dsplit", "float_power", "fmax", "fmin", "gcd", "ger", "greater", "greater_equal",
                 "heaviside", "histc", "hsplit", "hypot", "index_copy", "index_fill", "inner", "isneginf", "isposinf",
                 "isreal", "kron", "kthvalue", "lcm", "ldexp", "less", "less_equal", "logaddexp2", "logit",
                 "masked_scatter", "median", "mode", "moveaxis", "movedim", "multiply", "mv", "nan_to_num", "nanmean",
                 "nanmedian", "nansum", "narrow", "negative", "not_equal", "outer", "positive", "rad2deg", "ravel",
                 "renorm", "rot90", "select", "sgn", "signbit", "sinc", "subtract", "swapaxes", "swapdims", "take",
                 "take_along_dim", "tensor_split", "trace", "true_divide", "unique", "unique_consecutive", "vsplit",
                 "xlogy", "broadcast_to", "index_put", "is_complex", "is_nonzero", "is_same_size", "is_signed",
                 "nanquantile", "nextafter", "quantile", "resolve_conj", "split_with_sizes", "sum_to_size", "type_as",
                 "vdot", "as_strided", "diagonal_scatter", "select_scatter", "slice_scatter", "histogram", "digamma", "erfinv", "lgamma", "det", "inverse", "logdet", "matrix_exp", "matrix_power", "pinverse", "slogdet",
                 "i0", "igamma", "igammac", "mvlgamma", "cholesky_solve", "cholesky_inverse", "triangular_solve",
                 "lu_solve", "lu", "qr", "svd", "cholesky", "orgqr"):
        methods[name] = globals()[name]
    methods.update(as_subclass=indexing.as_subclass, broadcast_to=shape.broadcast_to_method)
    methods.update(extra.METHODS)
    methods.update(cov=cov, corrcoef=corrcoef, narrow_copy=narrow_copy, is_conj=is_conj, is_neg=is_neg)
    methods.update(matrix_power=lambda self, n: linalg._matrix_power(self, int_argument(n, "matrix_power",
                                                                                        "'n' (position 1)")))
    methods.update(angle=angle, adjoint=adjoint, conj_physical=conj_physical, unsafe_chunk=unsafe_chunk,
                   unsafe_split=unsafe_split, unsafe_split_with_sizes=unsafe_split_with_sizes)
    methods.update(polygamma=lambda self, n: polygamma(n, self), resolve_neg=resolve_neg, conj=conj, nelement=lambda self: self.numel(),
                   ndimension=lambda self: self.dim(), index_put_=_index_put_)
    methods.update(nextafter_=_make_inplace(nextafter, "nextafter", elementwise=True, partial_reads=True), polygamma_=_make_inplace(methods["polygamma"], "polygamma"))
    methods.update(flip=movement.flip_method, repeat=movement.repeat, unfold=movement.unfold, scatter_=_scatter_, scatter_add_=_scatter_add_,
                   scatter_reduce_=_scatter_reduce_, index_add_=_index_add_,
                   index_reduce_=_index_reduce_)
    methods.update(resize=shape.resize, resize_as=shape.resize_as)
    methods.update(resize_=inplace.resize_, resize_as_=inplace.resize_as_, map_=inplace.map_, map2_=inplace.map2_, put_=inplace.put_, set_=inplace.set_,
                   put=indexing.put)
    methods["masked_scatter_"] = _masked_scatter_
    for name, fn in methods.items():  # (the dim-taking ops: their method forms count arguments as methods do)
        if getattr(fn, "_numpy_names", (None, True))[1] is False:
            inner = fn.__wrapped__
            if "_method" in (inner.__kwdefaults__ or ()):  # (one that tells its texts by it too)
                inner = _method_form(inner)
            methods[name] = _numpy_names(inner, fn._numpy_names[0], method=True)
    for name in _INPLACE:
        if name + "_" not in methods:
            methods[name + "_"] = _make_inplace(methods[name], name, elementwise=name not in _INPLACE_REFUSALS_FIRST,
                                                result=None if name in _INPLACE_NO_CAST_CHECK else
                                                _float_promoted if name in _INPLACE_FLOAT_RESULT else _promoted,
                                                differentiable=name not in _NOT_DIFFERENTIABLE, reads=_INPLACE_READS.get(name),
                                                partial_reads=name not in _INPLACE_PARTIAL_READS, expanded=name == "index_fill")
    methods["abs_"] = _abs_of(methods["abs_"])
    methods["float_power_"] = composite.float_power_of(methods["float_power_"])
    methods["ldexp_"] = composite.ldexp_of(methods["ldexp_"])
    methods["lerp"], methods["lerp_"] = _P.lerp_method(methods["lerp"], "lerp"), _P.lerp_method(methods["lerp_"], "lerp_")
    for name, params in _TENSOR_PARAMS.items():  # (their positions counted from after self)
        for form in (name, name + "_"):
            if form in methods:
                methods[form] = composite.tensor_method(methods[form], form, params[1:])
    for name in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims", "as_strided"):
        methods[name + "_"] = _make_view_inplace(methods[name], name)
    for name, fn in inplace._setup().items():
        methods[name] = fn
    methods.update(__iadd__=methods["add_"], __isub__=methods["sub_"], __imul__=methods["mul_"],
                   __itruediv__=methods["div_"], __ifloordiv__=methods["floor_divide_"], __imod__=methods["remainder_"],
                   __ipow__=methods["pow_"], __iand__=methods["bitwise_and_"], __ior__=methods["bitwise_or_"],
                   __ixor__=methods["bitwise_xor_"], __ilshift__=methods["bitwise_left_shift_"],
                   __irshift__=methods["bitwise_right_shift_"])
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(shape._T)
    Tensor.real, Tensor.imag = property(real), property(imag)
    Tensor.output_nr = property(lambda self: self._output_nr)  # (which output of its grad_fn this tensor is)
    Tensor.mT = property(shape._mT)


def __getattr__(name):
    # minigrad.ops.<ns> (torch.ops.<ns>): a namespace of ops that minigrad.library defined
    library = _sys.modules.get("minigrad.library")
    if library is not None and name in library._namespaces:
        return library._namespaces[name]
    raise AttributeError(f"module 'minigrad.ops' has no attribute '{name}'")
