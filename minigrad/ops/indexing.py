"""Indexing: `t[...]` with ints, slices, None, Ellipsis, integer tensors and boolean masks;
`gather`, `index_select`, `topk`, `multinomial`, and index assignment.

The backward of an index scatters the gradient into zeros of the input's shape, summing at
repeated indices (as PyTorch's index backward does); that scatter is itself an op whose
backward is the index again, so indexing is twice differentiable.
"""
import builtins

import numpy as np

from .. import random as _random
from ..autograd.function import Function
from ..device import array_module
from ..tensor import Tensor
from ._util import normalize_dim
from .reduction import values_indices


def _convert_index(index, xp, shape):
    """A numpy/cupy index from a user index, with PyTorch's checks and errors."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    advanced = False
    for i in index:
        if isinstance(i, Tensor):
            a = i.data
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            advanced = advanced or a.ndim > 0 or a.dtype.kind == "b"
        elif isinstance(i, (list, np.ndarray)):
            a = xp.asarray(i)
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            advanced = True
        elif isinstance(i, (builtins.int, np.integer, slice)) or i is None or i is Ellipsis:
            out.append(i)
        elif hasattr(i, "dtype") and hasattr(i, "shape"):  # a cupy array
            out.append(i)
            advanced = True
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(i).__name__})"
            )
    return tuple(out), advanced


def _index_error(e, shape):
    msg = str(e).replace("axis", "dimension")
    return IndexError(f"{msg} (indexing a tensor of shape {list(shape)})")


class Index(Function):
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, index, advanced):
        ctx.shape, ctx.index, ctx.advanced = a.data.shape, index, advanced
        try:
            return a.data[index]
        except IndexError as e:
            raise _index_error(e, a.data.shape) from None

    @staticmethod
    def backward(ctx, g):  # scatter the gradient to where the elements came from
        return IndexPutAdd.apply(g, ctx.shape, ctx.index, ctx.advanced), None, None


class Select(Index):
    node_name = "SelectBackward0"


class Slice(Index):
    node_name = "SliceBackward0"


class IndexPutAdd(Function):
    """zeros(shape)[index] += g: the backward of indexing (its own backward is the index again)."""

    node_name = "IndexBackwardBackward0"

    @staticmethod
    def forward(ctx, g, shape, index, advanced):
        ctx.index, ctx.advanced = index, advanced
        xp = array_module(g.data)
        out = xp.zeros(shape, dtype=g.data.dtype)
        if advanced:
            _add_at(xp, out, index, g.data)
        else:
            out[index] = g.data
        return out

    @staticmethod
    def backward(ctx, gg):
        return Index.apply(gg, ctx.index, ctx.advanced), None, None, None


def _add_at(xp, out, index, values):
    """out[index] += values, summing repeated indices."""
    if xp is np:
        np.add.at(out, index, values)
    else:
        xp.add.at(out, index, values)


def getitem(self, index):
    """`t[index]`: basic indexing gives a view; integer tensors and masks give a copy."""
    xp = array_module(self.data)
    idx, advanced = _convert_index(index, xp, self.data.shape)
    if advanced:
        cls = Index
    elif builtins.all(isinstance(i, (builtins.int, np.integer)) for i in idx):
        cls = Select
    else:
        cls = Slice
    out = cls.apply(self, idx, advanced)
    if not advanced and out.data.base is not None:
        out._version_counter = self._version_counter
        out._base = self if self._base is None else self._base
    return out


class IndexPut(Function):
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, a, value, index):
        ctx.index = index
        ctx.value_shape = value.data.shape
        out = a.data.copy()
        out[index] = value.data
        return out

    @staticmethod
    def backward(ctx, g):  # overwritten positions pass nothing back to `a`; `value` gets their grads
        from ._util import sum_to

        ga = gv = None
        if ctx.needs_input_grad[0]:
            mask = Tensor(array_module(g.data).ones(g.data.shape, dtype=g.data.dtype))
            mask.data[ctx.index] = 0
            ga = g * mask
        if ctx.needs_input_grad[1]:
            gv = sum_to(getitem(g, ctx.index), ctx.value_shape)
        return ga, gv, None


def setitem(self, index, value):
    """`t[index] = value` in place (recorded as PyTorch's CopySlices when grad is needed)."""
    from .inplace import apply_inplace

    xp = array_module(self.data)
    idx, _ = _convert_index(index, xp, self.data.shape)
    if not isinstance(value, Tensor):
        value = Tensor(xp.asarray(value, dtype=self.data.dtype))
    elif value.data.dtype != self.data.dtype:
        value = value.to(self.dtype)

    def raw(a):
        try:
            a[idx] = value.data
        except IndexError as e:
            raise _index_error(e, a.shape) from None
        except ValueError as e:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                               f"broadcast to indexing result ({e})") from None

    return apply_inplace(self, raw, lambda: IndexPut.apply(self, value, idx), value)


class Gather(Function):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.shape, ctx.dim = a.data.shape, dim
        ctx.save(index=index)
        xp = array_module(a.data)
        return xp.take_along_axis(a.data, index.data, axis=dim)

    @staticmethod
    def backward(ctx, g):  # scatter-add the gradient back along dim
        return index_scatter(g, ctx.dim, ctx._saved_index, ctx.shape), None, None


def gather(input, dim, index):
    """out[i][j] = input[i][index[i][j]] (for dim=1), with the gradient scattered back."""
    if index.data.dtype.kind not in "iu":
        raise RuntimeError(f"gather(): Expected dtype int64 for index, got {index.dtype}")
    d = normalize_dim(dim, input.data.ndim)
    if index.data.ndim != input.data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    n = input.data.shape[d]
    if index.data.size and (builtins.int(index.data.max()) >= n or builtins.int(index.data.min()) < -n):
        raise RuntimeError(f"index {builtins.int(index.data.max())} is out of bounds for dimension {d} with size {n}")
    return Gather.apply(input, d, index)


class ScatterAdd(Function):
    """zeros(shape).scatter_add(dim, index, g): the backward of gather and of max(dim)."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, dim, index, shape):
        ctx.dim = dim
        ctx.save(index=index)
        xp = array_module(g.data)
        out = xp.zeros(shape, dtype=g.data.dtype)
        idx = list(xp.indices(index.data.shape, sparse=True))
        idx[dim] = index.data
        _add_at(xp, out, tuple(idx), g.data)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Gather.apply(gg, ctx.dim, ctx._saved_index), None, None, None


def index_scatter(g, dim, index, shape):
    """A gradient of `shape` with `g` added at `index` along `dim` (repeats summed)."""
    return ScatterAdd.apply(g, dim, index, shape)


def index_select(input, dim, index):
    """Rows (along dim) picked by a 1-D index tensor."""
    d = normalize_dim(dim, input.data.ndim)
    return getitem(input, (slice(None),) * d + (index,))


class Topk(Function):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, a, k, dim, largest, sorted_):
        xp = array_module(a.data)
        src = a.data if largest else -a.data
        n = a.data.shape[dim]
        if k < n:
            idx = xp.argpartition(-src, k - 1, axis=dim)
            idx = xp.take(idx, xp.arange(k), axis=dim)
        else:
            idx = xp.broadcast_to(
                xp.arange(n).reshape([-1 if i == dim else 1 for i in range(a.data.ndim)]), a.data.shape
            ).copy()
        vals = xp.take_along_axis(src, idx, axis=dim)
        if sorted_:
            order = xp.argsort(-vals, axis=dim, kind="stable")
            idx = xp.take_along_axis(idx, order, axis=dim)
            vals = xp.take_along_axis(vals, order, axis=dim)
        ctx.shape, ctx.dim = a.data.shape, dim
        ctx.save(indices=Tensor(idx))
        ctx.mark_non_differentiable(idx)
        return (vals if largest else -vals), idx

    @staticmethod
    def backward(ctx, g, _):
        return index_scatter(g, ctx.dim, ctx._saved_indices, ctx.shape), None, None, None, None


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) values along dim and their indices."""
    d = normalize_dim(dim, input.data.ndim)
    n = input.data.shape[d] if input.data.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k={k}, dimension {d} has size {n})")
    values, indices = Topk.apply(input, k, d, largest, sorted)
    return values_indices(values, indices)


def sort(input, dim=-1, descending=False):
    d = normalize_dim(dim, input.data.ndim)
    return topk(input, input.data.shape[d], d, largest=descending, sorted=True)


def multinomial(input, num_samples, replacement=False, generator=None):
    """Sample indices from each row of non-negative weights `input` (1-D or 2-D)."""
    xp = array_module(input.data)
    p = input.data
    if p.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got {p.ndim})")
    if bool((p < 0).any()) or not bool(xp.isfinite(p).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = p.reshape(-1, p.shape[-1]).astype(np.float64)
    sums = rows.sum(axis=1, keepdims=True)
    if bool((sums <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rng = generator or _random.generator(xp)
    rows = rows / sums
    if replacement or num_samples == 1:
        # inverse-CDF sampling: one uniform per draw, searched in the row's cumulative sum
        cdf = xp.cumsum(rows, axis=1)
        cdf[:, -1] = 1.0
        u = rng.random((rows.shape[0], num_samples))
        out = xp.stack([xp.searchsorted(cdf[i], u[i], side="right") for i in range(rows.shape[0])])
    else:
        # Gumbel top-k: sampling without replacement in proportion to the weights
        gumbel = -xp.log(-xp.log(rng.random(rows.shape)))
        with np.errstate(divide="ignore"):
            keys = xp.log(rows) + gumbel
        out = xp.argsort(-keys, axis=1)[:, :num_samples]
    out = out.astype(np.int64)
    return Tensor(out.reshape(p.shape[:-1] + (num_samples,)))
