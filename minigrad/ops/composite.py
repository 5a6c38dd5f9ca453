"""PyTorch's conveniences written with the recorded ops (their gradients, and second derivatives,
follow from those): aliases, fused multiply-adds, stacking and splitting helpers, nan-aware
reductions, products (outer, kron, cross, trace), sorting statistics (median, kthvalue, mode),
counting (bincount, unique, searchsorted). The graph they record names the primitive nodes."""
import builtins
import math
import warnings

import numpy as np

from ..autograd.composite import composite_node
from ..autograd.function import Function, _expandable, keep_absent_edges, keeps_operand_shapes
from ..autograd.grad_mode import state
from ..device import array_module
from .. import dtypes as _dtypes
from ..dtypes import cpp_name, int32, int64
from ..tensor import Tensor, dtype_argument, int_argument, placement_argument
from . import complex as complex_ops
from . import elementwise, fused, matmul, movement, pointwise, reduction, scan, special_array
from . import indexing as indexing_ops  # (meshgrid has an argument named indexing)
from . import shape as shape_ops  # (many functions here have a local named shape)
from ..autograd import recording
from .array_op import array_op
from .inplace import IndexPutWhole
from ._util import _check_broadcast, binary_operands, check_index_entries, normalize_dim, return_type, some_id_outside, type_name
from ._util import may_overlap, not_dense, sum_to, sum_to_array
from ._util import scaled as _scaled
from ._util import broadcast_shapes as _broadcast_pair  # (two shapes; broadcast_shapes below takes many)

# ---- aliases ------------------------------------------------------------------------------------------
absolute, divide, true_divide, multiply, subtract, negative = elementwise.abs, elementwise.div, elementwise.div, elementwise.mul, elementwise.sub, elementwise.neg
greater, greater_equal, less, less_equal, not_equal = elementwise.gt, elementwise.ge, elementwise.lt, elementwise.le, elementwise.ne
swapaxes = swapdims = shape_ops.transpose
def sgn(input):
    """sign, and z/|z| for a complex z (0 at 0)."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("sgn", input)
    return complex_ops.sgn(input) if kind == "c" else elementwise.sign(input, elementwise.SgnReal)


def positive(input):
    try:
        dtype = input.array.dtype
    except (AttributeError, NotImplementedError):
        return not_dense("positive", input)
    if dtype.kind == "b":
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


clamp_min, clamp_max = elementwise.clamp_min, elementwise.clamp_max
def ravel(input):
    return shape_ops.reshape(input, -1)


def movedim(input, source, destination):
    """Dims `source` moved to positions `destination`, the others keeping their order."""
    nd = input.array.ndim
    src = [source] if isinstance(source, (builtins.int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (builtins.int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same "
                           f"number of dims as destination ({dst} dims)")
    src, given_src = [normalize_dim(d, nd) for d in src], src
    dst, given_dst = [normalize_dim(d, nd) for d in dst], dst
    for word, dims, given in (("source", src, given_src), ("destination", dst, given_dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{word}` ({given})")
    if nd == 0:
        return shape_ops.reshape(input, ())
    order = [d for d in range(nd) if d not in src]
    perm = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(order)
    perm = [p if p is not None else next(rest) for p in perm]
    return shape_ops.permute(input, *perm) if nd else input


moveaxis = movedim


def narrow(input, dim, start, length, *, _method=False):
    """The slice start:start+length of `dim` (a view)."""
    if dim.__class__ is not builtins.int or start.__class__ is not builtins.int or \
            length.__class__ is not builtins.int:
        dim, start, length = _narrow_arguments(input, dim, start, length, _method)
    if input.array.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    index = (slice(None),) * d + (slice(start, start + length),)  # (a SliceBackward0 even when it takes all, as PyTorch)
    return shape_ops._share_version(indexing_ops.Slice.apply(input, index, False), input)


def _narrow_arguments(input, dim, start, length, method):
    """narrow's arguments as ints, or PyTorch's parser text for its two overloads (start a Tensor, or an
    int), each bad argument marked; an int is an int, a numpy integer or a 0-dim integral Tensor."""
    def is_int(x):
        if isinstance(x, Tensor):
            return x.array.ndim == 0 and x.array.dtype.kind in "iu"
        return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, builtins.bool)

    args = (dim, start, length)
    if is_int(dim) and is_int(length):
        if isinstance(start, Tensor) and not is_int(start):
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        if is_int(start):
            return builtins.int(dim), builtins.int(start), builtins.int(length)
    lead, names = ((), "") if method else ((input,), "Tensor input, ")
    overloads = []
    for kind in ("Tensor", "int"):
        fits = (is_int(dim), isinstance(start, Tensor) if kind == "Tensor" else is_int(start), is_int(length))
        marked = ", ".join([type_name(a) for a in lead] + [type_name(a) if ok else f"!{type_name(a)}!"
                                                           for a, ok in zip(args, fits)])
        overloads.append(f" * ({names}int dim, {kind} start, int length)\n      didn't match because some of the "
                         f"arguments have invalid types: ({marked})\n")
    got = ", ".join(type_name(a) for a in lead + args)
    raise TypeError(f"narrow() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    + "".join(overloads))


def select(input, dim, index):
    """input[..., index, ...] at `dim` (the dim removed)."""
    if not input.array.ndim:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.array.ndim)
    index = builtins.int(index)
    if not -input.array.shape[d] <= index < input.array.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.array.shape)} at "
                         f"dimension {d}")
    return input[(slice(None),) * d + (index,)]


def _scalar_type(t):
    """PyTorch's ScalarType name of t's dtype in its C++ checks: Long, Int, Float, Bool, Byte."""
    return t.dtype._legacy[:-len("Tensor")]


def take(input, index):
    """Elements of the flattened input at `index` (the index's shape); a negative id counts from the end."""
    if not isinstance(index, Tensor):
        raise TypeError(f"take(): argument 'index' (position 1) must be Tensor, not {type_name(index)}")
    if index.array.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_scalar_type(index)}")
    n = input.array.size
    if index.array.size and not n:
        raise IndexError("take(): tried to take from an empty tensor")
    if some_id_outside(index.array + n * (index.array < 0), n):  # (only on the error path: the id as given)
        ids = index.array.reshape(-1)
        bad = ids[(ids >= n) | (ids < -n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return _take(input, index)


@composite_node("TakeBackward0")
def _take(input, index):
    return shape_ops.reshape(input, -1)[index]


def take_along_dim(input, indices, dim=None):
    """gather() with the index broadcast against the input (flattened when dim is None)."""
    if dim is None:
        return indexing_ops.gather(shape_ops.reshape(input, -1), 0, shape_ops.reshape(indices, -1))
    if input.array.ndim != indices.array.ndim:  # (PyTorch's order: the ndims, the dtype, then the dim)
        raise RuntimeError(f"minigrad.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.array.ndim} dimensions for input, and {indices.array.ndim} dimensions "
                           f"for indices")
    if indices.array.dtype != np.int64:
        raise RuntimeError(f"minigrad.take_along_dim(): dtype of indices should be Long but got {_scalar_type(indices)}")
    d = normalize_dim(dim, input.array.ndim)
    if not input.array.ndim:  # (PyTorch asks the 0-d index for its size at dim)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    shape_i = list(indices.array.shape)
    shape_x = list(input.array.shape)
    shape_i[d] = shape_x[d] = 1
    from ._util import broadcast_shapes

    b = broadcast_shapes(tuple(shape_x), tuple(shape_i))
    want_i = list(b)
    want_i[d] = indices.array.shape[d]
    want_x = list(b)
    want_x[d] = input.array.shape[d]
    if input.array.shape[d]:  # (PyTorch takes each id modulo the dim's size: none is out of range)
        indices = indices % input.array.shape[d]
    # (expand gives a new view even to the input's own shape, as PyTorch's: an ExpandBackward0 under the gather)
    return indexing_ops.gather(shape_ops.expand(input, *want_x), d, shape_ops.expand(indices, *want_i))


# ---- multiply-adds ------------------------------------------------------------------------------------
def _fused_product(input, a, b, shape_of):
    """Whether input, a, b are float tensors of one dtype whose product has the shape `shape_of(a shape, b shape)`
    (None where the product's checks refuse them) that input broadcasts to: then one fused node does it, and
    otherwise the recorded ops below (their promotions, their error texts)."""
    if not (isinstance(input, Tensor) and isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    dt = a.array.dtype
    if dt.kind not in "fc" or b.array.dtype != dt or input.array.dtype != dt:
        return False
    shape = shape_of(a.array.shape, b.array.shape)
    return shape is not None and _expandable(input.array.shape, shape)


def _add(input, prod, beta, alpha):
    if isinstance(input, Tensor) and not _expandable(input.array.shape, prod.array.shape):
        shape_ops.expand(input, prod.array.shape)  # (PyTorch expands input to the product's shape: its error)
    return _scaled(input, beta) + _scaled(prod, alpha) if beta != 0 else _scaled(prod, alpha)


def _mm_shape(a, b):
    return (a[0], b[1]) if len(a) == len(b) == 2 and a[1] == b[0] else None


def _mv_shape(a, b):
    return (a[0],) if len(a) == 2 and len(b) == 1 and a[1] == b[0] else None


def _bmm_shape(a, b):
    return (a[0], a[1], b[2]) if len(a) == len(b) == 3 and a[0] == b[0] and a[2] == b[1] else None


def _outer_shape(a, b):
    return (a[0], b[0]) if len(a) == len(b) == 1 else None


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    if isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor) and not (
            input.dtype is mat1.dtype is mat2.dtype):  # (PyTorch's order: input against mat2, then mat1)
        first, name = (input, "self") if input.dtype is not mat2.dtype else (mat1, "mat1")
        raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {first.dtype._legacy[:-6]} and "
                           f"{mat2.dtype._legacy[:-6]}")
    if _fused_product(input, mat1, mat2, _mm_shape):
        return fused.Addmm.apply(input, mat1, mat2, beta, alpha)
    for name, m in (("mat1", mat1), ("mat2", mat2)):  # (mm's own texts say "self", "mat2")
        if isinstance(m, Tensor) and m.array.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.array.ndim}-D tensor")
    return _add(input, matmul.mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec): input a vector of mat's rows (or one value), as PyTorch checks it."""
    for t in (mat, vec):
        if getattr(t, "is_sparse", False):  # PyTorch has no sparse addmv: the sparse tensor's stub raises its text
            return t.addmv(input, mat, vec)
    if all(isinstance(t, Tensor) for t in (input, mat, vec)):
        if not (mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1):
            raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
        m, n = mat.shape
        if n != vec.shape[0] or input.numel() not in (1, m):
            raise RuntimeError(f"size mismatch, got input ({input.numel()}), mat ({m}x{n}), vec ({vec.shape[0]})")
    if _fused_product(input, mat, vec, _mv_shape):
        return fused.Addmv.apply(input, mat, vec, beta, alpha)
    return _add(input, matmul.matmul(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if _fused_product(input, batch1, batch2, lambda a, b: _bmm_shape(a, b) and _bmm_shape(a, b)[1:]):
        return fused.Addbmm.apply(input, batch1, batch2, beta, alpha)
    return _add(input, reduction.sum(matmul.bmm(batch1, batch2), 0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if isinstance(input, Tensor) and isinstance(batch1, Tensor) and input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(input.array.dtype)}, batch1: "
                           f"{cpp_name(batch1.array.dtype)}, batch2: {cpp_name(batch2.array.dtype)}")
    if _fused_product(input, batch1, batch2, _bmm_shape):
        return fused.Baddbmm.apply(input, batch1, batch2, beta, alpha)
    return _add(input, matmul.bmm(batch1, batch2), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    if _fused_product(input, vec1, vec2, _outer_shape):
        return fused.Addr.apply(input, vec1, vec2, beta, alpha)
    return _add(input, outer(vec1, vec2), beta, alpha)


def require_tensors(name, params, args, kwargs, first=1):
    """PyTorch's parser's refusal of a number (or other non-Tensor) where its signature has a Tensor: the first
    of `params` (given in `args`, from position `first`, or in `kwargs`) that is not one (numpy would take it)."""
    for pos, param in enumerate(params, first):
        x = args[pos - first] if pos - first < len(args) else kwargs.get(param)
        if x is not None and not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be Tensor, not {type_name(x)}")


def tensor_method(fn, name, params):
    """The method form `t.name(...)` of fn: its Tensor arguments `params` checked by their positions after self
    (the out-of-place function counts from input, the in-place method needs its own name in the text)."""

    def op(self, *args, **kwargs):
        require_tensors(name, params, args, kwargs)
        return fn(self, *args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = fn.__doc__
    return op


def tensor_function(fn, name, params):
    """The function form `torch.name(...)` of fn: its Tensor arguments `params` (input first) checked by position.
    fn stays its __wrapped__, so that the forms made from it count its own arguments."""

    def op(*args, **kwargs):
        require_tensors(name, params, args, kwargs)
        return fn(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__, op.__wrapped__ = fn.__doc__, fn
    return op


def _fused_pointwise(input, tensor1, tensor2):
    """Whether three float tensors of one dtype whose shapes broadcast together: one fused node takes them."""
    if not (isinstance(input, Tensor) and isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor)):
        return False
    dt = input.array.dtype
    if dt.kind not in "fc" or tensor1.array.dtype != dt or tensor2.array.dtype != dt:
        return False
    try:
        np.broadcast_shapes(input.array.shape, tensor1.array.shape, tensor2.array.shape)
    except ValueError:
        return False  # (the recorded ops below say what does not broadcast, in PyTorch's words)
    return True


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    if _fused_pointwise(input, tensor1, tensor2):
        return fused.Addcmul.apply(input, tensor1, tensor2, value)
    return input + _scaled(tensor1 * tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    if tensor1.array.dtype.kind in "iub" and tensor2.array.dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                           "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    if _fused_pointwise(input, tensor1, tensor2):
        return fused.Addcdiv.apply(input, tensor1, tensor2, value)
    return input + _scaled(tensor1 / tensor2, value)


def mv(input, vec):
    if getattr(input, "is_sparse", False):  # a sparse COO matrix (minigrad/sparse.py) makes its own product
        return input.mv(vec)
    if input.array.ndim != 2 or vec.array.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.array.ndim}, {input.array.ndim}, {vec.array.ndim}")
    return matmul.matmul(input, vec)


def outer(input, vec2):
    """input[i] * vec2[j]."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.array.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.array.ndim}-D")
    return shape_ops.reshape(input, (-1, 1)) * vec2


ger = outer


def inner(input, other):
    """Sum over the last dims of both (a scalar product for 1-D)."""
    if input.array.ndim == 0 or other.array.ndim == 0:
        return input * other
    a, b = input, other
    if a.array.shape[-1] != b.array.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    if a.array.ndim == 1 and b.array.ndim == 1:  # (PyTorch's node: a view of dot)
        return shape_ops.view(matmul.dot(a, b), ())
    flat = matmul.matmul(shape_ops.reshape(a, -1, a.array.shape[-1]), shape_ops.transpose(shape_ops.reshape(b, -1, b.array.shape[-1]), 0, 1))
    return shape_ops.reshape(flat, tuple(a.array.shape[:-1]) + tuple(b.array.shape[:-1]))


@composite_node("TraceBackward0")
def trace(input):
    if input.array.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.array.ndim}")
    return reduction.sum(movement.diagonal(input))


def kron(input, other):
    """The Kronecker product."""
    nd = builtins.max(input.array.ndim, other.array.ndim)
    a = shape_ops.reshape(input, (1,) * (nd - input.array.ndim) + tuple(input.array.shape))
    b = shape_ops.reshape(other, (1,) * (nd - other.array.ndim) + tuple(other.array.shape))
    inter_a, inter_b = [], []
    for sa, sb in zip(a.array.shape, b.array.shape):
        inter_a += [sa, 1]
        inter_b += [1, sb]
    out = shape_ops.reshape(a, tuple(inter_a)) * shape_ops.reshape(b, tuple(inter_b))
    shape = tuple(sa * sb for sa, sb in zip(a.array.shape, b.array.shape))
    if not out._requires_grad:
        return shape_ops.reshape(out, shape)
    # (the product is a fresh contiguous array: PyTorch sees it in the new shape with _unsafe_view)
    return shape_ops.UnsafeView.apply(out, shape)


@composite_node("LinalgCrossBackward0")
def cross(input, other, dim=None):
    """The cross product of 3-vectors along `dim` (the first dim of size 3 when None)."""
    from ._util import broadcast_shapes

    if input.array.ndim != other.array.ndim:  # (PyTorch broadcasts the sizes, not the number of dims)
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(input.array.shape, other.array.shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = normalize_dim(dim, len(shape))
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.array.shape[d]} and "
                           f"{other.array.shape[d]}")
    if input.array.dtype != other.array.dtype:
        complex_ops.check_same_dtype(input, other, "expected scalar type {} but found {}")
    a, b = shape_ops.expand(input, *shape), shape_ops.expand(other, *shape)
    ax, ay, az = (select(a, d, k) for k in range(3))
    bx, by, bz = (select(b, d, k) for k in range(3))
    return shape_ops.stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], d)


def dist(input, other, p=2):
    return reduction.dist(input, other, p)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim`."""
    if input.array.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.array.ndim)
    x = input
    if prepend is not None or append is not None:
        x = shape_ops.cat([t for t in (prepend, x, append) if t is not None], d)
    for _ in range(n):
        m = x.array.shape[d]
        after, before = narrow(x, d, 1, builtins.max(m - 1, 0)), narrow(x, d, 0, builtins.max(m - 1, 0))
        x = (after != before) if x.array.dtype == np.bool_ else after - before  # (bools: whether it changed)
    return x


# ---- elementwise compositions --------------------------------------------------------------------------
def hypot(input, other):
    a, _ = binary_operands(input, other)
    if a.array.dtype.kind != "f":
        raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
    return pointwise._two_kinds(pointwise.Hypot, pointwise.Hypot, input, other)


def logaddexp2(input, other):
    """log2(2^input + 2^other), without overflow (floating tensors only, as PyTorch): its own kernel, as
    PyTorch's, where scaling logaddexp by ln 2 would round twice (and lose log1p's precision near 0)."""
    a, _ = binary_operands(input, other)
    if a.array.dtype.kind != "f":
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
    return pointwise._two_kinds(pointwise.Logaddexp2, pointwise.Logaddexp2, input, other,
                                extra=(pointwise.has_bool(input, other),))


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0."""
    if input.array.dtype.kind == "f":
        return fused.Sinc.apply(input)
    x = input if input.array.dtype.kind in "fc" else input.float()
    px = x * math.pi
    zero = x == 0
    return elementwise.where(zero, 1.0, elementwise.sin(px) / elementwise.where(zero, 1.0, px))


def deg2rad(input):
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("deg2rad", input)
    if kind == "c":
        complex_ops.refuse("deg2rad", input)
    if kind == "f":
        return fused.Deg2Rad.apply(input)
    return input * (math.pi / 180.0)


def rad2deg(input):
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("rad2deg", input)
    if kind == "c":
        complex_ops.refuse("rad2deg", input)
    if kind == "f":
        return fused.Rad2Deg.apply(input)
    return input * (180.0 / math.pi)


def logit(input, eps=None):
    if input.array.dtype.kind != "f":
        complex_ops.refuse("logit", input)
        input = input.to(_dtypes.default_float)  # (integers and bool, as the other unary float ops)
    return fused.Logit.apply(input, None if eps is None else float(eps))


def _float_power_dtype(input, exponent):
    from ..dtypes import complex128, float64

    if any(x.is_complex() if isinstance(x, Tensor) else isinstance(x, complex) for x in (input, exponent)):
        return complex128
    return float64


def float_power(input, exponent):
    """pow in double precision: float64, or complex128 when either operand is complex."""
    dt = _float_power_dtype(input, exponent)
    a = input.to(dt) if isinstance(input, Tensor) else input
    b = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return elementwise.pow(a, b)


def float_power_of(float_power_):
    """float_power_: the base already of the result's dtype (float64, complex128 with a complex operand),
    as PyTorch casts no base in place."""
    def op(self, exponent):
        dt = _float_power_dtype(self, exponent)
        if self.dtype != dt:
            raise RuntimeError(f"the base given to float_power_ has dtype {complex_ops._scalar_type(self.array.dtype)} "
                               f"but the operation's result requires dtype {complex_ops._scalar_type(dt.np)}")
        return float_power_(self, exponent)

    op.__name__ = "float_power_"
    return op


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced by finite numbers (the dtype's largest by default)."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("nan_to_num", input, nan, posinf, neginf)
    if kind != "f":
        return shape_ops.clone(input)
    return fused.NanToNum.apply(input, nan, posinf, neginf)


def fmax(input, other):
    """maximum(), but a nan loses to a number."""
    complex_ops.refuse("fmax", input, other)
    return elementwise.apply_binary(fused.Fmax, *binary_operands(input, other))


def fmin(input, other):
    complex_ops.refuse("fmin", input, other)
    return elementwise.apply_binary(fused.Fmin, *binary_operands(input, other))


def heaviside(input, values):
    complex_ops.refuse("heaviside", input, values)
    if isinstance(values, Tensor) and values.array.dtype != input.array.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return elementwise.apply_binary(Heaviside, *binary_operands(input, values))


class Heaviside(Function):
    """PyTorch records heaviside with no derivative (grad_fn=<NotImplemented>): a backward through it raises."""
    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b):  # values where input == 0, else 1 where input > 0 (nan is not: 0)
        x = a.array
        return array_module(x).where(x == 0, b.array, (x > 0).astype(x.dtype))

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def signbit(input):
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("signbit", input)
    if kind == "c":
        complex_ops.refuse("signbit", input)
    return array_op("signbit", input)


def isposinf(input):
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("isposinf", input)
    if kind == "c":
        complex_ops.refuse("isposinf", input)
    return array_op("isposinf", input)


def isneginf(input):
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("isneginf", input)
    if kind == "c":
        complex_ops.refuse("isneginf", input)
    return array_op("isneginf", input)


def isreal(input):
    if input.array.dtype.kind == "c":
        return Tensor._wrap(input.array.imag == 0)
    return Tensor._wrap(array_module(input.array).ones(input.array.shape, dtype=bool))


def _kernel_for(name, a, kinds):
    """PyTorch's refusal where its kernel `name` has no loop for the operands' dtype (numpy's words otherwise)."""
    if a.array.dtype.kind not in kinds:
        raise NotImplementedError(f"\"{name}\" not implemented for '{complex_ops._scalar_type(a.array.dtype)}'")


def gcd(input, other):
    a, b = binary_operands(input, other)
    _kernel_for("gcd_cpu", a, "iu")
    return array_op("gcd", a, b)


def lcm(input, other):
    a, b = binary_operands(input, other)
    _kernel_for("lcm_cpu", a, "iu")
    return array_op("lcm", a, b)


def ldexp(input, other):  # input * 2**other
    from ..dtypes import default_float, result_type

    _check_broadcast(input.array.shape, other.array.shape)  # (PyTorch's error, not numpy's)
    if input.array.dtype.kind == "f" and other.array.dtype.kind in "biu":  # (PyTorch's kernel of input's dtype)
        if other.array.dtype == np.bool_:
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
        scale, dtype = default_float.np, input.array.dtype
    elif other.array.dtype.kind == "c" or input.array.dtype.kind == "c":
        return input * elementwise.pow(2.0, other if other.array.dtype.kind in "fc" else other.float())
    else:
        scale = other.array.dtype if other.array.dtype.kind == "f" else default_float.np
        dtype = result_type(input, Tensor._wrap(np.zeros((0,) * other.array.ndim, scale)))
        if other.array.ndim == 0 and scale.kind == "f":  # (PyTorch takes a 0-d exponent's 2^other in the result's dtype)
            scale = dtype
    out = elementwise.apply_binary(fused.Ldexp, input, other, np.dtype(scale), np.dtype(dtype))
    return keep_absent_edges(out, (input, other if other.array.dtype.kind == "f" else None), (1,))


def ldexp_of(ldexp_):
    """ldexp_: PyTorch refuses an integer or bool self first, whatever the exponent."""
    def op(self, other):
        if self.array.dtype.kind in "biu":
            raise RuntimeError(f"ldexp can't be cast to the desired output type {self.dtype._legacy[:-6]}")
        return ldexp_(self, other)

    op.__name__ = "ldexp_"
    return op


# ---- reductions ---------------------------------------------------------------------------------------
@composite_node("NansumBackward0")
def nansum(input, dim=None, keepdim=False, dtype=None):
    dtype = dtype_argument(dtype, "nansum")
    if input.array.dtype.kind == "c":
        complex_ops.refuse("nansum", input)
    return reduction.sum(elementwise.where(elementwise.isnan(input), 0.0, input) if input.array.dtype.kind == "f" else input, dim, keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, dtype=None):
    dtype = dtype_argument(dtype, "nanmean")
    if input.array.dtype.kind == "c":
        complex_ops.refuse("nansum", input)
    if input.array.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype._legacy[:-6]}")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point or "
                           f"complex dtype. Got: {dtype._legacy[:-6]}")
    keep = ~elementwise.isnan(input)  # (the count in the result's dtype: `dtype=` is the result's, as PyTorch)
    return nansum(input, dim, keepdim, dtype) / reduction.sum(keep, dim, keepdim).to(dtype or input.dtype)


def count_nonzero(input, dim=None):
    return reduction.sum(input != 0, dim)


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over `dim`, as PyTorch's torch.return_types.aminmax."""
    if input.array.dtype.kind == "c":
        complex_ops.refuse("aminmax", input)
    if dim is None and not input.array.size:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
    if dim is not None and input.array.ndim and input.array.shape[normalize_dim(dim, input.array.ndim)] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {normalize_dim(dim, input.array.ndim)} to have non-zero size.")
    return return_type("aminmax", ("min", "max"))(reduction.amin(input, dim, keepdim), reduction.amax(input, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over `dim`: `unbiased` (PyTorch's older flag) or `correction` as in std."""
    return reduction._spread(fused.StdMean, "std_mean", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over `dim`: `unbiased` (PyTorch's older flag) or `correction` as in var."""
    return reduction._spread(fused.VarMean, "var_mean", input, dim, unbiased, keepdim, correction)


def _sorted_stat(input, dim, keepdim, k_of_n, op, nans=None):
    """(values, indices) (PyTorch's return_types.<op>) of the element at sorted position k_of_n(n) along dim
    (or the flattened tensor). With `nans` (median's rule for NaN, below) the position is the lane's own:
    k_of_n(n, NaN count of the lane)."""
    x = shape_ops.reshape(input, -1) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, input.array.ndim)
    if dim is not None and input.array.ndim == 0:
        return reduction.values_indices(input, Tensor._wrap(np.zeros((), dtype=np.int64)), op)
    n = x.array.shape[d]
    if dim is None and n == 0:
        raise IndexError("median() input tensor cannot be empty")
    reduction._nonempty_dims("median" if op == "nanmedian" else op, input, (d,))
    if nans and recording.hook.recorder is not None and x.array.dtype.kind == "f":
        # in a minigrad.compile capture: each lane's position from its NaN count, in an op (a replay counts
        # each call's NaNs; a count taken here would be frozen, and so would the choice of a path without NaNs)
        k = array_op(lambda a: array_module(a).asarray(nans(n, array_module(a).isnan(a).sum(axis=d)), dtype=np.int64), x)
    else:
        counts = _nan_counts(x, d) if nans else None
        k = k_of_n(n) if counts is None else nans(n, counts)
    values, indices = indexing_ops.sort(x, d)
    v = _at_sorted(values, d, k)
    if dim is None:
        return v
    i = _at_sorted(indices, d, k)
    if keepdim:
        v, i = shape_ops.unsqueeze(v, d), shape_ops.unsqueeze(i, d)
    return reduction.values_indices(v, i, op)


def _nan_counts(x, d):
    """How many NaNs each lane along `d` holds; None when there are none (the usual: every lane's position is one)."""
    a = x.array
    if a.dtype.kind != "f":
        return None
    nan = array_module(a).isnan(a)
    return nan.sum(axis=d) if nan.any() else None


def _at_sorted(srt, d, k):
    """srt's entries at position k along d: k one int, or an array of one position per lane."""
    if isinstance(k, (builtins.int, np.integer)):
        return select(srt, d, builtins.int(k))
    index = shape_ops.unsqueeze(k, d) if isinstance(k, Tensor) else Tensor._wrap(np.expand_dims(k, d))
    return shape_ops.squeeze(indexing_ops.gather(srt, d, index), d)


def _median_with_nan(n, nans):
    # a lane with a NaN has NaN for median, the first of them (sorting is stable and puts NaNs last)
    return np.where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_position(n, nans):
    # the median of the lane's other numbers; a lane of NaNs only, as a lane without any
    valid = n - nans
    return np.where(valid > 0, (valid - 1) // 2, (n - 1) // 2)


class MedianAll(reduction.MaxAll):
    """median() / nanmedian() of the whole tensor: the gradient shared evenly among the elements equal to
    the median (among the NaNs for a NaN median), as PyTorch's evenly_distribute_backward; never all of it
    to the one element a sort happened to pick."""
    node_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, a, ignore_nan):
        ctx.save(self=a)
        xp = array_module(a.array)
        x = a.array.reshape(-1)
        if not x.size:  # (PyTorch's median of nothing: NaN, or an integer type's least value)
            least = True if x.dtype == np.bool_ else np.iinfo(x.dtype).min if x.dtype.kind in "iu" else xp.nan
            return xp.full((), least, dtype=x.dtype)
        if x.dtype.kind == "f":
            nan = xp.isnan(x)
            if nan.any():
                if not ignore_nan or nan.all():
                    return xp.full((), xp.nan, dtype=x.dtype)
                x = x[~nan]
        k = (x.size - 1) // 2  # (the lower median: no averaging of the middle two)
        return xp.asarray(xp.partition(x, k)[k])

    @staticmethod
    def backward(ctx, g):
        return reduction.MaxAll.backward(ctx, g)[0], None


class NanmedianAll(MedianAll):
    node_name = "NanmedianBackward0"


def _median_all(cls, input):
    return cls.apply(input, cls is NanmedianAll)


def _refuse_bool_median(input, dim):
    """PyTorch's refusal of a bool median, after its checks of the dim (an empty reduction dim fails first, and
    the whole tensor's median of nothing is not refused: NaN, True as a bool)."""
    if dim is not None:
        reduction._nonempty_dims("median", input, (normalize_dim(dim, input.array.ndim),))
    if input.array.dtype == np.bool_ and (dim is not None or input.array.size):  # (its kernels' names)
        raise NotImplementedError(f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for 'Bool'")


def median(input, dim=None, keepdim=False):
    """The lower median (PyTorch's: no averaging of the middle two); NaN where there is a NaN."""
    if input.array.dtype.kind == "c":
        complex_ops.refuse("median" if dim is None else "median_dim", input)
    _refuse_bool_median(input, dim)
    if dim is None:
        return _median_all(MedianAll, input)
    return _median_dim(input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    """median, leaving NaNs out."""
    if input.array.dtype.kind == "c":
        complex_ops.refuse("median" if dim is None else "median_dim", input)
    _refuse_bool_median(input, dim)
    if dim is None:
        return _median_all(NanmedianAll, input)
    return _nanmedian_dim(input, dim, keepdim)


@composite_node("MedianBackward1")
def _median_dim(input, dim, keepdim):
    return _sorted_stat(input, dim, keepdim, lambda n: (n - 1) // 2, "median", _median_with_nan)


@composite_node("NanmedianBackward1")
def _nanmedian_dim(input, dim, keepdim):
    return _sorted_stat(input, dim, keepdim, lambda n: (n - 1) // 2, "nanmedian", _nanmedian_position)


@composite_node("KthvalueBackward0")
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element (1-based) along `dim` and its index."""
    if input.array.dtype.kind == "c":
        complex_ops.refuse("kthvalue", input)
    if type(k) is not builtins.int:
        k = int_argument(k, "kthvalue", "'k' (position 1)")  # (the method's count)
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d] if input.array.ndim else 1
    reduction._nonempty_dims("kthvalue", input, (d,))
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.array.dtype == np.bool_ and input.array.ndim:  # (PyTorch's kernel refuses bool; a 0-d input never reaches it)
        raise NotImplementedError('"kthvalue_cpu" not implemented for \'Bool\'')
    return _sorted_stat(input, d, keepdim, lambda n: k - 1, "kthvalue")


@composite_node("ModeBackward0")
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` (the smallest among ties) and an index of it."""
    if input.array.dtype.kind == "c":
        complex_ops.refuse("mode", input)
    recording.escape("mode (numpy code outside minigrad's ops)")
    xp = array_module(input.array)
    d = normalize_dim(dim, input.array.ndim)
    reduction._nonempty_dims("mode", input, (d,))
    x = xp.moveaxis(input.array, d, -1) if input.array.ndim else input.array.reshape(1)
    srt = xp.sort(x, axis=-1)
    counts = (srt[..., :, None] == srt[..., None, :]).sum(-1)
    best = xp.take_along_axis(srt, counts.argmax(-1)[..., None], -1)[..., 0]
    idx = (x.shape[-1] - 1 - xp.argmax(xp.flip(x == best[..., None], -1), -1)).astype(np.int64)
    v = Tensor._wrap(best)
    if input._requires_grad:
        v = take_along_dim(input, Tensor._wrap(xp.expand_dims(idx, d) if input.array.ndim else idx.reshape(())), d if input.array.ndim else None)
        v = shape_ops.squeeze(v, d) if input.array.ndim else shape_ops.reshape(v, ())
    i = Tensor._wrap(idx if input.array.ndim else idx.reshape(()))
    if keepdim and input.array.ndim:
        v, i = shape_ops.unsqueeze(v, d), shape_ops.unsqueeze(i, d)
    return reduction.values_indices(v, i, "mode")


# ---- stacking, splitting ---------------------------------------------------------------------------------
def atleast_1d(*tensors):
    out = [t if t.array.ndim >= 1 else shape_ops.reshape(t, 1) for t in _flat(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*tensors):
    out = []
    for t in _flat(tensors):
        out.append(t if t.array.ndim >= 2 else shape_ops.unsqueeze(t, 0) if t.array.ndim else shape_ops.reshape(t, (1, 1)))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*tensors):
    out = []
    for t in _flat(tensors):
        nd = t.array.ndim
        if nd == 0:
            t = shape_ops.reshape(t, 1, 1, 1)
        elif nd == 1:
            t = shape_ops.unsqueeze(shape_ops.unsqueeze(t, 0), -1)
        elif nd == 2:
            t = shape_ops.unsqueeze(t, -1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def _flat(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def _non_empty(name, tensors):
    if not len(tensors):
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    ts = atleast_1d(*_non_empty("hstack", tensors))
    ts = [ts] if isinstance(ts, Tensor) else list(ts)
    return shape_ops.cat(ts, 0 if ts[0].array.ndim == 1 else 1)


def vstack(tensors):
    ts = atleast_2d(*_non_empty("vstack", tensors))
    return shape_ops.cat([ts] if isinstance(ts, Tensor) else list(ts), 0)


row_stack = vstack


def dstack(tensors):
    ts = atleast_3d(*_non_empty("dstack", tensors))
    return shape_ops.cat([ts] if isinstance(ts, Tensor) else list(ts), 2)


def column_stack(tensors):
    ts = [shape_ops.reshape(t, -1, 1) if t.array.ndim <= 1 else t for t in _non_empty("column_stack", tensors)]
    return shape_ops.cat(ts, 1)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into n nearly equal parts (the first n % size one longer), or at the given indices."""
    if not input.array.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = normalize_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    if isinstance(indices_or_sections, (builtins.int, np.integer)):
        k = builtins.int(indices_or_sections)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds, at = [], 0
        for i in range(k - 1):
            at += q + (1 if i < r else 0)
            bounds.append(at)
    else:
        bounds = [builtins.int(i) for i in indices_or_sections]
    edges = [0] + bounds + [n]
    return tuple(narrow(input, d, builtins.min(s, n), builtins.max(0, builtins.min(e, n) - builtins.min(s, n)))
                 for s, e in zip(edges[:-1], edges[1:]))


def hsplit(input, sections):
    return tensor_split(input, sections, 1 if input.array.ndim > 1 else 0)


def vsplit(input, sections):
    return tensor_split(input, sections, 0)


def dsplit(input, sections):
    return tensor_split(input, sections, 2)


def rot90(input, k=1, dims=(0, 1)):
    """Rotation by 90 degrees k times in the plane of `dims` (from the first towards the second)."""
    if not isinstance(k, (builtins.int, np.integer)) or isinstance(k, builtins.bool):
        raise TypeError(f"rot90(): argument 'k' (position 2) must be int, not {type_name(k)}")
    nd = input.array.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = (normalize_dim(d, nd) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return fused.Rot90.apply(input, k % 4, d0, d1)


def diagflat(input, offset=0):
    return movement.diag(shape_ops.reshape(input, -1), offset)


@composite_node("BlockDiagBackward0")
def block_diag(*tensors):
    if not tensors:  # (PyTorch's: one empty row, of the default dtype)
        return Tensor._wrap(np.zeros((1, 0), dtype=_dtypes.default_float.np))
    ts = [shape_ops.reshape(t, 1, -1) if t.array.ndim < 2 else t for t in tensors]
    cols = builtins.sum(t.array.shape[1] for t in ts)
    from ..dtypes import from_numpy_dtype, result_type

    dt = result_type(*ts)
    out, c = [], 0
    for t in ts:
        h, w = t.array.shape
        left = Tensor._wrap(array_module(t.array).zeros((h, c), dtype=dt))
        right = Tensor._wrap(array_module(t.array).zeros((h, cols - c - w), dtype=dt))
        out.append(shape_ops.cat([left, t.to(from_numpy_dtype(dt)), right], 1))
        c += w
    return shape_ops.cat(out, 0)


def cartesian_prod(*tensors):
    grids = meshgrid(*tensors, indexing="ij")
    return shape_ops.stack([shape_ops.reshape(g, -1) for g in grids], 1) if len(tensors) > 1 else tensors[0]


def meshgrid(*tensors, indexing=None):
    if indexing is None:  # (PyTorch's default, with its warning)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    ts = _flat(tensors)
    shape_ops._check_same(ts, "meshgrid")
    for what in ("dtype", "device"):  # (PyTorch's order: the list, then dtypes and devices, indexing, ranks)
        if any(getattr(t, what) != getattr(ts[0], what) for t in ts):
            raise RuntimeError(f"meshgrid expects all tensors to have the same {what}")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if t.array.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    xy = indexing == "xy" and len(ts) >= 2  # Cartesian indexing: the first two inputs swapped, and their grids back
    if xy:
        ts = [ts[1], ts[0], *ts[2:]]
    shape = tuple(t.array.size for t in ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(shape_ops.expand(shape_ops.reshape(t, tuple(view)), *shape))
    if xy:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def tril_indices(row, col, offset=0, dtype=None, device=None, layout=None, pin_memory=False):
    if layout is not None or pin_memory is not False:
        placement_argument("tril_indices", layout, pin_memory, "tril_indices")
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, "tril_indices")


def triu_indices(row, col, offset=0, dtype=None, device=None, layout=None, pin_memory=False):
    if layout is not None or pin_memory is not False:
        placement_argument("triu_indices", layout, pin_memory, "triu_indices")
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, "triu_indices")


def _triangle_indices(indices, row, col, offset, dtype, name):
    row, col = int_argument(row, name, "'row' (position 1)"), int_argument(col, name, "'col' (position 2)")
    offset = int_argument(offset, name, "'offset'")
    if row < 0 or col < 0:
        raise RuntimeError(f"{'row' if row < 0 else 'col'} must be non-negative, got{row if row < 0 else col}")
    dt = dtype_argument(dtype, name) or int64
    if dt is not int64 and dt is not int32:  # (PyTorch's kernels: the two wide integer types only)
        raise NotImplementedError(f'"{name}" not implemented for \'{dt._legacy[:-6]}\'')
    return Tensor._wrap(np.stack(indices(row, offset, col)).astype(dt.np))


def _shape_from_data(what):
    """Inside a minigrad.compile capture, a result whose shape depends on the data runs eagerly."""
    recording.escape(f"{what}, whose result's shape depends on the data,")


# ---- counting and searching -------------------------------------------------------------------------------
def bincount(input, weights=None, minlength=0):
    if input.array.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{input.dtype._legacy[:-6]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.array.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.array.ndim != 1 or weights.array.shape[0] != input.array.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    _shape_from_data("bincount")
    if input.array.size and int(input.array.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return array_op(lambda a: array_module(a).bincount(a, minlength=minlength).astype(np.int64), input)
    dt = np.float32 if weights.array.dtype == np.float32 else np.float64  # (PyTorch's: any other weights sum as double)
    return array_op(lambda a, w: array_module(a).bincount(a, weights=w, minlength=minlength).astype(dt), input, weights)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    side = side or ("right" if right else "left")
    if not isinstance(input, Tensor):
        input = Tensor._wrap(array_module(sorted_sequence.array).asarray(input))
    complex_ops.refuse("searchsorted", sorted_sequence, input)
    bs, vs = sorted_sequence.array.shape, input.array.shape
    if not bs:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if len(bs) > 1 and (len(bs) != len(vs) or bs[:-1] != vs[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(bs)} and input value tensor {list(vs)}")
    if sorter is not None:
        if sorter.array.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{sorter.dtype._legacy[:-6]}")
        if sorter.array.shape != bs:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(bs)}and got sorter tensor {list(sorter.array.shape)}")
        if sorter.array.size and (sorter.array.min() < 0 or sorter.array.max() >= bs[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")

    def search(seq, vals, *order):
        xp = array_module(seq)
        if order:  # the boundaries put in order by `sorter` first (the positions are those of the sorted row)
            seq = xp.take_along_axis(seq, order[0], axis=-1)
        if seq.ndim == 1:
            out = xp.searchsorted(seq, vals, side=side)
        else:
            flat_s = seq.reshape(-1, seq.shape[-1])
            flat_v = vals.reshape(-1, vals.shape[-1])
            out = xp.stack([xp.searchsorted(s, v, side=side) for s, v in zip(flat_s, flat_v)]).reshape(vals.shape)
        return xp.asarray(out).astype(np.int32 if out_int32 else np.int64)

    return array_op(search, sorted_sequence, input, *(() if sorter is None else (sorter,)))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if isinstance(boundaries, Tensor) and boundaries.array.ndim != 1:  # (searchsorted takes batched boundaries)
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.array.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor: whether each of `elements` is among `test_elements` (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: elements or test_elements must be a Tensor")
    complex_ops.refuse("isin", elements, test_elements)
    ref = elements if isinstance(elements, Tensor) else test_elements
    xp = array_module(ref.array)

    def run(*arrays):  # (an op of the tensors' arrays: a capture replays it on each call's values)
        given = iter(arrays)
        a = next(given) if isinstance(elements, Tensor) else xp.asarray(elements)
        b = next(given) if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
        return xp.isin(a, b, assume_unique=assume_unique, invert=invert)

    return array_op(run, *(t for t in (elements, test_elements) if isinstance(t, Tensor)))


# ---- histograms: histc (counts) and histogram (counts and edges, optionally weighted or a density) -----------
# what histogram returns, as PyTorch's torch.return_types.histogram
histogram_result = return_type("histogram", ("hist", "bin_edges"))


def _cpp_float(v):
    """A double as PyTorch's error texts print it (C++ streams: 6 significant digits, 'inf', 'nan')."""
    return f"{v:g}"


def _check_histogram_input(input, op):
    """Only float32 and float64 are counted, as PyTorch (its kernels are written for those two)."""
    if input.array.dtype not in (np.float32, np.float64):
        from ..dtypes import get_dtype

        raise NotImplementedError(f'"{op}" not implemented for \'{get_dtype(input.array.dtype)._legacy[:-6]}\'')


def _check_bin_count(bins):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _even_edges(xp, lo, hi, bins, dt):
    """bins + 1 edges from lo to hi as PyTorch's histogram makes them: its linspace in dtype dt, bit for bit."""
    from ..factory import _float_ramp

    return xp.asarray(_float_ramp(lo, hi, bins + 1, np.dtype(dt)))


def _bin_counts(xp, x, edges, w, dt):
    """Weighted counts of the values x in [edges[i], edges[i+1]) (the last bin also takes the last edge);
    values outside the edges, and NaN, are not counted."""
    nb = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])  # (False for NaN)
    idx = xp.searchsorted(edges, x[inside], side="right") - 1
    idx = xp.minimum(idx, nb - 1)  # a value equal to the last edge is in the last bin
    counts = xp.bincount(idx, weights=None if w is None else w[inside], minlength=nb)
    return counts.astype(dt)


def histc(input, bins=100, min=0, max=0):
    """Counts of input's values in `bins` equal bins over [min, max], as input's dtype; min == max
    (the default) takes the data's min and max, and widens an empty range by 1 each side."""
    if not isinstance(input, Tensor):
        raise TypeError(f"histc(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    _check_histogram_input(input, "histogram_cpu")
    _check_bin_count(bins)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    dt = input.array.dtype

    def counts(a):
        xp = array_module(a)
        a = a.reshape(-1)
        low, high = lo, hi
        if low == high and a.size:
            low, high = float(a.min()), float(a.max())
        if not (math.isfinite(low) and math.isfinite(high)):
            # (PyTorch's CPU build prints the NaN of a data min as "-nan")
            shown = ["-nan" if math.isnan(v) else _cpp_float(v) for v in (low, high)]
            raise RuntimeError(f"torch.histc: range of [{shown[0]}, {shown[1]}] is not finite")
        if low == high:
            low, high = low - 1, high + 1
        # PyTorch's histc places each value by arithmetic in the dtype: bin (x - low) * bins / (high - low)
        # truncated, the top edge going to the last bin (it never compares the value with edges)
        low_t, high_t = dt.type(low), dt.type(high)
        inside = (a >= low_t) & (a <= high_t)
        pos = ((a[inside] - low_t) * dt.type(bins) / (high_t - low_t)).astype(np.int64)
        pos = xp.minimum(pos, bins - 1)
        return xp.bincount(pos, minlength=bins).astype(dt)

    return array_op(counts, input)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of input's values (all of them, flattened): `bins` equal bins over `range`
    (default: the data's min and max; an empty range is widened by 0.5 each side), or `bins` a 1-D
    tensor of increasing edges. Each bin is [left, right) except the last, which takes its right edge;
    values outside are not counted. `weight` (input's number of elements, its dtype) adds each value's
    weight instead of 1; `density` divides by the total and the bin widths (so the histogram integrates
    to 1). hist has input's dtype. No derivative, as PyTorch."""
    _check_histogram_input(input, "histogramdd")
    dt = input.array.dtype
    if weight is not None:
        if weight.numel() != input.numel():
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{[input.numel(), 1]} and weight with shape {list(weight.shape)}")
        if weight.array.dtype != dt:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({cpp_name(dt)}), and "
                               f"weight({cpp_name(weight.array.dtype)})")
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram(): range is only taken with an int bins (tensor bins are the edges)")
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{bins.ndim} dimensions in the bins tensor for dimension 0")
        _check_bin_count(bins.numel() - 1)
        if bins.array.dtype != dt:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {cpp_name(dt)} and bins for dimension 0 with dtype "
                               f"{cpp_name(bins.array.dtype)}")
        bin_edges = bins.detach().clone()
    else:
        if isinstance(bins, builtins.bool) or not isinstance(bins, (builtins.int, np.integer)):
            raise TypeError(f"histogram(): argument 'bins' must be an int or a 1-D Tensor, not {type_name(bins)}")
        _check_bin_count(bins)

        def edges(a):
            if range is not None:
                lo, hi = float(range[0]), float(range[1])
            elif a.size:
                lo, hi = float(a.min()), float(a.max())
            else:  # no data: the unit interval
                lo, hi = 0.0, 1.0
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_cpp_float(lo)}, {_cpp_float(hi)}] "
                                   "is not finite")
            if lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_cpp_float(lo)} "
                                   f"max {_cpp_float(hi)} for dimension 0")
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            return _even_edges(array_module(a), lo, hi, int(bins), dt)

        bin_edges = array_op(edges, input)

    def counts(a, e, *w):
        xp = array_module(a)
        hist = _bin_counts(xp, a.reshape(-1), e, w[0].reshape(-1) if w else None, dt)
        if density:  # hist / (total * width): divided in the dtype, the total first (0/0 is NaN, silently)
            with np.errstate(invalid="ignore", divide="ignore"):
                hist = hist / hist.sum() / (e[1:] - e[:-1])
        return hist

    hist = array_op(counts, input, bin_edges, *([weight] if weight is not None else []))
    # PyTorch records a node with no derivative: the results require grad where an input does (printed with
    # grad_fn=<NotImplemented>, refusing .numpy()), and a backward through them raises
    hist, bin_edges = HistogramBackward.apply(hist.array, bin_edges.array, input, weight,
                                              bins if isinstance(bins, Tensor) else None)
    return histogram_result(hist, bin_edges)


class HistogramBackward(Function):
    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, hist, bin_edges, *inputs):  # (the results, made already: the inputs are only the edges)
        return hist, bin_edges

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if input.array.dtype.kind == "c":
        complex_ops.refuse("unique", input)
    _shape_from_data("unique")
    xp = array_module(input.array)
    nans = {"equal_nan": False} if xp is np else {}  # (PyTorch keeps each NaN apart: NaN != NaN)
    if dim is None:
        vals, inv, counts = xp.unique(input.array, return_inverse=True, return_counts=True, **nans)
        inv = inv.reshape(input.array.shape)
    else:
        d = normalize_dim(dim, input.array.ndim)
        vals, inv, counts = xp.unique(input.array, return_inverse=True, return_counts=True, axis=d, **nans)
        inv = inv.reshape(-1)
    out = [Tensor._wrap(vals)]
    if return_inverse:
        out.append(Tensor._wrap(inv.astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if input.array.dtype.kind == "c":
        complex_ops.refuse("unique", input)
    _shape_from_data("unique_consecutive")
    xp = array_module(input.array)
    if dim is not None:
        if input.array.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return _unique_consecutive_along(input.array, normalize_dim(dim, input.array.ndim), return_inverse,
                                         return_counts, xp)
    flat = input.array.reshape(-1)
    if flat.size == 0:
        starts = xp.zeros(0, dtype=bool)
    else:
        starts = xp.concatenate([xp.ones(1, dtype=bool), flat[1:] != flat[:-1]])
    vals = flat[starts]
    out = [Tensor._wrap(vals)]
    if return_inverse:
        out.append(Tensor._wrap((xp.cumsum(starts) - 1).astype(np.int64).reshape(input.array.shape)))
    if return_counts:
        pos = xp.flatnonzero(starts)
        out.append(Tensor._wrap(xp.diff(xp.concatenate([pos, xp.asarray([flat.size])])).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive_along(arr, d, return_inverse, return_counts, xp):
    """unique_consecutive with dim: runs of equal slices along d (each slice compared whole) kept once."""
    if any(n == 0 for i, n in enumerate(arr.shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    rows = xp.moveaxis(arr, d, 0)
    m = rows.shape[0]
    flat = rows.reshape(m, math.prod(rows.shape[1:]))
    starts = xp.concatenate([xp.ones(builtins.min(m, 1), dtype=bool), (flat[1:] != flat[:-1]).any(axis=1)])
    out = [Tensor._wrap(xp.ascontiguousarray(xp.moveaxis(rows[starts], 0, d)))]
    if return_inverse:
        out.append(Tensor._wrap((xp.cumsum(starts) - 1).astype(np.int64)))
    if return_counts:
        pos = xp.flatnonzero(starts)
        out.append(Tensor._wrap(xp.diff(xp.concatenate([pos, xp.asarray([m])])).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# ---- index helpers -----------------------------------------------------------------------------------------
def index_fill(input, dim, index, value):
    if index.array.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = normalize_dim(dim, input.array.ndim)
    if isinstance(value, Tensor) and value.array.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.array.ndim} dimension(s).")
    n = input.array.shape[d] if input.array.ndim else 1
    shape = [1] * input.array.ndim
    if input.array.ndim:
        shape[d] = -1

    def mask_of(i):  # True at the indexed places along dim (an op: a captured call replays it on new indices)
        i = i.reshape(-1)
        mask = array_module(i).zeros(n, dtype=bool)
        if input.array.size or 0 not in input.array.shape[:d] + input.array.shape[d + 1:]:
            check_index_entries(i, n, d)  # (PyTorch reads the ids only as it fills: none where a slice is empty)
            mask[i] = True
        return mask.reshape(shape) if shape else mask.reshape(())

    return elementwise.masked_fill(input, array_op(mask_of, index), value,
                                   (elementwise.IndexFill, elementwise.IndexFillTensor))


def index_copy(input, dim, index, source):
    d = normalize_dim(dim, input.array.ndim)
    shape, src_shape = input.array.shape, source.array.shape
    if index.array.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.array.ndim})")
    if not src_shape and index.array.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {index.array.size})")
    if len(src_shape) != len(shape) and src_shape and shape:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must match. "
                         f"Source dimensionality ({len(src_shape)}), destination dimensionality ({len(shape)})")
    if index.array.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {index.dtype._legacy[:-6]}")
    if source.array.dtype != input.array.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{input.dtype._legacy[:-6]} and (source) {source.dtype._legacy[:-6]}")
    slices = [s[:d] + s[d + 1:] for s in (shape, src_shape)]  # (no broadcasting: each slice as self's)
    if slices[0] != slices[1]:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, slices[0]))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, slices[1]))} at dimension 0.")
    count = src_shape[d] if src_shape else 1
    if index.array.ndim and index.array.size != count:
        raise IndexError(f"index_copy_(): Number of indices ({index.array.size}) should be equal to source.size(dim) "
                         f"({count})")
    if not src_shape and len(shape) == 1:  # (a 0-d source: one slice of a 1-d self)
        source = source.reshape(1)
    elif not shape and src_shape:  # (a 0-d self: its one element the source's)
        source = source.reshape(())
    return IndexCopy.apply(input, d, index, source)


class IndexCopy(Function):
    node_name = "IndexCopyBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source):
        i = index.array.reshape(-1)
        n = a.array.shape[dim] if a.array.ndim else 1
        # (here, not in index_copy: a replay checks each call's index; PyTorch reads the ids only as it copies)
        if source.array.size and some_id_outside(i, n):
            raise IndexError(f"index_copy_(): index {i[((i < 0) | (i >= n)).argmax()]} is out of bounds for "
                             f"dimension {dim} with size {n}")
        ctx.dim, ctx.source_shape = dim, source.array.shape
        ctx.save(index=index)
        out = a.array.copy()
        if source.array.size:  # (a repeated id: the last copy stays, as PyTorch's CPU loop leaves it)
            xp = array_module(out)
            rows, src = (out.reshape(1), source.array.reshape(1)) if not out.ndim else (out, source.array)
            if dim == 0:
                rows[i] = src
            else:
                xp.moveaxis(rows, dim, 0)[i] = xp.moveaxis(src, dim, 0)
        return out

    @staticmethod
    def backward(ctx, g):  # d(self with rows at index replaced by source): g with those rows zeroed; g's rows at index
        from .indexing import index_select

        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = index_fill(g, ctx.dim, ctx._saved_index, 0)
        if ctx.needs_input_grad[3]:
            gs = index_select(g, ctx.dim, ctx._saved_index).reshape(ctx.source_shape)
        return ga, None, None, gs


def masked_scatter(input, mask, source):
    """`input` with the masked places filled, in order, from the first elements of `source`."""
    from ._util import broadcast_shapes

    _tensor_arguments("masked_scatter", mask, source)
    shape = broadcast_shapes(mask.array.shape, input.array.shape)
    _check_masked_scatter(input, mask, source)
    return _masked_scatter(input, mask, source, shape)


def masked_scatter_into(input, mask, source):
    """masked_scatter_'s checks, in PyTorch's order: the mask is expanded to self's shape, not broadcast with it."""
    _tensor_arguments("masked_scatter_", mask, source)
    _check_source_dtype(input, source)
    if mask.array.ndim > input.array.ndim and mask.array.dtype == np.bool_:  # (PyTorch names a bool mask so here)
        raise RuntimeError(f"expand(CPUBoolType{{{list(mask.array.shape)}}}, size={list(input.array.shape)}): the "
                           f"number of sizes provided ({input.array.ndim}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({mask.array.ndim})")
    shape_ops.expand(mask, input.array.shape)  # (its refusals)
    _check_masked_scatter(input, mask, source)
    return _masked_scatter(input, mask, source, input.array.shape)


def read_as_written(self, mask, source):
    """masked_scatter_'s source where it shares self's memory, as PyTorch's kernel reads it: that fills self's
    masked places one at a time, in order, reading a (contiguous) source as it goes, so a source element
    already overwritten is read back as the value written there. The source elements taken, in that order
    (else source itself; bad arguments are left to masked_scatter_'s checks)."""
    a = self.array
    if not (isinstance(source, Tensor) and isinstance(mask, Tensor) and type(a) is np.ndarray and a.ndim
            and mask.array.dtype == np.bool_ and source.array.dtype == a.dtype and source.array.flags.c_contiguous
            and may_overlap(a, source.array)):
        return source
    try:
        m = np.broadcast_to(mask.array, a.shape)
    except ValueError:
        return source
    s = source.array
    n = int(m.sum())
    if n > s.size:
        return source
    address = lambda x, positions: (positions * np.array(x.strides)).sum(1) + x.__array_interface__["data"][0]
    dst = address(a, np.stack(np.nonzero(m), 1)).tolist()
    src = address(s, np.stack(np.unravel_index(np.arange(n), s.shape), 1)).tolist() if s.ndim else [0] * n
    taken, written = [], {}
    for k in range(n):
        taken.append(written.get(src[k], k))  # (the source element that place took, else its own)
        written[dst[k]] = taken[k]
    flat = shape_ops.reshape(source, -1)
    read = indexing_ops.index_select(flat, 0, Tensor._wrap(np.array(taken, dtype=np.int64)))
    if not (state.grad_enabled and source._requires_grad):
        return read
    # the values read; the gradient PyTorch's formula gives, which takes source's k-th element to the k-th place
    return flat[:n] + (read - flat[:n]).detach()


def _tensor_arguments(name, mask, source):
    for pos, (arg, t) in enumerate((("mask", mask), ("source", source)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type_name(t)}")


def _check_source_dtype(input, source):
    if source.array.dtype != input.array.dtype:  # (PyTorch's text has no space after "got")
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_scalar_type(input)} and {_scalar_type(source)}")


def _check_masked_scatter(input, mask, source):
    _check_source_dtype(input, source)
    if mask.array.dtype != np.bool_:
        if mask.array.dtype == np.uint8:  # (PyTorch warns of uint8 masks, then refuses them all the same)
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
                          "please use a mask with dtype torch.bool instead.", UserWarning, stacklevel=3)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_scalar_type(mask)}")
    recording.escape("masked_scatter, whose count of source elements depends on the mask's values,")


@composite_node("MaskedScatterBackward0")
def _masked_scatter(input, mask, source, shape):
    # out = where(mask, source's first elements in order, input): self's gradient is g where the mask is false,
    # source's the masked places of g in order, then zeros
    m = array_module(mask.array).broadcast_to(mask.array, shape)
    n = int(m.sum())
    if n > source.array.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    taken = shape_ops.reshape(source, -1)[:n]
    placed = movement.MaskedScatter.apply(taken, m, shape)
    return elementwise.where(Tensor._wrap(m), placed, input if input.shape == shape else shape_ops.expand(input, *shape))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables in input's rows (observations in its columns). fweights: how many times
    each observation counts; aweights: its importance; `correction` is subtracted from their total, weighted by
    the aweights (PyTorch's and numpy's formula)."""
    _at_most_2d("cov", input)
    if input.array.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.array.ndim == 2 else shape_ops.reshape(input, 1, -1)
    if x.array.dtype.kind in "iu":
        from .. import dtypes  # (integer observations, e.g. ranks: the aweights' float dtype, else the default)
        x = x.to(aweights.dtype if aweights is not None and aweights.array.dtype.kind == "f" else dtypes.default_float)
    n = x.array.shape[1]
    for name, weights, kinds, kind_name in (("fweights", fweights, "iu", "integral"),
                                            ("aweights", aweights, "f", "floating point")):
        if weights is not None:
            _check_cov_weights(name, weights, n, kinds, kind_name)
    w = fweights if aweights is None else aweights if fweights is None else fweights * aweights
    if w is None:
        centered = x - reduction.mean(x, 1, keepdim=True)
        if n - correction <= 0:
            _warn_cov_degrees_of_freedom()
        c = matmul.matmul(centered, shape_ops.transpose(centered, 0, 1)) / builtins.max(n - correction, 0)
    else:
        w = w.to(x.dtype) if x.array.dtype.kind == "f" else w.double()
        total = reduction.sum(w)
        centered = x - reduction.sum(x * w, 1, keepdim=True) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            norm = total - correction * reduction.sum(w * aweights) / total
        if float(norm) <= 0:
            _warn_cov_degrees_of_freedom()
        c = matmul.matmul(centered * w, shape_ops.transpose(centered, 0, 1)) / elementwise.clamp(norm, min=0)
    return shape_ops.squeeze(c)  # (PyTorch's last node, SqueezeBackward0; one variable gives a scalar)


def _warn_cov_degrees_of_freedom():
    warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                  "observations.", UserWarning, stacklevel=3)


def _check_cov_weights(name, w, n, kinds, kind_name):
    """PyTorch's checks of cov's fweights (integers) and aweights (floats), in its order and words."""
    if w.array.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.array.ndim} dimensions")
    if w.array.dtype.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got {name} with "
                           f"{w.dtype._legacy[:-6]} dtype")
    if w.array.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.array.size} != {n}")
    if (w.array < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _at_most_2d(name, input):
    if input.array.ndim > 2:
        raise RuntimeError(f"{name}(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.array.ndim} dimensions")


def corrcoef(input):
    _at_most_2d("corrcoef", input)
    c = cov(input)
    if c.array.ndim == 0:
        return c / c
    d = elementwise.sqrt(movement.diagonal(c))
    c = c / shape_ops.unsqueeze(d, 1) / shape_ops.unsqueeze(d, 0)
    return elementwise.clamp(c, -1, 1)  # rounding can put a correlation just past +-1


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 (..., P, D) and of x2 (..., R, D): (..., P, R).

    For p = 2 with more than 25 rows on a side (or always, by compute_mode) the distances come from one
    matrix product, sqrt(|a|^2 + |b|^2 - 2 a.b), as in PyTorch: much faster, but a zero distance may come
    out as a tiny positive number (rounding)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.array.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.array.ndim}D")
    if x1.array.shape[-1] != x2.array.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.array.shape[-1]} "
                           f"X2: {x2.array.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.array.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x.dtype._legacy[:-6]}")
    if not p >= 0:  # (nan too)
        raise RuntimeError("cdist only supports non-negative p values")
    batch = _broadcast_pair(x1.array.shape[:-2], x2.array.shape[:-2])
    rows1, rows2 = x1.array.shape[-2], x2.array.shape[-2]
    if x1.array.size == 0 or x2.array.size == 0:
        return Cdist.apply(x1, x2, p)
    if p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                   compute_mode == "use_mm_for_euclid_dist_if_necessary" and (rows1 > 25 or rows2 > 25)):
        if x1.array.dtype != x2.array.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_name(x1.array.dtype)} != "
                               f"{cpp_name(x2.array.dtype)}")
        x1 = x1 if x1.array.shape[:-2] == batch else x1.expand(batch + x1.array.shape[-2:])
        x2 = x2 if x2.array.shape[:-2] == batch else x2.expand(batch + x2.array.shape[-2:])
        return shape_ops.view(EuclideanDist.apply(x1, x2), batch + (rows1, rows2))
    if x1.array.dtype.itemsize < 4:
        raise NotImplementedError(f"\"cdist\" not implemented for '{x1.dtype._legacy[:-6]}'")
    if x1.array.dtype != x2.array.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype._legacy[:-6]} but found {x2.dtype._legacy[:-6]}")
    return Cdist.apply(x1, x2, p)


class EuclideanDist(Function):
    """cdist's matrix-product form for p = 2 (x1 and x2 of the same batch shape). Its backward is recorded
    ops, so it can be differentiated again, as PyTorch's can."""

    node_name = "EuclideanDistBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, x1, x2):  # d_ij = sqrt(max(|a_i|^2 + |b_j|^2 - 2 a_i.b_j, 0)): rounding may dip below 0
        ctx.save(x1=x1, x2=x2)
        a, b = x1.array, x2.array
        xp = array_module(a)
        d = a @ xp.swapaxes(b, -1, -2)
        d *= -2
        d += (a * a).sum(-1)[..., :, None]
        d += (b * b).sum(-1)[..., None, :]
        xp.maximum(d, 0, out=d)
        return xp.sqrt(d, out=d)

    @staticmethod
    def backward(ctx, g):  # with r = g / d (0 where d = 0): da_i = a_i sum_j r_ij - sum_j r_ij b_j; db_j alike
        x1, x2, d = ctx.saved_tensors
        if not state.grad_enabled:  # no graph of the backward wanted: the same sums on the arrays
            return tuple(Tensor._wrap(t) for t in _cdist_grads(g.array, x1.array, x2.array, d.array, 2))
        zero = d == 0
        r = elementwise.where(zero, 0.0, g / elementwise.where(zero, 1.0, d))
        g1 = x1 * reduction.sum(r, -1, keepdim=True) - matmul.matmul(r, x2)
        g2 = x2 * shape_ops.unsqueeze(reduction.sum(r, -2), -1) - matmul.matmul(shape_ops.transpose(r, -1, -2), x1)
        return g1, g2


def _coordinate_diffs(a, b):
    """a_ik - b_jk for every pair of rows, laid out (..., k, i, j): reducing over k then adds whole
    (i, j) planes, several times faster than numpy's reduction along a short last axis."""
    xp = array_module(a)
    at, bt = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2)
    return at[..., :, :, None] - bt[..., :, None, :]


def _cdist_array(a, b, p):
    """The direct form of cdist on arrays: every row difference, reduced by its p-norm."""
    xp = array_module(a)
    diff = _coordinate_diffs(a, b)
    if p == 0:
        return (diff != 0).sum(-3, dtype=a.dtype)
    xp.abs(diff, out=diff)
    if p == 1:
        return diff.sum(-3)
    if p == float("inf"):
        return diff.max(-3, initial=0)  # (0 columns: distance 0)
    if p == 2:
        diff *= diff
        return xp.sqrt(diff.sum(-3))
    return (diff ** p).sum(-3) ** (1 / p)


def _cdist_grads(g, a, b, d, p):
    """cdist's input gradients on arrays (PyTorch's _cdist_backward): each difference's share of its distance,
    0 at a zero distance (and, for p < 1, at a zero difference) where the slope is undefined."""
    xp = array_module(a)
    if p == 0:  # a count: flat
        return xp.zeros_like(a), xp.zeros_like(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2:  # d d_ij / d a_i = (a_i - b_j) / d_ij: summed over j without forming the differences
            r = xp.where(d == 0, 0, g / d).astype(a.dtype, copy=False)
            ga = a * r.sum(-1)[..., None] - r @ b
            gb = b * r.sum(-2)[..., None] - xp.swapaxes(r, -1, -2) @ a
            return sum_to_array(ga, a.shape), sum_to_array(gb, b.shape)
        diff = _coordinate_diffs(a, b)
        d = d[..., None, :, :]
        if p == 1:  # d |x| = sign(x)
            w = xp.sign(diff)
        elif p == float("inf"):  # each coordinate at the max gets the whole gradient (ties not shared)
            w = xp.sign(diff) * (xp.abs(diff) == d)
        else:  # d (sum |x|^p)^(1/p) = sign(x) |x|^(p-1) / d^(p-1)
            w = xp.sign(diff) * xp.abs(diff) ** (p - 1) / d ** (p - 1)
            w[xp.broadcast_to(d == 0, w.shape) | ((diff == 0) if p < 1 else False)] = 0
        w *= g[..., None, :, :]
    ga, gb = xp.swapaxes(w.sum(-1), -1, -2), xp.swapaxes(w.sum(-2), -1, -2)
    return sum_to_array(ga, a.shape), sum_to_array(xp.negative(gb), b.shape)


class Cdist(Function):
    node_name = "CdistBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.save(x1=x1, x2=x2)
        ctx.p = p
        return _cdist_array(x1.array, x2.array, p)

    @staticmethod
    def backward(ctx, g):  # the gradient is itself an op, one PyTorch does not differentiate again
        x1, x2, d = ctx.saved_tensors
        g1, g2 = CdistGrad.apply(g, x1, x2, d, ctx.p)
        return g1, g2, None


class CdistGrad(Function):
    node_name = "CdistBackwardBackward0"

    @staticmethod
    def forward(ctx, g, x1, x2, d, p):
        return _cdist_grads(g.array, x1.array, x2.array, d.array, p)

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


def renorm(input, p, dim, maxnorm):
    d = normalize_dim(dim, input.array.ndim)
    others = tuple(i for i in range(input.array.ndim) if i != d)
    norms = reduction.sum(elementwise.abs(input) ** p, others, keepdim=True) ** (1.0 / p)
    scale = elementwise.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * scale


def _trapezoid_dim(y, dim):
    if y.array.ndim == 0:  # (PyTorch does not treat a 0-d y as one sample)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(dim, y.array.ndim)


def _trapezoid_widths(y, x, d, name):
    """The widths of the trapezoids along dim d: diff(x) along d, a 1-D x being the sample points along d."""
    if x.array.ndim == 1 and x.array.shape[0] != y.array.shape[d]:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    if x.array.ndim == 1 and y.array.ndim > 1:
        shape = [1] * y.array.ndim
        shape[d] = x.array.shape[0]
        x = shape_ops.reshape(x, shape)
    return diff(x, dim=d if x.array.ndim > 1 else 0)


def _no_bools(name, y, x):
    if y.array.dtype == np.bool_ or x is not None and x.array.dtype == np.bool_:
        what = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{name}: received a bool input for {what}, but bool is not supported")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    _no_bools("trapezoid", y, x)
    d = _trapezoid_dim(y, dim)
    m = y.array.shape[d]
    if m == 0:  # no samples, no area: zeros of y's dtype, whatever x is
        shape = y.array.shape[:d] + y.array.shape[d + 1:]
        return Tensor._wrap(array_module(y.array).zeros(shape, dtype=y.array.dtype))
    mid = (narrow(y, d, 1, m - 1) + narrow(y, d, 0, m - 1)) * 0.5
    if x is None:
        return reduction.sum(mid, d) * (1.0 if dx is None else dx)
    return reduction.sum(mid * _trapezoid_widths(y, x, d, "trapezoid"), d)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of y along dim by the trapezoidal rule (one entry fewer than y there):
    sample points x (1-D along dim, or y's shape), or a spacing dx (default 1)."""
    _no_bools("cumulative_trapezoid", y, x)
    d = _trapezoid_dim(y, dim)
    m = y.array.shape[d]
    if x is not None and x.array.ndim == 1 and x.array.shape[0] != m:
        raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
    if m == 0:
        return y * 0.5
    mid = (narrow(y, d, 1, m - 1) + narrow(y, d, 0, m - 1)) * 0.5
    areas = mid * (1.0 if dx is None else dx) if x is None else mid * _trapezoid_widths(y, x, d, "cumulative_trapezoid")
    return scan.cumsum(areas, d)


def _gradient_along(f, d, h, edge_order):
    """df/dx along dim d by second-order central differences, one- or two-sided at the ends; h is a number
    (even samples) or the 1-D tensor of gaps between the coordinates (uneven: numpy's weights)."""
    m = f.array.shape[d]
    if edge_order + 1 > m:
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    at = lambda start, length=m - 2: narrow(f, d, start, length)  # noqa: E731
    if not isinstance(h, Tensor):  # even: f'(x) = (f(x+h) - f(x-h)) / 2h, ends (f1 - f0)/h or (-3f0 + 4f1 - f2)/2h
        inner = (at(2) - at(0)) / (2 * h)
        if edge_order == 1:
            lo, hi = (at(1, 1) - at(0, 1)) / h, (at(m - 1, 1) - at(m - 2, 1)) / h
        else:
            lo = (at(0, 1) * -3 + at(1, 1) * 4 - at(2, 1)) / (2 * h)
            hi = (at(m - 1, 1) * 3 - at(m - 2, 1) * 4 + at(m - 3, 1)) / (2 * h)
        return shape_ops.cat([lo, inner, hi], d)
    shape = [1] * f.array.ndim
    shape[d] = -1
    g = lambda start, length: shape_ops.reshape(narrow(h, 0, start, length), shape)  # noqa: E731
    hl, hr = g(0, m - 2), g(1, m - 2)  # the fitted parabola's slope at the middle of three uneven samples
    inner = (at(2) * hl * hl - at(0) * hr * hr + at(1) * (hr * hr - hl * hl)) / (hl * hr * (hl + hr))
    if edge_order == 1:
        return shape_ops.cat([(at(1, 1) - at(0, 1)) / g(0, 1), inner, (at(m - 1, 1) - at(m - 2, 1)) / g(m - 2, 1)], d)
    a, b = g(0, 1), g(1, 1)  # the parabola through the first (last) three samples, its slope at the end
    lo = (at(0, 1) * -(2 * a + b) / (a * (a + b)) + at(1, 1) * (a + b) / (a * b) - at(2, 1) * a / (b * (a + b)))
    a, b = g(m - 3, 1), g(m - 2, 1)
    hi = (at(m - 3, 1) * b / (a * (a + b)) - at(m - 2, 1) * (a + b) / (a * b) + at(m - 1, 1) * (2 * b + a) / (b * (a + b)))
    return shape_ops.cat([lo, inner, hi], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: one tensor of df/dx per dim (all dims by default); spacing is a number, one number per dim,
    or one 1-D coordinate tensor per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    nd = input.array.ndim
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, nd) for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims) and dim is None:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {nd}', since dim argument was not given, but got a list of "
                               f"length {len(spacing)}")
        if len(spacing) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               "arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        spacing = [diff(s) if isinstance(s, Tensor) else s for s in spacing]  # coordinates -> the gaps between them
    else:
        spacing = [spacing] * len(dims)
    from .. import dtypes  # (an integer input differentiates in the default float dtype)
    f = input if input.array.dtype.kind in "fc" else input.to(dtypes.default_float)
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacing))


trapz = trapezoid


def vander(x, N=None, increasing=False):
    """Columns x^(N-1), ..., x^1, x^0 (the reverse when increasing): a running product written after a column of
    ones, as PyTorch's (its grad_fn names: CopySlices, FlipBackward0); integers and bools count in int64."""
    if x.array.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.array.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.array.dtype.kind not in "fc":
        x = x.to(int64)
    result = x.new_ones((x.array.shape[0], n))
    if n > 1:
        result[:, 1:] = scan.cumprod(x.unsqueeze(1).expand(x.array.shape[0], n - 1), 1)
    return result if increasing else movement.flip(result, (1,))


# ---- small conveniences ------------------------------------------------------------------------------
def type_as(input, other):
    return input.to(other.dtype)


def is_complex(input):
    return input.array.dtype.kind == "c"


def is_signed(input):
    return input.array.dtype.kind in "ifc"


def is_nonzero(input):
    if input.array.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if input.array.size == 0 else 'more than one value'} "
                           "is ambiguous")
    recording.escape("is_nonzero (a Python bool of the data)")
    return bool(input.array.reshape(()).item())


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def sum_to_size(input, *size):
    from ._util import sum_to

    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    return sum_to(input, size)


def resolve_conj(input):
    """input itself: minigrad's conj is a copy, never a lazy bit to resolve. conj's own result is the one PyTorch
    marks lazy: resolved, it is a clone of it, as PyTorch's (its node CloneBackward0)."""
    if type(input.grad_fn) is complex_ops.Conj._backward_cls:
        return shape_ops.clone(input)
    return input


def resolve_neg(input):
    return input  # (no lazily negated tensors here: see is_neg)


conj, conj_physical = complex_ops.conj, complex_ops.conj_physical


class _Angle(Function):
    """A real number's angle in the complex plane: pi for negatives, 0 otherwise, NaN for NaN. The angle is
    constant where it is defined, so the gradient is 0 everywhere (PyTorch's, NaNs included)."""

    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, input, dtype):
        a = input.array
        xp = array_module(a)
        out = xp.where(a < 0, math.pi, 0.0).astype(dtype)
        if a.dtype.kind == "f":
            out[xp.isnan(a)] = math.nan
        return out

    @staticmethod
    def backward(ctx, g):
        return g * 0.0, None


def angle(input):
    """0 or pi per entry (NaN stays NaN); integer and bool inputs give the default float dtype."""
    from .. import dtypes

    if input.array.dtype.kind == "c":
        return complex_ops.angle(input)
    dtype = input.array.dtype if input.array.dtype.kind == "f" else dtypes.default_float.np
    return _Angle.apply(input, dtype)


def adjoint(input):
    """The conjugate transpose of the last two dims (for real tensors the transpose, a view; for complex ones
    a copy: minigrad has no lazy conjugate bit)."""
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.ndim}-D tensor.")
    return complex_ops.conj(input.transpose(-2, -1))


real, imag = complex_ops.real, complex_ops.imag  # (a real tensor's real part is the tensor itself, as in PyTorch)


def split_with_sizes(input, split_sizes, dim=0):
    return shape_ops.split(input, list(split_sizes), dim)


# PyTorch's unsafe_* forms differ only in not tracking the outputs as views of the input: their pieces take
# in-place ops
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _writable_pieces(split_with_sizes(input, split_sizes, dim))


def unsafe_split(input, split_size, dim=0):
    if not isinstance(split_size, builtins.int):  # (split takes sizes too; PyTorch's unsafe_split only one)
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not {type_name(split_size)}")
    return _writable_pieces(shape_ops.split(input, split_size, dim))


def _writable_pieces(pieces):
    for p in pieces:
        if getattr(p, "_multi_output", False):
            del p._multi_output
    return pieces


def unsafe_chunk(input, chunks, dim=0):
    return _writable_pieces(shape_ops.chunk(input, chunks, dim))


@composite_node("VdotBackward0")
def vdot(input, other):
    """The dot product of input's conjugate with other (a real input is its own conjugate)."""
    return matmul.dot(complex_ops.conj(input), other)


class Nextafter(Function):
    """PyTorch's NextafterBackward0: the gradient passes to input unchanged where the result is input moved by
    one ulp, and is 0 where input == other (the result is other there); other gets zeros."""
    node_name = "NextafterBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp = array_module(a.array)
        ctx.moved = xp.not_equal(a.array, b.array)
        return xp.nextafter(a.array, b.array)

    @staticmethod
    def backward(ctx, g):
        a_shape, b_shape = ctx._shapes
        moved = Tensor._wrap(ctx.moved.astype(g.array.dtype))
        return (sum_to(g * moved, a_shape) if ctx.needs_input_grad[0] else None,
                elementwise.zeros_like_grad(g, b_shape) if ctx.needs_input_grad[1] else None)


def nextafter(input, other):
    a, b = binary_operands(input, other)
    _kernel_for("nextafter_cpu", a, "f")
    return elementwise.apply_binary(Nextafter, a, b)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along `dim` (the flattened tensor when None), interpolated as PyTorch does; NaN
    where there is a NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, skip_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile, leaving NaNs out (NaN where there is nothing else)."""
    return _quantile(input, q, dim, keepdim, interpolation, skip_nan=True)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, skip_nan):
    # PyTorch's checks, in its order (nanquantile's texts say quantile() too)
    if not isinstance(q, (Tensor, list, tuple)) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.array.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.array.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.array.dtype.kind != "f":
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor) and q.array.dtype != input.array.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    x = shape_ops.reshape(input, -1) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, input.array.ndim)
    qs = q.array if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64)
    scalar_q = qs.ndim == 0
    qs = qs.reshape(-1)
    if builtins.any((v < 0) or (v > 1) for v in qs.tolist()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    srt = indexing_ops.sort(x, d).values  # (NaNs last)
    n = x.array.shape[d]
    if x.array.dtype.kind == "f":  # (each lane's NaNs decide its positions, in numpy: frozen at a capture)
        recording.escape(f"{'nan' if skip_nan else ''}quantile of a float tensor (its NaN lanes are found in Python)")
    nans = _nan_counts(x, d)
    # the numbers each lane has (nanquantile's lanes: their numbers other than NaN) and the lanes whose
    # answer is NaN
    count = n if nans is None or not skip_nan else n - nans
    nan_lanes = None if nans is None else (nans == n if skip_nan else nans > 0)
    outs = []
    dt = srt.array.dtype
    for v in qs.tolist():
        pos = np.asarray(v, dtype=dt) * np.asarray(count - 1, dtype=dt)  # (in the input's dtype, as PyTorch's ranks)
        lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = np.round(pos).astype(np.int64)
        lo, hi = np.maximum(lo, 0), np.maximum(hi, 0)  # (a lane of NaNs only: its answer is NaN, below)
        a, b = _at_sorted(srt, d, lo), _at_sorted(srt, d, hi)
        w = pos - lo if interpolation == "linear" else np.where(hi != lo, 0.5, 0.0) if interpolation == "midpoint" else 0
        if np.ndim(w):  # (PyTorch's lerp: its rounding, from the nearer end)
            r = pointwise.lerp(a, b, Tensor._wrap(np.asarray(w, dtype=dt)))
        else:
            r = pointwise.lerp(a, b, builtins.float(w)) if w else a
        if nan_lanes is not None:
            r = elementwise.where(Tensor._wrap(array_module(r.array).asarray(nan_lanes)), math.nan, r)
        if keepdim:
            r = shape_ops.unsqueeze(r, d) if dim is not None else shape_ops.reshape(r, (1,) * input.array.ndim)
        outs.append(r)
    return outs[0] if scalar_q else shape_ops.stack(outs, 0)


def index_put(input, indices, values, accumulate=False):
    """A copy of `input` with `values` written (or added, accumulate=True: repeats summed) at `input[indices]`."""
    v, index, shape = _index_put_args(input, indices, values, accumulate)
    if accumulate:
        return IndexPutAccumulate.apply(input, v, index, shape)
    return IndexPutWhole.apply(input, v, index)


def check_indices(indices, name):
    """PyTorch's parser's refusal of index_put's indices given as other than a tuple (or list) of tensors."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")


def _index_put_args(input, indices, values, accumulate):
    """index_put's checks, in PyTorch's order: (the values as a tensor, the numpy index, the shape written)."""
    check_indices(indices, "index_put")
    idx = tuple(indices)
    if len(idx) > input.array.ndim:  # (index_put's own words: it counts the tensors, not the dims they index)
        raise IndexError(f"too many indices for tensor of dimension {input.array.ndim} (got {len(idx)})")
    xp = array_module(input.array)
    index, advanced = indexing_ops._convert_index(idx, xp, input.array.shape)
    indexing_ops._check_masks(index, input.array.shape)
    if not accumulate:
        indexing_ops.refuse_byte_mask_fill(idx, values)
    v = values if isinstance(values, Tensor) else Tensor._wrap(xp.asarray(values, dtype=input.array.dtype))
    if not accumulate and v.array.size == 1 and len(index) == 1 and getattr(index[0], "dtype", None) == np.bool_:
        # one mask and one value: PyTorch's masked_fill_, the value cast to input's dtype as a number
        return v.to(input.dtype), index, None
    if advanced:
        index = indexing_ops._ints_first(index, input.array.shape)
    shape, in_range = _put_shape(input.array, index)
    try:
        fits = v.array.shape == shape or np.broadcast_shapes(v.array.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.array.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    _check_put_dtypes(input, values)
    if not in_range:
        if math.prod(shape):  # (PyTorch checks the ids last, one element at a time, as it writes)
            _put_shape(input.array, index, check_ids=True)
        index = indexing_ops._zeroed_ids(index)  # (nothing is written: ids numpy takes, for the same empty shapes)
    return v, index, shape


def _check_put_dtypes(input, values):
    if isinstance(values, Tensor) and values.array.dtype != input.array.dtype:  # (indexing's setitem casts; this does not)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype._legacy[:-6]} for the destination and {values.dtype._legacy[:-6]} for the source.")


def _put_shape(a, index, check_ids=False):
    """(the shape index_put_ adds into at `index`, whether its ids are in range). PyTorch checks the values'
    shape before the ids, and refuses ids into an indexed dim of size 0 before both, in words of their own."""
    try:
        return indexing_ops._take(a, index).shape, True
    except IndexError as e:
        zeroed = None if check_ids else indexing_ops._zeroed_ids(index)
        if zeroed is None:
            raise indexing_ops._index_error(e, a.shape, index) from None
    try:
        return indexing_ops._take(a, zeroed).shape, False
    except IndexError as e:
        if not a.size and str(e).startswith("index 0 is out of bounds"):
            raise IndexError("index is out of bounds for dimension with size 0") from None
        raise indexing_ops._index_error(e, a.shape, index) from None


class IndexPutAccumulate(Function):
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, a, values, index, shape):  # out = a, with values added at a[index] (repeats summed)
        ctx.index, ctx.values_shape = index, values.array.shape
        out = array_module(a.array).array(a.array, order="C")
        indexing_ops.add_at_index(out, index, array_module(out).broadcast_to(values.array, shape))
        return out

    @staticmethod
    def backward(ctx, g):  # d/da: g; d/dvalues: g at the index, summed to the values' broadcast shape
        gv = sum_to(indexing_ops.Index.apply(g, ctx.index, True), ctx.values_shape) if ctx.needs_input_grad[1] else None
        return g, gv, None, None


def index_put_into(arr, indices, values, accumulate=False):
    """index_put_ writing into arr itself, not into a copy then written back. Without accumulate: index_put's
    checks, then the values written (no tensor argument sharing arr's memory: the op reads them as they were).
    With accumulate, the values added each to its entry in turn (PyTorch's in-place kernel's order), not summed
    into zeros of arr's shape: for an integer array (in range) per dim and values of arr's dtype and of their
    broadcast shape, apart from arr's memory. False: the general path."""
    if not accumulate:
        if type(arr) is not np.ndarray or type(indices) not in (tuple, list):
            return False
        for t in (values, *indices):
            if isinstance(t, Tensor) and may_overlap(arr, t.array):
                return False
        v, index, _ = _index_put_args(Tensor._wrap(arr), indices, values, False)
        indexing_ops.put_values(arr, index, v.array)
        return True
    if type(values) is not Tensor or values.array.dtype != arr.dtype or type(arr) is not np.ndarray \
            or type(indices) not in (tuple, list) or len(indices) != arr.ndim or np.may_share_memory(arr, values.array):
        return False
    index = tuple(i.array if type(i) is Tensor else None for i in indices)
    if not builtins.all(i is not None and i.dtype.kind in "iu" and i.dtype != np.uint8
                        and not some_id_outside(i, n) for i, n in zip(index, arr.shape)):
        return False
    try:
        if values.array.shape != np.broadcast_shapes(*(i.shape for i in index)):
            return False
    except ValueError:  # (the general path's error)
        return False
    indexing_ops._add_at(np, arr, index, values.array)
    return True


@composite_node("SelectScatterBackward0")
def select_scatter(input, src, dim, index):
    """A copy of `input` with `src` written at `index` of `dim`."""
    d = normalize_dim(dim, input.array.ndim)
    out = shape_ops.clone(input)
    out[(slice(None),) * d + (builtins.int(index),)] = src
    return out


@composite_node("SliceScatterBackward0")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of `input` with `src` written at start:end:step of `dim`."""
    d = normalize_dim(dim, input.array.ndim)
    out = shape_ops.clone(input)
    out[(slice(None),) * d + (slice(start, end, step),)] = src
    return out


@composite_node("DiagonalScatterBackward0")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of `input` with `src` written on the diagonal (offset, dim1, dim2)."""
    nd = input.array.ndim
    d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
    rows, cols = movement._diag_index(input.array.shape, offset, d1, d2)
    if tuple(src.array.shape) != tuple(movement.diagonal(input.detach(), offset, d1, d2).shape):
        raise RuntimeError(f"diagonal_scatter(): expected src to have a size equal to the diagonal of input "
                           f"{list(movement.diagonal(input.detach(), offset, d1, d2).shape)}, got {list(src.array.shape)}")
    moved = movedim(shape_ops.clone(input), (d1, d2), (-2, -1))
    moved = shape_ops.clone(moved)
    moved[(Ellipsis, Tensor._wrap(rows.astype(np.int64)), Tensor._wrap(cols.astype(np.int64)))] = src
    return movedim(moved, (-2, -1), (d1, d2))


def _strided_index(xp, size, stride, offset):
    """The storage position of each element of the geometry (size, stride, offset), an int64 array of `size`."""
    idx = xp.full(tuple(size), offset, dtype=np.int64)
    for k, (sz, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = sz
        idx = idx + (xp.arange(sz, dtype=np.int64) * st).reshape(shape)
    return idx


def _storage_of(a):
    """(storage, offset, strides): the flat array whose memory `a` views, as PyTorch's storage (the root of
    its numpy bases, C-contiguous and of a's dtype), and a's place in it in elements; where no such root
    exists (a base of another dtype or memory order), a's contiguous copy stands for it, as for a tensor
    owning its memory."""
    xp = array_module(a)
    root = a
    while isinstance(root.base, type(a)):
        root = root.base
    item = a.itemsize
    if root is not a and root.dtype == a.dtype and root.flags.c_contiguous and all(s % item == 0 for s in a.strides):
        start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0] if xp is np \
            else a.data.ptr - root.data.ptr
        if start % item == 0:
            return root.reshape(-1), start // item, tuple(s // item for s in a.strides)
    flat = xp.ascontiguousarray(a).reshape(-1)
    strides, n = [], 1
    for sz in reversed(a.shape):
        strides.insert(0, n)
        n *= sz
    return flat, 0, tuple(strides)


class AsStrided(Function):
    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, a, size, stride, offset, geometry):
        storage, in_offset, in_stride = geometry
        ctx.args = (storage.size, tuple(a.array.shape), in_stride, in_offset, size, stride, offset)
        item = storage.itemsize
        return movement._strided(array_module(storage), storage[offset:], size, tuple(s * item for s in stride))

    @staticmethod
    def backward(ctx, g):
        # PyTorch's as_strided_backward: the gradient added up at its storage positions (repeats summed), then
        # read back at the input's own (shared by several of its elements, e.g. an expanded input: divided
        # among them); storage the input does not cover takes no gradient
        n, in_size, in_stride, in_offset, size, stride, offset = ctx.args
        xp = array_module(g.array)
        in_idx = _strided_index(xp, in_size, in_stride, in_offset)
        out_idx = _strided_index(xp, size, stride, offset)
        flat = g.new_zeros(n).index_put((Tensor._wrap(out_idx.reshape(-1)),), g.reshape(-1), accumulate=True)
        grad = flat[Tensor._wrap(in_idx)]
        counts = xp.bincount(in_idx.reshape(-1), minlength=n)
        if in_idx.size and counts.max() > 1:
            grad = grad / Tensor._wrap(counts[in_idx].astype(g.array.dtype))
        return grad, None, None, None, None


def as_strided(input, size, stride, storage_offset=None):
    """A view of the input's storage (the memory of the tensor it views, if any) with the element at
    `storage_offset + sum(i_k * stride_k)` at index i, as PyTorch's; storage_offset defaults to the input's own."""
    size, stride = tuple(builtins.int(s) for s in size), tuple(builtins.int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if builtins.any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    geometry = _storage_of(input.array)
    storage, in_offset = geometry[0], geometry[1]
    offset = in_offset if storage_offset is None else builtins.int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if builtins.all(s > 0 for s in size):
        need = offset + 1 + builtins.sum((sz - 1) * st for sz, st in zip(size, stride))
        if need > storage.size:
            item = storage.itemsize
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                               f"itemsize {item} requiring a storage size of {need * item} are out of bounds for "
                               f"storage of size {storage.size * item}")
    if shape_ops._records_nothing(input):
        out = Tensor._output(movement._strided(array_module(storage), storage[offset:], size,
                                               tuple(s * storage.itemsize for s in stride)), None)
    else:
        out = AsStrided.apply(input, size, stride, offset, geometry)
    return shape_ops._share_version(out, input)


# ---- broadcasting and tensordot ----------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape every one of `shapes` (ints or tuples) broadcasts to, as a Size; PyTorch's errors."""
    from ..tensor import Size

    given = shapes  # (named in the error as given: a tuple as a tuple, a Size as a Size)
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    out = ()
    for i, s in enumerate(shapes):
        if any(n < 0 for n in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        for k in range(1, builtins.min(len(out), len(s)) + 1):
            if s[-k] != out[-k] and builtins.min(s[-k], out[-k]) != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[-k]} at {-k}! Mismatching "
                                   f"argument at index {i} had {given[i]}; but expected shape should be broadcastable to "
                                   f"{list(out)}")
        n = builtins.max(len(out), len(s))
        a, b = (1,) * (n - len(out)) + out, (1,) * (n - len(s)) + s
        out = tuple(y if x == 1 else x for x, y in zip(a, b))
    return Size(out)


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape (a tuple)."""
    ts = _flat(tensors)
    shape = ()
    for t in ts:
        s = t.array.shape
        if s != shape:
            shape = _broadcast_pair(shape, s)
    # (a tensor already of the shape is itself, as PyTorch's expand_outplace leaves it: no ExpandBackward0)
    return tuple(t if t.array.shape == shape else shape_ops.expand(t, shape) for t in ts)


def tensordot(a, b, dims=2):
    """Sum over the last `dims` dims of a and the first `dims` of b (or over the dims listed as (dims_a, dims_b)),
    as one matmul of the two reshaped. Shapes: a (*A, *K), b (*K, *B) -> (*A, *B)."""
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        given_a, given_b = list(range(-dims, 0)), list(range(dims))
    else:
        given_a, given_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(given_a) != len(given_b):
        raise RuntimeError("both dimension lists should have same length")
    da = [normalize_dim(d, a.array.ndim) for d in given_a]
    db = [normalize_dim(d, b.array.ndim) for d in given_b]
    for x, y, gx, gy in zip(da, db, given_a, given_b):
        if a.array.shape[x] != b.array.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.array.shape[x]} in dim "
                               f"{gx} and second has size {b.array.shape[y]} in dim {gy}")
    free_a = [d for d in range(a.array.ndim) if d not in da]
    free_b = [d for d in range(b.array.ndim) if d not in db]
    k = math.prod(a.array.shape[d] for d in da)
    left = shape_ops.reshape(shape_ops.permute(a, *free_a, *da), (-1, k))
    right = shape_ops.reshape(shape_ops.permute(b, *db, *free_b), (k, -1))
    shape = tuple(a.array.shape[d] for d in free_a) + tuple(b.array.shape[d] for d in free_b)
    return shape_ops.reshape(matmul.matmul(left, right), shape)


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements, as rows (itertools' order)."""
    import itertools

    if input.array.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.array.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._wrap(array_module(input.array).zeros((0,), dtype=input.array.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.array.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    flat = Tensor._wrap(array_module(input.array).asarray(idx.reshape(-1)))
    return indexing_ops.index_select(input, 0, flat).reshape(-1, r)  # (differentiable: a gather)


def poisson(input, generator=None):
    """A Poisson draw for each rate in `input` (same dtype; no gradient)."""
    if input.array.dtype.kind != "f":
        raise RuntimeError(f'"poisson_cpu" not implemented for \'{input.dtype._legacy[:-6]}\'')
    xp = array_module(input.array)
    if input.array.size and not bool((input.array >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Tensor._wrap(xp.asarray(_random_stream(xp, generator).poisson(input.array), dtype=input.array.dtype))


def _random_stream(xp, generator):
    """The array generator to draw from: the given `Generator`'s stream, or the default one for `xp`."""
    from .. import random as _random

    return getattr(generator, "_rng", generator) if generator is not None else _random.generator(xp)


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw per entry of alpha, differentiable in alpha by implicit reparameterization:
    the draw moves with alpha as its quantile P(alpha, x) stays fixed (special_array.standard_gamma_grad)."""

    node_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha, generator):
        a = alpha.array
        xp = array_module(a)
        x = xp.asarray(_random_stream(xp, generator).standard_gamma(a, dtype=a.dtype), dtype=a.dtype)  # (0-d: a float)
        ctx.save(self=alpha, result=x)
        return x

    @staticmethod
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        dx = special_array.standard_gamma_grad(alpha.array, x.array).astype(alpha.array.dtype, copy=False)
        return g * Tensor._wrap(dx), None


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) draws (PyTorch's torch._standard_gamma), with the implicit reparameterization gradient."""
    if input.array.dtype not in (np.float32, np.float64):
        raise RuntimeError(f'"gamma_cpu" not implemented for \'{input.dtype._legacy[:-6]}\'')
    return _StandardGamma.apply(input, generator)


def binomial(count, prob, generator=None):
    """A Binomial(count, prob) draw per entry (broadcast), in prob's dtype (no gradient)."""
    xp = array_module(prob.array)
    n, p = xp.broadcast_arrays(count.array, prob.array)
    draws = _random_stream(xp, generator).binomial(n.astype(np.int64), p)
    return Tensor._wrap(xp.asarray(draws, dtype=prob.array.dtype))


def unravel_index(indices, shape):
    """PyTorch's: each flat index's coordinates in a tensor of `shape`, one int64 tensor per dimension (indices
    wrap around as PyTorch's floor division and remainder do: -1 is the last element)."""
    if indices.is_floating_point() or indices.dtype == np.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (builtins.int, tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    for dim in shape:
        if not isinstance(dim, builtins.int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
    if any(dim < 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    a = indices.array.astype(np.int64)
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]  # (row-major: the last dim steps by 1)
    return tuple(Tensor._wrap((a // stride) % dim) for stride, dim in zip(strides, shape))


# ---- PyTorch's *_copy ops: a view op, then the view's values copied into a tensor of their own ----------
def _copy(view):
    """A view's values in a row-major tensor of their own (PyTorch's *_copy results are contiguous)."""
    return shape_ops.Clone.apply(view, "contiguous_format")


def _slice(input, dim=0, start=None, end=None, step=1):
    d = normalize_dim(dim, input.array.ndim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _copied(view, name, node):
    """PyTorch's `name`: the view's values copied, recorded as one node named `node` (the view's node name and
    '_copy', as PyTorch's, the edge reaching the input itself); `node` may pick the name from the arguments."""
    def copy_of_view(input, *args, **kwargs):
        out = view(input, *args, **kwargs)
        return tuple(_copy(t) for t in out) if isinstance(out, (tuple, list)) else _copy(out)

    pick = node if callable(node) else lambda *args, **kwargs: node
    recorded = {}

    def op(input, *args, **kwargs):
        n = pick(*args, **kwargs)
        if n not in recorded:
            recorded[n] = composite_node(n)(copy_of_view)
        return recorded[n](input, *args, **kwargs)

    op.__name__ = op.__qualname__ = name
    return op


def _expand(input, size, *, implicit=False):
    return shape_ops.expand(input, *size)


def _as_complex(input):  # (PyTorch's copy has no derivative for a complex result)
    if state.grad_enabled and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with complex "
                           "dtype.")
    return complex_ops.view_as_complex(input)


def _squeeze_node(dim=None):  # (PyTorch's three squeeze overloads: all, one dim, a list of dims)
    return f"SqueezeBackward{0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1}_copy"


COPIES = {  # name: (view, PyTorch's node). (view_copy reshapes: PyTorch's copies a tensor that has no view of
    # the asked shape, too)
    "view_copy": (shape_ops.reshape, "ViewBackward0_copy"), "t_copy": (shape_ops.t, "TBackward0_copy"),
    "transpose_copy": (shape_ops.transpose, "TransposeBackward0_copy"),
    "permute_copy": (shape_ops.permute, "PermuteBackward0_copy"),
    "unsqueeze_copy": (shape_ops.unsqueeze, "UnsqueezeBackward0_copy"), "squeeze_copy": (shape_ops.squeeze, _squeeze_node),
    "expand_copy": (_expand, "ExpandBackward0_copy"), "diagonal_copy": (movement.diagonal, "DiagonalBackward0_copy"),
    "select_copy": (select, "SelectBackward0_copy"), "slice_copy": (_slice, "SliceBackward0_copy"),
    "unbind_copy": (shape_ops.unbind, "UnbindBackward0_copy"), "split_copy": (shape_ops.split, "SplitBackward0_copy"),
    "split_with_sizes_copy": (split_with_sizes, "SplitWithSizesBackward0_copy"),
    "alias_copy": (lambda input: input, "AliasBackward0_copy"), "unfold_copy": (movement.unfold, "UnfoldBackward0_copy"),
    "as_strided_copy": (as_strided, "AsStridedBackward0_copy"), "narrow_copy": (narrow, "NarrowCopyBackward0"),
    "view_as_real_copy": (complex_ops.view_as_real, "ViewAsRealBackward0_copy"),
    "view_as_complex_copy": (_as_complex, "ViewAsComplexBackward0_copy"),
}
for _name, (_view, _node) in COPIES.items():
    globals()[_name] = _copied(_view, _name, _node)


class NoDerivative(Function):
    """The node PyTorch records for an op it has no derivative for: the result requires grad where an input does
    (grad_fn=<NotImplemented>), and a backward through it raises."""
    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, result, op, *inputs):
        ctx.op = op
        return result

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


def detach_copy(input):
    """A fresh copy of input's values (no storage shared); PyTorch records it with no derivative."""
    return NoDerivative.apply(input.array.copy(), "detach_copy", input)


@composite_node("NormBackward0")  # (PyTorch's v.norm(p): the norm op, not linalg.vector_norm)
def _whole_norm(v, p):
    return v.norm(p)


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm of v over every dim but `dim`, shaped to broadcast against v (weight_norm's); dim=-1: all of v."""
    if dim == -1:
        return _whole_norm(v, pow)
    last = v.array.ndim - 1
    keep = [1] * v.array.ndim
    if dim == 0:
        keep[0] = v.shape[0]
        return shape_ops.reshape(shape_ops.reshape(v, v.shape[0], -1).norm(pow, 1), *keep)
    if dim == last:
        keep[-1] = v.shape[-1]
        return shape_ops.reshape(shape_ops.reshape(v, -1, v.shape[-1]).norm(pow, 0), *keep)
    return shape_ops.transpose(norm_except_dim(shape_ops.transpose(v, 0, dim), pow, 0), 0, dim)


@composite_node("WeightNormInterfaceBackward0")
def _weight_norm_interface(v, g, dim):
    return v * (g / norm_except_dim(v, 2, dim))


def _weight_norm(v, g, dim=0):
    """w = g v / ||v||, the 2-norm over every dim but `dim` (dim=-1: all of v): weight_norm's reparametrization.
    PyTorch has one op with one node for dim 0 and the last dim, and records the plain ops for the others."""
    if dim == -1 or dim not in (0, v.ndim - 1):
        return v * (g / norm_except_dim(v, 2, dim))
    if v.dtype != g.dtype:
        raise RuntimeError(f"expected scalar type {v.dtype._legacy[:-6]} but found {g.dtype._legacy[:-6]}")
    return _weight_norm_interface(v, g, dim)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm of a sparse COO tensor's values (a full reduction only); PyTorch has no dense kernel for it, and
    no derivative."""
    overload = "" if dim is None else ".ScalarOpt_dim_dtype"
    if not getattr(input, "is_sparse", False):
        raise NotImplementedError(f"Could not run 'aten::native_norm{overload}' with arguments from the 'CPU' backend. "
                                  "This could be because the operator doesn't exist for this backend, or was omitted "
                                  "during the selective/custom build process (if using custom build).")
    if dim is not None and sorted(normalize_dim(d, input.dim()) for d in dim) != list(builtins.range(input.dim())):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must either be empty or "
                           "contain all dimensions of the input")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    values = input.coalesce()._values()
    return NoDerivative.apply(values.detach().norm(p).array, "native_norm", values)


def fill(input, value):
    """A tensor of input's shape and dtype filled with `value` (a number or a 0-d tensor, which gets the gradient)."""
    if isinstance(value, Tensor) and value.array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.array.ndim} "
                           "dimensions.")
    everywhere = Tensor._wrap(array_module(input.array).ones(input.array.shape, dtype=bool))
    return elementwise.where(everywhere, value, input).to(input.dtype)


def is_conj(input):  # (minigrad has no complex tensors: nothing is ever a lazy conjugate or negation)
    return False


def is_neg(input):
    return False

keeps_operand_shapes(Nextafter)  # (their callers keep the operands' shapes)
