"""Writing along an index: scatter, scatter_add, scatter_reduce (sum, prod, mean, amax, amin;
include_self), index_add and index_reduce, out of place and in place (the trailing-underscore methods)."""
import functools
import inspect

import numpy as np

from .._warn_once import warn_once
from ..autograd import recording
from ..autograd.function import Function
from ..device import array_module
from ..tensor import Tensor
from ._util import arity_error, checked_scalar, normalize_dim, some_id_outside, too_many_positional, type_name
from .indexing import _add_at, _add_rows_at, _along, _ufunc_at, flat_along, scatter_add_at


def _used(src, index):
    """The part of `src` the index reaches (src may be larger than index in any dim)."""
    if src.shape == index.shape:
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _pad_to(g, shape):
    """g (the index's shape) zero-padded to `shape`: src's gradient where src is larger than index."""
    if g.array.shape == tuple(shape):
        return g
    return _PadTo.apply(g, tuple(shape))


class _PadTo(Function):
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, g, shape):
        ctx.region = tuple(slice(0, n) for n in g.array.shape)
        out = array_module(g.array).zeros(shape, dtype=g.array.dtype)
        out[ctx.region] = g.array
        return out

    @staticmethod
    def backward(ctx, gg):
        return gg[ctx.region], None


def _nonempty(arr):
    """arr, or a 0-d arr as a 1-element view: PyTorch's scatter takes a 0-d tensor as one of shape [1]."""
    return arr.reshape(1) if arr.ndim == 0 else arr


def gather_along(g, dim, index):
    from .indexing import Gather

    if g.array.ndim == 0:  # (a 0-d self's gradient, gathered by a 1-element index)
        g = g.reshape(1)
    return Gather.apply(g, dim, index)


def _scatter_write(out, dim, index, values):
    """out[...] = values (an array of the index's shape, or a scalar) at `index` along `dim`, in place."""
    if not index.size:
        return
    at = _nonempty(out)
    flat = flat_along(dim, index, at)  # (checked) one 1-D index, where numpy can: its quickest setitem
    if flat is None:
        at[_along(array_module(out), dim, index, at.shape)] = values
    else:
        at.reshape(-1)[flat] = values


class Scatter(Function):
    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.src_shape = dim, src.array.shape
        ctx.save(index=index)
        out = a.array.copy()
        _scatter_write(out, dim, index.array, _used(src.array, index.array))
        return out

    @staticmethod
    def backward(ctx, g):  # overwritten places pass nothing to self; src gets the gradient there
        index = ctx._saved_index
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = ScatterValue.apply(g, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            gs = _pad_to(gather_along(g, ctx.dim, index), ctx.src_shape)
        return ga, None, None, gs


class ScatterValue(Function):
    node_name = "ScatterBackward1"

    @staticmethod
    def forward(ctx, a, dim, index, value):
        ctx.dim = dim
        ctx.save(index=index)
        out = a.array.copy()
        _scatter_write(out, dim, index.array, value)
        return out

    @staticmethod
    def backward(ctx, g):  # overwritten places pass nothing back
        return ScatterValue.apply(g, ctx.dim, ctx._saved_index, 0.0), None, None, None


class ScatterAdd(Function):
    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.src_shape = dim, src.array.shape
        ctx.save(index=index)
        xp = array_module(a.array)
        out = a.array.copy()
        if index.array.size:
            scatter_add_at(xp, _nonempty(out), dim, index.array, _used(src.array, index.array))
        return out

    @staticmethod
    def backward(ctx, g):  # d(self + scattered src) = dself + gathered dsrc
        gs = None
        if ctx.needs_input_grad[3]:
            gs = _pad_to(gather_along(g, ctx.dim, ctx._saved_index), ctx.src_shape)
        return (g if ctx.needs_input_grad[0] else None), None, None, gs


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_into(xp, out, at, src, reduce, include_self):
    if not include_self:
        if reduce in _IDENTITY:
            out[at] = _IDENTITY[reduce]
        elif out.dtype.kind == "f":
            out[at] = -np.inf if reduce == "amax" else np.inf
        else:
            info = np.iinfo(out.dtype) if out.dtype != np.bool_ else None
            out[at] = (info.min if reduce == "amax" else info.max) if info else (reduce != "amax")
    _ufunc_at(xp, _UFUNC[reduce], out, at, src)


_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}  # (numpy's names)


# "max" and "min" (scatter_'s older names) reduce as amax and amin, but PyTorch has no gradient for them
_OLD_NAMES = {"max": "amax", "min": "amin"}


class ScatterReduce(Function):
    node_name = "ScatterReduceBackward0"
    saves_result = True  # (as PyTorch: prod's, amax's and amin's backward read it; an in-place write to it is caught)

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self):
        xp = array_module(a.array)
        s = _used(src.array, index.array)
        out = _nonempty(a.array.copy())
        flat = flat_along(dim, index.array, out)  # (checked) one 1-D index: numpy's fast loops take no other
        if flat is None:
            at, view = _along(xp, dim, index.array, out.shape), out
        else:
            at, s, view = flat.reshape(-1), s.reshape(-1), out.reshape(-1)
        _reduce_into(xp, view, at, s, _OLD_NAMES.get(reduce, reduce), include_self)
        count = None
        if reduce == "mean":  # out / how many values each place took in (at least 1)
            count = _mean_count(xp, out, at, flat is not None, include_self, a.array.dtype)
            out = out / count if out.dtype.kind == "f" else xp.floor_divide(out, count).astype(out.dtype)
            count = count.reshape(a.array.shape)
        out = out.reshape(a.array.shape)
        ctx.dim, ctx.reduce, ctx.include_self, ctx.src_shape = dim, reduce, include_self, src.array.shape
        ctx.count = count
        ctx.save(self=a, index=index, src=src)
        return out

    @staticmethod
    def backward(ctx, g):
        from .elementwise import where

        a, index, src, result = ctx.saved_tensors
        dim, reduce = ctx.dim, ctx.reduce
        if reduce in _OLD_NAMES:
            raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {reduce}.")
        s = src if tuple(src.shape) == tuple(index.shape) else src[tuple(slice(0, n) for n in index.shape)]
        touched = None  # (the places the index reaches: read without include_self, and by amax / amin)
        if not ctx.include_self or reduce in ("amax", "amin"):
            touched = Tensor._wrap(_touched(a.array, dim, index.array))
        ga = gs = None
        if reduce == "sum":  # d(self + sum src) = dself + dsrc
            ga = g if ctx.include_self else where(touched, 0.0, g)
            gs = gather_along(g, dim, index)
        elif reduce == "mean":  # each of the count terms gets 1/count of the gradient
            gc = g / Tensor._wrap(ctx.count)
            ga = gc if ctx.include_self else where(touched, 0.0, g)
            gs = gather_along(gc, dim, index)
        elif reduce == "prod":  # d prod / d x = the product of the others: prod / x, or where x is 0 the
            # product of the nonzero others if x is the only 0 of its group, else 0
            a1, s1 = where(a == 0, 1.0, a), where(s == 0, 1.0, s)
            nonzero = ScatterReduce.apply(a1, dim, index, s1, "prod", ctx.include_self)
            zeros = _zeros_per_group(a.array, dim, index.array, s.array, ctx.include_self)
            gr, gn = g * result, where(Tensor._wrap(zeros == 1), g * nonzero, 0.0)
            ga = where(a == 0, gn, gr / a1) if ctx.include_self else where(touched, 0.0, g)
            gs = where(s == 0, gather_along(gn, dim, index), gather_along(gr, dim, index) / s1)
        else:  # amax / amin: the gradient shared evenly among the elements equal to the result
            result = result.detach()
            self_hit = (a == result).to(g.dtype)  # (counted in the ties without include_self too, as PyTorch)
            src_hit = (s == gather_along(result, dim, index)).to(g.dtype)
            ties = ScatterAdd.apply(self_hit, dim, index, src_hit)
            ga = where(touched, g * self_hit / ties, g) if ctx.include_self else where(touched, 0.0, g)
            gs = gather_along(g / ties, dim, index) * src_hit
        if gs is not None:
            gs = _pad_to(gs, ctx.src_shape)
        return (ga if ctx.needs_input_grad[0] else None), None, None, (gs if ctx.needs_input_grad[3] else None), None, None


def _mean_count(xp, out, at, flat, include_self, dtype):
    """scatter_reduce mean's divisor in `dtype`: how many values each place of `out` reduced, at least 1. `at`:
    a flat index into out.reshape(-1) where `flat`, else _along's index."""
    if flat and (dtype.kind in "iu" or dtype in (np.float32, np.float64) and at.size < 2 ** 24):
        # counted in int64, then cast: the counts that adding ones in dtype reaches (integers wrap the same;
        # floats are exact below 2**24)
        count = (np.bincount(at, minlength=out.size) + include_self).astype(dtype).reshape(out.shape)
    else:
        count = xp.full(out.shape, 1 if include_self else 0, dtype=dtype)
        # (a Python 1 sends np.add.at down a 100x slower loop)
        _add_at(xp, count.reshape(-1) if flat else count, at, count.dtype.type(1))
    return xp.maximum(count, 1)


def _zeros_per_group(a, dim, index, s, include_self):
    """How many zeros each place of `a` reduces (its own if include_self, and src's scattered there)."""
    xp = array_module(a)
    count = (a == 0).astype(np.int64) if include_self else xp.zeros(a.shape, dtype=np.int64)
    flat = flat_along(dim, index, _nonempty(count))
    if flat is None:
        _add_at(xp, _nonempty(count), _along(xp, dim, index, _nonempty(a).shape), (s == 0).astype(np.int64))
    else:  # (the places of src's zeros, counted)
        count += np.bincount(flat[s == 0], minlength=count.size).reshape(count.shape)
    return count


class IndexReduce(ScatterReduce):
    """index_reduce: scatter_reduce with each index entry spread over its slice of source."""
    node_name = "IndexReduceBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source, reduce, include_self):
        xp = array_module(a.array)
        i = index.array.reshape(-1)
        n = a.array.shape[dim] if a.array.ndim else 1
        if ((i < 0) | (i >= n)).any():  # (here, not in index_reduce: a replay checks each call's index; no id
            _index_reduce_outside(a.array, dim, i, n, include_self)  # counts from the end, as in index_add)
        shape = [1] * source.array.ndim
        if shape:  # (a 0-d source: its one element goes to the one id)
            shape[dim] = i.size
        spread = xp.broadcast_to(i.astype(np.int64).reshape(shape), source.array.shape)
        return ScatterReduce.forward(ctx, a, dim, Tensor._wrap(spread), source, reduce, include_self)


def _index_reduce_outside(a, dim, i, n, include_self):
    """index_reduce's refusal of ids outside [0, n), in PyTorch's words: those of the index_fill that first puts
    each reduction's start in place without include_self (where it fills anything: its ids from the end pass),
    else its kernel's, whose first look along an empty dim of a matrix is a select's."""
    outside = (i < -n) | (i >= n)
    if not include_self and outside.any() and 0 not in a.shape[:dim] + a.shape[dim + 1:]:
        raise IndexError(f"index {i[outside.argmax()]} is out of bounds for dimension {dim} with size {n}")
    if a.ndim > 1 and n == 0:
        raise IndexError(f"select(): index 0 out of range for tensor of size {list(a.shape)} at dimension {dim}")
    raise IndexError("index out of range in self")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of `input` with source[k] reduced into input[index[k]] along `dim`: "prod", "mean", "amax" or
    "amin", input's own value taken in too with include_self."""
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(include_self, bool):
        raise TypeError(f"index_reduce(): argument 'include_self' must be bool, not {type_name(include_self)}")
    d = _check_index_source("index_reduce", input, dim, index, source)
    if input.array.dtype == np.bool_ and not include_self:
        raise NotImplementedError("\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'")
    if input.array.dtype == np.bool_ and reduce == "mean":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    return IndexReduce.apply(input, d, index, source, reduce, include_self)


def _touched(a, dim, index):
    t = array_module(a).zeros(a.shape, dtype=bool)
    _scatter_write(t, dim, index, True)
    return t


class IndexAdd(Function):
    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha):
        _check_index_add_ids(a.array, dim, index.array, alpha)  # (here, not in index_add: a replay checks each call's index)
        ctx.dim, ctx.alpha, ctx.source_shape = dim, alpha, source.array.shape
        ctx.save(index=index)
        out = a.array.copy()
        if not out.size:  # (nothing to add to; the backward's index_select checks the ids)
            return out
        if a.array.ndim == 0:
            return out + alpha * source.array.reshape(())
        _index_add_to(out, dim, index.array.reshape(-1), source.array, alpha)
        return out

    @staticmethod
    def backward(ctx, g):  # d(self + alpha source placed at index) = dself + alpha index_select(g)
        from .indexing import index_select

        gs = None
        if ctx.needs_input_grad[3]:
            if g.array.ndim == 0:
                gs = g.reshape(ctx.source_shape)
            else:
                gs = index_select(g, ctx.dim, ctx._saved_index).reshape(ctx.source_shape)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return (g if ctx.needs_input_grad[0] else None), None, None, gs, None


def _check_index_add_ids(a, dim, index, alpha):
    i = index.reshape(-1)
    n = a.shape[dim] if a.ndim else 1
    if some_id_outside(i, n) and (a.ndim <= 1 or a.size):  # (PyTorch reads no id into an empty matrix)
        # no id counts from the end; PyTorch's kernel for the first or last dim of a matrix by int64 ids
        # and an alpha of 1, a scatter_add, words it its own way
        if a.ndim <= 1 or dim not in (0, a.ndim - 1) or index.dtype != np.int64 or alpha != 1 or type(alpha) is bool:
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {i[((i < 0) | (i >= n)).argmax()]} is out of bounds for dimension {dim} with size {n}")


def _index_add_to(out, dim, i, source, alpha):
    """out += alpha * source placed at the ids `i` along dim, in place (out of one dim or more, C-contiguous)."""
    xp = array_module(out)
    if dim == 0:  # (rows of a contiguous array: the fast row loop of indexing's backward)
        src = source * alpha if alpha != 1 else source
        if xp is np:
            _add_rows_at(out, i, src)
        else:
            xp.add.at(out, i, src)
        return
    src = xp.moveaxis(source, dim, 0) * alpha if alpha != 1 else xp.moveaxis(source, dim, 0)
    xp.add.at(xp.moveaxis(out, dim, 0), i, src)


def _index_add_into(arr, dim=None, index=None, source=None, *rest, alpha=1, **unknown):
    """index_add_ adding into arr itself (index_add's checks first), not into a copy then written back. Not
    where an argument shares arr's memory (the op reads them as they were), nor into a 0-d or strided arr."""
    if rest or unknown or not (isinstance(index, Tensor) and isinstance(source, Tensor) and arr.ndim and arr.size
            and arr.flags.c_contiguous) or np.may_share_memory(arr, source.array) \
            or np.may_share_memory(arr, index.array):
        return False
    d = _check_index_source("index_add", Tensor._wrap(arr), dim, index, source)
    _check_index_add_ids(arr, d, index.array, alpha)
    _index_add_to(arr, d, index.array.reshape(-1), source.array, alpha)
    return True


# ---- argument checks and the public functions ------------------------------------------------------
def _scatter_args(input, dim, index, src=None):
    """PyTorch's checks of scatter's arguments, in its order (the dim, the dtypes, then the shapes, a 0-d
    tensor taken as one of shape [1]); the dim normalized, and the index and src as the forwards take them:
    a 0-d one as shape [1], an empty index as one of self's ndim."""
    nd = input.array.ndim
    d = normalize_dim(dim, nd)
    if index.array.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src.array.dtype != input.array.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.array.size == 0:  # (PyTorch checks no shape then: nothing is written)
        return d, Tensor._wrap(index.array.reshape((0,) * max(nd, 1))), src
    ishape, sshape = index.array.shape or (1,), input.array.shape or (1,)
    if len(ishape) != len(sshape):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = any(ishape[k] > sshape[k] for k in range(len(sshape)) if k != d)
    if not wrong and src is not None:
        rshape = src.array.shape or (1,)
        for k in range(len(sshape)):
            wrong = wrong or ishape[k] > rshape[normalize_dim(k, len(rshape))]
        if len(rshape) != len(ishape):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        against = f" and to be no larger size than src {list(src.array.shape)}" if src is not None else ""
        raise RuntimeError(f"Expected index {list(index.array.shape)} to be no larger than self {list(input.array.shape)} "
                           f"apart from dimension {d}{against}")
    if index.array.ndim == 0:
        index = Tensor._wrap(index.array.reshape(1))
    if src is not None and src.array.ndim == 0:
        src = src.reshape(1)
    return d, index, src


def _src_tensor(name, src, pos):
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' (position {pos}) must be Tensor, not {type_name(src)}")
    return src


def _warn_reduce_with_src():
    """PyTorch's deprecation of scatter's reduce= with a Tensor src (a value is not deprecated), once a process."""
    warn_once("scatter reduce with src", "The reduce argument of torch.scatter with Tensor src is deprecated and will "
              "be removed in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def scatter(input, dim, index, src=None, value=None, reduce=None):
    """A copy of `input` with src[i][j] (or `value`) written at [index[i][j]][j] (for dim=0)."""
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    d, index, src = _scatter_args(input, dim, index, src)
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, complex):  # (PyTorch's refusal where it has no place in self's dtype)
        from ..factory import _complex_fill

        value = _complex_fill(value, input.dtype)
    value = checked_scalar(value, input.array.dtype)  # (-inf into an integer tensor: PyTorch's overflow text)
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise RuntimeError("reduce argument must be either add or multiply.")
        if src is None:
            src = Tensor._wrap(array_module(input.array).full(index.array.shape, value, dtype=input.array.dtype))
        else:
            _warn_reduce_with_src()
        return scatter_reduce(input.detach(), d, index, src.detach(), modes[reduce])
    if src is not None:
        return Scatter.apply(input, d, index, src)
    return ScatterValue.apply(input, d, index, value)


def scatter_add(input, dim, index, src):
    """A copy of `input` with src added at the index along `dim` (repeats summed)."""
    d, index, src = _scatter_args(input, dim, index, _src_tensor("scatter_add", src, 4))
    return ScatterAdd.apply(input, d, index, src)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of `input` with src reduced into it at the index: "sum", "prod", "mean", "amax" or "amin"."""
    d, index, src = _scatter_args(input, dim, index, _src_tensor("scatter_reduce", src, 4))
    if reduce not in ("sum", "prod", "mean", "amax", "amin", *_OLD_NAMES):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "mean" and input.array.dtype == np.bool_:
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    return ScatterReduce.apply(input, d, index, src, reduce, bool(include_self))


def _check_index_source(name, input, dim, index, source):
    """index_add's and index_reduce's checks of the index and source (PyTorch's texts); the dim, normalized."""
    nd = input.array.ndim
    d = normalize_dim(dim, nd)
    for arg, pos, t in (("index", 2, index), ("source", 3, source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type_name(t)}")
    if index.array.ndim > 1:
        raise IndexError(f"{name}_(): Index is supposed to be a vector, but got dim: {index.array.ndim} with type: "
                         f"{index.dtype._legacy[:-6]} and size: {list(index.shape)}")
    if index.array.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index but got: {index.dtype._legacy[:-6]}")
    if source.array.dtype != input.array.dtype:
        raise RuntimeError(f"{name}_(): self ({input.dtype._legacy[:-6]}) and source ({source.dtype._legacy[:-6]}) "
                           "must have the same scalar type")
    src_shape = list(source.array.shape)
    if d >= max(len(src_shape), 1):
        raise RuntimeError(f"{name}_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{len(src_shape)}")
    n = src_shape[d] if src_shape else 1
    if index.array.size != n:
        if not src_shape:  # (PyTorch's message reads source.size(dim), which a 0-d source refuses)
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"{name}_(): Number of indices ({index.array.size}) should be equal to source.size(dim): "
                           f"({n}), for dim: {d}")
    # the shapes but `dim` must agree; a 0-d self or source is compared whole
    self_rest, src_rest = list(input.array.shape), list(src_shape)
    if nd and src_shape:
        del self_rest[d], src_rest[d]
    if self_rest != src_rest:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(input.array.shape)} source.shape = {src_shape}")
    return d


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of `input` with alpha * source[k] added at input[index[k]] along `dim` (repeats summed)."""
    d = _check_index_source("index_add", input, dim, index, source)
    return IndexAdd.apply(input, d, index, source, alpha)  # (the index's entries are checked in its forward)


def tensors_read(*args, **kwargs):
    """The arrays of an in-place op's tensor arguments: what PyTorch refuses to see share self's memory."""
    return [a.array for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]


def index_read(dim=None, index=None, *rest, **kwargs):  # index_fill_'s: its value, a number to it, is not
    return (index.array,) if isinstance(index, Tensor) else ()


def index_put_read(indices=(), values=None, accumulate=False, *rest, **kwargs):
    """index_put_'s: its index tensors and values, but where it writes as masked_fill_ (one mask, one value)."""
    ids = [i for i in indices if isinstance(i, Tensor)] if type(indices) in (tuple, list) else []
    if not accumulate and isinstance(values, Tensor) and values.array.size == 1 and len(ids) == 1 \
            and ids[0].array.dtype in (np.bool_, np.uint8):
        return ()
    return [t.array for t in (*ids, values) if isinstance(t, Tensor)]


def _inplace(fn, into=None, src_at=None):
    """The in-place form `t.scatter_(...)`: the out-of-place op, written back into t; or, with nothing to
    record, `into(arr, ...)` where it writes the op's result into t's array itself (it returns False where not).
    src_at: the place of a src that must be a Tensor, checked here for the method's name and position."""
    from .inplace import apply_inplace, refuse_shared

    def raw(arr, args, kwargs):
        if into is None or not into(arr, *args, **kwargs):
            arr[...] = fn(Tensor._wrap(arr), *args, **kwargs).array

    def op(self, *args, **kwargs):
        if src_at is not None:
            _src_tensor(fn.__name__ + "_", args[src_at] if len(args) > src_at else kwargs.get("src"), src_at + 1)
        others = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        refuse_shared(self, self.array, [a.array for a in others])
        if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
            return _record(op, self, others, args, kwargs, lambda source: fn(source, *args, **kwargs))
        return apply_inplace(self, lambda arr: raw(arr, args, kwargs), lambda: fn(self, *args, **kwargs), *others)

    op.__name__ = fn.__name__ + "_"
    op.__doc__ = f"In-place {fn.__name__}."
    return op


def _scatter_into(arr, dim=None, index=None, src=None, value=None, reduce=None, **unknown):
    """scatter_ writing into arr itself (scatter's checks first), not into a copy then written back (a one-hot,
    `zeros(n, k).scatter_(1, ids.unsqueeze(1), 1.0)`). Not for a reduce, nor where a tensor argument shares
    arr's memory (the op reads them as they were), nor a value other than a Python number."""
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    if unknown or reduce is not None or not isinstance(index, Tensor) or np.may_share_memory(arr, index.array) \
            or (src is None and type(value) not in (float, int, bool)) \
            or (src is not None and (not isinstance(src, Tensor) or np.may_share_memory(arr, src.array))):
        return False
    d, index, src = _scatter_args(Tensor._wrap(arr), dim, index, src)
    _scatter_write(arr, d, index.array, _used(src.array, index.array) if src is not None
                   else checked_scalar(value, arr.dtype))
    return True


scatter_ = _inplace(scatter, _scatter_into)


def _scatter_add_into(arr, dim, index, src):
    """scatter_add_ adding src at the index into arr itself (scatter_add's checks first), not into a copy then
    written back: two passes over arr fewer (a bag of words' counts, `x.scatter_add_(1, ids, ones)`). Not
    where src shares arr's memory: the op reads src as it was."""
    if not isinstance(src, Tensor) or not isinstance(index, Tensor) or np.may_share_memory(arr, src.array):
        return False
    d, index, src = _scatter_args(Tensor._wrap(arr), dim, index, src)
    if index.array.size:
        scatter_add_at(array_module(arr), _nonempty(arr), d, index.array, _used(src.array, index.array))
    return True


scatter_add_ = _inplace(scatter_add, _scatter_add_into, src_at=2)
scatter_reduce_ = _inplace(scatter_reduce, src_at=2)
index_add_ = _inplace(index_add, _index_add_into)
index_reduce_ = _inplace(index_reduce)


def _record(op, self, others, args, kwargs, out_of_place):
    """An in-place `op` inside a minigrad.compile capture: in the autograd graph (relu_ after a Linear), the
    out-of-place op as the step, self standing for its result from then on; else a replayed call of op."""
    from .inplace import in_graph, write_result

    recorder = recording.hook.recorder
    if in_graph(self, others):
        return recorder.on_inplace_in_graph(self, None, lambda source, _: out_of_place(source), write_result)
    return recorder.on_inplace(op, self, args, kwargs)


def make_inplace(fn, name, into=None, clone=True, elementwise=False, result=None, differentiable=True, reads=None,
                 partial_reads=False, expanded=False):
    """`t.name_(...)`: the out-of-place op `fn`, written back into t (PyTorch's checks: the result
    must keep t's shape and be castable to t's dtype); with nothing to record, `into(arr, ...)` where it
    writes the result into t's array itself (it returns False where not). clone=False where fn saves no
    input for its backward (relu saves its result): recorded, it then runs on t itself, not on a copy.
    elementwise: the tensor arguments broadcast with t (lerp_'s end and weight), so where the op refuses
    (a dtype it has no kernel for) PyTorch's earlier refusals come first (inplace.check_in_order);
    result(self, *args): among them, the dtype of the op's result, refused where t cannot hold it
    (int.bitwise_or_(float)), as PyTorch checks it before looking for the kernel. differentiable=False: an op PyTorch has no derivative for (logical_not_), which
    autograd neither checks nor records. reads(*args, **kwargs): the arrays among the arguments that PyTorch
    refuses to see share t's memory (index_put_'s values and ids). partial_reads: PyTorch refuses a tensor argument
    that shares part of t's memory, but not all of it (the elementwise ops' check, after the op's own ones).
    expanded: PyTorch writes into an expanded t too, with a warning (index_fill_, index_put_)."""
    from .inplace import apply_inplace, check_cast, check_in_order, output_shape_error, refuse_shared

    fill = name + "_" if expanded else False  # (apply_inplace's warning, where t is expanded)

    def check(self, out, args, kwargs):
        if partial_reads:
            refuse_shared(self, self.array, tensors_read(*args, **kwargs), False, differentiable)
        if tuple(out.array.shape) != tuple(self.array.shape):
            raise output_shape_error(self.array.shape, out.array.shape)
        check_cast(self, out.array.dtype)

    def raw(self, args, kwargs):
        def write(arr):
            if into is not None and into(arr, *args, **kwargs):
                return
            out = fn(Tensor._wrap(arr), *args, **kwargs)
            check(self, out, args, kwargs)
            arr[...] = out.array

        return write

    copy = clone

    def recorded(self, args, kwargs):
        def run():
            from .shape import clone

            # on a clone: the op may save its input for backward, and the result is written over self
            out = fn(clone(self) if copy else self, *args, **kwargs)
            check(self, out, args, kwargs)
            return out

        return run

    code = getattr(inspect.unwrap(fn), "__code__", None)
    takes = None if code is None or code.co_flags & inspect.CO_VARARGS else code.co_argcount - 1  # (self not counted)

    def op(self=None, *args, **kwargs):
        if self is None:  # (the functional forms' name for it: `F.elu_(input=x)`)
            self = kwargs.pop("input")
        if takes is not None and len(args) > takes:  # (PyTorch's words, not the out-of-place op's, which count self)
            raise TypeError(too_many_positional(name + "_", takes, len(args)))
        others = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        if reads is not None:
            refuse_shared(self, self.array, reads(*args, **kwargs))
        if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
            return _record(op, self, others, args, kwargs, lambda source: recorded(source, args, kwargs)())
        if not elementwise:
            return apply_inplace(self, raw(self, args, kwargs), recorded(self, args, kwargs), *others,
                                 differentiable=differentiable, fill=fill)
        try:
            return apply_inplace(self, raw(self, args, kwargs), recorded(self, args, kwargs), *others,
                                 differentiable=differentiable, fill=fill)
        except (RuntimeError, NotImplementedError, TypeError):  # (only once the op refused: the usual path unchecked)
            check_in_order(self, others, None if result is None else result(self, *args), differentiable)
            raise

    op.__name__ = name + "_"
    op.__doc__ = f"In-place {name}: the result written into this tensor (version bumped)."
    return op


# PyTorch numbers an in-place view op's node after the out-of-place forms: t_ is TBackward1 where t is
# TBackward0, squeeze_ SqueezeBackward3-5 where squeeze is 0-2, as_strided_ AsStridedBackward1
_INPLACE_NODE_SHIFT = {"TBackward": 1, "TransposeBackward": 1, "UnsqueezeBackward": 1, "SqueezeBackward": 3,
                       "AsStridedBackward": 1}


@functools.cache
def _inplace_node_cls(cls):
    name = cls.__name__
    return type(name[:-1] + str(int(name[-1]) + _INPLACE_NODE_SHIFT[name[:-1]]), (cls,), {})


def _rename_inplace_node(node):
    if type(node).__name__[:-1] in _INPLACE_NODE_SHIFT:
        node.__class__ = _inplace_node_cls(type(node))


def make_view_inplace(fn, name):
    """`t.unsqueeze_(0)`, `t.t_()`, ...: the tensor itself takes the view's shape (and, outside a leaf, its node)."""
    from ..autograd.grad_mode import state
    from .inplace import check_inplace

    def op(self, *args, **kwargs):
        if state.grad_enabled:
            check_inplace(self)
        try:
            out = fn(self, *args, **kwargs)
        except (RuntimeError, TypeError) as e:  # (PyTorch's texts name the in-place form: "t_() expects ...")
            # (Python's own count of fn's arguments in PyTorch's words: a method's, self not counted)
            error = arity_error(e, name + "_", inspect.unwrap(fn), True) if isinstance(e, TypeError) else None
            if error is None and not str(e).startswith(name + "()"):
                raise
            raise error or type(e)(name + "_" + str(e)[len(name):]) from None
        self.array = out.array
        counter = self._version_counter
        counter[0] += 1  # (a new shape is a change a saved tensor must see, as PyTorch counts it)
        if self._base is not None and self._view_version == counter[0] - 1:  # (a view's history stays current)
            self._view_version = counter[0]
        if out.grad_fn is not None and self.grad_fn is not None:
            _rename_inplace_node(out.grad_fn)
            self.grad_fn, self._output_nr = out.grad_fn, out._output_nr
        if recording.hook.recorder is not None:  # minigrad.compile is capturing: self stands for the view's value
            recording.hook.recorder.rebind(self, out)
        return self

    op.__name__ = name + "_"
    op.__doc__ = f"In-place {name}: this tensor takes the new shape."
    return op
