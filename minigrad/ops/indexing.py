"""Indexing: `t[...]` with ints, slices, None, Ellipsis, integer tensors and boolean masks;
`gather`, `index_select`, `topk`, `multinomial`, and index assignment.

The backward of an index scatters the gradient into zeros of the input's shape, summing at
repeated indices (as PyTorch's index backward does); that scatter is itself an op whose
backward is the index again, so indexing is twice differentiable.
"""
import builtins
import functools
import math
import re

import numpy as np

from .. import backends
from .. import random as _random
from ..autograd import recording
from ..autograd.function import Function, once_differentiable
from ..autograd.grad_mode import state
from ..device import array_module, to_device
from ..tensor import Tensor, int_argument
from ._util import descending_key, normalize_dim, some_id_outside, take_along, type_name, values_indices
from .out import out_call
from .shape import Unsqueeze, _records_nothing, _share_version, _view_of


def _sequence_as_tuple(index):
    """Whether a list index is read as a tuple of indices (`t[[[0, 1], [1, 2]]]` is `t[[0, 1], [1, 2]]`):
    PyTorch 2.13 still reads it so, with a warning, when the list holds a sequence, a tensor, a slice,
    None or Ellipsis (numpy's old rule, lists under 32 items); a list of numbers is one index tensor."""
    if len(index) >= 32:
        return False
    if not builtins.any(isinstance(i, (Tensor, slice, list, tuple, range, np.ndarray, str)) or i is None
                        or i is Ellipsis for i in index):
        return False
    import warnings

    from .._warn_once import user_stacklevel

    warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                  "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                  "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result",
                  UserWarning, stacklevel=user_stacklevel())
    return True


def _list_index(i, xp):
    """The integer or boolean array of a list (or numpy array) index: floats truncated to int64 as PyTorch
    converts a list of numbers to a tensor and then to a long index; only a float tensor is refused. An empty
    list is an int64 index of shape (0,) (numpy would make it float64); an empty array keeps its shape ((0, 1):
    a write through an empty view is recorded with such an index of its places in the base)."""
    a = xp.asarray(i) if len(i) or type(i) is np.ndarray else xp.zeros(0, dtype=np.int64)
    if a.dtype.kind == "f":
        if not bool(xp.all(xp.abs(a) < 2.0 ** 63)):  # (NaN included)
            raise RuntimeError("value cannot be converted to type int64 without overflow")
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iub":
        raise TypeError(f"new(): invalid data type '{type(xp.ravel(a)[0].item()).__name__}'")
    return a


def _convert_index(index, xp, shape):
    """A numpy/cupy index from a user index, with PyTorch's checks and errors."""
    if isinstance(index, list) and _sequence_as_tuple(index):
        index = tuple(index)
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    advanced = False
    for i in index:
        if isinstance(i, Tensor) or type(i) is np.ndarray and i.ndim == 0:  # (a 0-d array: a saved 0-d tensor index)
            a = i.array if isinstance(i, Tensor) else i
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if a.dtype == np.uint8 and isinstance(i, Tensor):
                a = _byte_mask(a)
            out.append(a)
            advanced = advanced or a.ndim > 0 or a.dtype.kind == "b"
        elif isinstance(i, (list, tuple, range, np.ndarray)):  # (a range: `logprobs[range(n), Yb]`)
            out.append(_list_index(i, xp))
            advanced = True
        elif type(i) is builtins.bool:  # a 0-d mask, as PyTorch reads it: a new dim of 1 (True) or 0 (False)
            out.append(xp.asarray(i))
            advanced = True
        elif isinstance(i, (builtins.int, np.integer, slice)) or i is None or i is Ellipsis:
            out.append(i)
        elif isinstance(i, str):  # (a sequence to PyTorch, which it fails to make a tensor of)
            raise TypeError("new(): invalid data type 'str'")
        elif hasattr(i, "dtype") and hasattr(i, "shape") and not isinstance(i, np.generic):  # a cupy array
            out.append(i)
            advanced = True
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type_name(i)})"
            )
    return tuple(out), advanced


def _byte_mask(a):
    """A uint8 index tensor is a mask, as comparisons made them before bool tensors (PyTorch's reading, warned)."""
    import warnings

    from .._warn_once import user_stacklevel

    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                  UserWarning, stacklevel=user_stacklevel())
    return a != 0


class TwoStep(tuple):
    """An advanced index with integers in it, applied as PyTorch applies it: the integers first
    (a view), then the rest. numpy counts an integer as an advanced index, which moves the result
    dims when it stands between a slice and an array (`t[0, :, [1, 2]]`)."""


def _one_int(i):
    """Whether index component `i` is one integer: a Python or numpy int, or a 0-d integer tensor's array
    (PyTorch reads `t[torch.tensor(1), :, [0, 2]]` as `t[1, :, [0, 2]]`, where numpy's 0-d array is advanced)."""
    return isinstance(i, (builtins.int, np.integer)) or (hasattr(i, "ndim") and i.ndim == 0 and i.dtype.kind in "iu")


def _ints_first(idx, shape):
    """An advanced index as PyTorch applies it: an Ellipsis spelled out as its full slices (numpy counts even an
    empty one as standing between two index arrays, `t[:, i, ..., j]` of a 3-d t, and moves the indexed dims to
    the front where PyTorch keeps them in place), and any integers taken first (a TwoStep), checked against the
    dims they select (PyTorch's error names an integer's place in the index)."""
    ndim = len(shape)
    ints = builtins.any(_one_int(i) for i in idx)
    if not ints and not builtins.any(i is Ellipsis or type(i) is slice and i.step is not None for i in idx):
        return idx
    consumed = builtins.sum(
        (i.ndim if i.dtype.kind == "b" else 1) if hasattr(i, "dtype") else (0 if i is None or i is Ellipsis else 1)
        for i in idx
    )
    full = [slice(None)] * builtins.max(ndim - consumed, 0)
    first, rest = [], []
    for pos, i in enumerate(idx):
        if type(i) is slice and i.step is not None and i.step <= 0:  # (in its place among the ints' checks)
            _check_count(idx, shape)
            raise ValueError("slice step cannot be zero" if i.step == 0 else "step must be greater than zero")
        if i is Ellipsis:
            first += full
            rest += full
        elif i is None:
            rest.append(i)
        elif _one_int(i):
            d, n = len(first), builtins.int(i)
            if consumed <= ndim and not -shape[d] <= n < shape[d]:  # (too many: that error first)
                raise IndexError(f"index {n} is out of bounds for dimension {pos} with size {shape[d]}")
            first.append(n)
        else:
            first += [slice(None)] * (i.ndim if hasattr(i, "dtype") and i.dtype.kind == "b" else 1)
            rest.append(i)
    if not ints:
        return tuple(j for i in idx for j in (full if i is Ellipsis else (i,)))
    return TwoStep((tuple(first), tuple(rest)))


def _take(a, index):
    """a[index], for a plain or a TwoStep index."""
    if type(index) is TwoStep:
        return a[index[0]][index[1]]
    return a[index]


def _rows(a, ids):
    """a[ids] for one array of ids, as a new contiguous array. numpy's `take` along dim 0 gives the same
    elements for signed integer ids at a fraction of fancy indexing's fixed cost (an embedding's lookup, a
    batch's rows); any other case, or ids out of range, goes to a[ids] (and its error)."""
    if type(a) is np.ndarray and type(ids) is np.ndarray and ids.dtype.kind == "i" and a.ndim:
        try:
            return a.take(ids, axis=0)
        except (IndexError, ValueError):
            pass
    return array_module(a).ascontiguousarray(a[ids])


def _with_ellipsis(index):
    """A basic `index` ending in `...`: numpy then gives a 0-d view where all ints give a scalar."""
    return (index if type(index) is tuple else (index,)) + (Ellipsis,)


def _target(a, index):
    """The array and the index to write `a[index]` through (a view for a TwoStep index)."""
    if type(index) is TwoStep:  # (the Ellipsis: a 0-d view where numpy's ints alone give a scalar, `t[1, True]`)
        return a[index[0] + (Ellipsis,)], index[1]
    return a, index


def _numpy_shapes(msg):
    """The shapes numpy's message lists, `(2,) (1,3)`, as tuples."""
    import re

    return [tuple(builtins.int(n) for n in m.split(",") if n.strip()) for m in re.findall(r"\(([\d,\s]*)\)", msg)]


def _advanced_dim(index, shape, axis):
    """The dimension PyTorch names for an out-of-bounds id at numpy's `axis` of an advanced `index`: the
    position among the index tensors (a mask of k dims counting k), integers applied before (and checked:
    `_ints_first`); an integer's place in the index; None where that place is lost. For an index tensor's id,
    PyTorch's whole account, which may name another id: `_first_bad_id`'s (id, dim, size)."""
    if type(index) is TwoStep:
        shape = [shape[d] for d, i in enumerate(index[0]) if isinstance(i, slice)] + list(shape[len(index[0]):])
        index = index[1]
    consumed = builtins.sum((i.ndim if i.dtype.kind == "b" else 1) if hasattr(i, "dtype") else
                            (0 if i is None or i is Ellipsis else 1) for i in index)
    at = ordinal = 0
    for pos, i in enumerate(index):
        if i is Ellipsis:
            at += len(shape) - consumed
        elif _one_int(i):
            if at == axis:
                return pos
            at += 1
        elif hasattr(i, "dtype"):
            width = i.ndim if i.dtype.kind == "b" else 1
            if at <= axis < at + width and i.dtype.kind != "b":
                return _first_bad_id(index, shape, consumed)
            at, ordinal = at + width, ordinal + builtins.max(width, 1)  # (a 0-d mask is one index tensor)
        elif i is not None:
            at += 1
    return None


def _first_bad_id(index, shape, consumed):
    """(id, its tensor's position among the index tensors, its dim's size) where PyTorch stops: it checks the
    broadcast ids element by element, each element's ids in the index's order."""
    at = ordinal = 0
    ids = []
    for i in index:
        if i is Ellipsis:
            at += len(shape) - consumed
        elif hasattr(i, "dtype") and not _one_int(i):
            if i.dtype.kind == "b":
                at, ordinal = at + i.ndim, ordinal + builtins.max(i.ndim, 1)
                continue
            ids.append((i, shape[at], ordinal))
            at, ordinal = at + 1, ordinal + 1
        elif i is not None:
            at += 1
    arrays = np.broadcast_arrays(*(np.asarray(a) for a, _, _ in ids))
    bad = np.stack([((a < -n) | (a >= n)).reshape(-1) for a, (_, n, _) in zip(arrays, ids)], axis=1)
    element = bad.any(axis=1).argmax()
    k = bad[element].argmax()
    return arrays[k].reshape(-1)[element], ids[k][2], ids[k][1]


def _index_error(e, shape, index=None):
    """numpy's IndexError in PyTorch's words (dimension, not axis; tensor, not array)."""
    msg = str(e).replace("axis", "dimension")
    bounds = re.match(r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)$", msg)
    if bounds and index is not None:
        dim = _advanced_dim(index if type(index) in (tuple, TwoStep) else (index,), shape, builtins.int(bounds[2]))
        if type(dim) is tuple:
            return IndexError(f"index {dim[0]} is out of bounds for dimension {dim[1]} with size {dim[2]}")
        return IndexError(f"index {bounds[1]} is out of bounds for dimension "
                          f"{bounds[2] if dim is None else dim} with size {bounds[3]}")
    if msg == "index is out of bounds for dimension with size 0":  # (PyTorch's words already: `_ids_unchecked`)
        return IndexError(msg)
    if msg.startswith("too many indices"):
        return IndexError(f"too many indices for tensor of dimension {len(shape)}")
    if msg.startswith("shape mismatch: indexing tensors"):  # (check_put_shapes's, in PyTorch's words already)
        return e
    if msg.startswith("shape mismatch: indexing arrays"):  # numpy's shapes (2,) (1,3) are PyTorch's [2], [1, 3]
        shapes = ", ".join(str(list(eval_shape)) for eval_shape in _numpy_shapes(msg))
        return IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}")
    return IndexError(f"{msg} (indexing a tensor of shape {list(shape)})")


def _zero_dim_error(index):
    if type(index) is slice:
        if index.step is not None and index.step <= 0:  # (the step is checked first)
            return ValueError("slice step cannot be zero" if index.step == 0 else "step must be greater than zero")
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    if index != 0:  # (PyTorch's words for any other int into a 0-dim tensor: its size taken as 0)
        return IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number")


def _check_count(idx, shape):
    """PyTorch's error for an index of more dims than the tensor has; the count of dims it indexes."""
    n_consumed = builtins.sum(
        (i.ndim if i.dtype.kind == "b" else 1) if hasattr(i, "dtype") else (0 if i is None or i is Ellipsis else 1)
        for i in idx
    )
    if n_consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    return n_consumed


def masked_fill_mask(index, value):
    """The mask where PyTorch writes `t[index] = value` (or index_put_) as masked_fill_, not index_put_: one
    value, and of the items that become index tensors (all but ints, 0-d integer tensors, slices, None and ...),
    just one, a bool or uint8 mask. None where PyTorch writes with index_put_."""
    if not (isinstance(value, Tensor) and value.numel() == 1 or isinstance(value, (builtins.int, builtins.float,
                                                                                    complex, np.generic))):
        return None
    tensors = [i for i in (index if type(index) is tuple else (index,))
               if not (i is None or i is Ellipsis or type(i) is slice or isinstance(i, (int, np.integer)) and type(i)
                       is not bool or isinstance(i, Tensor) and not i.array.ndim and i.array.dtype.kind in "iu")]
    if len(tensors) != 1:
        return None
    mask = tensors[0].array if isinstance(tensors[0], Tensor) else tensors[0]
    if type(mask) is list:
        try:
            mask = np.asarray(mask)
        except (ValueError, TypeError):  # (a ragged list, or one of tensors: not a mask)
            return None
    if not (getattr(mask, "dtype", None) in (np.bool_, np.uint8) and mask.ndim > 0):
        return None
    return mask


def refuse_byte_mask_fill(index, value):
    """masked_fill_'s refusal of a uint8 mask, where PyTorch writes as masked_fill_ (index_put_ takes one)."""
    if type(index) is Tensor and index.array.dtype.type is not np.uint8:  # (the usual t[mask] = v: no look further)
        return
    mask = masked_fill_mask(index, value)
    if mask is not None and mask.dtype == np.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def _check_masks(idx, shape):
    """PyTorch's error for a boolean mask whose shape does not match the dims it indexes (shapes only), after
    its count of the dims indexed; PyTorch applies the basic components first (ints, slices, None), so a mask is
    matched in the tensor they leave."""
    n_consumed = _check_count(idx, shape)
    for i in idx:
        if type(i) is slice or hasattr(i, "dtype") and i.dtype.kind == "b":
            break
    else:  # (no mask, and no slice whose own check below could refuse it)
        return
    after, masks, d = [], [], 0  # (the shape PyTorch's basic steps leave, which a mask is matched in)
    for i in idx:
        if i is Ellipsis:
            k = len(shape) - n_consumed
            after, d = after + list(shape[d:d + k]), d + k
        elif i is None or hasattr(i, "dtype") and i.dtype.kind == "b" and not i.ndim:  # (a bool: a new dim too)
            after.append(1)
        elif hasattr(i, "dtype") and i.dtype.kind == "b":
            masks.append((i, len(after), d))
            after, d = after + list(shape[d:d + i.ndim]), d + i.ndim
        else:
            if isinstance(i, slice) and (i.step is None or i.step > 0):
                after.append(len(range(*i.indices(shape[d]))))
            elif not _one_int(i):
                after.append(shape[d])
            d += 1
    after += shape[d:]
    for i, at, d in masks:
        for j, m in enumerate(i.shape):
            if shape[d + j] != m:
                raise IndexError(f"The shape of the mask {list(i.shape)} at index {j} does not match the shape of "
                                 f"the indexed tensor {after} at index {at + j}")


def _plain_ints(idx):
    """A basic index with its 0-dim integer tensors' arrays as ints."""
    return tuple(builtins.int(i) if hasattr(i, "dtype") else i for i in idx)


def _basic_steps(idx, shape, keep_full=False):
    """A basic index (ints, slices, None, Ellipsis) as PyTorch applies it: one step per component.

    Returns [(kind, dim, component)] with kind in select/slice/unsqueeze, `dim` the dim of the
    tensor at that step, after checking every component with PyTorch's errors.
    """
    nd = len(shape)
    consumed = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    steps, dim, orig = [], 0, 0
    for pos, i in enumerate(idx):
        if i is Ellipsis:  # (each one, PyTorch's second too, the dims no component names: its later ones may
            skip = nd - consumed  # then fall past the last dim, where a slice is skipped and an int finds size 0)
            dim, orig = dim + skip, orig + skip
        elif i is None:
            steps.append(("unsqueeze", dim, None))
            dim += 1
        elif isinstance(i, slice):
            if i.step is not None and i.step <= 0:
                raise ValueError("slice step cannot be zero" if i.step == 0 else "step must be greater than zero")
            if orig < nd and (not _written_whole(i, shape[orig]) or keep_full):  # PyTorch keeps a lone `t[:]`
                steps.append(("slice", dim, i))
            dim, orig = dim + 1, orig + 1
        else:
            n = shape[orig] if orig < nd else 0
            k = builtins.int(i)
            if not -n <= k < n:
                # (PyTorch names the integer's place in the index, not the dim it selects)
                raise IndexError(f"index {k} is out of bounds for dimension {pos} with size {n}")
            steps.append(("select", dim, k))
            orig += 1
    return steps


def spelled_out(idx, shape):
    """A basic index of several Ellipsis as numpy takes it, PyTorch's errors first (`_basic_steps`): each Ellipsis
    the full slices of the dims no component names, the slices that then fall past the last dim left out."""
    _basic_steps(idx, shape)
    nd, out, taken = len(shape), [], 0
    skip = nd - builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    for i in idx:
        if i is Ellipsis:
            n = builtins.min(skip, nd - taken)
            out, taken = out + [slice(None)] * n, taken + n
        elif i is None:
            out.append(i)
        elif taken < nd:
            out, taken = out + [i], taken + 1
    return tuple(out)


class Index(Function):
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, index, advanced):
        ctx.shape, ctx.index, ctx.advanced = a.array.shape, index, advanced
        try:
            out = _rows(a.array, index[0]) if advanced and type(index) is tuple and len(index) == 1 else \
                _take(a.array, index)
        except IndexError as e:
            unchecked = _ids_unchecked(a.array, index) if advanced else None
            if unchecked is None:
                raise _index_error(e, a.array.shape, index) from None
            ctx.index, out = unchecked  # (the same empty result and gradient, from ids numpy takes)
        if advanced:
            # an advanced index makes a new, contiguous tensor in PyTorch (numpy may lay it out
            # transposed, and a later .view() would then fail where PyTorch's succeeds)
            return array_module(out).ascontiguousarray(out)
        return _basic_view(a.array, index, out)

    @staticmethod
    def backward(ctx, g):  # scatter the gradient to where the elements came from
        if not g._requires_grad:  # nothing to record (no create_graph): IndexPutAdd's forward on the array alone
            return Tensor._wrap(_scattered(g.array, ctx.shape, ctx.index, ctx.advanced)), None, None
        return IndexPutAdd.apply(g, ctx.shape, ctx.index, ctx.advanced), None, None

    @staticmethod
    def array_step(needs, a, index, advanced):
        if advanced:
            return None
        shape = a.array.shape
        return (lambda x: (_basic_view(x, index, _take(x, index)), None)), (lambda saved, g: (_put(g, shape, index),))


def _ids_unchecked(a, index):
    """PyTorch checks an advanced index's ids one by one as it fills the result, so a result of no elements
    (a dim not indexed of size 0, or sliced to none) takes ids out of range unchecked; ids into an indexed dim of size 0 are refused
    in words of their own. For an index numpy refused: (the index with every id array 0, the empty result) where
    PyTorch takes it, None where numpy's error stands."""
    zeroed = _zeroed_ids(index)
    if zeroed is None:  # (a basic index: its ints' own error)
        return None
    try:
        out = _take(a, zeroed)  # (the result's shape does not depend on the ids)
    except IndexError as e:
        if not a.size and str(e).startswith("index 0 is out of bounds"):  # (an integer of the index is checked)
            raise IndexError("index is out of bounds for dimension with size 0") from None
        return None
    return (zeroed, array_module(a).ascontiguousarray(out)) if not out.size else None


def _zeroed_ids(index):
    """`index` with every array of ids (of one dim or more) all 0: the same result's shape, ids numpy takes
    wherever the dims they index are not empty. None for an index with no such array."""
    first, rest = index if type(index) is TwoStep else ((), index)
    rest = rest if type(rest) is tuple else (rest,)
    ids = [hasattr(i, "dtype") and i.dtype.kind in "iu" and i.ndim > 0 for i in rest]
    if not builtins.any(ids):
        return None
    zeroed = tuple(np.zeros_like(i) if is_ids else i for i, is_ids in zip(rest, ids))
    return TwoStep((first, zeroed)) if type(index) is TwoStep else zeroed


def _basic_view(x, index, out):
    """A basic index's result `out` (x's elements at `index`) as a view: for an int at every dim numpy
    gives a scalar (a copy), PyTorch a 0-d view."""
    return _take(x, _with_ellipsis(index)) if isinstance(out, np.generic) else out


def _put(g, shape, index):
    """zeros(shape) with `g` at a basic `index`."""
    out = array_module(g).zeros(shape, dtype=g.dtype)
    out[index] = g
    return out


class Select(Index):
    node_name = "SelectBackward0"


class Slice(Index):
    node_name = "SliceBackward0"


class Alias(Index):
    node_name = "AliasBackward0"


def as_subclass(self, cls):
    """self as an instance of `cls`, a Tensor subclass: an alias of self (the same array and version counter, one
    AliasBackward0 node in its history), as PyTorch's."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    alias = _share_version(Alias.apply(self, (Ellipsis,), False), self)
    out = object.__new__(cls)  # (a subclass's layout may differ from Tensor's: no __class__ assignment)
    for name in Tensor.__slots__:
        if name != "__weakref__" and hasattr(alias, name):
            setattr(out, name, getattr(alias, name))
    return out


class IndexSelect(Function):
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):  # out = a's entries at `index` along dim
        i = index.array.reshape(-1)
        n = a.array.shape[dim]
        if some_id_outside(i, n):  # (here, not in index_select: a replay of a captured step checks each call's index)
            _index_select_outside(a.array, dim, i, n)
        ctx.shape, ctx.index = a.array.shape, (slice(None),) * dim + (i,)
        if type(a.array) is np.ndarray:  # (take: the same entries, C-contiguous, quicker than indexing)
            return a.array.take(i, dim)
        out = a.array[ctx.index]
        return array_module(out).ascontiguousarray(out)

    @staticmethod
    def backward(ctx, g):  # scatter-add the gradient back to the picked entries
        if not g._requires_grad:  # nothing to record (no create_graph): IndexPutAdd's forward on the array alone
            return Tensor._wrap(_scattered(g.array, ctx.shape, ctx.index, True)), None, None
        return IndexPutAdd.apply(g, ctx.shape, ctx.index, True), None, None


def _index_select_outside(a, dim, i, n):
    """index_select's refusal of ids outside [0, n), in the words of PyTorch's kernel for the case: its own for
    dim 1 of a matrix and for an empty one."""
    first = i[((i < 0) | (i >= n)).argmax()]
    if a.ndim > 1 and (dim == 1 or not a.size):
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={first} axis_dim={n}")
    err = IndexError("index out of range in self")  # PyTorch's text; which index, in a note
    err.__notes__ = [f"index {first} is out of bounds for dimension {dim} with size {n}"]
    raise err


class _IndexSelectOfScalar(Index):  # index_select of a 0-d tensor (its one index is 0)
    node_name = "IndexSelectBackward0"


class IndexPutAdd(Function):
    """zeros(shape)[index] += g: the backward of indexing (its own backward is the index again)."""

    node_name = "IndexBackwardBackward0"

    @staticmethod
    def forward(ctx, g, shape, index, advanced):
        ctx.index, ctx.advanced = index, advanced
        return _scattered(g.array, shape, index, advanced)

    @staticmethod
    def backward(ctx, gg):
        return Index.apply(gg, ctx.index, ctx.advanced), None, None, None


def _scattered(g, shape, index, advanced):
    """zeros(shape) with array `g` added at `index` (repeats summed): IndexPutAdd's forward."""
    if not advanced:
        return _put(g, shape, index)
    out = array_module(g).zeros(shape, dtype=g.dtype)
    add_at_index(out, index, g)
    return out


def add_at_index(out, index, values):
    """out[index] += values for an advanced `index` into a C-contiguous `out`, repeats summed; `values` of the
    indexed shape. One integer array: by rows (_add_rows_at), else _add_at."""
    xp = array_module(out)
    if xp is np and len(index) == 1 and _integer_array(index[0]):
        _add_rows_at(out, index[0], values)
    else:
        _add_at(xp, *_target(out, index), values)


_FLAT_ADD_AT = 1024  # index entries from which _add_at makes one flat index


def _add_at(xp, out, index, values):
    """out[index] += values, summing repeated indices. An integer array for each dim of a C-contiguous numpy
    `out` (scatter_add's index and its grids, `x[rows, ids]`'s backward), each in range, is one flat index of
    the same elements in the same order: np.add.at runs its fast loop for a 1-D index only (worth the flat
    index's making from ~1,000 entries: below, the general loop is the quicker)."""
    _ufunc_at(xp, "add", out, index, values)


def _ufunc_at(xp, name, out, index, values):
    """xp.<name>.at(out, index, values) (add, multiply, maximum, minimum: scatter_reduce's), through one flat
    index where _add_at's reasons hold."""
    flat = flat_index(xp, out, index)
    if flat is None:
        getattr(xp, name).at(out, index, values)
    else:
        getattr(np, name).at(out.reshape(-1), flat, np.broadcast_to(values, index_shape(index)).reshape(-1))


def index_shape(index):
    return np.broadcast_shapes(*[i.shape for i in index])


def flat_index(xp, out, index):
    """The 1-D index into out.reshape(-1) of a tuple of in-range integer arrays, one per dim of a C-contiguous
    numpy `out`, with ~1,000 entries or more; else None. (numpy's fast loops take a 1-D index only.)"""
    if not (xp is np and type(index) is tuple and len(index) == out.ndim > 1 and out.flags.c_contiguous
            and builtins.all(_integer_array(i) for i in index) and math.prod(index_shape(index)) >= _FLAT_ADD_AT
            and builtins.all(not some_id_outside(i, n) for i, n in zip(index, out.shape))):
        return None
    flat = 0
    for i, stride in zip(index, out.strides):
        flat = flat + i.astype(np.intp, copy=False) * (stride // out.itemsize)
    return flat.reshape(-1)


def _integer_array(i):
    return type(i) is np.ndarray and i.dtype.kind in "iu"


def _add_rows_at(out, ids, values):
    """out[ids] += values for ids indexing dim 0 of C-contiguous `out` (`C[ids]`'s backward): the CPU
    backend's loop over the rows (the embedding gradient's), else np.add.at on the flat arrays, element
    by element in the same order (so with its bits), where numpy runs its fast 1-D loop; np.add.at on
    the rows runs a slow general one."""
    width = math.prod(out.shape[1:])
    if width and out.dtype == values.dtype:
        rows, ids = values.reshape(-1, width), ids.reshape(-1)
        impl = backends.find("embedding", rows, ids, out.shape[0])
        if impl is not None:
            impl.add_rows(out.reshape(-1, width), ids, rows)
            return
    # row r's elements are r * width + (0 .. width-1); a negative r (from the end) gives a negative
    # flat position, which also counts from the end: the same element
    flat = (ids.reshape(-1, 1).astype(np.intp, copy=False) * width + np.arange(width)).reshape(-1)
    np.add.at(out.reshape(-1), flat, values.reshape(-1))


def _ints_in_range(index, shape):
    """How many Python ints `index` holds when it is an int, or a tuple of ints and full slices (`:`),
    each int within `shape` (the common basic index, for which the general path's conversion and checks
    make one select step); 0 when it is anything else."""
    if type(index) is int:
        return 1 if shape and -shape[0] <= index < shape[0] else 0
    if type(index) is not tuple or len(index) > len(shape):
        return 0
    found = 0
    for d, i in enumerate(index):
        if type(i) is int:
            if not -shape[d] <= i < shape[d]:
                return 0
            found += 1
        elif type(i) is not slice or i.start is not None or i.stop is not None or i.step is not None:
            return 0
    return found


def _slices_and_int_list(index):
    """Whether tuple `index` is full slices (`:`) and one non-empty list of Python ints, an index numpy
    applies as PyTorch does, in which the general path's conversion finds no mask, int or error to check."""
    lists = 0
    for i in index:
        if type(i) is list:
            lists += 1
            if not i or lists > 1:
                return False
            for k in i:
                if type(k) is not int:
                    return False
        elif type(i) is not slice or i.start is not None or i.stop is not None or i.step is not None:
            return False
    return lists == 1


def _slices_and_id_arrays(index, ndim):
    """Tuple `index` as the general path converts it, where it is slices of int bounds and steps above 0 and
    int32 / int64 tensors of one dim or more (one at least), no more than `ndim`: an index in which that
    path finds no int, mask or error of its own to check (numpy's, for ids, are PyTorch's); else None."""
    if len(index) > ndim:
        return None
    out, ids = [], False
    for i in index:
        if type(i) is slice:
            if not (i.step is None or type(i.step) is int and i.step > 0) \
                    or not (i.start is None or type(i.start) is int) or not (i.stop is None or type(i.stop) is int):
                return None
            out.append(i)
        elif type(i) is Tensor and i.array.ndim and (i.array.dtype == np.int64 or i.array.dtype == np.int32):
            out.append(i.array)
            ids = True
        else:
            return None
    return tuple(out) if ids else None


def as_int(index, indexed):
    """The int of a 0-d integer tensor index (`dC[ix]`, ix one element of an id tensor), with which PyTorch
    indexes an array `indexed` of one dim or more as with that int, as the general path does after converting
    it; any other index as it is (a 0-d tensor indexed by a tensor has PyTorch's error of the general path)."""
    a = index.array if type(index) is Tensor else None
    if a is not None and not a.ndim and a.dtype.kind in "iu" and a.dtype != np.uint8 and indexed.ndim:
        return builtins.int(a)
    return index


def getitem(self, index):
    """`t[index]`: basic indexing gives a view; integer tensors and masks give a copy.

    Recorded as PyTorch records it: a basic index is one SelectBackward0 / SliceBackward0 /
    UnsqueezeBackward0 node per component (full slices skipped), an advanced index one
    IndexBackward0 node (after a single node for any basic components mixed in).
    """
    if type(index) is Tensor and index.array.ndim and index.array.dtype.kind in "iu" and index.array.dtype != np.uint8:
        # the usual `emb[ids]`
        a, ids = self.array, index.array
        if type(a) is np.ndarray and type(ids) is np.ndarray and _records_nothing(self):
            # `X[ix]` of a batch's data: Index's forward alone (an id out of range: Index's error, below)
            try:
                return Tensor._output(_rows(a, ids), None)
            except IndexError:
                pass
        return Index.apply(self, (ids,), True)  # (what the general path below makes of it)
    if type(index) is tuple and list in map(type, index) and _slices_and_int_list(index):  # `logits[:, [-1]]`: as the general path converts it
        xp = array_module(self.array)
        return Index.apply(self, tuple([xp.asarray(i) if type(i) is list else i for i in index]), True)
    if type(index) is Tensor and (not recording.recorders_made or recording.hook.recorder is None):
        # (a capture keeps the general path below)
        index = as_int(index, self.array)
    if type(index) is slice and (type(index.start) is Tensor or type(index.stop) is Tensor):
        # `data[i:i + block_size]` with i from a tensor: the bounds' ints (their __index__, its errors), as every
        # path below would read them
        start, stop = index.start, index.stop
        index = slice(start.__index__() if type(start) is Tensor else start,
                      stop.__index__() if type(stop) is Tensor else stop, index.step)
    if _records_nothing(self):
        # nothing to record (iterating over a tensor, a sequence's step, `x[..., :1]`, `idx[:, -T:]`): a basic
        # index numpy takes as PyTorch does is the view alone
        a = self.array
        if type(index) is int:
            if a.ndim and -a.shape[0] <= index < a.shape[0]:
                return _view_of(self, a[index] if a.ndim > 1 else a[index, ...])  # (1-D: a 0-d view, not a copy)
        elif type(index) is slice and a.ndim and _plain_slice(index) or type(index) is tuple and _slices_only(index, a.ndim):
            return _view_of(self, a[index])
        elif type(index) is tuple and _ints_in_range(index, a.shape):  # `Xb[k, j]`, `x[:, t]`
            return _view_of(self, a[index + (Ellipsis,)])  # (the Ellipsis: a 0-d view where numpy gives a scalar)
    if type(index) is tuple and (idx := _slices_and_id_arrays(index, self.array.ndim)) is not None:
        if self._requires_grad and state.grad_enabled and builtins.any(map(_basic_part, idx)):
            out = _index_after_view(self, idx, self.array.shape, array_module(self.array))
            return Index.apply(self, idx, True) if out is None else out
        return Index.apply(self, idx, True)  # `x[:, cols]`, `x[rows, 1:5]`: as the general path converts it
    shape = self.array.shape
    steps = _slice_steps(index, shape)
    if steps is not None:  # `x[:T]`, `y[:, -1:]`: plain slices, that the conversion below would take as they are
        idx = index if type(index) is tuple else (index,)
        return _basic_index(self, idx, steps)
    ints = _ints_in_range(index, shape)
    # `t[i]`, `x[:, i, :]`, and `P[i, j]` when nothing is recorded: one select step, as below
    if ints == 1 or ints and not (self._requires_grad and state.grad_enabled):
        return _share_version(Select.apply(self, index if type(index) is tuple else (index,), False), self)
    if ints:  # `P[i, j]` recorded: a select step per int, as below (full slices only move the dim on)
        out, dim = self, 0
        for i in index:
            if type(i) is int:
                out = Select.apply(out, (slice(None),) * dim + (i,), False)
            else:
                dim += 1
        return _share_version(out, self)
    xp = array_module(self.array)
    idx, advanced = _convert_index(index, xp, shape)
    if advanced:
        ordered = _ints_first(idx, shape)  # (PyTorch checks the integers before the masks)
        _check_masks(idx, shape)
        if recording.hook.recorder is not None and builtins.any(
                hasattr(i, "dtype") and i.dtype.kind == "b" and i.ndim for i in idx):
            recording.escape("boolean-mask indexing (x[mask]), whose result's shape is the mask's count,")
        if (len(idx) > 1 or not idx[0].ndim) and self._requires_grad and state.grad_enabled \
                and builtins.any(map(_basic_part, idx)):  # (a lone mask or ids array: nothing to split)
            out = _index_after_view(self, idx, shape, xp)
            return Index.apply(self, ordered, True) if out is None else out
        return Index.apply(self, ordered, True)
    idx = _plain_ints(idx)
    try:
        steps = _basic_steps(idx, shape, keep_full=isinstance(index, slice))
    except IndexError:
        if not shape and (type(index) is int or type(index) is slice or isinstance(index, np.integer)):
            raise _zero_dim_error(index) from None  # PyTorch's words for `t[0]` and `t[0:1]` of a 0-dim t
        raise
    return _basic_index(self, idx, steps, idx.count(Ellipsis) > 1)


def _basic_part(i):
    """Whether advanced-index component `i` is one PyTorch applies as a view: an int, a None, a slice not of
    the whole dim, a 0-d bool (a new dim)."""
    return not (i is Ellipsis or hasattr(i, "dtype") and i.ndim or type(i) is slice and i == slice(None))


def _basic_then_advanced(idx, shape, xp):
    """A converted advanced index split as PyTorch applies it: (the basic index of its ints, slices and Nones,
    a 0-d bool a None; the index of its tensors into that view, a 0-d bool the ids [0] (True) or [] (False))."""
    consumed = builtins.sum((i.ndim if i.dtype.kind == "b" else 1) if hasattr(i, "dtype") and i.ndim
                            else (0 if i is None or i is Ellipsis or hasattr(i, "dtype") and i.dtype.kind == "b" else 1)
                            for i in idx)
    basic, rest = [], []
    for i in idx:
        if i is Ellipsis:
            basic.append(i)
            rest += [slice(None)] * (len(shape) - consumed)
        elif hasattr(i, "dtype") and (i.ndim or i.dtype.kind == "b"):
            if i.ndim:
                basic += [slice(None)] * (i.ndim if i.dtype.kind == "b" else 1)
                rest.append(i)
            else:
                basic.append(None)
                rest.append(xp.zeros(1 if i else 0, dtype=np.int64))
        elif i is None or type(i) is slice:
            basic.append(i)
            rest.append(slice(None))
        else:  # (an int: its dim is gone)
            basic.append(i)
    return _plain_ints(tuple(basic)), tuple(rest)


def _index_after_view(self, idx, shape, xp):
    """`self[idx]` recorded as PyTorch records an advanced index with basic parts: the basic parts' view
    (its Select/Slice/Unsqueeze nodes), then IndexBackward0 on it; None where the basic parts take no step."""
    basic, rest = _basic_then_advanced(idx, shape, xp)
    steps = _basic_steps(basic, shape)
    return Index.apply(_basic_index(self, basic, steps), rest, True) if steps else None


def _basic_index(self, idx, steps, stepwise=False):
    """`self[idx]` for a basic index whose `steps` `_basic_steps` gave: one node, or one per step (stepwise:
    always, for an index numpy cannot take, of several Ellipsis)."""
    if stepwise and not steps:
        return _share_version(Alias.apply(self, (Ellipsis,), False), self)
    if not stepwise and (not (self._requires_grad and state.grad_enabled) or len(steps) <= 1):
        # (none: an alias, as PyTorch records)
        if not steps:
            cls = Alias
        elif len(steps) > 1 or steps[0][0] != "unsqueeze":
            cls = Select if steps[-1][0] == "select" else Slice
        else:
            return _share_version(Unsqueeze.apply(self, steps[0][1]), self)
        return _share_version(cls.apply(self, idx, False), self)
    out = self
    for kind, dim, comp in steps:
        if kind == "unsqueeze":
            if dim > out.array.ndim:  # (past a second Ellipsis's dims)
                nd = out.array.ndim
                raise IndexError(f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {dim})")
            out = Unsqueeze.apply(out, dim)
        else:
            out = (Select if kind == "select" else Slice).apply(out, (slice(None),) * dim + (comp,), False)
    return _share_version(out, self)


def _slice_steps(index, shape):
    """`_basic_steps` of a plain slice or a tuple of plain slices (for at most `shape`'s dims); None for
    any other index. A lone slice is a step even when it takes all (PyTorch keeps `t[:]`)."""
    if type(index) is slice:
        return [("slice", 0, index)] if shape and _plain_slice(index) else None
    if type(index) is not tuple or len(index) > len(shape):
        return None
    steps = []
    for d, i in enumerate(index):
        if type(i) is not slice or not _plain_slice(i):
            return None
        if not _written_whole(i, shape[d]):
            steps.append(("slice", d, i))
    return steps


def _written_whole(i, n):
    """Whether slice `i` is one PyTorch skips in a tuple index: written as the whole of a dim of size n (start 0,
    step 1, stop at or past the end); one that only comes to the whole (`t[:, -n:]`, `t[:, 1:]` of an empty dim)
    is recorded."""
    return (i.start is None or i.start == 0) and (i.step is None or i.step == 1) and (i.stop is None or i.stop >= n)


def _plain_slice(i):
    """A slice of int (or no) bounds and a positive step: numpy's slicing is then PyTorch's (the bounds
    clamped to the dim, a view), with nothing for the general path to refuse."""
    s = i.step
    return (s is None or type(s) is int and s > 0) and (i.start is None or type(i.start) is int) \
        and (i.stop is None or type(i.stop) is int)


def _slices_only(index, ndim):
    """Whether tuple `index` is plain slices and at most one Ellipsis (not nothing), for at most `ndim` dims."""
    n, ellipsis = 0, False
    for i in index:
        if type(i) is slice:
            if not _plain_slice(i):
                return False
            n += 1
        elif i is Ellipsis and not ellipsis:
            ellipsis = True
        else:
            return False
    return (n or ellipsis) and n <= ndim


def put_values(a, index, values):
    """a[index] = values (arrays), with PyTorch's errors for values that do not fit what the index picks."""
    target, i = _target(a, index)
    try:
        target[i] = values
    except IndexError:
        _put_unchecked(a, index, values)
    except (ValueError, TypeError):  # (a TypeError: numpy's for values of 2 dims or more into a mask)
        try:
            picked = target[i].shape
        except IndexError:  # (numpy checks the values' shape before the ids)
            _put_unchecked(a, index, values)
            return
        # PyTorch drops all of a value's leading dims of 1 before it writes (numpy only those past the target's dims,
        # and none into a mask or a 0-d target), and names the value's shape without them
        k = 0
        while k < values.ndim and values.shape[k] == 1:
            k += 1
        values = values.reshape(values.shape[k:])
        if k:
            try:
                target[i] = values
                return
            except (ValueError, TypeError):
                pass
        parts = i if type(i) is tuple else (i,)
        if not builtins.any(hasattr(p, "ndim") and (p.ndim or p.dtype == np.bool_) for p in parts):
            # a basic index is a view that the values are copied into, expanded to its shape: expand's words
            from .shape import expand

            expand(Tensor._wrap(values), list(picked))
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(picked)}") from None


def check_put_shapes(a, index, values):
    """index_put_'s checks of the index's and the values' shapes, which PyTorch makes before its dtypes' and
    ids': put_values into a scratch array like `a`, every id 0 (a 0 past an empty dim passes; PyTorch's own words for it stand)."""
    first, rest = index if type(index) is TwoStep else ((), index)
    zeroed = tuple(np.zeros_like(i) if hasattr(i, "dtype") and i.dtype.kind in "iu" and i.ndim else i for i in rest)
    try:
        put_values(array_module(a).zeros(a.shape, a.dtype), TwoStep((first, zeroed)) if first else zeroed,
                   values.astype(a.dtype))
    except IndexError as e:
        if not str(e).startswith("index 0 is out of bounds"):
            raise _index_error(e, a.shape, index) from None


def _put_unchecked(a, index, values):
    """put_values into an empty `a` with ids PyTorch does not check (`_ids_unchecked`): nothing is written, but the
    values' shape is checked; numpy's IndexError where PyTorch checks the ids."""
    unchecked = _ids_unchecked(a, index)
    if unchecked is None:
        rest = index[1] if type(index) is TwoStep else index
        if builtins.any(hasattr(i, "dtype") and i.dtype.kind in "iu" and i.ndim and i.any()
                        for i in (rest if type(rest) is tuple else (rest,))):
            check_put_shapes(a, index, values)  # (PyTorch checks the values' shape before the ids; with them all 0)
        raise
    put_values(a, unchecked[0], values)


class IndexPut(Function):
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, a, value, index):
        ctx.index = index
        ctx.value_shape = value.array.shape
        out = a.array.copy()
        put_values(out, index, value.array)
        return out

    @staticmethod
    def backward(ctx, g):  # overwritten positions pass nothing back to `a`; `value` gets their grads
        from ._util import sum_to

        ga = gv = None
        if ctx.needs_input_grad[0]:  # g with zeros written (not g * 0: an inf or NaN in g stays out, as PyTorch's)
            recorded = g._requires_grad  # (create_graph: g times a mask of zeros there, recorded)
            out = array_module(g.array).ones(g.array.shape, dtype=g.array.dtype) if recorded else g.array.copy()
            m, i = _target(out, ctx.index)
            if m.size:  # (ids into an empty tensor are not checked, and numpy refuses those out of range)
                m[i] = 0
            ga = g * Tensor._wrap(out) if recorded else Tensor._wrap(out)
        if ctx.needs_input_grad[1]:
            gv = Index.apply(g, ctx.index, True) if type(ctx.index) is TwoStep else getitem(g, ctx.index)
            lead = len(ctx.value_shape) - gv.ndim
            if lead > 0:  # a value with more (leading, 1) dims than what it was written into: those put back
                gv = sum_to(gv, ctx.value_shape[lead:]).reshape(ctx.value_shape)
            else:
                gv = sum_to(gv, ctx.value_shape)
        return ga, gv, None


def check_put(self, index, source, name="put"):
    """PyTorch's refusals of put/put_ (before anything is written)."""
    if index.array.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {index.dtype._legacy[:-6]}")
    if index.numel() != source.numel():
        raise IndexError(f"{name}(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    bad = index.array[(index.array >= n) | (index.array < -n)]
    if bad.size:
        if not n:
            raise IndexError("put_(): Tried to put elements into an empty tensor")
        raise IndexError(f"out of range: tried to access index {builtins.int(bad.reshape(-1)[0])} on a tensor of "
                         f"{n} elements.")


def put_array(a, index, values, accumulate=False):
    """a.flatten()[index] = values (+= with `accumulate`) written into array `a`, whatever its strides."""
    xp = array_module(a)
    if a.ndim == 0:  # (a 0-d tensor: its one element, through a view)
        a = a.reshape(1)
    at = xp.unravel_index(index.reshape(-1) % builtins.max(a.size, 1), a.shape)
    values = values.reshape(-1).astype(a.dtype, copy=False)
    if accumulate:
        _add_at(xp, a, at, values)
    else:
        a[at] = values


class Put(Function):
    node_name = "PutBackward0"

    @staticmethod
    def forward(ctx, a, index, source, accumulate):
        ctx.index, ctx.accumulate, ctx.source_shape = index, accumulate, source.array.shape
        out = a.array.copy()
        put_array(out, index, source.array, accumulate)
        return out

    @staticmethod
    def backward(ctx, g):  # self's grad: g, less where it was overwritten; source's: g at the positions written
        ga = gs = None
        flat = g.reshape(-1)
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                ga = g
            else:
                keep = Tensor._wrap(array_module(g.array).ones(g.array.shape, dtype=g.array.dtype))
                put_array(keep.array, ctx.index, array_module(g.array).zeros(ctx.index.size, dtype=g.array.dtype))
                ga = g * keep
        if ctx.needs_input_grad[2]:
            gs = Index.apply(flat, (ctx.index.reshape(-1) % builtins.max(flat.numel(), 1),), True).reshape(ctx.source_shape)
        return ga, None, gs, None


def put(input, index, source, accumulate=False):
    """A copy of input with input.flatten()[index] = source (+= with `accumulate`)."""
    check_put(input, index, source)
    return Put.apply(input, index.array, source, accumulate)


class Gather(Function):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.shape, ctx.dim = a.array.shape, dim
        ctx.save(index=index)
        out, ctx.flat, ctx.at = _gather(a.array, dim, index.array)  # (the checked index, kept for backward)
        return out

    @staticmethod
    def backward(ctx, g):  # scatter-add the gradient back along dim
        # nothing to record: ScatterAdd's forward at forward's checked index (reading the saved index checks
        # its version: one written in place since forward is refused, as below)
        if not g._requires_grad and ctx.shape and ctx._saved_index is not None:
            xp = array_module(g.array)
            out = xp.zeros(ctx.shape, dtype=g.array.dtype)
            if ctx.flat is not None:  # (the same sums in the same order as at forward's tuple of index arrays)
                np.add.at(out.reshape(-1), ctx.flat.reshape(-1), g.array.reshape(-1))
            elif ctx.at is None:
                scatter_add_at(xp, out, ctx.dim, ctx._saved_index.array, g.array)
            else:
                _add_at(xp, out, ctx.at, g.array)
            return Tensor._wrap(out), None, None
        return index_scatter(g, ctx.dim, ctx._saved_index, ctx.shape), None, None


class SparseGather(Gather):
    """gather(sparse_grad=True): input's gradient a COO tensor, one entry per index position in row-major
    order, uncoalesced (PyTorch's): the position's coordinates with `dim`'s replaced by the index value."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        if a.array.ndim:
            return Gather.forward(ctx, a, dim, index)
        out = Gather.forward(ctx, Tensor._wrap(a.array.reshape(1)), dim, index)  # (a 0-d input: no coordinates)
        ctx.shape = ()
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        from ..sparse import SparseTensor  # (the sparse module loads only on this path)

        index = ctx._saved_index.array
        coords = [c.reshape(-1) for c in np.indices(index.shape)][:len(ctx.shape)]
        if coords:
            coords[ctx.dim] = index.reshape(-1)
        indices = np.array(coords, dtype=np.int64).reshape(len(ctx.shape), index.size)
        return SparseTensor(Tensor._wrap(indices), Tensor._wrap(g.array.reshape(-1).copy()), ctx.shape), None, None


def _gather(a, dim, index):
    """Gather's forward on arrays: (out, flat, at), flat_along's index or else _along's (checked), the one it took."""
    ids = whole_slices(index, dim, a.shape)
    if ids is not None:  # (checked)
        return array_module(a).take(a, ids, axis=dim), None, None
    flat = flat_along(dim, index, a)
    if flat is not None:  # (numpy's take of one flat index: its tuple of index arrays is slower)
        return a.reshape(-1).take(flat), flat, None
    at = _along(array_module(a), dim, index, a.shape)
    return (a.copy() if a.ndim == 0 else a[at]), None, at  # (0-d: the index is 0)


def _along(xp, dim, index, shape):
    """The numpy index of `index` along `dim` (the other dims counted from 0) into an array of `shape`:
    gather's and scatter's. The entries are checked here, in the ops' forwards (so a replay of a
    captured step checks each call's index), as PyTorch checks them: numpy would wrap a negative one."""
    _check_along(index, dim, shape)
    if not index.ndim:  # a 0-d index of a 0-d input
        return index
    idx = list(_grids(xp, index.shape))
    idx[dim] = index
    return tuple(idx)


def flat_along(dim, index, target):
    """_along's index as one flat index into target.reshape(-1) (checked), where target is a C-contiguous
    numpy array of one dim or more and the index has its ndim; else None. The same elements in the same
    order, for numpy's 1-D fast loops (np.add.at, take): its loops over a tuple of index arrays are slow."""
    if type(target) is not np.ndarray or not target.flags.c_contiguous or index.ndim != target.ndim or not index.ndim:
        return None
    if index.size <= _RAVEL_MAX:  # numpy checks each id as it makes the flat index: one call, no range pass
        at = list(_grids(np, index.shape))
        at[dim] = index
        try:
            return np.ravel_multi_index(tuple(at), target.shape)
        except ValueError:  # (an id out of range: refused below, in PyTorch's words)
            pass
    _check_along(index, dim, target.shape)
    step, rest = _flat_steps(index.shape, dim, target.shape)
    return index + rest if step == 1 else index * step + rest  # (new intp arrays)


_RAVEL_MAX = 512  # index entries up to which flat_along's index is numpy's ravel_multi_index: its loop
# costs ~3x the arithmetic below per entry, but it saves the separate range check


@functools.lru_cache(maxsize=256)
def _flat_steps(shape, dim, target_shape):
    """For flat_along, into a C-contiguous array of `target_shape`: the flat step along `dim`, and the flat
    offset of each position of index `shape`'s other dims (dim `dim` of size 1), kept read only."""
    steps = [int(n) for n in np.cumprod((1,) + target_shape[:0:-1])[::-1]]  # (row-major, in elements)
    rest = np.zeros([1 if d == dim else n for d, n in enumerate(shape)], dtype=np.intp)
    for d, grid in enumerate(np.indices(rest.shape, sparse=True)):
        if d != dim:
            rest += grid * steps[d]
    rest.flags.writeable = False
    return np.intp(steps[dim]), rest


def _check_along(index, dim, shape):
    n = shape[dim] if shape else 1
    if some_id_outside(index, n):  # PyTorch refuses negative indices here, and names the first bad one
        flat = index.reshape(-1)
        first = builtins.int(flat[((flat < 0) | (flat >= n)).argmax()])
        raise RuntimeError(f"index {first} is out of bounds for dimension {dim} with size {n}")


def whole_slices(index, dim, shape):
    """gather's or scatter's `index` (an array along `dim` into an array of `shape`) as one id per slice,
    checked, where each id spans its whole slice: the index has shape's sizes in the other dims and the
    same id all along them, as one expanded from an id per slice has (a graph's messages added at their
    nodes, `out.scatter_add_(0, dst.unsqueeze(-1).expand_as(msg), msg)`); else None. Through these ids
    the op is index_select's or index_add's, a slice at a time, where the element-wise path is ~10x slower."""
    if type(index) is not np.ndarray or 0 not in index.strides or index.ndim < 2 or index.ndim != len(shape) \
            or not index.size:  # (first: an index not expanded, the usual, costs one look)
        return None
    for d in range(index.ndim):
        if d != dim and (index.shape[d] != shape[d] or (index.strides[d] and index.shape[d] > 1)):
            return None
    ids = index[tuple(slice(None) if d == dim else 0 for d in range(index.ndim))]
    _check_along(ids, dim, shape)
    return ids


def scatter_add_at(xp, out, dim, index, src):
    """out += src placed along `dim` at `index` (arrays; src of the index's shape; repeats summed in order)."""
    ids = whole_slices(index, dim, out.shape) if dim == 0 and out.flags.c_contiguous else None
    if ids is not None:  # (the same sums in the same order: the same bits)
        _add_rows_at(out, ids, src)
        return
    big = xp is np and index.size >= _FLAT_ADD_AT and src.shape == index.shape
    flat = flat_along(dim, index, out) if big else None
    if flat is not None:
        np.add.at(out.reshape(-1), flat.reshape(-1), src.reshape(-1))
    else:  # (few entries: the loop over the index arrays, quicker than making a flat index; cupy's always)
        xp.add.at(out, _along(xp, dim, index, out.shape), src)


def _grids(xp, shape):
    """xp.indices(shape, sparse=True): for numpy, made once per shape and kept read only (they only ever
    index), as gather's index of a batch takes one shape call after call."""
    if xp is not np:
        return xp.indices(shape, sparse=True)
    grids = _GRIDS.get(shape)
    if grids is None:
        if len(_GRIDS) > 256:
            _GRIDS.clear()
        grids = _GRIDS[shape] = np.indices(shape, sparse=True)
        for g in grids:
            g.flags.writeable = False
    return grids


_GRIDS = {}


def check_index_shape(op, input, dim, index, src=None):
    """PyTorch's checks of gather's / scatter's index: same ndim, no larger than self apart from dim
    (and no larger than src)."""
    if index.array.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    nd = input.array.ndim  # (a 0-d tensor counts as one of shape [1])
    if builtins.max(index.array.ndim, 1) != builtins.max(nd, 1) and index.array.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = normalize_dim(dim, nd)
    if index.array.size and nd:
        ishape, sshape = index.array.shape, input.array.shape
        for k in range(nd):
            if k != d and ishape[k] > sshape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(ishape)} to be no larger than "
                    f"self {list(sshape)} apart from dimension {d}"
                )
            if src is not None and ishape[k] > src.array.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(ishape)} to be no larger than "
                    f"src {list(src.array.shape)}"
                )
    return d  # (the entries are checked by the op's forward: _along)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """out[i][j] = input[i][index[i][j]] (for dim=1), with the gradient scattered back."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py)
        return out_call(gather, "gather", (input, dim, index), {}, out)
    d = check_index_shape("gather", input, dim, index)
    if input.array.ndim == 0 and index.array.ndim == 1:  # PyTorch lets a 0-d input take a 1-element index
        return SparseGather.apply(input, 0, index) if sparse_grad else Gather.apply(input.reshape(1), 0, index)
    if _records_nothing(input):  # (a DQN's `q.gather(1, a.unsqueeze(1))` of its target net) the arrays alone
        return Tensor._output(_gather(input.array, d, index.array)[0], None)
    return (SparseGather if sparse_grad else Gather).apply(input, d, index)


class ScatterAdd(Function):
    """zeros(shape).scatter_add(dim, index, g): the backward of gather and of max(dim)."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, dim, index, shape):
        ctx.dim = dim
        ctx.save(index=index)
        xp = array_module(g.array)
        if not shape:
            return g.array.copy()
        out = xp.zeros(shape, dtype=g.array.dtype)
        scatter_add_at(xp, out, dim, index.array, g.array)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Gather.apply(gg, ctx.dim, ctx._saved_index), None, None, None


def index_scatter(g, dim, index, shape):
    """A gradient of `shape` with `g` added at `index` along `dim` (repeats summed)."""
    return ScatterAdd.apply(g, dim, index, shape)


def index_select(input, dim, index, *, out=None):
    """Entries along `dim` picked by a 1-D integer index tensor (repeats allowed)."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py)
        return out_call(index_select, "index_select", (input, dim, index), {}, out)
    d = normalize_dim(dim, input.array.ndim)
    if not isinstance(index, Tensor) or index.array.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.array.dtype.type is not np.int64 and index.array.dtype.type is not np.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if input.array.ndim == 0:
        if index.array.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.array.size} value(s)")
        if builtins.int(index.array.reshape(-1)[0]) != 0:
            raise IndexError("index out of range in self")
        return _IndexSelectOfScalar.apply(input, (), False)
    if index.array.size and input.array.shape[d] == 0 and input.array.ndim > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    return IndexSelect.apply(input, d, index)  # (its entries are checked in the op's forward)


# Rows up to this long are sorted whole for topk: cheaper than a partition and a sort of the k it picks,
# whose extra numpy calls cost more than sorting a short row (numpy on an AMD EPYC: 5-32 us against 16-41
# from 32 to 2048 entries; 4.5 ms against 0.57 at 50,304)
_WHOLE_SORT = 2048


def _topk_arrays(x, k, dim, largest, sorted_):
    """topk's (values, indices) arrays of array x along `dim` (non-negative)."""
    xp = array_module(x)
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=np.int64)

    def key(a):  # ascending order of key(a) is the order wanted (descending for largest; nan first)
        return descending_key(xp, a) if largest else a

    n = x.shape[dim]
    if k == 1 and largest and x.dtype.kind in "fiu":
        # the largest alone (a decoder's `topk(1)`, a class guess): argmax, whose first NaN wins as in
        # PyTorch (a NaN above +inf too), one reduction where the paths below sort and gather
        idx = x.argmax(axis=dim, keepdims=True)
    elif k < n and max(n, x.size // 8) > _WHOLE_SORT:
        # a long row (a vocabulary's logits, top_k of them), or many rows (a recommender's top-k items per user,
        # whose numpy calls are paid once for them all): the k wanted picked by a partition, then sorted
        idx = xp.argpartition(key(x), k - 1, axis=dim)
        idx = xp.take(idx, xp.arange(k), axis=dim)
        if sorted_:
            order = xp.argsort(key(xp.take_along_axis(x, idx, axis=dim)), axis=dim, kind="stable")
            idx = xp.take_along_axis(idx, order, axis=dim)
    else:  # a short row: one stable sort of it all (equal values in index order), its first k
        if largest and x.dtype.kind == "f" and xp is np:  # (sampling's top-k of logits)
            idx = _descending_order(x, dim)
        else:
            idx = xp.argsort(key(x), axis=dim, kind="stable")  # (cupy's method takes no kind)
        if k < n:  # (its own compact array: not a view keeping the whole sort alive, and .view()-able)
            idx = xp.ascontiguousarray(
                idx[..., :k] if dim == idx.ndim - 1 else idx[(slice(None),) * dim + (slice(0, k),)])
    idx = idx.astype(np.int64, copy=False)
    return take_along(xp, x, idx, dim), idx


def _descending_order(x, dim):
    """The stable argsort of descending_key(np, x) along `dim`, for a float numpy array x, without its NaN
    test of every entry: -x's sort, whose order is the same where x has no NaN. numpy sorts NaNs last (PyTorch
    takes them first), so the sorted rows' last entries say whether x has any, and then the key's sort."""
    neg = -x
    idx = neg.argsort(axis=dim, kind="stable")  # (the method: np.argsort's wrapper costs a microsecond)
    if 0 < x.size == x.shape[dim]:  # one row (a generated token's logits): its last entry, by flat index
        last = neg.item(idx.item(-1))
        nan = last != last
    else:
        nan = np.isnan(take_along(np, neg, idx[(slice(None),) * dim + (slice(-1, None),)], dim)).any()
    if nan:
        return descending_key(np, x).argsort(axis=dim, kind="stable")
    return idx


class Topk(Function):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, a, k, dim, largest, sorted_):
        values, idx = _topk_arrays(a.array, k, dim, largest, sorted_)
        ctx.shape, ctx.dim = a.array.shape, dim
        ctx.save(indices=idx)
        # (the caller's own where saved: writing into it leaves the saved one as it was)
        out = idx.copy() if ctx.needs_input_grad[0] else idx
        ctx.mark_non_differentiable(out)
        return values, out

    @staticmethod
    def backward(ctx, g, _):
        return index_scatter(g, ctx.dim, ctx._saved_indices, ctx.shape), None, None, None, None


class Sort(Topk):
    node_name = "SortBackward0"


class SortStable(Sort):
    node_name = "SortBackward1"  # (PyTorch's sort.stable overload: the one any given `stable` picks)


def topk(input, k, dim=-1, largest=True, sorted=True, _cls=Topk):
    """The k largest (or smallest) values along dim and their indices."""
    is_sort = issubclass(_cls, Sort)
    if input.array.dtype.kind == "c":
        from .complex import refuse

        refuse("sort" if is_sort else "topk", input)
    if not is_sort:
        k = int_argument(k, "topk", "'k' (position 2)")
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d] if input.array.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if not is_sort and input.array.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if _records_nothing(input):  # (sampling's top-k of logits) the arrays alone, without apply's two-output wrapping
        values, indices = _topk_arrays(input.array, k, d, largest, sorted)
        values, indices = Tensor._output(values, None), Tensor._output(indices, None)
    else:
        values, indices = _cls.apply(input, k, d, largest, sorted)
    return values_indices(values, indices, "sort" if is_sort else "topk")


def topk_method(self, k, dim=-1, largest=True, sorted=True):
    return topk(self, int_argument(k, "topk", "'k' (position 1)"), dim, largest, sorted)


topk_method.__name__ = "topk"  # (the name its wrapper's refusals give)


_UNSTATED = object()  # (sort's `stable` not passed: PyTorch's other overload)


def sort(input, dim=-1, descending=False, *, stable=_UNSTATED):
    """Values sorted along `dim` (stable) and their indices."""
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d] if input.array.ndim else 1
    return topk(input, n, d, largest=descending, sorted=True, _cls=Sort if stable is _UNSTATED else SortStable)


class Multinomial(Function):
    """Indices drawn from each row of non-negative weights (an op, so that minigrad.compile replays
    the draw with fresh numbers from the same generator; no gradient: its output is integer)."""

    @staticmethod
    def forward(ctx, input, num_samples, replacement, generator):
        xp = array_module(input.array)
        p = input.array
        if num_samples == 1 and p.size == p.shape[-1] and type(p) is np.ndarray:
            drawn = _one_draw(p.reshape(-1), generator)
            if drawn is not None:
                return np.full(p.shape[:-1] + (1,), drawn, dtype=np.int64)
        n = p.shape[-1]
        rows = p.reshape(-1, n).astype(np.float64)
        # the running sums: the inverse CDF, times each row's total (its last entry)
        cdf = xp.cumsum(rows, axis=1)
        sums = cdf[:, -1:] if n else xp.zeros((rows.shape[0], 1))
        # (a NaN fails both comparisons; an inf, or float64's overflow, makes its row's sum inf)
        if p.size and not (bool(p.min() >= 0) and sums.max() < np.inf):
            if replacement and num_samples > 1:
                _refuse_row_by_row(rows, sums)
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if sums.size and not sums.min() > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        rng = generator or _random.generator(xp)
        if replacement or num_samples == 1:
            # inverse-CDF sampling: a uniform per draw scaled by the total, searched in the running sums
            t = rng.random((rows.shape[0], num_samples)) * sums
            if num_samples == 1:  # searchsorted(cdf, t, side="right") of every row at once: #{cdf <= t}
                out = (cdf <= t).sum(axis=1, keepdims=True)
            else:
                out = xp.stack([xp.searchsorted(cdf[i], t[i], side="right") for i in range(rows.shape[0])])
            # u < 1 keeps u total below the total, except where the total is subnormal (float64 weights
            # below 1e-308): rounded up to it, above which no running sum lies, the draw is the entry that
            # brought the sum to its end (the first that reaches it; never a zero weight after it)
            if (out == n).any():
                out = xp.where(out == n, (cdf < sums).sum(axis=1, keepdims=True), out)
        else:
            # Gumbel top-k: sampling without replacement in proportion to the weights (normalized or not:
            # the log of the total shifts a row's keys alike)
            gumbel = -xp.log(-xp.log(rng.random(rows.shape)))
            with np.errstate(divide="ignore"):
                keys = xp.log(rows) + gumbel
            out = xp.argsort(-keys, axis=1)[:, :num_samples]
        return out.astype(np.int64, copy=False).reshape(p.shape[:-1] + (num_samples,))


def _one_draw(p, generator):
    """One index drawn from one row of weights (a generated token's), as the general code above draws it
    (the same running sums in float64, the same uniform from the stream: the same index), in half its
    numpy calls; None where a weight or the sum is out of bounds (the general code then says which)."""
    if not p.size:
        return None
    cdf = p.astype(np.float64).cumsum()
    total = float(cdf[-1])
    if not (0 < total < np.inf and np.minimum.reduce(p) >= 0):
        return None
    i = cdf.searchsorted((generator or _random.generator(np)).random() * total, "right")
    return i if i < p.size else cdf.searchsorted(total, "left")  # (u total rounded up: as above)


def _refuse_row_by_row(rows, sums):
    """PyTorch's refusal when drawing several samples with replacement: it checks row by row, each
    entry in turn (a NaN fails `>= 0` first), then the row's sum."""
    for row, total in zip(to_device(rows, "cpu"), sums.tolist()):
        for v in row:
            if not v >= 0:
                raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
            if v == np.inf:
                raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if not total[0] > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, generator=None):
    """Sample indices from each row of non-negative weights `input` (1-D or 2-D)."""
    p = input.array
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:  # integer counts are weights too, but PyTorch refuses them
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype._legacy[:-6]}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if p.shape[-1] > 2 ** 24:  # (PyTorch's limit: its sampled indices pass through float32, exact up to 2^24)
        raise RuntimeError("number of categories cannot exceed 2^24")
    return Multinomial.apply(input, num_samples, replacement, generator)
