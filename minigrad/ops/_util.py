"""The shared mechanisms every op uses: operand promotion, broadcast-gradient reduction."""
import builtins
import functools
import math
import operator
import re
import sys
import types
from collections import namedtuple

import numpy as np

from .. import backends, dtypes as _dtypes
from .._fp_errors import quiet as fp_quiet, restore as fp_restore  # noqa: F401 (re-exported)
from ..autograd.grad_mode import state
from ..device import array_module
from ..dtypes import result_type
from ..tensor import Tensor, type_name  # noqa: F401 (re-exported)
from .conversion import to_copy


SHARED_MEMORY_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.")


def overlaps(dst, src, full=True):
    """Whether PyTorch refuses to write into array `dst` while reading array `src` (its assert_no_overlap;
    full=False: assert_no_partial_overlap, which lets src be dst's very elements). As PyTorch, it judges only
    arrays that are both dense (their elements fill a block of memory, each once), by their byte ranges."""
    if src is not dst:
        if not may_overlap(dst, src):  # (their bounds apart: cheap, and False for nearly every call)
            return False
        if not dst.size or not src.size or not (_dense(dst) and _dense(src)):
            return False
        if not same_elements(dst, src):  # (dense: their bounds are their byte ranges, which meet)
            return True
    return full


def repeats_elements(a):
    """PyTorch's has_internal_overlap: whether some elements of array `a` are one memory location (a dim of
    stride 0 and more than one element: an expanded tensor's)."""
    return any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def writable_alias(a):
    """A writable numpy view of the memory of read-only `a` (numpy's broadcast view, or a view of one) where the
    array that owns that memory is writable; else None (memory minigrad keeps read-only, a cached mask's)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable:
        return None
    face = dict(a.__array_interface__, data=(a.__array_interface__["data"][0], False))
    return np.asarray(_Alias(face, root))


class _Alias:
    """An array interface over another array's memory, which keeps that array (`base`) alive."""
    def __init__(self, face, base):
        self.__array_interface__, self.base = face, base


def same_elements(a, b):
    """Whether arrays `a` and `b`, which may share memory, are views of the very same elements: the same
    strides and size, from the same first element."""
    if a.strides != b.strides or a.nbytes != b.nbytes:
        return False
    first = (slice(0, 1),) * a.ndim
    return np.may_share_memory(a[first], b[first])


def may_overlap(a, b):
    """Whether arrays `a` and `b` may share memory, by their bounds. Never for arrays of two types (two devices,
    as a copy_ from the CPU into a GPU tensor reads): cupy's bounds check refuses a numpy array."""
    return type(a) is type(b) and np.may_share_memory(a, b)


def _dense(a):
    """PyTorch's is_non_overlapping_and_dense: the dims of more than one element, ordered by stride, step
    through memory one element, then one block of the dims before, at a time."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    step = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n > 1):
        if stride != step:
            return False
        step *= n
    return True


def not_dense(name, input, *args, **kwargs):
    """An elementwise function's `input` that is no dense tensor (its `.array` could not be read): a sparse COO
    (or CSR, CSC) tensor runs its method `name`, the op on its values for the ops of minigrad/sparse.py's
    _ELEMENTWISE table and PyTorch's refusal for the others; anything else is refused as PyTorch's parser refuses a
    non-tensor.
    (Reached from the function's own first look at its input, so a dense call pays nothing for it.)"""
    if getattr(input, "is_sparse", False) is True:
        return getattr(input, name)(*args, **kwargs)
    if getattr(input, "_compressed", False) is True:  # (CSR, CSC: the ops on values they have, else PyTorch's refusal)
        if name in type(input).__dict__:
            return getattr(input, name)(*args, **kwargs)
        raise input._unsupported_layout()
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")


def output_shape_error(shape, broadcast):
    """PyTorch's error for an in-place op whose result would broadcast self's `shape` to `broadcast`."""
    return RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")


def not_differentiable(t, arg, fn):
    """PyTorch's error for an argument it gives no gradient that requires one (while a graph is recorded)."""
    if t is not None and t._requires_grad and state.grad_enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input "
                           "cannot have requires_grad True.")


def in_float32(fn, *args):
    """fn(*args) for float16 arrays, taken in float32 and rounded to float16 once: PyTorch's CPU kernels compute
    half in float32 (their "opmath" type), where numpy's float16 arithmetic rounds every step and drifts an ulp
    on some elements. Callers test their dtype first, so float32 and float64 pay that one test."""
    return fn(*(a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a for a in args)).astype(np.float16)


def values_indices(values, indices, op):
    """What max(dim=), min(dim=), sort, topk, ... return: PyTorch's torch.return_types.<op>, a named tuple
    (values, indices) printed as PyTorch prints it."""
    return return_type(op, ("values", "indices"))(values, indices)


_VALUES_INDICES = ("values", "indices")
# PyTorch's torch.return_types: each op's fields (its `<op>_out` form's are the same)
RETURN_FIELDS = {
    **dict.fromkeys(("cummax", "cummin", "kthvalue", "max", "median", "min", "mode", "nanmedian", "sort", "topk"),
                    _VALUES_INDICES),
    "aminmax": ("min", "max"), "frexp": ("mantissa", "exponent"), "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"), "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"), "linalg_slogdet": ("sign", "logabsdet"), "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"), "qr": ("Q", "R"), "slogdet": ("sign", "logabsdet"),
    "svd": ("U", "S", "V"), "triangular_solve": ("solution", "cloned_coefficient"),
}
RETURN_FIELDS.update({f"{op}_out": fields for op, fields in RETURN_FIELDS.items() if op != "histogramdd"})


def return_type(op, fields):
    """PyTorch's torch.return_types.<op>: a named tuple of `fields` printed as PyTorch prints it (made once, on first
    use: one class per op, whether an op's result or `minigrad.return_types.<op>` asks first)."""
    cls = _RETURN_TYPES.get(op)
    if cls is None:
        cls = _RETURN_TYPES[op] = type(op, (namedtuple(op, fields),),
                                       {"__slots__": (), "__repr__": _return_type_repr, "__module__": "minigrad.return_types"})
    return cls


_RETURN_TYPES = {}


def _return_type_repr(self):
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"minigrad.return_types.{type(self).__name__}(\n{fields})"


def too_many_positional(name, takes, given):
    """PyTorch's text for a call given more positional arguments than it takes (self not counted in a method's)."""
    return f"{name}() takes {takes} positional argument{'' if takes == 1 else 's'} but {given} " \
           f"{'was' if given == 1 else 'were'} given"


def extra_positional(name, takes, extra, method):
    """PyTorch's TypeError for a call of op `name`, which takes `takes` positional arguments (input among them), given
    `extra` more: a method's counted without self (the op's `*extra` catches them: Python's count would have self)."""
    return TypeError(too_many_positional(name, takes - method, takes + len(extra) - method))


_PY_TAKES = re.compile(r"[\w.]+\(\) takes (?:(\d+)|from (\d+) to (\d+)) positional arguments? but (\d+) "
                       r"(?:was|were) given")
_PY_MISSING = re.compile(r"[\w.]+\(\) missing (\d+) required positional arguments?: (.*)")


def arity_error(error, name, called, method):
    """PyTorch's argument parser's words for Python's own TypeError `error`, raised by the call of function
    `called` (op `name`) in the frame that caught it, given too many or too few positional arguments (a method's
    counted without self, as PyTorch's C methods are); else None."""
    text, m = str(error), 1 if method else 0
    if error.__traceback__.tb_next is not None or not text.startswith(f"{called.__qualname__}() "):
        return None  # (raised inside the op: its own words, or another function's)
    took = _PY_TAKES.fullmatch(text)
    if took is not None:
        takes, low, high, given = took.groups()
        if takes is not None:
            return TypeError(too_many_positional(name, int(takes) - m, int(given) - m))
        return TypeError(f"{name}() takes from {int(low) - m} to {int(high) - m} positional arguments but "
                         f"{int(given) - m} were given")
    missing = _PY_MISSING.fullmatch(text)
    if missing is not None:  # (PyTorch's plural for one missing argument, singular for more, quoted as it quotes)
        count, names = int(missing.group(1)), re.findall(r"'(\w+)'", missing.group(2))
        return TypeError(f"{name}() missing {count} required positional argument{'s' if count == 1 else ''}: "
                         + ", ".join(f'"{n}"' for n in names))
    return None


_OPERATOR_FORMS = {}  # id of an operator form's own code object -> (its symbol, whether reflected)


def operator_form(fn, symbol, reflected=False):
    """`fn` as a Tensor operator (`__add__`): a copy with a code object of its own, the same bytecode (it costs
    what fn does), by which a bad operand's error finds, once raised, the operator it came through."""
    code = fn.__code__.replace()
    form = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    form.__kwdefaults__, form.__doc__, form.__qualname__ = fn.__kwdefaults__, fn.__doc__, fn.__qualname__
    _OPERATOR_FORMS[id(code)] = (symbol, reflected)  # (by id: equal code objects compare equal)
    return form


def operand_type_error(tensor, other, text):
    """The TypeError for an operand that is neither a Tensor nor a number: `text` for a function or method, and
    for an operator Python's own (PyTorch's operators return NotImplemented: Python then tries the other side)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("minigrad."):
        form = _OPERATOR_FORMS.get(id(frame.f_code))
        if form is not None:
            symbol, reflected = form
            if symbol == "*" and isinstance(other, (str, bytes, list, tuple)):
                operator.index(tensor)  # (Python's sequence repeat, tried next, asks the tensor for an index)
            left, right = (other, tensor) if reflected else (tensor, other)
            symbol = "** or pow()" if symbol == "**" else symbol
            return TypeError(f"unsupported operand type(s) for {symbol}: '{type(left).__name__}' and "
                             f"'{type(right).__name__}'")
        frame = frame.f_back
    return TypeError(text)


def method_form(fn):
    """`fn` as a Tensor method: a copy of it whose keyword `_method` is True, so that its argument-count errors
    count as PyTorch's methods' do, self not among them (a copy, not a wrapper: the method costs what fn does)."""
    method = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    method.__kwdefaults__ = {**fn.__kwdefaults__, "_method": True}
    method.__doc__, method.__qualname__ = fn.__doc__, fn.__qualname__
    return method


def broadcast_shapes(a, b):
    """The broadcast of two shapes, or PyTorch's error naming the mismatching sizes."""
    out = []
    for i in range(1, builtins.max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            dim = builtins.max(len(a), len(b)) - i
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {dim}"
            )
        out.append(x if y == 1 else y)
    return tuple(reversed(out))


def _check_broadcast(a, b):
    """PyTorch's error (broadcast_shapes') for shapes that do not broadcast; one shape the end of the
    other (a bias's, a scalar's) is the common case, checked first, then dim by dim from the end (each
    pair equal or one of them 1: `h - h.mean(0, keepdim=True)`, a (1, n) gain)."""
    if a != b and a[len(a) - len(b):] != b and b[len(b) - len(a):] != a:
        for m, n in zip(a[::-1], b[::-1]):
            if m != n and m != 1 and n != 1:
                broadcast_shapes(a, b)


def as_tensor_like(x, ref, dtype):
    """A Python scalar or array as a (non-grad) tensor of `dtype` on `ref`'s device."""
    xp = array_module(ref.array)
    try:
        return Tensor._wrap(xp.asarray(x, dtype=dtype))
    except OverflowError:  # a Python int past an integer dtype's range: PyTorch wraps it (uint8 - 3 adds 253)
        return Tensor._wrap(xp.asarray(np.int64(x)).astype(dtype))


def binary_operands(a, b):
    """Promote two operands (tensors or Python scalars) to one dtype, as PyTorch does.

    A Python scalar becomes a 0-dim tensor (it shows in `next_functions` as (None, 0), as in
    PyTorch), and does not upcast a float32 tensor.
    """
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        da, db = a.array, b.array
        _check_broadcast(da.shape, db.shape)
        if da.dtype == db.dtype:
            return a, b
        dt = result_type(a, b)
        return cast(a, dt), cast(b, dt)
    if ta:
        if not isinstance(b, (builtins.int, builtins.float, builtins.bool, np.generic, builtins.complex)):
            if getattr(b, "is_sparse", False):  # dense op sparse: the dense result, as PyTorch's `x + adj`
                if tuple(a.array.shape) != tuple(b.shape):  # (PyTorch broadcasts no sparse operand)
                    raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                                       f"{list(a.array.shape)} while other has size {list(b.shape)} (FYI: "
                                       "dense-sparse addition does not currently support broadcasting)")
                return binary_operands(a, b.to_dense())
            if hasattr(b, "shape"):
                b = Tensor._wrap(b)
                return binary_operands(a, b)
            raise operand_type_error(a, b, f"unsupported operand type: Tensor and {type(b).__name__}")
        da = a.array.dtype
        # (a floating tensor keeps its dtype against a real number)
        dt = da if da.kind == "f" and not isinstance(b, builtins.complex) else result_type(a, b)
        return cast(a, dt), as_tensor_like(b, a, dt)
    if tb:
        x, y = binary_operands(b, a)
        return y, x
    raise TypeError("at least one operand must be a Tensor")


def float_operands(a, b):
    """binary_operands for an op whose integer or bool result is a float (true division, atan2, xlogy, ...).

    There each operand becomes the default float from its own values, as PyTorch computes: never in the
    promoted integer dtype first, where a 0-dim int64 -4 beside a uint8 tensor (or a Python 300 beside an
    int8 one) would wrap (to 252, to 44) before the division.
    """
    x, y = binary_operands(a, b)
    if x.array.dtype.kind in "fc":
        return x, y
    f = _dtypes.default_float.np
    ref = a if isinstance(a, Tensor) else b
    return tuple(cast(t, f) if isinstance(t, Tensor) else as_tensor_like(t, ref, f)
                 if isinstance(t, (builtins.int, builtins.float, np.number, np.bool_)) else cast(w, f)
                 for t, w in ((a, x), (b, y)))


def cast(t, dt):
    """`t` converted to numpy dtype `dt` (recorded, when it requires grad)."""
    if t.array.dtype == dt:
        return t
    return to_copy(t, dtype=dt)


def broadcast_view(a, shape):
    """xp.broadcast_to(a, shape), for a `shape` that `a` broadcasts to (its callers check): a read-only
    view of `a` repeated along its size-1 (and new leading) dims. numpy's is a Python function around
    an nditer, some microseconds; for a C-contiguous numpy array the ndarray constructor makes the
    same view, its strides 0 where it repeats."""
    if type(a) is not np.ndarray or not a.flags.c_contiguous or not a.size:
        return array_module(a).broadcast_to(a, shape)
    strides = [0] * (len(shape) - a.ndim) + [0 if n == 1 else s for n, s in zip(a.shape, a.strides)]
    view = np.ndarray(shape, a.dtype, a, 0, strides)
    view.flags.writeable = False
    return view


def _broadcast_dims(gshape, shape):
    """The dims of `gshape` that broadcasting `shape` to it added or stretched."""
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)


def sum_to(g, shape):
    """Reduce a broadcast gradient `g` back to `shape`: the one place broadcasting is undone."""
    gshape = g.array.shape
    if gshape == tuple(shape):
        return g
    if not state.grad_enabled:  # no graph of the backward wanted: the array's sum, no recorded ops
        return Tensor._wrap(sum_to_array(g.array, shape))
    lead = len(gshape) - len(shape)
    dims = _broadcast_dims(gshape, shape)
    out = g.sum(dim=dims, keepdim=True) if dims else g
    if lead:
        out = out.reshape(tuple(shape))
    return out


def sum_to_array(g, shape):
    """`sum_to` of an array (what it does with no graph wanted)."""
    gshape, shape = g.shape, tuple(shape)
    if gshape == shape:
        return g
    if not shape:  # (a 0-d tensor's, a scalar parameter's: every dim summed, the dims _broadcast_dims would give)
        return add_reduce(g, tuple(range(g.ndim)), True).reshape(())
    lead = len(gshape) - len(shape)
    if lead > 0 and gshape[lead:] == shape:  # (a bias's gradient: only the new leading dims summed, none kept)
        return add_reduce(g, tuple(range(lead)), False)
    if not lead:  # (a (1, n) row's gradient: the dims stretched, kept as 1s, are the shape)
        return add_reduce(g, tuple(i for i, s in enumerate(shape) if s == 1 and gshape[i] != 1), True)
    dims = _broadcast_dims(gshape, shape)
    return add_reduce(g, dims, True).reshape(shape) if dims else g.reshape(shape)


_FLOAT16 = np.dtype(np.float16)  # (numpy's built-in dtypes are singletons: `is` is the cheap test)
SUM_KERNEL_MIN_ROWS = 256  # add_reduce's rows (of the dims summed) from which the CPU backend's loop may take a sum

def add_reduce(a, dims, keepdim):
    """`a.sum(axis=dims, keepdims=keepdim)` of a float array (dims a tuple of distinct dims in range). A
    run of dims before the last of a C-contiguous numpy array, where numpy's inner loops are short, goes
    to the CPU backend's loop (the same order of additions: numpy's bits)."""
    # (first: under 256 rows of the last dim, the common small case, nothing else is paid for)
    if a.ndim > 1 and a.size >= SUM_KERNEL_MIN_ROWS * a.shape[-1] and dims and type(a) is np.ndarray and a.flags.c_contiguous:
        lo, hi = builtins.min(dims), builtins.max(dims) + 1
        width = math.prod(a.shape[hi:])
        # (width 1: the run is last, numpy's pairwise sum; under 256 rows numpy's loops cost less than the call)
        if hi - lo == len(dims) and width > 1 and a.size >= SUM_KERNEL_MIN_ROWS * width:
            shape = a.shape
            rows = a.reshape(math.prod(shape[:lo]), math.prod(shape[lo:hi]), width)
            impl = backends.find("sum", rows)
            if impl is not None:
                kept = tuple(1 if lo <= d < hi else n for d, n in enumerate(shape)) if keepdim else shape[:lo] + shape[hi:]
                return impl.forward(rows).reshape(kept)
    if type(a) is np.ndarray:  # (what ndarray.sum calls, without its Python wrapper: the same bits)
        if a.dtype is _FLOAT16:  # PyTorch accumulates half in float32; numpy does so only along the last axis
            return np.add.reduce(a, dims, np.float32, None, keepdim).astype(np.float16)
        return np.add.reduce(a, dims, None, None, keepdim)
    return a.sum(axis=dims, keepdims=keepdim)


def some_id_outside(ids, n):
    """Whether an integer id in the array `ids` is outside [0, n), in one reduction: seen as unsigned (a
    view, no copy), a negative id is a large one. The ops whose ids are data (class targets, embedding
    rows, gather's index) ask it in their forwards, so that a replay of a captured step asks it of each
    call's ids."""
    if not ids.size:
        return False
    if ids.size == 1:  # a generated token's: the number itself, where a reduction of one value costs 2 us
        return not 0 <= int(ids.item()) < n
    u = ids if ids.dtype.kind == "u" else ids.view(_UNSIGNED[ids.dtype.itemsize])
    # (numpy's: the ufunc's reduce, which u.max() reaches through a Python function of numpy's)
    return int(np.maximum.reduce(u, None) if type(u) is np.ndarray else u.max()) >= n


_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}  # the unsigned dtype of each integer width


def check_index_entries(index, n, dim):
    """PyTorch's IndexError for an entry of the 1-D integer array `index` outside [-n, n) (index_fill's
    rule: a negative entry counts from the end). Called inside the op's forward, so a replay of a
    captured step checks each call's index."""
    if index.size:
        hi, lo = builtins.int(index.max()), builtins.int(index.min())
        if hi >= n or lo < -n:  # (PyTorch names the first in the index's order)
            first = index[((index >= n) | (index < -n)).argmax()]
            raise IndexError(f"index {first} is out of bounds for dimension {dim} with size {n}")


def normalize_dim(dim, ndim):
    """A dim in [0, ndim), or PyTorch's IndexError for one out of range."""
    if type(dim) is builtins.int and -ndim <= dim < ndim:  # (the usual: one test)
        return dim % ndim
    if type(dim) is not builtins.int:
        dim = dim_index(dim)
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def dim_index(dim):
    """A dim that is no Python int as one (a numpy integer, a 0-d integer tensor); a bool or a float refused, as
    PyTorch's parser does (the op's wrapper words it)."""
    try:
        if not isinstance(dim, builtins.bool):
            return operator.index(dim)
    except TypeError:
        pass
    raise TypeError(f"argument 'dim' must be int, not {type_name(dim)}")


def normalize_dims(dim, ndim):
    """A tuple of dims for a reduction; None means all."""
    if type(dim) is builtins.int and -ndim <= dim < ndim:  # (the usual, `h.sum(0)`: one test)
        return (dim % ndim,)
    if dim is None:  # (the other usual, `loss.sum()`: before the type checks)
        return tuple(range(ndim))
    if isinstance(dim, (builtins.str, builtins.float, builtins.bool)):  # (no sequence of dims: the wrapper names it)
        raise TypeError(f"argument 'dim' must be int, not {type_name(dim)}")
    one = isinstance(dim, (builtins.int, np.integer)) or (isinstance(dim, Tensor) and not dim.array.ndim)
    if not one and len(dim) == 0:
        return tuple(range(ndim))  # PyTorch: an empty dim list reduces over all dims
    if one:  # (a 0-d integer tensor too, as PyTorch's parser takes it)
        d = normalize_dim(dim_index(dim), ndim)
        return (d,) if ndim else ()  # a 0-d tensor takes dim 0 or -1 and has nothing to reduce
    dims = [d % ndim if type(d) is builtins.int and -ndim <= d < ndim else normalize_dim(d, ndim) for d in dim]
    if len(set(dims)) != len(dims):
        d = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(dims)) if ndim else ()


def float_only(t, opname):
    if t.array.dtype.kind != "f":
        raise RuntimeError(f"{opname}: expected a floating point tensor, got {t.dtype}")


def take_along(xp, x, idx, dim):
    """x's entries at `idx` along `dim` (idx has x's shape but along `dim`), as take_along_axis. x seen as
    (before, along, after) and indexed once by three broadcast index arrays: numpy's take_along_axis
    builds its index in Python (~4 us of a small topk or max(dim))."""
    if not x.ndim:
        return xp.take_along_axis(x, idx, axis=dim)
    shape, k = x.shape, idx.shape[dim]
    before, after = math.prod(shape[:dim]), math.prod(shape[dim + 1:])
    if after == 1:  # along the last dim, the usual (a row's best entries): one flat index a row
        rows = x.reshape(before, shape[dim])
        if before == 1:  # one row (a batch of one's logits): a plain take, a quarter of the indexing's time
            return rows[0].take(idx)
        return rows[xp.arange(before)[:, None], idx.reshape(before, k)].reshape(idx.shape)
    return x.reshape(before, shape[dim], after)[
        xp.arange(before)[:, None, None], idx.reshape(before, k, after), xp.arange(after)].reshape(idx.shape)


def descending_key(xp, src):
    """A key whose ascending stable order is `src`'s descending order (nan first, above +inf, as PyTorch)."""
    if src.dtype == np.bool_:
        return ~src
    if src.dtype.kind == "u":
        return src.max() - src if src.size else src
    if src.dtype.kind == "i":
        return ~src  # -x - 1: reverses the order without overflow
    nan = xp.isnan(src)
    if not nan.any():  # (the usual) negated floats are in the reverse order, -0.0 and 0.0 still tied
        return -src
    # with NaNs: the floats' bits read as a signed integer, a negative's magnitude bits flipped, are in the
    # floats' order with NaN above +inf; NaNs made one NaN and -0.0 made 0.0 first, so that equal values stay ties
    x = xp.where(nan, np.nan, src + 0.0)
    bits = x.view(np.dtype(f"i{x.itemsize}"))
    return ~(bits ^ ((bits >> (8 * x.itemsize - 1)) & np.iinfo(bits.dtype).max))


def sizes_or_keyword(fn, args, kwargs, name):
    """PyTorch's two spellings of a sizes or dims argument: positional ints (or one sequence), or the
    keyword `name` (`x.view(size=(3, 2))`, `x.flip(dims=[1])`); returns the positional form."""
    if not kwargs:
        return args
    if name not in kwargs or len(kwargs) > 1:
        other = next(k for k in kwargs if k != name)
        raise TypeError(f"{fn}() got an unexpected keyword argument '{other}'")
    if args:
        raise TypeError(f"{fn}() got multiple values for argument '{name}'")
    value = kwargs[name]
    return (value,) if isinstance(value, (tuple, list, builtins.int, np.integer)) else (tuple(value),)



@functools.lru_cache(maxsize=None)
def _float_max(dt):
    return builtins.float(np.finfo(dt).max)


def checked_scalar(value, dt):
    """A Python number as PyTorch converts a fill value into dtype `dt`: refused with its text where it does not
    fit (NaN and infinities in an integer dtype); an unsigned dtype takes an int down to -max, wrapped."""
    kind = type(value)
    if kind is not builtins.int and kind is not builtins.float:
        if kind is complex:  # (its real part, where the imaginary part is 0)
            from ..factory import _complex_fill

            return _complex_fill(value, dt)
        return value
    dt = np.dtype(dt)
    if dt.kind == "c":
        return value
    if dt.kind == "b":
        return builtins.bool(value)
    if dt.kind == "f":
        fits = not math.isfinite(value) or abs(value) <= _float_max(dt)
    else:
        info = np.iinfo(dt)
        lo, hi = info.min, info.max
        if type(value) is builtins.float:  # (compared as doubles, as PyTorch does)
            lo, hi = builtins.float(lo), builtins.float(hi)
        elif dt.kind == "u":
            lo = -hi
        fits = lo <= value <= hi  # (False for NaN)
        if fits:  # truncated; wrapped where negative in an unsigned dtype, or 2^63 (a double) in int64
            value = builtins.int(value) % (info.max + 1) if dt.kind == "u" else builtins.int(value)
            value = value if value <= info.max else info.min
    if not fits:
        from ..factory import _FILL_TYPES  # (the C++ type names PyTorch's overflow text gives)

        raise RuntimeError(f"value cannot be converted to type {_FILL_TYPES.get(dt.name, dt.name + '_t')} "
                           "without overflow")
    return value


def quiet(fn, *arrays):
    """fn(*arrays) without numpy's floating-point warnings: PyTorch gives inf and NaN silently."""
    fp = fp_quiet()
    try:
        return fn(*arrays)
    finally:
        fp_restore(fp)


def scaled(t, s):
    """t * s, or t itself for s == 1 (a multiply-add's alpha, beta or value left at its default)."""
    return t if s == 1 else t * s


