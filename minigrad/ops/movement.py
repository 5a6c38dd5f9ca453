"""Ops that move or pick elements: flip, roll, repeat/tile, repeat_interleave, diagonal/diag,
unfold, masked_select, nonzero, argsort and einsum. Each backward is itself a recorded op (the
reverse move, or the scatter whose backward is the pick again), so all are twice differentiable."""
import builtins
import functools
import operator
import string

import numpy as np

from ..autograd.function import Function
from ..device import array_module
from ..tensor import Tensor, int_argument
from ..autograd import recording
from .array_op import array_op
from ._util import (broadcast_shapes, descending_key, normalize_dim, sizes_or_keyword, sum_to, too_many_positional,
                    type_name)
from .indexing import index_select
from .shape import Clone, _records_nothing, _shape_arg, expand, unsqueeze, view


def _strided(xp, x, shape, strides):
    if xp is np:
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _view(fn):
    """The op's result shares memory and the version counter with its input, as a view."""
    from .shape import _share_version

    @functools.wraps(fn)
    def op(input, *args, **kwargs):
        return _share_version(fn(input, *args, **kwargs), input)

    return op


def _dims(dims, ndim):
    if isinstance(dims, (builtins.int, np.integer)):
        dims = (dims,)
    out = []
    for d in dims:  # in order, as PyTorch: the first repeat is named, a later dim out of range not reached
        d = normalize_dim(d, ndim)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out)


# ---- flip, roll ----------------------------------------------------------------------------------
class Flip(Function):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        xp = array_module(a.array)
        return xp.ascontiguousarray(xp.flip(a.array, dims)) if dims else a.array.copy()

    @staticmethod
    def backward(ctx, g):  # flipping is its own inverse
        return Flip.apply(g, ctx.dims), None


def flip(input, dims=None):
    """torch.flip: the elements in reverse order along the sequence of dims `dims` (a copy, as PyTorch)."""
    if dims is None:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type_name(dims)}")
    return _flip(input, tuple(dims), 2)


def flip_method(input, *dims, **kw):
    """Tensor.flip, which also takes the dims as separate ints (`x.flip(0, 1)`)."""
    if kw:
        dims = sizes_or_keyword("flip", dims, kw, "dims")
        if not isinstance(dims[0], (tuple, list)):
            raise TypeError(f"flip(): argument 'dims' must be tuple of ints, not {type_name(dims[0])}")
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return _flip(input, tuple(dims[0]), 1)
    return _flip(input, dims, 1, varargs=True)


def _flip(input, dims, position, varargs=False):
    nd = input.array.ndim
    try:
        checked = _dims(dims, max(nd, 1))  # (a 0-d tensor's dims checked as one dim's, as PyTorch's)
        return Flip.apply(input, () if nd == 0 else checked)
    except TypeError:  # (a dim that is no int: numpy's refusal, given PyTorch's words)
        text = _dims_type_error(dims, position, varargs)
        if text is None:
            raise
        raise TypeError(text) from None


def _dims_type_error(dims, position, varargs):
    """PyTorch's argument parser's text for dims with an entry that is not an int (numpy's 0.5, a str)."""
    i, bad = next(((i, d) for i, d in enumerate(dims) if isinstance(d, builtins.bool)
                   or not isinstance(d, (builtins.int, np.integer, Tensor))), (None, None))
    if i is None:
        return None
    if varargs and i == 0:  # (the parser takes separate ints only when the first is one)
        if len(dims) > 1:
            return too_many_positional("flip", 1, len(dims))
        return f"flip(): argument 'dims' (position {position}) must be tuple of ints, not {type_name(bad)}"
    if i == 0:
        return (f"flip(): argument 'dims' (position {position}) must be tuple of ints, but found element of type "
                f"{type_name(bad)} at pos 0")
    return (f"flip(): argument 'dims' failed to unpack the object at pos {i + 1} with error \"type must be tuple of "
            f"ints,but got {type_name(bad)}\"")


def fliplr(input):
    if input.array.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.array.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class Roll(Function):
    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        xp = array_module(a.array)
        if dims is None:
            return xp.roll(a.array.reshape(-1), shifts).reshape(a.array.shape)
        return xp.roll(a.array, shifts, dims)

    @staticmethod
    def backward(ctx, g):  # roll back by the same shifts
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def _int_tuple(x, argument):
    """roll's shifts or dims as a tuple; PyTorch's parser's refusal (the method's count) of a bool or a float."""
    if isinstance(x, (builtins.int, np.integer)) and not isinstance(x, builtins.bool):
        return (x,)
    if isinstance(x, (builtins.bool, builtins.float)) or not hasattr(x, "__iter__"):
        raise TypeError(f"roll(): argument {argument} must be tuple of ints, not {type_name(x)}")
    return tuple(x)


def roll(input, shifts, dims=None):
    """Elements shifted cyclically along `dims` (the flattened tensor when dims is None)."""
    shifts = _int_tuple(shifts, "'shifts' (position 1)")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input, tuple(builtins.int(s) for s in shifts), None)
    dims = _int_tuple(dims, "'dims' (position 2)")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    nd = input.array.ndim
    if input.array.size == 0:  # PyTorch returns an empty tensor's roll before it checks the dims
        return Roll.apply(input, tuple(builtins.int(s) for s in shifts), None)
    if nd == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(normalize_dim(d, nd) for d in dims)
    return Roll.apply(input, tuple(builtins.int(s) for s in shifts), dims)


# ---- repeat, tile, repeat_interleave -----------------------------------------------------------------
class Repeat(Function):
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, a, repeats):
        ctx.shape, ctx.repeats = a.array.shape, repeats
        lead = (1,) * (len(repeats) - a.array.ndim)
        return array_module(a.array).tile(a.array.reshape(lead + a.array.shape), repeats)

    @staticmethod
    def backward(ctx, g):  # each copy's gradient summed back: view as (r0, s0, r1, s1, ...), sum the r's
        full = (1,) * (len(ctx.repeats) - len(ctx.shape)) + tuple(ctx.shape)
        pairs = []
        for r, s in zip(ctx.repeats, full):
            pairs += [r, s]
        summed = g.reshape(tuple(pairs)).sum(dim=tuple(range(0, len(pairs), 2)))
        return summed.reshape(ctx.shape), None




def repeat(input, *sizes, **kw):
    """The tensor tiled `sizes` times along each dim (sizes may add leading dims)."""
    if kw:
        sizes = sizes_or_keyword("repeat", sizes, kw, "repeats")
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = _shape_arg(sizes, "repeat", "repeats")
    if len(sizes) < input.array.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if builtins.any(s < 0 for s in sizes):  # (PyTorch's text names the first negative of the result's shape)
        shape = (1,) * (len(sizes) - input.array.ndim) + input.array.shape
        target = [n * s for n, s in zip(shape, sizes)]
        if builtins.any(t < 0 for t in target):
            first = next(t for t in target if t < 0)
            raise RuntimeError(f"Trying to create tensor with negative dimension {first}: {target}")
    return Repeat.apply(input, sizes)


def tile(input, dims):
    """repeat(), with `dims` padded with leading ones to the tensor's ndim (as torch.tile)."""
    dims = _shape_arg((dims,), "tile", "dims") if not isinstance(dims, (builtins.int, np.integer)) else (builtins.int(dims),)
    dims = (1,) * (input.array.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, output_size=None):
    """Each element repeated `repeats` times (an int or a 1-D tensor of counts) along `dim`
    (the flattened tensor when dim is None). With only a counts tensor: arange repeated."""
    xp = array_module(input.array)
    if repeats is None:  # repeat_interleave(counts): 0, 1, ... each repeated counts[i] times
        counts = input.array
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        recording.escape("repeat_interleave of counts, whose result's shape depends on the data,")
        return Tensor._wrap(xp.repeat(xp.arange(counts.shape[0], dtype=np.int64), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = normalize_dim(dim, input.array.ndim)
    if input.array.ndim == 0:
        input = input.reshape(1)
    n = input.array.shape[d]
    if isinstance(repeats, Tensor):
        recording.escape("repeat_interleave of a tensor of repeats, whose result's shape depends on the data,")
        r = repeats.array.reshape(-1) if repeats.array.ndim == 0 else repeats.array
        if r.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.shape[0] not in (1, n):
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{r.shape[0]} and input.size({d}) = {n}")
        if bool((r < 0).any()):
            raise RuntimeError("repeats can not be negative")
    else:
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        if repeats and _records_nothing(input):  # nothing to record (generation's GQA keys): numpy's repeat,
            # one copy (not an empty result: numpy's strides of one are 0s, PyTorch's a contiguous tensor's)
            return Tensor._wrap(xp.repeat(input.array, repeats, axis=d))
        # PyTorch's way for one count: r broadcast copies of each slice, made contiguous; the backward
        # then sums over the copies instead of scattering through an index (np.add.at is slow)

        shape = input.array.shape
        copies = expand(unsqueeze(input, d + 1), *shape[:d + 1], repeats, *shape[d + 1:])
        return view(Clone.apply(copies, None), *shape[:d], n * repeats, *shape[d + 1:])
    idx = xp.repeat(xp.arange(n, dtype=np.int64), r)
    return index_select(input, d, Tensor._wrap(idx))


# ---- diagonal, diag ------------------------------------------------------------------------------------
def _diag_index(shape, offset, d1, d2):
    """(rows, cols) of the diagonal `offset` of dims d1, d2 (moved last), and its length."""
    n1, n2 = shape[d1], shape[d2]
    length = builtins.max(0, builtins.min(n1 + builtins.min(offset, 0), n2 - builtins.max(offset, 0)))
    i = np.arange(length)
    return i + builtins.max(-offset, 0), i + builtins.max(offset, 0)


class Diagonal(Function):
    node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        ctx.shape, ctx.args = a.array.shape, (offset, d1, d2)
        xp = array_module(a.array)
        rows, cols = _diag_index(a.array.shape, offset, d1, d2)
        moved = xp.moveaxis(a.array, (d1, d2), (-2, -1))
        if not len(rows):  # an empty diagonal is still a view (its version counter the input's), not numpy's copy
            return moved[..., :0, :0].reshape(moved.shape[:-2] + (0,))  # (numpy's view of an empty slice)
        start = moved[..., rows[0]:, cols[0]:]  # a view, as PyTorch's: strides (..., s1 + s2)
        return _strided(xp, start, start.shape[:-2] + (len(rows),), start.strides[:-2] + (sum(start.strides[-2:]),))

    @staticmethod
    def backward(ctx, g):  # the gradient written back onto the diagonal of zeros
        return DiagonalScatter.apply(g, ctx.shape, *ctx.args), None, None, None


class DiagonalScatter(Function):
    """zeros(shape) with `g` on a diagonal: diagonal's backward, diag and diag_embed's forward."""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, g, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        xp = array_module(g.array)
        out = xp.zeros(shape, dtype=g.array.dtype)
        rows, cols = _diag_index(shape, offset, d1, d2)
        xp.moveaxis(out, (d1, d2), (-2, -1))[..., rows, cols] = g.array
        return out

    @staticmethod
    def backward(ctx, gg):  # the diagonal picked out again
        return Diagonal.apply(gg, *ctx.args), None, None, None, None


class DiagonalCopy(Diagonal):
    """diag() of a matrix: the diagonal as a new contiguous tensor (diagonal() gives a view)."""

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        return array_module(a.array).ascontiguousarray(Diagonal.forward(ctx, a, offset, d1, d2))


@_view
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal `offset` of the matrices over dims dim1, dim2, as a new last dim."""
    nd = input.array.ndim  # (below 2 dims, two valid dims are one: the checks below refuse every call)
    if type(offset) is not builtins.int or type(dim1) is not builtins.int or type(dim2) is not builtins.int:
        for position, (argument, value) in enumerate((("offset", offset), ("dim1", dim1), ("dim2", dim2)), 1):
            int_argument(value, "diagonal", f"'{argument}' (position {position})")  # (the method's count)
    d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, builtins.int(offset), d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (over the new dims dim1, dim2) with the last dim of `input` on diagonal `offset`."""
    nd = input.array.ndim + 1
    d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.array.shape[-1] + builtins.abs(offset)
    rest = list(input.array.shape[:-1])
    shape = []
    for k in range(nd):
        shape.append(n if k in (d1, d2) else rest.pop(0))
    return DiagonalScatter.apply(input, tuple(shape), builtins.int(offset), d1, d2)


def diag(input, diagonal=0):
    """1-D: a square matrix with `input` on diagonal `diagonal`; 2-D: that diagonal."""
    if input.array.ndim == 1:
        n = input.array.shape[0] + builtins.abs(diagonal)
        return DiagonalScatter.apply(input, (n, n), builtins.int(diagonal), 0, 1)
    if input.array.ndim == 2:
        return DiagonalCopy.apply(input, builtins.int(diagonal), 0, 1)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.array.ndim}D")


# ---- unfold ------------------------------------------------------------------------------------------
def _window_index(n, size, step):
    count = (n - size) // step + 1
    return np.arange(count)[:, None] * step + np.arange(size)[None, :]


class Unfold(Function):
    node_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, a, dim, size, step):
        ctx.shape, ctx.args = a.array.shape, (dim, size, step)
        xp = array_module(a.array)
        if a.array.ndim == 0:
            return a.array.reshape(1)
        # a view, as PyTorch's: dim strides by `step` elements, the new last dim by one
        x = a.array
        shape, strides = list(x.shape), list(x.strides)
        shape[dim] = (x.shape[dim] - size) // step + 1
        strides[dim] = x.strides[dim] * step
        return _strided(xp, x, tuple(shape) + (size,), tuple(strides) + (x.strides[dim],))

    @staticmethod
    def backward(ctx, g):  # each window's gradient added back where it came from
        return UnfoldScatter.apply(g, ctx.shape, *ctx.args), None, None, None


class UnfoldScatter(Function):
    node_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, g, shape, dim, size, step):
        ctx.args = (dim, size, step)
        xp = array_module(g.array)
        out = xp.zeros(shape, dtype=g.array.dtype)
        if not shape:
            return g.array.reshape(())
        idx = xp.asarray(_window_index(shape[dim], size, step))
        moved = xp.moveaxis(out, dim, -1)
        xp.add.at(moved, (Ellipsis, idx), xp.moveaxis(g.array, dim, -2))
        return out

    @staticmethod
    def backward(ctx, gg):
        return Unfold.apply(gg, *ctx.args), None, None, None, None


@_view
def unfold(input, dimension, size, step):
    """Windows of `size` elements every `step` along `dimension`, as a new last dim."""
    nd = input.array.ndim
    d = normalize_dim(dimension, nd)
    n = input.array.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return Unfold.apply(input, d, builtins.int(size), builtins.int(step))


# ---- masked_select, nonzero, argsort ------------------------------------------------------------------
class MaskedSelect(Function):
    node_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, a, mask, shape):
        xp = array_module(a.array)
        ctx.shape, ctx.full = a.array.shape, shape
        ctx.mask = xp.broadcast_to(mask.array, shape)
        return xp.broadcast_to(a.array, shape)[ctx.mask]

    @staticmethod
    def backward(ctx, g):  # the gradient put back at the selected places, summed over broadcast dims
        return sum_to(MaskedScatter.apply(g, ctx.mask, ctx.full), ctx.shape), None, None


class MaskedScatter(Function):
    node_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx, g, mask, shape):
        ctx.mask, ctx.shape = mask, shape
        out = array_module(g.array).zeros(shape, dtype=g.array.dtype)
        out[mask] = g.array
        return out

    @staticmethod
    def backward(ctx, gg):
        return MaskedSelect.apply(gg, Tensor._wrap(ctx.mask), ctx.shape), None, None


def masked_select(input, mask):
    """The elements of `input` where the boolean `mask` (broadcast together) holds, as a 1-D tensor."""
    if not isinstance(mask, Tensor) or mask.array.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask (got {getattr(mask, 'dtype', type(mask).__name__)})")
    recording.escape("masked_select, whose result's shape is the mask's count,")
    shape = broadcast_shapes(mask.array.shape, input.array.shape)  # (the mask first, in PyTorch's text)
    return MaskedSelect.apply(input, mask, shape)


def nonzero(input, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    recording.escape("nonzero (argwhere, boolean-mask indexing), whose result's shape depends on the data,")
    xp = array_module(input.array)
    idx = xp.argwhere(input.array).astype(np.int64)
    if as_tuple:
        if input.array.ndim == 0:
            return (Tensor._wrap(xp.zeros(idx.shape[0], dtype=np.int64)),)
        return tuple(Tensor._wrap(xp.ascontiguousarray(idx[:, k])) for k in range(input.array.ndim))
    return Tensor._wrap(idx)


def argwhere(input):
    return nonzero(input)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort `input` along `dim` (stable: equal elements keep their order)."""
    if input.array.dtype.kind == "c":
        from .complex import refuse

        refuse("sort", input)
    d = normalize_dim(dim, input.array.ndim)

    def indices(src):
        xp = array_module(src)
        if src.ndim == 0:
            return xp.zeros((), dtype=np.int64)
        return xp.argsort(descending_key(xp, src) if descending else src, axis=d, kind="stable").astype(np.int64)

    return array_op(indices, input)


def msort(input):
    return input.sort(0).values


# ---- einsum ---------------------------------------------------------------------------------------------
class Einsum(Function):
    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, spec, *operands):
        ins, out = spec
        ctx.spec, ctx.shapes = spec, [o.array.shape for o in operands]
        ctx.save_for_backward(*operands)
        xp = array_module(operands[0].array)
        return xp.asarray(xp.einsum(",".join(ins) + "->" + out, *[o.array for o in operands]))

    @staticmethod
    def backward(ctx, g):
        # d/dX_k of einsum(ins -> out) is einsum(out, the other ins -> ins_k), with an identity
        # tying the letters X_k repeats (a diagonal) and ones for the letters only X_k sums over
        ins, out = ctx.spec
        ops = ctx.saved_tensors
        if g.array.dtype.kind == "c":  # (PyTorch's convention: g times the other factors' conjugates)
            from .complex import conj

            ops = [conj(o) for o in ops]
        grads = [None]
        for k, sub in enumerate(ins):
            if not ctx.needs_input_grad[k + 1]:
                grads.append(None)
                continue
            sizes = {c: n for s, shp in zip(ins, ctx.shapes) for c, n in zip(s, shp)}
            fresh = iter(c for c in string.ascii_letters if c not in sizes and c not in out)
            terms, args = [out], [g]
            for j, (s, o) in enumerate(zip(ins, ops)):
                if j != k:
                    terms.append(s)
                    args.append(o)
            target, seen = [], set()
            for c in sub:
                if c in seen:  # a repeated letter: a fresh one, tied to the first by an identity
                    f = next(fresh)
                    terms.append(c + f)
                    args.append(Tensor._wrap(np.eye(sizes[c], dtype=g.array.dtype)))
                    target.append(f)
                else:
                    seen.add(c)
                    target.append(c)
            present = set("".join(terms))
            for c in set(sub):
                if c not in present:  # summed over in X_k alone: its gradient is the same at every index
                    terms.append(c)
                    args.append(Tensor._wrap(array_module(g.array).ones(sizes[c], dtype=g.array.dtype)))
            grads.append(_einsum(terms, "".join(target), args))
        return tuple(grads)


# PyTorch records einsum as the ops it decomposes into; its last one names the output's node: a sum or a permute
# of a single operand, a view of the contracted product (any letter summed away) or else a plain product
_EINSUM_NODES = {(single, summed): type(f"Einsum{node}", (Einsum,), {"node_name": node + "Backward" + nr})
                 for single, summed, node, nr in [(True, True, "Sum", "1"), (True, False, "Permute", "0"),
                                                  (False, True, "View", "0"), (False, False, "Mul", "0")]}


def _einsum(ins, out, operands):
    summed = any(c not in out for s in ins for c in s)
    return _EINSUM_NODES[len(ins) == 1, summed].apply((tuple(ins), out), *operands)


def _labels(text, start, where):
    """The subscripts of one side of an equation, '...' kept as one item; `start` is the text's index in the
    equation (for the error text), `where` names the side ('operand 0', 'output')."""
    labels, i = [], 0
    while i < len(text):
        c = text[i]
        if c == ".":
            if "..." in labels:
                raise RuntimeError(f"einsum(): found '.' for {where} "
                                   + ("but an ellipsis (...) was already found" if where == "output"
                                      else "for which an ellipsis was already found"))
            if text[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis"
                                   + (" (...)" if where == "output" else ""))
            labels.append("...")
            i += 3
            continue
        if c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            labels.append(c)
        i += 1
    return labels


def _parse(equation, operands):
    """The equation's operand and output subscripts, with '...' spelt out as capital letters, checked as PyTorch
    checks them; and the operands with their size-1 dimensions broadcast to the other operands' sizes."""
    lhs, arrow, rhs = equation.partition("->")
    parts, start = [], 0
    for k, part in enumerate(lhs.split(",")):
        if k == len(operands):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        parts.append(_labels(part, start, f"operand {k}"))
        start += len(part) + 1
    if len(parts) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    ell = 0
    for k, (labels, o) in enumerate(zip(parts, operands)):
        n, has_ell = len(labels) - ("..." in labels), "..." in labels
        if (n > o.array.ndim) if has_ell else (n != o.array.ndim):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({o.array.ndim}) for operand {k}"
                               + ("" if has_ell else " and no ellipsis was given"))
        ell = builtins.max(ell, o.array.ndim - n if has_ell else 0)
    used = {c for labels in parts for c in labels}
    letters = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used][:ell]
    spelt = []
    for labels, o in zip(parts, operands):
        n = o.array.ndim - len(labels) + 1
        spelt.append("".join("".join(letters[ell - n:]) if c == "..." else c for c in labels))
    if arrow:
        out = []
        for c in _labels(rhs, len(lhs) + 2, "output"):
            if c != "..." and (c in out or c not in used):
                raise RuntimeError(f"einsum(): output subscript {c} "
                                   + ("appears more than once in the output" if c in out
                                      else "does not appear in the equation for any input operand"))
            out.append(c)
        out = "".join("".join(letters) if c == "..." else c for c in out)
    else:
        counts = {}
        for s in spelt:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(letters) + "".join(sorted(c for c in counts if counts[c] == 1 and c not in letters))
    for k, (s, o) in enumerate(zip(spelt, operands)):
        first = {}
        for j, c in enumerate(s):
            d = first.setdefault(c, j)
            if o.array.shape[j] != o.array.shape[d]:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, "
                                   f"{o.array.shape[j]} != {o.array.shape[d]}")
    # PyTorch's order of dimensions: the output's, then the ellipsis's if the output drops it, then the summed ones
    order = out + ("" if arrow and "..." in rhs or not arrow else "".join(letters))
    order += "".join(sorted(c for c in set("".join(spelt)) if c not in order))
    sizes = {}
    for c in order:
        for k, (s, o) in enumerate(zip(spelt, operands)):
            n = o.array.shape[s.index(c)] if c in s else 1
            seen = sizes.setdefault(c, n)
            if n != seen and n != 1:
                if seen != 1:
                    if c in letters:
                        raise RuntimeError(f"einsum(): dimension {letters.index(c)} covered by ellipsis in operand "
                                           f"{k}has size {n} which does not broadcast with previously seen ellipsis "
                                           f"with size {seen} for the respective dimension")
                    raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not "
                                       f"broadcast with previously seen size {seen}")
                sizes[c] = n
    operands = [o if all(n == sizes[c] for c, n in zip(s, o.array.shape)) else expand(o, *(sizes[c] for c in s))
                for s, o in zip(spelt, operands)]
    return spelt, out, operands


def _sublist_equation(args):
    """The equation and operands of einsum's sublist form, `einsum(a, [0, 1], b, [1, 2], [0, 2])`: operands each
    followed by a list of ints in [0, 52) (0-25 written A-Z, 26-51 a-z) or Ellipsis, then optionally the output's."""
    def spell(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
                continue
            s = operator.index(s)
            if not 0 <= s < 52:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
        return "".join(out)

    explicit = len(args) % 2 == 1
    operands, subs = (args[:-1:2], args[1::2]) if explicit else (args[::2], args[1::2])
    for i, o in enumerate(operands):
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor as element {2 * i} in argument 1, but got {type_name(o)}")
    equation = ",".join(spell(s) for s in subs)
    if explicit:
        equation += "->" + spell(args[-1])
    return equation, tuple(operands)


def einsum(equation, *operands):
    """Einstein summation (`torch.einsum("ij,jk->ik", a, b)`), one differentiable node; also PyTorch's sublist
    form, `einsum(a, [0, 1], b, [1, 2], [0, 2])`."""
    if not isinstance(equation, str):
        if not operands:
            raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                             "operand and its subscripts list")
        equation, operands = _sublist_equation((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ins, out, operands = _parse(equation, operands)
    dts = {o.array.dtype for o in operands}
    if len(dts) > 1:
        raise RuntimeError(f"expected scalar type {operands[0].dtype._legacy[:-6]} but found "
                           f"{next(o.dtype for o in operands if o.array.dtype != operands[0].array.dtype)._legacy[:-6]}")
    return _einsum(ins, out, operands)
