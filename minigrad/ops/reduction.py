"""Reductions over dims (sum, mean, var, max, logsumexp, softmax, ...), with keepdim."""
import builtins
import math
import warnings

import numpy as np

from .. import backends
from ..autograd.composite import composite_node
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..device import array_module
from ..tensor import Tensor, dtype_argument
from . import elementwise
from .array_op import array_op
from .complex import refuse
from .shape import _records_nothing
from ._util import add_reduce, broadcast_view, in_float32, normalize_dim, normalize_dims, take_along, type_name, values_indices


def _keep_shape(shape, dims):
    """`shape` with the reduced `dims` kept as size 1 (how a reduced grad broadcasts back)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not state.grad_enabled:  # no graph of the backward wanted: a broadcast view of the array, no recorded ops
        return Tensor._wrap(_expand_back_array(g.array, shape, dims, keepdim))
    if not keepdim and dims:
        g = g.reshape(_keep_shape(shape, dims))
    return g.expand(shape)


def _expand_back_array(g, shape, dims, keepdim):
    if not keepdim and dims:
        g = g.reshape(_keep_shape(shape, dims))
    return broadcast_view(g, shape)


def _kept(a):
    """The dtype a sum or product of array `a` keeps: an integer or bool one's own (numpy would widen int32 to
    int64 and uint8 to uint64; the caller chose it, `sum(dtype=torch.int32)`), else numpy's choice (None)."""
    return a.dtype if a.dtype.kind in "biu" else None


class Sum(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = a.array.shape, dims, keepdim
        kept = _kept(a.array)
        if kept is not None:
            return a.array.sum(axis=dims, keepdims=keepdim, dtype=kept)
        return add_reduce(a.array, dims, keepdim)

    @staticmethod
    def backward(ctx, g):  # d(sum a) = 1 for every element reduced
        return _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim), None, None

    @staticmethod
    def array_step(needs, a, dims, keepdim):
        shape, xp = a.array.shape, array_module(a.array)
        return ((lambda x: (xp.asarray(add_reduce(x, dims, keepdim)), None)),
                (lambda saved, g: (_expand_back_array(g, shape, dims, keepdim),)))


class SumAll(Sum):
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        x = a.array
        if keepdim or type(x) is not np.ndarray or x.dtype.kind != "f":
            return Sum.forward(ctx, a, dims, keepdim)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        # every element: numpy's add.reduce (its pairwise order, the bits of `x.sum()`), written into the 0-d
        # array the tensor holds, not returned as a numpy scalar for apply to wrap again
        return np.add.reduce(x, None, None, np.empty((), x.dtype))

    @staticmethod
    def backward(ctx, g):  # every element's gradient is g: expanded as it is, as PyTorch's (no view of it first)
        return _expand_back(g, ctx.shape, (), ctx.keepdim), None, None


def _count(shape, dims):
    """How many elements a reduction over `dims` of `shape` takes in."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


class Mean(Function):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = a.array.shape, dims, keepdim
        return _mean_array(a.array, dims, keepdim)

    @staticmethod
    def backward(ctx, g):  # d(mean a) = 1/n
        n = _count(ctx.shape, ctx.dims) or 1  # (0: an empty input, whose gradient is empty: no 1/0 to warn of)
        if not state.grad_enabled:  # no graph of the backward wanted: array_step's division and view
            return Tensor._wrap(_mean_backward_array(g.array, n, ctx.shape, ctx.dims, ctx.keepdim)), None, None
        return _expand_back(g / n, ctx.shape, ctx.dims, ctx.keepdim), None, None

    @staticmethod
    def array_step(needs, a, dims, keepdim):
        shape, xp = a.array.shape, array_module(a.array)
        n = _count(shape, dims) or 1
        return ((lambda x: (xp.asarray(_mean_array(x, dims, keepdim)), None)),
                (lambda saved, g: (_mean_backward_array(g, n, shape, dims, keepdim),)))


def _mean_array(a, dims, keepdim):
    """`a.mean(axis=dims, keepdims=keepdim)`: for a float32 or float64 numpy array of some elements, the
    steps numpy's own mean takes (the sum, then a division by the count as an intp), without the Python
    around them that costs a small tensor's mean three times its arithmetic; the same bits."""
    if not a.size:  # nan, which says it (not numpy's mean, which warns of an empty slice in Python: see _moment)
        return a.sum(axis=dims, keepdims=keepdim) / _count(a.shape, dims)
    if type(a) is not np.ndarray or a.dtype.itemsize < 4 or a.dtype.kind == "c":
        return a.mean(axis=dims, keepdims=keepdim)  # (float16's float32 sum, cupy's, complex)
    total = add_reduce(a, dims, keepdim)
    n = _count(a.shape, dims)
    if type(total) is np.ndarray:
        if n <= 1 << 24 and total.dtype.itemsize >= 4:  # (float32 and float64: a count exact in the dtype)
            # a count up to 2^24 is exact in float32: dividing in the array's dtype gives the bits of numpy's
            # float64 division rounded to float32 (a float64 quotient has more than twice float32's digits, so
            # its second rounding never changes a division's result), without numpy's casting loop at 3x the cost
            return np.true_divide(total, builtins.float(n), out=total)
        return np.true_divide(total, np.intp(n), out=total, casting="unsafe")
    return a.dtype.type(builtins.float(total) / n)  # (numpy's scalar divides in float64 too: a Python float's division)


def _mean_backward_array(g, n, shape, dims, keepdim):  # (g / n as `g / n` of a tensor divides: by n in g's dtype)
    return _expand_back_array(array_module(g).asarray(g / g.dtype.type(n)), shape, dims, keepdim)


class MeanAll(Mean):
    node_name = "MeanBackward0"


def _integral_to_int64(t, dtype):
    if dtype is not None:
        return t.to(dtype)
    if t.array.dtype.kind in "biu":
        from ..dtypes import int64

        return t.to(int64)
    return t


def sum(input, dim=None, keepdim=False, dtype=None):
    """Sum over `dim` (an int, a tuple, or None for all). Bool and int sums are int64."""
    if dim is None and dtype is None and keepdim is False and input.array.dtype.kind == "f":
        # the usual `loss.sum()` of a float tensor: nothing below to check, cast or widen
        return SumAll.apply(input, tuple(range(input.array.ndim)), False)
    dtype = dtype_argument(dtype, "sum", None if dim is not None else ())
    if dtype is None and input.array.dtype.kind in "biu":  # (no gradient: summed as int64, with no copy first)
        dims = normalize_dims(dim, input.array.ndim)
        return array_op(lambda a: array_module(a).asarray(a.sum(axis=dims, keepdims=keepdim, dtype=np.int64)), input)
    name = "SumBackward0" if dim is None and not keepdim else "SumBackward1"  # (keepdim: PyTorch's dim overload)
    if dtype is not None and dtype != input.dtype and input._requires_grad and dtype.is_floating_point:
        return _CAST_THEN[name](input, dim, keepdim, dtype)
    if dtype is not None:  # (a bool or int input without one took the branch above)
        input = input.to(dtype)
    dims = normalize_dims(dim, input.array.ndim)
    return (SumAll if name == "SumBackward0" else Sum).apply(input, dims, keepdim)


def mean(input, dim=None, keepdim=False, dtype=None):
    """Mean over `dim` (floating tensors only, as in PyTorch)."""
    dtype = dtype_argument(dtype, "mean", None if dim is not None else ())
    if dtype is not None and dtype != input.dtype and input._requires_grad and dtype.is_floating_point:
        return _CAST_THEN["MeanBackward0" if dim is None and not keepdim else "MeanBackward1"](input, dim, keepdim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    if input.array.dtype.kind not in "fc":
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} dtype must be either a floating point or "
            f"complex dtype. Got: {input.dtype._legacy.replace('Tensor', '')}"
        )
    dims = normalize_dims(dim, input.array.ndim)
    return (MeanAll if dim is None and not keepdim else Mean).apply(input, dims, keepdim)


def _cast_then_reduce(reduce):
    """reduce(input.to(dtype)): PyTorch casts inside sum(dtype=) and mean(dtype=), one node, not two."""
    return lambda input, dim, keepdim, dtype: reduce(input.to(dtype), dim, keepdim)


_CAST_THEN = {name: composite_node(name)(_cast_then_reduce(sum if name.startswith("Sum") else mean))
              for name in ("SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1")}


def _complex_moment(a, dims, correction, keepdim, root):
    """var (std where `root`) of a complex array: the mean of |a - mean a|^2 over `dims`, real."""
    xp = array_module(a)
    x = _centered(a, dims)
    total = xp.add.reduce(x.real * x.real + x.imag * x.imag, axis=dims, keepdims=keepdim)
    total = xp.asarray(total / np.float64(_count(a.shape, dims) - correction), dtype=x.real.dtype)
    return xp.sqrt(total) if root else total


def _moment(a, dims, correction, keepdim, root):
    """numpy's var (std where `root`) of array `a` over `dims`: inf and nan where they arise, with no
    warning (the caller's op runs with numpy's warnings off: minigrad/_fp_errors.py)."""
    if a.dtype.kind == "c":  # (a real result: Var's and Std's backward formulas hold for it as they are)
        return _complex_moment(a, dims, correction, keepdim, root)
    n = _count(a.shape, dims)
    if type(a) is np.ndarray and a.dtype.itemsize >= 4 and a.ndim and n > correction:
        return _variance(a, dims, n, correction, keepdim, root)
    if a.dtype == np.float16:  # PyTorch's half var in float32, rounded once
        return in_float32(_moment, a, dims, correction, keepdim, root)
    if n > correction:
        return (a.std if root else a.var)(axis=dims, ddof=correction, keepdims=keepdim)
    # No degrees of freedom left: inf or nan, which say it. numpy's var would warn, and silencing it
    # (warnings.catch_warnings) makes Python forget the warnings it has shown, so that each of a script's
    # warnings printed once would print again after every such call: the same steps, written out.
    centered = a - a.sum(axis=dims, keepdims=True) / n
    total = (centered * centered).sum(axis=dims, keepdims=keepdim) / builtins.max(n - correction, 0)
    return np.sqrt(total) if root else total


def _variance(a, dims, n, correction, keepdim, root):
    """numpy's var (and std) of a float32 or float64 array, by numpy's own steps without the Python
    around them (a small tensor's std was three times its arithmetic): the mean (`_mean_array`), the
    squares of the deviations summed, a division by the degrees of freedom in
    float64 (an intp, or a float correction's float64), then the root; the same bits."""
    x = np.subtract(a, _mean_array(a, dims, True))
    np.square(x, out=x)
    total = np.add.reduce(x, axis=dims, keepdims=keepdim)
    dof = n - correction  # (positive: the caller's check)
    if type(total) is np.ndarray:
        np.true_divide(total, np.intp(dof) if type(dof) is builtins.int else np.float64(dof), out=total, casting="unsafe")
        return np.sqrt(total, out=total) if root else total
    # one number: Python floats divide and take roots in float64 as numpy's scalars do (correctly rounded,
    # then rounded to float32 where it is one: the same bits), at a fraction of their cost
    total = a.dtype.type(builtins.float(total) / dof)
    return a.dtype.type(math.sqrt(total)) if root else total


class Var(Function):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        ctx.save(self=a)
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        return _moment(a.array, dims, correction, keepdim, False)

    @staticmethod
    def backward(ctx, g):  # d(var a) = 2 (a - mean a) / (n - correction)
        a = ctx._saved_self
        n = _count(a.array.shape, ctx.dims)
        if not ctx.keepdim and ctx.dims:
            g = g.reshape(_keep_shape(a.array.shape, ctx.dims))
        scale = float(np.float64(2.0) / (n - ctx.correction))  # (no degrees of freedom left: inf, nan as in PyTorch)
        if g.array.dtype == np.float16:  # PyTorch's order, (2 / dof) g first: in half, each step rounds
            return g * scale * (a - a.mean(dim=ctx.dims, keepdim=True)), None, None, None
        if not state.grad_enabled:  # no graph of the backward wanted (no create_graph): the same passes on the arrays
            out = g.array * _centered(a.array, ctx.dims)
            out *= scale
            return Tensor._wrap(out), None, None, None
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        return g * centered * scale, None, None, None


class Std(Function):
    node_name = "StdBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        ctx.save(self=a)
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        return _moment(a.array, dims, correction, keepdim, True)

    @staticmethod
    def backward(ctx, g):  # d(std a) = (a - mean a) / ((n - correction) std a)
        a, result = ctx.saved_tensors
        n = _count(a.array.shape, ctx.dims)
        if not ctx.keepdim and ctx.dims:
            g = g.reshape(_keep_shape(a.array.shape, ctx.dims))
            result = result.reshape(_keep_shape(a.array.shape, ctx.dims))
        if not state.grad_enabled:  # no graph of the backward wanted (no create_graph): the same passes on the arrays
            xp, r = array_module(result.array), result.array
            zero = r == 0
            out = xp.where(zero, 0.0, g.array / xp.where(zero, 1.0, r)) * _centered(a.array, ctx.dims)
            out /= n - ctx.correction
            return Tensor._wrap(out), None, None, None
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        # where std is 0 the gradient is 0 (PyTorch's convention), not 0/0
        from .elementwise import where

        zero = result == 0
        coef = where(zero, 0.0, g / where(zero, 1.0, result))
        return coef * centered / (n - ctx.correction), None, None, None


def _centered(a, dims):
    """a - mean(a) over `dims` (kept), of an array: what Tensor.mean then a subtraction compute."""
    return a - _mean_array(a, dims, True)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """Variance over `dim`, with Bessel's correction by default (correction=1)."""
    return _spread(Var, "var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """Standard deviation over `dim` (correction=1 by default)."""
    return _spread(Std, "std", input, dim, unbiased, keepdim, correction)


def _spread(cls, name, input, dim, unbiased, keepdim, correction):
    """var or std (cls) of `input`, checked as PyTorch's `name` (var, std, var_mean, std_mean) checks it."""
    if input.array.dtype.kind != "f":
        if input.array.dtype.kind != "c":
            raise RuntimeError(f"{name} only support floating point and complex dtypes" if name.endswith("_mean")
                               else "std and var only support floating point and complex dtypes")
    if isinstance(dim, builtins.bool) and unbiased is None and correction is None:  # (`t.std(False)`: the
        dim, unbiased = None, dim  # overload whose one argument is `unbiased`)
    dims = normalize_dims(dim, input.array.ndim)
    correction = _correction(unbiased, correction)
    if _count(input.array.shape, dims) - correction <= 0:
        from .._warn_once import user_stacklevel  # (the script's line, below the wrappers of `dim=` and `out=`)

        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=user_stacklevel())
    return cls.apply(input, dims, correction, keepdim)


class Amax(Function):
    node_name = "AmaxBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, largest=True):
        ctx.save(self=a)
        ctx.dims, ctx.keepdim = dims, keepdim
        x = a.array
        if not x.size and (builtins.any(x.shape[d] == 0 for d in dims) or not x.ndim):
            raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0.")
        return x.max(axis=dims, keepdims=keepdim) if largest else x.min(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):  # the gradient is shared evenly among the elements equal to the max
        a, result = ctx.saved_tensors
        if not g._requires_grad and g.array.dtype == a.array.dtype:  # nothing to record: the same steps on arrays
            ga, r = g.array, result.array
            if not ctx.keepdim and ctx.dims:
                keep = _keep_shape(a.shape, ctx.dims)
                ga, r = ga.reshape(keep), r.reshape(keep)
            mask = (a.array == r).astype(ga.dtype)
            return Tensor._wrap(array_module(ga).asarray(ga * mask / mask.sum(axis=ctx.dims, keepdims=True))), None, None, None
        if not ctx.keepdim and ctx.dims:
            g = g.reshape(_keep_shape(a.shape, ctx.dims))
            result = result.reshape(_keep_shape(a.shape, ctx.dims))
        mask = (a == result).to(g.dtype)
        return g * mask / mask.sum(dim=ctx.dims, keepdim=True), None, None, None


class Amin(Amax):
    node_name = "AminBackward0"


class MaxAll(Amax):
    node_name = "MaxBackward1"

    @staticmethod
    def backward(ctx, g):  # g shared evenly among the elements equal to the max (a NaN max: among the NaNs)
        a, result = ctx.saved_tensors
        x, r, dt = a.array, result.array, g.array.dtype
        xp = array_module(x)
        picked = xp.isnan(x) if xp.isnan(r) else x == r
        count = picked.sum(dtype=dt)
        if not g._requires_grad:  # nothing to record: zeros, and g / count where picked (PyTorch's steps)
            out = xp.zeros(x.shape, dtype=dt)
            out[picked] = g.array / count
            return Tensor._wrap(out), None, None, None
        return Tensor._wrap(picked.astype(dt)) * (g / Tensor._wrap(count)), None, None, None


class MinAll(MaxAll):
    node_name = "MinBackward1"


def _no_dim_of_nothing(name, input):
    if not input.array.size:  # (no element to be the answer)
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")


def _nonempty_dims(name, input, dims):
    """PyTorch's refusal of a reduction over a dim of size 0 (a 0-d input has none), naming it as given."""
    for d in dims if input.array.ndim else ():
        if input.array.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def amax(input, dim=None, keepdim=False):
    """Max values over `dim` (gradient shared among ties)."""
    if input.array.dtype.kind == "c":
        refuse("amax", input)
    dims = normalize_dims(dim, input.array.ndim)
    if dim is not None:
        _nonempty_dims("amax", input, (dim,) if isinstance(dim, int) else dim)  # (after normalize_dims' checks)
    else:
        _no_dim_of_nothing("amax", input)
    return Amax.apply(input, dims, keepdim, True)


def amin(input, dim=None, keepdim=False):
    """Min values over `dim` (gradient shared among ties)."""
    if input.array.dtype.kind == "c":
        refuse("amin", input)
    dims = normalize_dims(dim, input.array.ndim)
    if dim is not None:
        _nonempty_dims("amin", input, (dim,) if isinstance(dim, int) else dim)  # (after normalize_dims' checks)
    else:
        _no_dim_of_nothing("amin", input)
    return Amin.apply(input, dims, keepdim, False)


class MaxDim(Function):
    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest=True):
        x = a.array
        xp = array_module(x)
        # the values are x's at the indices (not a max of their own): of tied 0.0 and -0.0 the first's sign,
        # of NaNs the first's bits, as PyTorch's
        idx = x.argmax(axis=dim, keepdims=True) if largest else x.argmin(axis=dim, keepdims=True)
        values = take_along(xp, x, idx, dim)
        if not keepdim:
            idx, values = idx.squeeze(dim), values.squeeze(dim)
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.indices = idx
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _):  # the gradient goes to the index that was picked
        from .indexing import index_scatter

        if not g._requires_grad:  # nothing to record: zeros, g put at the picked indices
            ga, idx = g.array, ctx.indices
            xp = array_module(ga)
            out = xp.zeros(ctx.shape, dtype=ga.dtype)
            if not ctx.keepdim:
                ga, idx = xp.expand_dims(ga, ctx.dim), xp.expand_dims(idx, ctx.dim)
            xp.put_along_axis(out, idx, ga, axis=ctx.dim)
            return Tensor._wrap(out), None, None, None
        idx = Tensor._wrap(ctx.indices)
        if not ctx.keepdim:
            g, idx = g.unsqueeze(ctx.dim), idx.unsqueeze(ctx.dim)
        return index_scatter(g, ctx.dim, idx, ctx.shape), None, None, None


class MinDim(MaxDim):
    node_name = "MinBackward0"


def _max_min(input, dim, keepdim, other, full_cls, dim_cls, pair_fn, largest):
    if isinstance(dim, Tensor):  # max(a, b): the elementwise form
        other, dim = dim, None
    if other is not None:
        return pair_fn(input, other)
    if input.array.dtype.kind == "c":
        refuse("max" if largest else "min", input)
    if dim is None:
        return full_cls.apply(input, tuple(range(input.array.ndim)), False, largest)
    if input.array.ndim == 0:
        normalize_dim(dim, 0)
        return values_indices(input, Tensor._wrap(array_module(input.array).zeros((), dtype=np.int64)),
                              "max" if largest else "min")
    d = normalize_dim(dim, input.array.ndim)
    name = "max" if largest else "min"
    if input.array.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = dim_cls.apply(input, d, keepdim, largest)
    return values_indices(values, indices, name)


def max(input, dim=None, keepdim=False, other=None):
    """max(): the largest value; max(dim): (values, indices); max(a, b): elementwise."""
    if dim is None and other is None:  # (the usual, first)
        if input.array.dtype.kind == "c":
            refuse("max_all", input)
        _no_dim_of_nothing("max", input)
        return MaxAll.apply(input, tuple(range(input.array.ndim)), False, True)
    return _max_min(input, dim, keepdim, other, MaxAll, MaxDim, elementwise.maximum, True)


def min(input, dim=None, keepdim=False, other=None):
    """min(): the smallest value; min(dim): (values, indices); min(a, b): elementwise."""
    if dim is None and other is None:
        if input.array.dtype.kind == "c":
            refuse("min_all", input)
        _no_dim_of_nothing("min", input)
        return MinAll.apply(input, tuple(range(input.array.ndim)), False, False)
    return _max_min(input, dim, keepdim, other, MinAll, MinDim, elementwise.minimum, False)


def argmax(input, dim=None, keepdim=False):
    """Index of the max (over the flattened tensor when dim is None)."""
    if input.array.dtype.kind in "bc":
        refuse("argmax", input)
        raise RuntimeError("argmax(): does not support bool input")
    if input.array.size == 0:
        if dim is None:
            raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() == 0.")
        _nonempty_dims("argmax", input, (normalize_dim(dim, input.array.ndim),))
    if dim is None:
        out = array_op(lambda a: np.int64(a.argmax()) if array_module(a) is np else a.argmax(), input)
        return out.reshape((1,) * input.array.ndim) if keepdim else out
    d = normalize_dim(dim, input.array.ndim)
    keep = keepdim and input.array.ndim
    return array_op(lambda a: array_module(a).expand_dims(a.argmax(axis=d), d) if keep else a.argmax(axis=d), input)


def argmin(input, dim=None, keepdim=False):
    """Index of the min (over the flattened tensor when dim is None)."""
    if input.array.dtype.kind in "bc":
        refuse("argmin", input)
        raise RuntimeError("argmin(): does not support bool input")
    if input.array.size == 0:
        if dim is None:
            raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() == 0.")
        _nonempty_dims("argmin", input, (normalize_dim(dim, input.array.ndim),))
    if dim is None:
        out = array_op(lambda a: np.int64(a.argmin()) if array_module(a) is np else a.argmin(), input)
        return out.reshape((1,) * input.array.ndim) if keepdim else out
    d = normalize_dim(dim, input.array.ndim)
    keep = keepdim and input.array.ndim
    return array_op(lambda a: array_module(a).expand_dims(a.argmin(axis=d), d) if keep else a.argmin(axis=d), input)


class Logsumexp(Function):
    node_name = "LogsumexpBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.save(self=a)
        ctx.dims, ctx.keepdim = dims, keepdim
        xp = array_module(a.array)
        if a.array.size == 0:  # the log of an empty sum: -inf (or an empty result)
            return xp.log(xp.exp(a.array).sum(axis=dims, keepdims=keepdim))
        m = (a.array.real if a.array.dtype.kind == "c" else a.array).max(axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)  # all -inf rows stay -inf instead of nan
        out = xp.log(xp.exp(a.array - m).sum(axis=dims, keepdims=True)) + m
        return out if keepdim else out.squeeze(dims)

    @staticmethod
    def backward(ctx, g):  # d(logsumexp a) = softmax(a)
        a, result = ctx.saved_tensors
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(a.shape, ctx.dims))
            result = result.reshape(_keep_shape(a.shape, ctx.dims))
        from .elementwise import exp

        softmax = exp(a - result)
        return g * (softmax.conj() if softmax.array.dtype.kind == "c" else softmax), None, None


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over `dim`, computed stably (integers promoted to the default float)."""
    if input.array.dtype.kind not in "fc":
        from ..dtypes import default_float

        input = input.to(default_float)
    return Logsumexp.apply(input, normalize_dims(dim, input.array.ndim), keepdim)


def softmax_array(a, dim):
    """exp(x - max) / sum(exp(x - max)) along `dim` of an array."""
    if a.dtype == np.float16:
        return in_float32(softmax_array, a, dim)
    xp = array_module(a)
    if a.ndim == 0:  # exp(a - a) / 1: one (nan for a non-finite a)
        return xp.asarray(xp.exp(a - a))
    if a.size == 0:
        return a.copy()
    e = a - a.max(axis=dim, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _rows_impl(x, dim, op):
    """The backend's kernel for `op` that takes the rows of the last dim of `x` (when `dim` is it), or None
    (also for an empty x: rows of nothing do not reshape to (-1, 0))."""
    return backends.find(op, x if x.ndim == 2 else x.reshape(-1, x.shape[-1])) if dim == x.ndim - 1 and x.size \
        else None


def _rows_run(impl, x, dim, array_code):
    """softmax's or log_softmax's forward on array `x`: the rows through `impl`, or `array_code(x, dim)`."""
    if impl is None:
        return array_code(x, dim)
    if x.ndim == 2:
        return impl.forward(x)
    return impl.forward(x.reshape(-1, x.shape[-1])).reshape(x.shape)


def _rows_run_backward(impl, g, y):
    if y.ndim == 2:
        return impl.backward(g, y)
    C = y.shape[-1]
    return impl.backward(g.reshape(-1, C), y.reshape(-1, C)).reshape(y.shape)


def _rows_forward(ctx, a, dim, op, array_code):
    """softmax's and log_softmax's forward: the rows of the last dim through a backend's kernel for `op`
    where one takes them (kept as ctx.impl for backward), else `array_code(x, dim)`."""
    ctx.dim = dim
    ctx.impl = _rows_impl(a.array, dim, op)
    return _rows_run(ctx.impl, a.array, dim, array_code)


def _rows_backward(ctx, g, backward_op, backward_array):
    """Their backward: `backward_op` where create_graph records it (a recorded op, differentiated in turn),
    else on arrays: the kernel's, or `backward_array(g, y, dim)` (backward_op's own forward)."""
    y = ctx._saved_result
    if state.grad_enabled:
        return backward_op.apply(g, y, ctx.dim), None
    if ctx.impl is None:
        return Tensor._wrap(backward_array(g.array, y.array, ctx.dim)), None
    return Tensor._wrap(_rows_run_backward(ctx.impl, g.array, y.array)), None


def _rows_step(a, dim, op, array_code, backward_array):
    """Their array_step: the kernel found once; backward the kernel's, or `backward_array(g, y, dim)`."""
    impl = _rows_impl(a.array, dim, op)

    def forward(x):
        y = _rows_run(impl, x, dim, array_code)
        return y, y

    def backward(y, g):
        return (backward_array(g, y, dim) if impl is None else _rows_run_backward(impl, g, y)),

    return forward, backward


def _rows_apply(cls, a, dim):
    """Softmax's and LogSoftmax's `rows_apply(a, dim)`: their apply (dim non-negative). Where nothing records (a sampling
    loop's softmax of logits), the forward's array alone, without apply's context and calls (~1 us of
    a small row's ~4)."""
    if _records_nothing(a):
        x = a.array
        return Tensor._output(_rows_run(_rows_impl(x, dim, cls.kernel), x, dim, cls.array_code), None)
    return cls.apply(a, dim)


class Softmax(Function):
    node_name = "SoftmaxBackward0"
    saves_result = True
    kernel, array_code, rows_apply = "softmax", staticmethod(softmax_array), classmethod(_rows_apply)

    @staticmethod
    def forward(ctx, a, dim):
        return _rows_forward(ctx, a, dim, "softmax", softmax_array)

    @staticmethod
    def backward(ctx, g):  # dx = y * (g - sum(g * y))
        return _rows_backward(ctx, g, SoftmaxBackward, _softmax_backward_array)

    @staticmethod
    def array_step(needs, a, dim):
        return _rows_step(a, dim, "softmax", softmax_array, _softmax_backward_array)


class SoftmaxBackward(Function):
    """y (g - sum(g y)) for y = softmax(x), in one op (as PyTorch's _softmax_backward_data): one node and
    one new array, not five of each."""

    node_name = "SoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, g, y, dim):
        ctx.save(grad_output=g, output=y)
        ctx.dim = dim
        return _softmax_backward_array(g.array, y.array, dim)

    @staticmethod
    def backward(ctx, gg):  # d(y (g - s)), s = sum(g y):  dg = y (gg - sum(gg y));  dy = gg (g - s) - g sum(gg y)
        g, y = ctx._saved_grad_output, ctx._saved_output
        t = (gg * y).sum(dim=ctx.dim, keepdim=True)
        return y * (gg - t), gg * (g - (g * y).sum(dim=ctx.dim, keepdim=True)) - g * t, None


def _softmax_backward_array(g, y, dim):  # y (g - sum(g y))
    if y.dtype == np.float16:
        return in_float32(_softmax_backward_array, g, y, dim)
    xp = array_module(y)
    gy = g * y
    if gy.ndim == 0 or gy.dtype != g.dtype or gy.dtype != y.dtype:  # 0-d, or mixed precisions: out of place
        return xp.asarray(y * (g - gy.sum(axis=dim, keepdims=True)))
    xp.subtract(g, gy.sum(axis=dim, keepdims=True), out=gy)
    gy *= y
    return gy


def log_softmax_array(a, dim):
    """x - max - log(sum(exp(x - max))) along `dim` of an array."""
    if a.dtype == np.float16:
        return in_float32(log_softmax_array, a, dim)
    xp = array_module(a)
    if a.ndim == 0:
        return xp.asarray(a - a)
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"
    saves_result = True
    kernel, array_code, rows_apply = "log_softmax", staticmethod(log_softmax_array), classmethod(_rows_apply)

    @staticmethod
    def forward(ctx, a, dim):
        return _rows_forward(ctx, a, dim, "log_softmax", log_softmax_array)

    @staticmethod
    def backward(ctx, g):  # dx = g - exp(y) * sum(g)
        return _rows_backward(ctx, g, LogSoftmaxBackward, _log_softmax_backward_array)

    @staticmethod
    def array_step(needs, a, dim):
        return _rows_step(a, dim, "log_softmax", log_softmax_array, _log_softmax_backward_array)


class LogSoftmaxBackward(Function):
    """g - exp(y) sum(g) for y = log_softmax(x), in one op (as PyTorch's _log_softmax_backward_data): one
    node and one new array, not four of each."""

    node_name = "LogSoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, g, y, dim):
        ctx.save(grad_output=g, output=y)
        ctx.dim = dim
        return _log_softmax_backward_array(g.array, y.array, dim)

    @staticmethod
    def backward(ctx, gg):  # d(g - e s), e = exp(y), s = sum(g):  dg = gg - sum(gg e);  dy = -gg e s
        from .elementwise import exp

        g, y = ctx._saved_grad_output, ctx._saved_output
        e = exp(y)
        return gg - (gg * e).sum(dim=ctx.dim, keepdim=True), -(gg * e * g.sum(dim=ctx.dim, keepdim=True)), None


def _log_softmax_backward_array(g, y, dim):  # g - exp(y) sum(g)
    if y.dtype == np.float16:
        return in_float32(_log_softmax_backward_array, g, y, dim)
    xp = array_module(y)
    e = xp.exp(y)
    s = g.sum(axis=dim, keepdims=True)
    if e.ndim == 0 or e.dtype != g.dtype:  # 0-d, or mixed precisions: out of place
        return xp.asarray(g - e * s)
    e *= s
    return xp.subtract(g, e, out=e)


def _softmax_input(input, dtype, dim=-1, name="softmax"):
    dtype = dtype_argument(dtype, name)
    if dtype is not None:
        input = input.to(dtype)
    if input.array.dtype.kind != "f" and input.array.size:  # PyTorch returns an empty tensor before it checks
        raise softmax_dtype_error(input, dim, name)
    return input


def softmax_dtype_error(input, dim, name):
    """PyTorch's error for (log_)softmax of integers or bools without dtype=, naming its CPU kernel (the
    last dim's, or the general one)."""
    last = dim == input.array.ndim - 1 or input.array.ndim == 0
    kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
    return NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")


def _softmax_dim(input, dim, name):
    if dim is None or not isinstance(input, Tensor):
        # torch.softmax and Tensor.softmax take no implicit dim (F.softmax's legacy choice, with its warning, is nn's)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    d = normalize_dim(dim, input.array.ndim)  # (a bool, a float or a string refused: the op's wrapper words it)
    return d if input.array.ndim else ()  # a 0-d tensor: the reductions run over no axis


def softmax(input, dim=None, dtype=None):
    """exp(x) / sum(exp(x)) along `dim`: one `SoftmaxBackward0` node."""
    d = _softmax_dim(input, dim, "softmax")
    return Softmax.rows_apply(_softmax_input(input, dtype, d), d)


def log_softmax(input, dim=None, dtype=None):
    """x - logsumexp(x) along `dim`: one `LogSoftmaxBackward0` node."""
    d = _softmax_dim(input, dim, "log_softmax")
    return LogSoftmax.rows_apply(_softmax_input(input, dtype, d, "log_softmax"), d)


def _all_any(input, dim, keepdim, name):
    dims = normalize_dims(dim, input.array.ndim)

    def reduce(a):
        out = array_module(a).asarray(getattr(a, name)(axis=dims, keepdims=keepdim))
        return out.astype(np.uint8) if a.dtype == np.uint8 else out

    return array_op(reduce, input)


def all(input, dim=None, keepdim=False):
    """True where every element along `dim` is nonzero (uint8 in, uint8 out, as PyTorch)."""
    return _all_any(input, dim, keepdim, "all")


def any(input, dim=None, keepdim=False):
    """True where some element along `dim` is nonzero."""
    return _all_any(input, dim, keepdim, "any")


class Prod(Function):
    node_name = "ProdBackward1"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.save(self=a)
        ctx.dims, ctx.keepdim = dims, keepdim
        return a.array.prod(axis=dims, keepdims=keepdim, dtype=_kept(a.array))

    @staticmethod
    def backward(ctx, g):  # d(prod a)/da_i = prod of the others (= prod / a_i when no a_j is 0)
        a, result = ctx.saved_tensors
        if a.array.dtype.kind == "c":  # g conj(d prod/da_i), and conj of a real-coefficient product is the product of conjs
            a, result = a.conj(), result.conj()
        if not ctx.keepdim and ctx.dims:
            g = g.reshape(_keep_shape(a.shape, ctx.dims))
            result = result.reshape(_keep_shape(a.shape, ctx.dims))
        if not bool((a.array == 0).any()):
            return g * result / a, None, None
        if state.grad_enabled:  # create_graph: the products of the others depend on a (even where g is a constant)
            return g * _prod_of_others_recorded(a, ctx.dims), None, None
        return g * Tensor._wrap(_prod_of_others(a.array, ctx.dims)), None, None


class ProdAll(Prod):
    node_name = "ProdBackward0"


def _prod_of_others_recorded(a, dims):
    """_prod_of_others as recorded ops (exclusive running products from both ends), for a graph of the backward."""
    from .shape import cat

    n = a.ndim
    order = [d for d in range(n) if d not in dims] + list(dims)
    moved = a.permute(*order) if order != list(range(n)) else a
    flat = moved.reshape(moved.shape[: n - len(dims)] + (-1,))
    ones = Tensor._wrap(array_module(a.array).ones(flat.shape[:-1] + (1,), dtype=a.array.dtype))
    left = cat([ones, flat[..., :-1]], -1).cumprod(-1)
    right = cat([flat[..., 1:], ones], -1).flip(-1).cumprod(-1).flip(-1)
    out = (left * right).reshape(moved.shape)
    inverse = [order.index(d) for d in range(n)]
    return out.permute(*inverse) if order != list(range(n)) else out


def _prod_of_others(x, dims):
    """For each element, the product of the other elements reduced with it (exact with zeros)."""
    xp = array_module(x)
    keep = [d for d in range(x.ndim) if d not in dims]
    moved = xp.moveaxis(x, list(dims), list(range(x.ndim - len(dims), x.ndim)))
    flat = moved.reshape(moved.shape[: len(keep)] + (-1,))
    ones = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = xp.flip(xp.cumprod(xp.flip(xp.concatenate([flat[..., 1:], ones], axis=-1), -1), axis=-1), -1)
    out = (left * right).reshape(moved.shape)
    return xp.moveaxis(out, list(range(x.ndim - len(dims), x.ndim)), list(dims))


def prod(input, dim=None, keepdim=False, dtype=None):
    """Product over `dim` (all elements when None); bool and int products are int64."""
    dtype = dtype_argument(dtype, "prod", None if dim is not None else ())
    input = _integral_to_int64(input, dtype)
    dims = normalize_dims(dim, input.array.ndim)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError("prod(): argument 'dim' must be int, not tuple")
    return (ProdAll if dim is None else Prod).apply(input, dims, keepdim)


class VectorNorm2(Function):
    node_name = "LinalgVectorNormBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):  # ||a|| = sqrt(sum a^2) over dims
        ctx.save(self=a)
        ctx.shape, ctx.dims, ctx.keepdim = a.array.shape, dims, keepdim
        return _norm2_array(a.array, dims, keepdim)

    @staticmethod
    def backward(ctx, g):  # d||a|| = a / ||a||, and 0 where ||a|| = 0 (PyTorch's subgradient there, not 0/0)
        from .elementwise import where

        a, n = ctx._saved_self, ctx._saved_result
        if not state.grad_enabled and g.array.dtype == a.array.dtype == n.array.dtype:
            # on the arrays, in the recorded (and PyTorch's) order: (a / n) g, into one new array
            xp = array_module(a.array)
            n_ = _expand_back_array(n.array, ctx.shape, ctx.dims, ctx.keepdim)
            r = xp.divide(a.array, n_)
            zero = n.array == 0
            if zero.any():  # (rare: a vector of zeros; its 0/0 set to 0)
                r = xp.where(_expand_back_array(zero, ctx.shape, ctx.dims, ctx.keepdim), r.dtype.type(0), r)
            r *= _expand_back_array(g.array, ctx.shape, ctx.dims, ctx.keepdim)
            return Tensor._wrap(r), None, None
        n = _expand_back(n, ctx.shape, ctx.dims, ctx.keepdim)
        zero = n == 0
        return _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim) * where(zero, 0.0, a / where(zero, 1.0, n)), None, None


class VectorNorm0(Function):
    """The count of nonzero elements: recorded, as PyTorch records it, with no gradient to give (a step function's
    slope is 0 almost everywhere; PyTorch leaves the input's grad unset rather than zero)."""
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        return (a.array != 0).sum(axis=dims, keepdims=keepdim).astype(a.array.dtype)

    @staticmethod
    def backward(ctx, g):
        return None, None, None


def _norm2_array(x, dims, keepdim):
    """sqrt(sum x^2) of array `x` over `dims`; float16 in float32, rounded once (PyTorch's)."""
    if x.dtype == np.float16:
        return in_float32(_norm2_array, x, dims, keepdim)
    return array_module(x).sqrt((x * x).sum(axis=dims, keepdims=keepdim))


def _vector_norm_array(x, p, dims, keepdim):
    """The p-norm of array `x` over `dims`, for an order p other than 0 and 2; float16 in float32, rounded once."""
    if x.dtype == np.float16:
        return in_float32(_vector_norm_array, x, p, dims, keepdim)
    x = array_module(x).abs(x)
    if p == math.inf:  # max |x|
        return x.max(axis=dims, keepdims=keepdim)
    if p == -math.inf:  # min |x|
        return x.min(axis=dims, keepdims=keepdim)
    if p == 1:  # sum |x|
        return add_reduce(x, dims, keepdim)
    return add_reduce(x ** p, dims, keepdim) ** (1.0 / p)  # p < 0: |0|^p = inf, and the slice's norm inf^(1/p) = 0


def _vector_norm_grad(a, n, p, dims, g):
    """d||a||_p / da times g, for `n` = ||a||_p over `dims`, it and `g` broadcast back (PyTorch's steps, so
    create_graph differentiates the same expression). Where the slope is infinite or undefined, 0 (PyTorch's
    subgradient)."""
    from .elementwise import abs as _abs, isnan, sign, where

    if p == 1:  # d sum|a| = sign(a)
        return sign(a) * g
    if math.isinf(p):  # d max|a| = sign(a) at the max, g shared evenly among ties (and NaNs, which are the max)
        hit = ((_abs(a) == n) | isnan(a)).to(g.dtype)
        return sign(a) * (g / hit.sum(dim=dims, keepdim=True) * hit)
    if p < 1:  # d (sum|a|^p)^(1/p) = sign(a) |a|^(p-1) n^(1-p); the first factor 0 at a = 0
        return sign(a) * where(a == 0, 0.0, _abs(a) ** (p - 1)) * g * n ** (1 - p)
    scale = where(n == 0, 0.0, g / n ** (p - 1))  # the same, n^(p-1) in the denominator: 0 for a slice of zeros
    return (sign(a) * _abs(a) ** (p - 1) if p < 2 else a * _abs(a) ** (p - 2)) * scale


class VectorNorm(Function):
    """The p-norm for the orders other than 0 and 2 (inf and -inf too): (sum |a|^p)^(1/p) over dims."""
    node_name = "LinalgVectorNormBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, p, dims, keepdim):
        ctx.save(self=a)
        ctx.p, ctx.shape, ctx.dims, ctx.keepdim = p, a.array.shape, dims, keepdim
        return _vector_norm_array(a.array, p, dims, keepdim)

    @staticmethod
    def backward(ctx, g):
        a, n = ctx._saved_self, ctx._saved_result
        g = _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim)
        return _vector_norm_grad(a, _expand_back(n, ctx.shape, ctx.dims, ctx.keepdim), ctx.p, ctx.dims, g), None, None, None


class Dist(Function):
    """||a - b||_p over every element of the broadcast difference: one node, PyTorch's DistBackward0."""
    node_name = "DistBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, b, p):
        ctx.save(self=a, other=b)
        ctx.p = p
        d = a.array - b.array
        if p == 0:
            return (d != 0).sum().astype(d.dtype)
        if p == 2:
            return _norm2_array(d, tuple(range(d.ndim)), False)
        return _vector_norm_array(d, p, tuple(range(d.ndim)), False)

    @staticmethod
    def backward(ctx, g):
        from ._util import sum_to

        if ctx.p == 0:  # the count of nonzeros: no gradient; PyTorch's negation of that nothing for `other` fails so
            if not ctx.needs_input_grad[1]:
                return None, None, None
            raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'")
        a, b, n = ctx._saved_self, ctx._saved_other, ctx._saved_result
        d = a - b
        grad = _vector_norm_grad(d, n.expand(d.shape), ctx.p, tuple(range(d.ndim)), g.expand(d.shape))
        return sum_to(grad, a.shape), sum_to(-grad, b.shape), None


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (broadcast), p a number or a 0-d tensor."""
    if isinstance(p, Tensor) and p.ndim == 0:
        p = p.item()
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not {type_name(p)}")
    a, b = elementwise.binary_operands(input, other)
    if a.array.dtype.kind != "f":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {a.dtype._legacy[:-6]} instead.")
    if p < 0 or p == math.inf:
        _no_identity_check(np.broadcast_shapes(a.array.shape, b.array.shape), p, None)
    return Dist.apply(a, b, float(p))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over `dim` (all elements by default): p = 2 ("fro"), 1, inf, -inf, 0 or any number."""
    dtype = dtype_argument(dtype, "linalg_vector_norm")
    if dtype is not None:
        input = input.to(dtype)
    if input.array.dtype.kind != "f":
        if input.array.dtype.kind != "c":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{input.dtype._legacy[:-6]}")
        input = input.abs()  # a complex vector's norms are its moduli's (whose backward is PyTorch's g sgn(z))
    dims = normalize_dims(dim, input.array.ndim)
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, (Tensor, np.generic)):  # (a 0-d tensor's or numpy's scalar: its number, as PyTorch reads it,
        p = p.item()  # so it promotes nothing)
    if isinstance(p, str):  # ('nuc' is linalg.norm's, which calls this for the others)
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if p == 0:
        return VectorNorm0.apply(input, dims, keepdim)
    if p == 2:
        return VectorNorm2.apply(input, dims, keepdim)
    if p < 0 or p == math.inf:
        _no_identity_check(input.array.shape, p, dim)
    return VectorNorm.apply(input, p, dims, keepdim)


def _no_identity_check(shape, p, dim):
    """max and the negative orders have no value for an empty slice (a sum's would be 0)."""
    if dim is None:
        if 0 in shape:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because the "
                               "operation does not have an identity")
        return
    for d in (dim,) if isinstance(dim, (int, np.integer)) else dim:
        if shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the dimension {d}because this "
                               "dimension is empty and the operation does not have an identity")


