"""Shape and view ops: reshape/view, transpose/permute, squeeze, expand, cat/stack, split, tril.

View ops return tensors that share memory and the version counter with their input, so an
in-place change through either is seen by the saved-tensor checks of both.
"""
import builtins
import functools
import math
import operator
import warnings

import numpy as np

from .._warn_once import warn_once
from ..autograd import function as _function
from ..autograd import recording
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..dtypes import from_numpy_dtype, result_type
from ..device import array_module, one_to_one
from ..tensor import (Tensor, channels_last_contiguous, dtype_argument, int_argument, invalid_arguments,
                      is_dtype_argument, memory_format_argument, size_type_error)
from ._util import broadcast_view, cast, extra_positional, normalize_dim, sizes_or_keyword, sum_to, sum_to_array, type_name
from .conversion import laid_out
from .out import out_call


def _share_version(out, base):
    """Views share their base's version counter (in-place edits through one are seen by both)."""
    owner = out.array.base  # numpy and cupy name the array that owns the memory (or its view's base)
    if owner is not None and (owner is base.array or owner is base.array.base
                              or array_module(out.array).may_share_memory(out.array, base.array)):
        _as_view(out, base)
    return out


_requires_grad = operator.attrgetter("_requires_grad")  # (any(map(...)) over a node's gradients: no Python frame)

# True once some tensor has a flag below (_multi_output, _no_grad_view): until then a view of a view (a
# sample cut from a slice of the data, a row of a reshaped gradient) has none to pass on, and is spared
# the look for them (reading an unset slot costs a caught AttributeError)
_flags_set = False


def _as_view(out, base):
    """`out` made a view of `base` (its version counter shared); returns `out`."""
    global _flags_set
    out._version_counter = base._version_counter
    out._base = base if base._base is None else base._base
    out._view_version = base._version_counter[0]
    if base._requires_grad or _flags_set and base._base is not None:  # (a flag below comes from such a base only)
        if _flags_set and getattr(base, "_multi_output", False):  # (a view of a piece of unbind/split is one too)
            out._multi_output = True
        if not state.grad_enabled and (base._requires_grad or getattr(base, "_no_grad_view", False)):
            out._no_grad_view = _flags_set = True  # (apply_inplace refuses writing through it with grad mode on)
            out._requires_grad = True  # (as PyTorch's: a leaf that requires grad through its base, gradients to neither)
        elif _flags_set and getattr(base, "_no_grad_view", False):  # a view of one, with grad mode on: refused too,
            out._no_grad_view = "of a view"  # in words that name the op that took it
    return out


def _view_of(base, array):
    """A new tensor on `array`, a view of `base`'s array, recording nothing: base's version counter shared."""
    out = Tensor._output(array, None)
    _as_view(out, base)
    return out


def _records_nothing(t):
    """Whether an op on `t` alone records nothing (no gradient wanted, no minigrad.compile capture, and t
    is no view whose base was since written in place, no forward-AD level entered: Function.apply gives such a view that write's
    history), so that a view op may be the view alone."""
    return not (t._requires_grad and state.grad_enabled) \
        and (not recording.recorders_made or recording.hook.recorder is None) \
        and _function.dual_apply is None \
        and (t._base is None or t._view_version == t._version_counter[0])


def _shape_arg(shape, name=None, argument="size"):
    """The sizes `name(*shape)` was given (`reshape(2, 3)`, `reshape((2, 3))`) as ints, each by __index__ (an
    integer tensor of one element too): a float or a string refused in PyTorch's parser's words."""
    given = shape
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(map(operator.index, shape))
    except TypeError:
        if name is None:
            raise
        raise TypeError(size_type_error(name, given, *_first_non_index(shape), argument)) from None


def _first_non_index(shape):
    """The place and value of shape's first entry that is no index."""
    for i, s in enumerate(shape):
        try:
            operator.index(s)
        except TypeError:
            return i, s


def _infer_shape(shape, numel):
    """`shape` with its one -1 (if any) worked out so that it holds `numel` elements."""
    inferred = shape.count(-1)
    if shape and min(shape) < -1:  # (two negative sizes would pass the products below)
        inferred = -1
    elif not inferred and math.prod(shape) == numel:  # the usual: every size given, and right
        return tuple(shape)
    elif inferred == 1:  # the other usual: one -1 (the product of the others is -prod(shape))
        known, i = -math.prod(shape), shape.index(-1)
        if known and numel % known == 0:
            return (*shape[:i], numel // known, *shape[i + 1:])
    _refuse_shape(shape, numel)


def _refuse_shape(shape, numel):
    """PyTorch's words for a shape that cannot hold `numel` elements, checked in its order."""
    seen = False
    for i, size in enumerate(shape):
        if size == -1 and seen:
            raise RuntimeError("only one dimension can be inferred")
        if size < -1:
            raise RuntimeError(f"invalid shape dimension {size} at index {i} of shape {list(shape)}")
        seen = seen or size == -1
    if seen and numel == 0 and 0 in shape:  # view(-1, 0) of nothing: any size fits the -1
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                           "unspecified dimension size -1 can be any value and is ambiguous")
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


class View(Function):
    node_name = "ViewBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.array.shape
        return a.array.reshape(shape)

    @staticmethod
    def backward(ctx, g):  # reshape the gradient back
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.reshape(ctx.shape)), None
        return g.reshape(ctx.shape), None

    @staticmethod
    def array_step(needs, a, shape):
        src = a.array.shape
        return (lambda x: (x.reshape(shape), None)), (lambda saved, g: (g.reshape(src),))


class UnsafeView(View):
    node_name = "UnsafeViewBackward0"


def view(input, *shape, **size):
    """The same data seen with another shape; fails (as in PyTorch) if that needs a copy. view(dtype):
    the same bytes read as another dtype (not recorded: PyTorch's gives no gradient either)."""
    if size:
        if not shape and size.keys() == {"dtype"}:  # view(dtype=...)
            return _view_as_dtype(input, dtype_argument(size["dtype"], "view"))
        shape = sizes_or_keyword("view", shape, size, "size")
    elif len(shape) == 1 and is_dtype_argument(shape[0]):  # (`view(float)` too, as PyTorch's parser reads it)
        return _view_as_dtype(input, dtype_argument(shape[0], "view"))
    n = input.array.size
    if len(shape) == 2 and type(shape[0]) is type(shape[1]) is int and shape[1] > 0:  # view(B, C), view(-1, C): the usual
        b, c = shape
        if b == -1 and n % c == 0:
            shape = (n // c, c)  # _infer_shape's answer, without its checks
        elif b < 0 or b * c != n:
            shape = _infer_shape(shape, n)  # (its words for the size that does not fit)
    else:
        try:  # (operator.index: a float size is refused, as PyTorch's parser refuses it, not truncated)
            sizes = _shape_arg(shape)
        except TypeError:
            i, bad = _first_non_index(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
            if i:  # (past the first size, the dtype overload is out: the size's own words)
                raise TypeError(size_type_error("view", shape, i, bad)) from None
            raise TypeError(invalid_arguments("view", shape, ("torch.dtype dtype", "tuple of ints size"))) from None
        shape = _infer_shape(sizes, n)
    if shape == input.array.shape or input.array.flags.c_contiguous:  # contiguous memory takes any shape
        if _records_nothing(input):
            return _view_of(input, input.array.reshape(shape))
        return _as_view(View.apply(input, shape), input)  # (a reshape of contiguous memory is a view of it)
    xp = array_module(input.array)
    try:
        input.array.reshape(shape, copy=False) if xp is np else input.array.view().reshape(shape)
    except (ValueError, AttributeError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return _share_version(View.apply(input, shape), input)


class Resize(View):
    node_name = "ResizeBackward"


def resize(input, *sizes):
    """PyTorch's deprecated out-of-place resize: only a new shape of the same number of elements (a view of
    input made contiguous), unlike resize_, which may change the number."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resized(input, sizes)


def resize_as(input, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"resize_as(): argument 'tensor' (position 1) must be Tensor, not {type_name(tensor)}")
    return _resized(input, tuple(tensor.shape))


def _resized(input, sizes):
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    n = math.prod(shape)
    if n != input.array.size:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the given "
                           f"tensor has a size of {input.array.size} ({input.array.size} elements). autograd's "
                           "resize can only change the shape of a given tensor, while preserving the number of "
                           "elements. ")
    source = input.contiguous()
    return _share_version(Resize.apply(source, shape), source)


def _view_as_dtype(input, dt):
    """view(dtype): the array's bytes read as `dt`; a last dim of another size when the item sizes differ."""
    a = input.array
    if dt.itemsize != a.dtype.itemsize:
        ratio = dt.itemsize / a.dtype.itemsize
        if not a.ndim or (ratio > 1 and a.shape[-1] % ratio) or (a.ndim and a.strides[-1] != a.dtype.itemsize):
            have = from_numpy_dtype(a.dtype)._legacy[:-6]
            raise RuntimeError(f"self.size(-1) must be divisible by {builtins.int(ratio)} to view {have} as "
                               f"{dt._legacy[:-6]} (different element sizes), but got {a.shape[-1] if a.ndim else 0}")
    out = Tensor._wrap(a.view(dt.np))
    out._version_counter, out._base = input._version_counter, input if input._base is None else input._base
    out._view_version = input._version_counter[0]
    return out


def reshape(input, *shape, **kw):
    """`input` with a new shape: a view (ViewBackward0) when the layout allows, else, as PyTorch
    does it, a contiguous copy (CloneBackward0) seen with the new shape (UnsafeViewBackward0)."""
    if kw:
        shape = sizes_or_keyword("reshape", shape, kw, "shape")
    shape = _infer_shape(_shape_arg(shape, "reshape", "shape"), input.array.size)
    a = input.array
    if not a.flags.c_contiguous:
        r = a.reshape(shape)
        if r.base is None or not array_module(a).may_share_memory(r, a):
            return UnsafeView.apply(Clone.apply(input), shape)
    elif _records_nothing(input):
        return _view_of(input, a.reshape(shape))
    return _share_version(View.apply(input, shape), input)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one."""
    nd = input.array.ndim
    try:
        s, e = normalize_dim(start_dim, nd), normalize_dim(end_dim, nd)
        if nd == 0:
            return reshape(input, 1)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:  # (nothing merged: input itself, as PyTorch)
            return input
        shape = input.array.shape
        n = 1
        for d in shape[s:e + 1]:
            n *= d
        return reshape(input, shape[:s] + (n,) + shape[e + 1:])
    except TypeError:  # (a dim that is no int: PyTorch's parser's words)
        _dim_arguments("flatten", start_dim=start_dim, end_dim=end_dim)
        raise


def unflatten(input, dim, sizes):
    d = normalize_dim(dim, input.array.ndim)
    shape = input.array.shape
    sizes = tuple(sizes)
    known = math.prod(s for s in sizes if s != -1)  # (checked here: reshape's words would name the whole shape)
    if sizes.count(-1) == 1 and not (known and shape[d] % known == 0) or -1 not in sizes and known != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({shape[d]}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


class Permute(Function):
    node_name = "PermuteBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a.array.transpose(dims)

    @staticmethod
    def backward(ctx, g):  # permute back with the inverse permutation
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.transpose(_inverse(ctx.dims))), None
        return permute(g, _inverse(ctx.dims)), None

    @staticmethod
    def array_step(needs, a, dims):
        inv = _inverse(dims)
        return (lambda x: (x.transpose(dims), None)), (lambda saved, g: (g.transpose(inv),))


def _inverse(dims):
    """The permutation that undoes `dims`: the positions of 0, 1, ... in it."""
    return tuple(sorted(range(len(dims)), key=dims.__getitem__))


class Transpose(Function):
    node_name = "TransposeBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, d0, d1):
        ctx.d = (d0, d1)
        return a.array.swapaxes(d0, d1)

    @staticmethod
    def backward(ctx, g):  # swap the same two dims back
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.swapaxes(*ctx.d)), None, None
        return transpose(g, *ctx.d), None, None

    @staticmethod
    def array_step(needs, a, d0, d1):
        return (lambda x: (x.swapaxes(d0, d1), None)), (lambda saved, g: (g.swapaxes(d0, d1),))


class T(Function):
    """`t()` of a 2-D tensor: Transpose's swap of its two dims, the tensor its one argument (no dims to
    look over as arguments and hand back gradients of None for)."""
    node_name = "TBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a):
        return a.array.T

    @staticmethod
    def backward(ctx, g):
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.T)
        return t(g)

    @staticmethod
    def array_step(needs, a):
        return (lambda x: (x.T, None)), (lambda saved, g: (g.T,))


def permute(input, *dims, **kw):
    """Reorder dims (a view)."""
    if kw:
        dims = sizes_or_keyword("permute", dims, kw, "dims")
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims, "permute", "dims")
    nd = input.array.ndim
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _share_version(Permute.apply(input, dims), input)


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    nd = input.array.ndim
    try:
        d0 = dim0 if type(dim0) is int and 0 <= dim0 < nd else normalize_dim(dim0, nd)  # (an in-range int: no call)
        d1 = dim1 if type(dim1) is int and 0 <= dim1 < nd else normalize_dim(dim1, nd)
        if nd == 0:  # dims 0 and -1 of a 0-d tensor: nothing to swap
            return _share_version(Alias0.apply(input), input)
        if _records_nothing(input):  # (attention's heads of a generated token: the view alone)
            return _view_of(input, input.array.swapaxes(d0, d1))
        return _share_version(Transpose.apply(input, d0, d1), input)
    except TypeError:  # (a dim that is no int, refused by a comparison or by numpy: PyTorch's parser's words)
        _dim_arguments("transpose", dim0=dim0, dim1=dim1)
        raise


def _dim_arguments(name, **dims):
    """PyTorch's parser's refusal of the first of an op's dims (a method's, by position) that is no int."""
    for position, (argument, value) in enumerate(dims.items(), 1):
        int_argument(value, name, f"'{argument}' (position {position})")


class Alias0(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a):
        return a.array.view()

    @staticmethod
    def backward(ctx, g):
        return g


def t(input):
    """Transpose of a tensor of at most 2 dims."""
    nd = input.array.ndim
    if nd != 2:
        if nd > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _share_version(T.apply(input), input)  # (a 0-d or 1-D one too: a view of its own, as PyTorch's)


def _T(self):
    nd = self.array.ndim
    if nd == 2:  # (the usual; a valid order, so none of permute's checks)
        return _share_version(Permute.apply(self, (1, 0)), self)
    if nd == 0:
        warn_once("T of 0-D", "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    else:
        warn_once("T of other than 2-D", "The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                  "is deprecated and it will throw an error in a future release. Consider `x.mT` to transpose batches "
                  "of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                  "tensor.")
    return permute(self, tuple(range(nd - 1, -1, -1)))


def _mT(self):
    if self.array.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


class Squeeze(Function):
    node_name = "SqueezeBackward1"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, dims):
        ctx.shape = a.array.shape
        return a.array.squeeze(dims)

    @staticmethod
    def backward(ctx, g):  # put the size-1 dims back
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.reshape(ctx.shape)), None
        return g.reshape(ctx.shape), None

    @staticmethod
    def array_step(needs, a, dims):
        src = a.array.shape
        return (lambda x: (x.squeeze(dims), None)), (lambda saved, g: (g.reshape(src),))


class SqueezeAll(Squeeze):
    node_name = "SqueezeBackward0"


class SqueezeDims(Squeeze):  # (squeeze with a list of dims: PyTorch's own overload)
    node_name = "SqueezeBackward2"


def squeeze(input, dim=None):
    """Drop size-1 dims (all of them, or those in `dim`)."""
    shape = input.array.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
        return _share_version(SqueezeAll.apply(input, dims), input)
    if type(dim) is builtins.int and 0 <= dim < len(shape):  # (the usual: one dim, in range)
        return _share_version(Squeeze.apply(input, (dim,) if shape[dim] == 1 else ()), input)
    cls = Squeeze if isinstance(dim, builtins.int) else SqueezeDims
    dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
    dims = tuple(i for i in (normalize_dim(d, len(shape)) for d in dims) if shape and shape[i] == 1)
    return _share_version(cls.apply(input, dims), input)


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return a.array[(slice(None),) * dim + (None,)]  # (a new axis by indexing: a view, without expand_dims' Python)

    @staticmethod
    def backward(ctx, g):  # drop the added dim
        if not g._requires_grad:  # nothing to record (no create_graph): the array op alone
            return Tensor._wrap(g.array.squeeze(ctx.dim)), None
        return g.squeeze(ctx.dim), None

    @staticmethod
    def array_step(needs, a, dim):
        new_axis = (slice(None),) * dim + (None,)
        return (lambda x: (x[new_axis], None)), (lambda saved, g: (g.squeeze((dim,)),))


def unsqueeze(input, dim):
    """Insert a size-1 dim at `dim`."""
    nd = input.array.ndim + 1
    d = dim if type(dim) is builtins.int and 0 <= dim < nd else normalize_dim(dim, nd)  # (an in-range dim: no call)
    return _share_version(Unsqueeze.apply(input, d), input)


class Expand(Function):
    node_name = "ExpandBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.array.shape
        return broadcast_view(a.array, shape)

    @staticmethod
    def backward(ctx, g):  # sum over the broadcast dims
        return sum_to(g, ctx.shape), None

    @staticmethod
    def array_step(needs, a, shape):
        src = a.array.shape
        return (lambda x: (broadcast_view(x, shape), None)), (lambda saved, g: (sum_to_array(g, src),))


def expand(input, *sizes, **kw):
    """Broadcast to `sizes` without copying (-1 keeps a dim); the result is read-only memory."""
    if kw:
        sizes = sizes_or_keyword("expand", sizes, {k: v for k, v in kw.items() if k != "implicit"}, "size")
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _shape_arg(sizes, "expand")
    shape = input.array.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand(minigrad.{input.dtype._legacy}{{{list(shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({len(shape)})"
        )
    target = [0] * len(sizes)
    for i in reversed(range(len(sizes))):  # from the last dim, as PyTorch: the first mismatch it names is the last
        s = sizes[i]
        cur = shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}")
            s = cur
        if cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at non-singleton "
                f"dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shape)}"
            )
        target[i] = s
    return _share_version(Expand.apply(input, tuple(target)), input)  # (a new view even to the same shape, as PyTorch's)


def expand_as(input, other):
    if not isinstance(other, Tensor):  # (an array has a shape too: PyTorch refuses it)
        raise TypeError(f"expand_as(): argument 'other' (position 1) must be Tensor, not {type_name(other)}")
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, shape)


def broadcast_to_method(self, *size, **kw):  # (the method, as expand, takes the sizes one by one too)
    return expand(self, *size, **kw)


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a, fmt=None):
        return laid_out(a.array, fmt)

    @staticmethod
    def backward(ctx, g):  # identity
        return g, None

    @staticmethod
    def array_step(needs, a, fmt=None):
        return (lambda x: (laid_out(x, fmt), None)), (lambda saved, g: (g,))


def clone(input, *extra, memory_format=None, _method=False):
    """A copy with its own memory (recorded: gradients flow back to `input`), laid out as `memory_format`
    says (by default preserve_format: a dense tensor's strides kept)."""
    if extra:
        raise extra_positional("clone", 1, extra, _method)
    if memory_format is None:  # (the usual call)
        return Clone.apply(input, "preserve_format")
    fmt = memory_format_argument(input, "clone", memory_format) or memory_format
    return Clone.apply(input, "preserve_format" if fmt is None else fmt.name)


def contiguous(input, memory_format=None):
    """`input` itself when already contiguous in the memory format (row-major by default), else a copy that is."""
    if memory_format is None:  # (the usual call)
        return input if input.array.flags.c_contiguous else Clone.apply(input)
    fmt = memory_format_argument(input, "contiguous", memory_format)
    if fmt is not None:
        return input if channels_last_contiguous(input, fmt) else Clone.apply(input, fmt.name)
    if input.array.flags.c_contiguous:
        return input
    return Clone.apply(input)


class Cat(Function):
    node_name = "CatBackward0"
    fp_arithmetic = False  # (moves values only)

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        sizes, arrays = [], []
        for t in tensors:  # (one loop: a comprehension is a call of its own)
            a = t.array
            arrays.append(a)
            sizes.append(a.shape[dim])
        ctx.sizes = sizes
        return array_module(arrays[0]).concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):  # slice the gradient back into the pieces (one per tensor: none for dim)
        if not state.grad_enabled:  # no graph of the backward wanted: views of g's array, no recorded split
            return tuple([Tensor._wrap(p) for p in _pieces(g.array, ctx.sizes, ctx.dim)])
        return tuple(split(g, ctx.sizes, ctx.dim))

    @staticmethod
    def array_step(needs, dim, *tensors):
        sizes = [t.array.shape[dim] for t in tensors]
        xp = array_module(tensors[0].array)
        return (lambda *arrays: (xp.concatenate(arrays, axis=dim), None)), (lambda saved, g: _pieces(g, sizes, dim))


def _pieces(g, sizes, dim):
    """Views of array `g` cut along `dim` into pieces of `sizes`."""
    lead, pieces, lo = (slice(None),) * dim, [], 0
    for n in sizes:
        pieces.append(g[lead + (slice(lo, lo + n),)])
        lo += n
    return pieces


def _check_same(tensors, what):
    if not tensors:
        if what == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{what} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")


def _tensor_sequence(tensors, name):
    """The tensors of cat and stack: a list or tuple, read as it is, as PyTorch takes only those (a generator,
    or a tensor whose rows were not meant as the list, is its TypeError)."""
    if type(tensors) is list or type(tensors) is tuple:
        return tensors
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    kind = type(tensors)
    # (PyTorch names the type as CPython's tp_name: a C type's with its module, `collections.deque`)
    named = kind.__name__ if kind.__module__ == "builtins" or kind.__flags__ & _HEAP_TYPE else \
        f"{kind.__module__}.{kind.__qualname__}"
    raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {named}")


_HEAP_TYPE = 1 << 9  # (a class made by a class statement: its tp_name is its bare name)


def _same_but_dim(tensors, dim):
    """`dim` (made non-negative) when `tensors` are Tensors of one dtype and rank (not 0) whose shapes
    differ at most along it: what cat's checks let through as it is; else None."""
    if not tensors or type(tensors[0]) is not Tensor:
        return None
    a = tensors[0].array
    shape, dt, nd = a.shape, a.dtype, a.ndim
    if not nd or type(dim) is not builtins.int or not -nd <= dim < nd:
        return None
    d = dim % nd
    head, tail = shape[:d], shape[d + 1:]
    for t in tensors:  # (the first again: cheaper than a slice of the list)
        if type(t) is not Tensor:
            return None
        b = t.array
        if b.dtype is not dt and b.dtype != dt:
            return None
        s = b.shape
        if s != shape and (len(s) != nd or s[:d] != head or s[d + 1:] != tail):
            return None
    return d


def cat(tensors, dim=0, *, out=None):
    """Concatenate along an existing dim."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py)
        return out_call(cat, "cat", (tensors, dim), {}, out)
    tensors = _tensor_sequence(tensors, "cat")
    d = _same_but_dim(tensors, dim)
    if d is not None:  # the common case, checked in one pass: nothing below to raise or promote
        if not state.grad_enabled and recording.hook.recorder is None:  # (a KV cache grown under no_grad)
            return Tensor._output(array_module(tensors[0].array).concatenate([t.array for t in tensors], axis=d),
                                  None)
        return Cat.apply(d, *tensors)
    for t in tensors:
        if getattr(t, "is_sparse", False):  # a sparse COO tensor (minigrad/sparse.py) makes its own cat
            return t._cat(tensors, dim)
    _check_same(tensors, "cat")
    for i, t in enumerate(tensors):
        if t.array.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dt = tensors[0].array.dtype
    if not builtins.all(t.array.dtype == dt for t in tensors):  # (one dtype, the usual, needs no promotion)
        dt = result_type(*tensors)
    # PyTorch's legacy rule: a 1-D tensor of no elements (a running `torch.tensor([])` to cat onto) is left out,
    # whatever the others' shapes, after taking part in the dtype
    numbered = [(i, t) for i, t in enumerate(tensors) if t.array.shape != (0,)] or list(enumerate(tensors))
    ref = numbered[0][1].array.shape
    nd = len(ref)
    d = normalize_dim(dim, nd)
    for i, t in numbered[1:]:
        s = t.array.shape
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
        for k in range(nd):
            if k != d and s[k] != ref[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {ref[k]} but "
                                   f"got size {s[k]} for tensor number {i} in the list.")
    return Cat.apply(d, *[cast(t, dt) for _, t in numbered])


concat = concatenate = cat


class Stack(Function):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        return _stacked([t.array for t in tensors], dim)

    @staticmethod
    def backward(ctx, g):  # each input gets its slice of the gradient
        if not g._requires_grad:  # nothing to record (no create_graph): views of g's array
            return (None,) + tuple([Tensor._wrap(p) for p in _unstacked(g.array, ctx.dim)])
        return (None,) + unbind(g, ctx.dim)

    @staticmethod
    def array_step(needs, dim, *tensors):
        return (lambda *arrays: (_stacked(arrays, dim), None)), (lambda saved, g: _unstacked(g, dim))


def _stacked(arrays, dim):
    a = arrays[0]
    if dim < a.ndim:  # joined along `dim`, that dim then seen as (pieces, its size): the stack, in one call
        return array_module(a).concatenate(arrays, axis=dim).reshape(a.shape[:dim] + (len(arrays),) + a.shape[dim:])
    return array_module(a).stack(arrays, axis=dim)


def _unstacked(g, dim):
    """The views of array `g` along `dim`, one per stacked piece."""
    if dim:
        lead = (slice(None),) * dim
        return [g[lead + (i,)] for i in range(g.shape[dim])]
    return list(g)


def stack(tensors, dim=0, *, out=None):
    """Join along a new dim."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py)
        return out_call(stack, "stack", (tensors, dim), {}, out)
    tensors = _tensor_sequence(tensors, "stack")
    if tensors and type(tensors[0]) is Tensor and type(dim) is builtins.int:  # the usual: one shape and dtype
        a = tensors[0].array
        shape, dt, nd = a.shape, a.dtype, a.ndim
        if -nd - 1 <= dim <= nd:
            arrays = []  # (checked and gathered in one pass: nothing below to raise or promote)
            for t in tensors:
                if type(t) is not Tensor:
                    break
                b = t.array
                if b.shape != shape or b.dtype is not dt and b.dtype != dt:
                    break
                arrays.append(b)
            else:
                if not state.grad_enabled and recording.hook.recorder is None:  # (nothing to record: the array)
                    return Tensor._output(_stacked(arrays, dim % (nd + 1)), None)
                return Stack.apply(dim % (nd + 1), *tensors)
    for t in tensors:
        if getattr(t, "is_sparse", False):  # a sparse COO tensor (minigrad/sparse.py) makes its own stack
            return t._stack(tensors, dim)
    _check_same(tensors, "stack")
    ref = tensors[0].array.shape
    for i, t in enumerate(tensors):
        if t.array.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                f"{list(t.array.shape)} at entry {i}"
            )
    dt = result_type(*tensors)
    return Stack.apply(normalize_dim(dim, len(ref) + 1), *[cast(t, dt) for t in tensors])


class Split(Function):
    node_name = "SplitWithSizesBackward0"

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.shape, ctx.dim = a.array.shape, dim
        return tuple(_pieces(a.array, sizes, dim))  # basic slices: views (np.split's, with less Python)

    @staticmethod
    def backward(ctx, *grads):  # concatenate the pieces' gradients (zeros for unused pieces)
        if not builtins.any(map(_requires_grad, grads)):  # nothing to record (no create_graph): arrays alone
            arrays = [g.array for g in grads]
            joined = _joined_view(arrays, ctx.dim)
            if joined is None:
                joined = array_module(arrays[0]).concatenate(arrays, axis=ctx.dim)
            return Tensor._wrap(joined), None, None
        return cat(list(grads), ctx.dim), None, None

    @staticmethod
    def array_step(needs, a, sizes, dim):
        def backward(saved, *grads):  # (cat's concatenate where the pieces do not lie side by side already)
            joined = _joined_view(grads, dim)
            return (array_module(grads[0]).concatenate(grads, axis=dim) if joined is None else joined),

        return (lambda x: (tuple(_pieces(x, sizes, dim)), None)), backward


def _joined_view(arrays, dim, new_axis=False):
    """The array that the numpy views `arrays` already form in one buffer, as a view, or None: side
    by side along `dim` (what cat would make), or, with `new_axis`, evenly spaced along a new axis
    `dim` (what stack would make). Gradients computed into one buffer (attention writes q, k and v's
    side by side, laid out as the fused projection's output they came from) then need no copy."""
    first = arrays[0]
    base = first.base
    if (type(first) is not np.ndarray or type(base) is not np.ndarray or (first.ndim == 0 and not new_axis)
            or not base.flags.c_contiguous or (new_axis and len(arrays) < 2)):
        return None
    origin = base.__array_interface__["data"][0]
    offset = first.__array_interface__["data"][0] - origin
    if new_axis:  # one piece after another, `step` bytes apart
        dim %= first.ndim + 1
        step = arrays[1].__array_interface__["data"][0] - origin - offset
        shape, strides = first.shape[:dim] + (len(arrays),) + first.shape[dim:], \
            first.strides[:dim] + (step,) + first.strides[dim:]
    else:
        dim %= first.ndim
        step = first.strides[dim]
        strides = first.strides
    n = 0
    for a in arrays:
        if (type(a) is not np.ndarray or a.base is not base or a.dtype != first.dtype or a.strides != first.strides
                or (a.shape != first.shape if new_axis else
                    a.shape[:dim] != first.shape[:dim] or a.shape[dim + 1:] != first.shape[dim + 1:])
                or a.__array_interface__["data"][0] - origin != offset + n * step):
            return None
        n += 1 if new_axis else a.shape[dim]
    if not new_axis:
        shape = first.shape[:dim] + (n,) + first.shape[dim + 1:]
    # a view of the base (as_strided does the same through more layers); the base's buffer bounds it
    try:
        joined = np.ndarray(shape, first.dtype, buffer=base, offset=offset, strides=strides)
    except (TypeError, ValueError):  # reaching outside the base (negative strides, say): concatenate
        return None
    # (stacked pieces that overlap each other would be one memory seen twice: stack copies them apart)
    return joined if not new_axis or one_to_one(joined) else None


class SplitEqual(Split):
    node_name = "SplitBackward0"


def split(input, split_size_or_sections, dim=0):
    """Split into pieces of `split_size` (the last may be smaller) or of the given sizes."""
    if not input.array.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    if isinstance(split_size_or_sections, builtins.int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        cls = SplitEqual
    else:
        try:
            sizes = [builtins.int(s) for s in split_size_or_sections]
        except TypeError:  # (a float size: not iterable, where PyTorch's parser tried its sizes overload last)
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                            f"{type_name(split_size_or_sections)}") from None
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension "
                f"{d}), but got split_sizes={sizes}"
            )
        cls = Split
    if _records_nothing(input):  # nothing to record (a generated token's rotate_half, its q, k, v): the views alone
        return tuple([_view_of(input, p) for p in _pieces(input.array, sizes or [0], d)])
    outs = cls.apply(input, sizes or [0], d)
    if _share_version(outs[0], input)._base is not None:  # (basic slices of one array: views all, or none)
        _as_views(outs, input)
    return outs


def _as_views(pieces, base):
    """_as_view of each of the pieces of one op that returns several views (split's, unbind's), the recorded
    ones flagged _multi_output: PyTorch refuses in-place ops on them (apply_inplace), as the op's node could not
    be rebased onto one piece's write. What depends on `base` alone is worked out once for all the pieces."""
    global _flags_set
    counter = base._version_counter
    root, version = base if base._base is None else base._base, counter[0]
    flagged = base._requires_grad or _flags_set and base._base is not None  # (_as_view's tests, in its order)
    inherited = flagged and _flags_set and getattr(base, "_multi_output", False)
    no_grad_view = flagged and not state.grad_enabled and (base._requires_grad or getattr(base, "_no_grad_view", False))
    for p in pieces:
        p._version_counter, p._base, p._view_version = counter, root, version
        if no_grad_view:
            p._no_grad_view = p._requires_grad = _flags_set = True
        if inherited or p._requires_grad:
            p._multi_output = _flags_set = True


def chunk(input, chunks, dim=0):
    """Split into `chunks` nearly equal pieces."""
    if not input.array.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if type(chunks) is not builtins.int:
        chunks = int_argument(chunks, "chunk", "'chunks' (position 1)")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    size = -(-n // chunks)
    if size:
        return split(input, size, d)
    return split(input, [0] * chunks, d)  # an empty dim: `chunks` empty pieces, as PyTorch's


class Unbind(Function):
    node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return _unbound(a.array, dim)

    @staticmethod
    def backward(ctx, *grads):  # stack the pieces' gradients (zeros for unused pieces)
        if not builtins.any(map(_requires_grad, grads)):  # nothing to record (no create_graph): arrays alone
            arrays = [g.array for g in grads]
            joined = _joined_view(arrays, ctx.dim, new_axis=True)
            return Tensor._wrap(_stacked(arrays, ctx.dim) if joined is None else joined), None
        return stack(list(grads), ctx.dim), None

    @staticmethod
    def array_step(needs, a, dim):
        if a.array.ndim == 1:
            return None

        def forward(x):
            return tuple(x if dim == 0 else array_module(x).moveaxis(x, dim, 0)), None

        def backward(saved, *grads):  # (stack's where the pieces do not lie side by side already)
            joined = _joined_view(grads, dim, new_axis=True)
            return (_stacked(grads, dim) if joined is None else joined),

        return forward, backward


def _unbound(a, dim):
    """Array `a`'s views along `dim`, a tuple."""
    if a.ndim == 1:  # (iterating a 1-D array yields scalars, copies: PyTorch's pieces are views)
        return tuple([a[i, ...] for i in range(a.shape[0])])
    # iterating an array yields its views along axis 0 (in C: a per-slice index costs more); `dim` is
    # brought to the front by a transpose (moveaxis's own, without its Python)
    return tuple(a if dim == 0 else a.transpose((dim, *range(dim), *range(dim + 1, a.ndim))))


def unbind(input, dim=0):
    """The slices along `dim`, as a tuple of views."""
    d = normalize_dim(dim, input.array.ndim)
    if not input.array.ndim:  # (PyTorch names dim 0 whatever dim was)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if _records_nothing(input):  # (iterating a tensor of data, the usual: the views alone, no Function call)
        return tuple([_view_of(input, a) for a in _unbound(input.array, d)])
    outs = Unbind.apply(input, d)
    if not isinstance(outs, tuple):
        outs = (outs,)
    # the pieces of one unbind are all views of input's array (or, copies, none): the first one tells for all
    if outs and _share_version(outs[0], input)._base is not None:
        _as_views(outs, input)
    return outs


class Tril(Function):
    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, a, diagonal, upper):
        ctx.k, ctx.upper = diagonal, upper
        x = a.array
        if type(x) is np.ndarray:  # numpy's tril builds its mask at each call: the mask, kept, and the same where
            return np.where(_triangle(x.shape[-2], x.shape[-1], diagonal, upper), x, x.dtype.type(0))
        xp = array_module(x)
        return (xp.triu if upper else xp.tril)(x, diagonal)

    @staticmethod
    def backward(ctx, g):  # the kept triangle passes its gradient
        return (triu if ctx.upper else tril)(g, ctx.k), None, None


class Triu(Tril):
    node_name = "TriuBackward0"


@functools.lru_cache(maxsize=64)
def _triangle(n, m, k, upper):
    """The (n, m) mask numpy's tril (triu: upper) keeps: j <= i + k (j >= i + k), read-only."""
    mask = np.tri(n, m, k - 1 if upper else k, dtype=bool)
    if upper:
        mask = ~mask
    mask.flags.writeable = False
    return mask


def tril(input, diagonal=0):
    """Lower triangle of the last two dims (zeros above `diagonal`)."""
    if input.array.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return Tril.apply(input, diagonal, False)


def triu(input, diagonal=0):
    """Upper triangle of the last two dims (zeros below `diagonal`)."""
    if input.array.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return Triu.apply(input, diagonal, True)


def is_contiguous_as(sizes, strides, format_name):
    """PyTorch's is_contiguous(memory_format=): size-1 dims skipped, the others packed in the format's order."""
    order = {"channels_last": (1, 3, 2, 0), "channels_last_3d": (1, 4, 3, 2, 0)}.get(format_name)
    if order is None:
        if 0 in sizes:
            return True
        order = range(len(sizes) - 1, -1, -1)
    elif len(sizes) != len(order):
        return False
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def dim_order(input, ambiguity_check=False):
    """Tensor.dim_order: the dims from outermost to innermost in memory, as PyTorch's Python source sorts
    them (an insertion sort by stride, ties left as they are)."""
    from .. import memory_format

    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    sizes, strides, ndim = tuple(input.shape), input.stride(), input.dim()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if (ambiguity_check is not False and (any(a == b for a, b in zip(strides, strides[1:])) or 1 in sizes)
            and sum(is_contiguous_as(sizes, strides, f.name) for f in formats) != 1):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    if ndim < 2:
        return tuple(range(ndim))
    contiguous = is_contiguous_as(sizes, strides, "contiguous_format")
    if contiguous != is_contiguous_as(sizes, strides, "channels_last"):
        return tuple(range(ndim)) if contiguous else (0, *range(2, ndim), 1)

    def ge(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(sizes[b], sizes[a]) else 1
        return -1 if ge(sb, sa) else 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))  # (sorted back to front, then reversed: PyTorch's order of comparisons)
    for i in range(1, ndim):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check and any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))
