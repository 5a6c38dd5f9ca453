"""Tensor factories with PyTorch's names and signatures: tensor, zeros, ones, randn, arange, ..."""
import builtins
import copy
import functools
import itertools
import math
import operator
import os
import warnings

import numpy as np

from . import dtypes, random
from ._warn_once import warn_once
from .autograd import recording
from .backends.flags import _deterministic
from .device import module_for, to_device
from .ops.conversion import warn_complex_to_real
from .tensor import RAND_OVERLOADS, Tensor, _requiring_grad, dtype_argument, int_argument, invalid_arguments, placement_argument, size_type_error, type_name


def _size_keyword(fn):
    """PyTorch also takes the shape as `size=` (`ones(size=(2, 3))`)."""
    @functools.wraps(fn)
    def op(*size, **kwargs):
        if "size" in kwargs:
            if size and fn.__name__ in ("rand", "randn"):  # (their parser's overloads, where the others name 'size')
                raise TypeError(invalid_arguments(fn.__name__, size, RAND_OVERLOADS, kwargs))
            if size:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'size'")
            size = (kwargs.pop("size"),)
        elif not size and fn.__name__ not in ("rand", "randn"):  # (before a keyword it has not: `ones(shape=...)`)
            raise TypeError(f'{fn.__name__}() missing 1 required positional arguments: "size"')
        return fn(*size, **kwargs)

    return op


def _size(size, name="empty"):
    """The shape of `name(*size)` (`zeros(2, 3)`, `zeros((2, 3))`, `zeros([2, 3])`) as a tuple of ints, with
    PyTorch's errors: its argument parser's TypeError for what is not an int, and the negative-size text."""
    given = size
    if not given:
        raise TypeError(size_type_error(name, given, 0, None) if name in ("rand", "randn") else
                        f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:  # the usual, plain ints, taken as they are (the generator below costs ~0.5 us)
        if type(s) is not builtins.int or s < 0:
            break
    else:
        return tuple(size)
    # (`zeros(n)` of an integer tensor or 0-d array n of one element: its number, as PyTorch reads it, by __index__)
    size = [s.item() if isinstance(s, Tensor) and s.array.size == 1 and s.array.dtype.kind in "iu" or
            isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu" else s for s in size]
    sequence = len(given) == 1 and isinstance(given[0], (tuple, list))
    for i, s in enumerate(size):
        # (a bool is no size where PyTorch's parser reads a list of ints: the first argument, or a sequence's
        # entries; later arguments it reads one by one, by __index__, which a bool has)
        if not isinstance(s, (builtins.int, np.integer)) or isinstance(s, (builtins.bool, np.bool_)) and (i == 0 or sequence):
            raise TypeError(size_type_error(name, given, i, s))
    if name == "zeros" and any(s < 0 for s in size):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(map(builtins.int, size))}")
    return tuple(builtins.int(s) for s in size)


def _dt(dtype, default=None):
    return (dtypes.get_dtype(dtype) if dtype is not None else default or dtypes.default_float).np


_TORCH_NUMPY_TYPES = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
                      "uint16, uint8, and bool")


def _supported(array):
    """`array`, once its dtype is one a tensor can hold: strings and objects (a pandas frame's `.values`) are
    refused with PyTorch's text, complex ones other than complex64/complex128 with minigrad's; the unsigned
    integers pass, as ids to index with."""
    kind = array.dtype.kind
    if kind not in "biufc" or array.dtype.itemsize > (16 if kind == "c" else 8):  # (long double too)
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. The only supported "
                        f"types are: {_TORCH_NUMPY_TYPES}.")
    if kind == "c":
        dtypes.from_numpy_dtype(array.dtype)  # (raises its "not supported" line)
    return array


def _numpy_source(array):
    """A user's numpy array as tensor, as_tensor and from_numpy take it: PyTorch reads its memory as it lies,
    so refuses a byte-swapped one, or one laid out backwards (`a[::-1]`), even where it would copy."""
    _supported(array)
    if array.base is not None and array.ndim and min(array.strides) < 0:  # (a view: a fresh array has none)
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides "
                         "are not currently supported. (You can probably work around this by making a copy of your "
                         "array  with array.copy().) ")
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion between "
                         "byte orders is currently not supported.")
    return array


def _make(array, requires_grad):
    t = Tensor._wrap(_supported(array))
    return _requiring_grad(t) if requires_grad else t


_SEQUENCES = (list, tuple, range)
_PYTHON_DTYPES = {builtins.bool: np.dtype(np.bool_), builtins.int: np.dtype(np.int64)}  # (float: the default, when asked)


def _element_dtype(x):
    """The numpy dtype PyTorch infers for one element of `tensor()`'s data."""
    t = type(x)
    if t is builtins.float:
        return dtypes.default_float.np
    if t in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[t]
    if isinstance(x, Tensor):
        return x.array.dtype
    if isinstance(x, (np.generic, np.ndarray)):
        return x.dtype
    if isinstance(x, complex):
        return dtypes.default_complex().np
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _leaves(data):
    """The element types of nested sequences, read one level at a time in C loops (a long list of rows costs
    little): {type: its elements}, the elements left out (empty) for Python's bool, int and float, where
    one type stands for all of them."""
    leaves = {}
    level = [data]
    while level:
        items = level[0] if len(level) == 1 else list(itertools.chain.from_iterable(level))
        kinds = set(map(type, items))
        level = []
        for kind in kinds:
            if issubclass(kind, _SEQUENCES):
                level += items if len(kinds) == 1 else [s for s in items if type(s) is kind]
            elif kind is builtins.float or kind in _PYTHON_DTYPES:
                leaves[kind] = ()
            else:
                leaves.setdefault(kind, []).extend(s for s in items if type(s) is kind)
    return leaves


def _infer_dtype(data, leaves=None):
    """PyTorch's inference for Python data: every element's dtype promoted together (bools are bool, ints
    int64, floats the default float, numpy scalars, arrays and tensors their own dtype), so `[True, 2]` is
    int64, `[np.float64(1.5), 2]` float64 and `range(3)` int64; no elements at all, the default float.
    (`leaves`: `_leaves(data)`, where the caller has it.)"""
    if not isinstance(data, _SEQUENCES):
        return _element_dtype(data)
    found = set()
    leaves = _leaves(data) if leaves is None else leaves
    if str in leaves:  # (PyTorch reads a str first in line as one more dim of characters)
        first = data
        while isinstance(first, _SEQUENCES) and len(first):
            first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")
    for kind, items in leaves.items():
        if kind is builtins.float or kind in _PYTHON_DTYPES:
            found.add(_element_dtype(kind()))
        else:
            found.update(_element_dtype(s) for s in items)
    if not found:
        return dtypes.default_float.np
    return functools.reduce(dtypes.promote_types, found)


_COPY_CONSTRUCT = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                   "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of `data` (a number, nested lists, an array or a Tensor)."""
    if pin_memory is not False:
        placement_argument("tensor", None, pin_memory)
    dtype = dtype_argument(dtype, "tensor")
    if type(requires_grad) is not builtins.bool:
        _grad_flag(requires_grad, "tensor")
    if isinstance(data, Tensor):
        warnings.warn(_COPY_CONSTRUCT, UserWarning, stacklevel=2)
    return _copied(data, dtype, device, requires_grad)


def _grad_flag(requires_grad, name):
    """PyTorch's parser takes only a bool for `requires_grad=` (not 1, not numpy's bool)."""
    if type(requires_grad) is not builtins.bool:
        raise TypeError(f"{name}(): argument 'requires_grad' must be bool, not {type_name(requires_grad)}")


def _copied(data, dtype, device, requires_grad):
    """tensor()'s work, after its dtype's check and its warning (new_tensor's and asarray's copies too)."""
    xp = module_for(device)
    if recording.hook.recorder is not None and xp is np and (type(data) is np.ndarray
                                                              or not hasattr(data, "__array_interface__")):
        # inside a minigrad.compile capture: made again at each replay (of that call's tensor, for a copy of
        # one; of the array as it is then, for a copy of a numpy array, which may have changed in place), so
        # a write into it, or the caller's, never reaches the next call, and a leaf is new each call
        live = isinstance(data, (Tensor, np.ndarray)) or _holds_tensor(data)
        return recording.hook.recorder.on_call(_tensor_here, data if live else copy.deepcopy(data),
                                               dtype if dtype is None else _dt(dtype), requires_grad)
    return _tensor(data, dtype, device, requires_grad, xp)


def _holds_tensor(data):
    """Whether nested lists or tuples hold a Tensor (`tensor([x.sum(), x.max()])`: read at each replay)."""
    return isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) or _holds_tensor(d) for d in data)


def _tensor_here(data, dtype, requires_grad):
    return _tensor(data, dtype, None, requires_grad, np)


def _tensor(data, dtype, device, requires_grad, xp):
    if isinstance(data, Tensor):
        data = data.array
    if hasattr(data, "dtype") and hasattr(data, "shape"):
        if getattr(data, "is_sparse", False):  # a sparse COO tensor: a detached sparse copy, as PyTorch's
            warnings.warn(_COPY_CONSTRUCT, UserWarning, stacklevel=4)  # (tensor -> _copied -> here)
            return data.detach().to(device=device, dtype=dtype).clone().requires_grad_(bool(requires_grad))
        if type(data) is np.ndarray:
            _numpy_source(data)
        if dtype is None:
            arr = data.copy()
        elif isinstance(data, np.generic):  # (numpy converts a numpy scalar for PyTorch: its own warnings)
            _numpy_scalars((type(data),), np.dtype(_dt(dtype)))
            arr = data.astype(_dt(dtype))
        else:
            arr = _cast_array(data, np.dtype(_dt(dtype)))
        arr = to_device(arr, device) if device is not None else arr
        return _make(arr, requires_grad)
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], np.ndarray):
        warn_once("list of arrays", "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
                  "converting the list to a single numpy.ndarray with numpy.array() before converting to a tensor.")
    leaves = _leaves(data) if isinstance(data, _SEQUENCES) else {}
    dt = _dt(dtype) if dtype is not None else _infer_dtype(data, leaves)
    if any(issubclass(kind, Tensor) for kind in leaves):
        data = _tensors_as_numbers(data, np.dtype(dt).kind in "iub")
    if dt.kind in "iub" and not (leaves.keys() if leaves else {type(data)}) <= _PLAIN_NUMBERS:
        _check_numbers(data, dt, leaves)  # (numpy scalars, or floats for an integer dtype)
    try:
        arr = np.array(data, dtype=dt)
    except OverflowError:
        arr = _wrapped(data, np.dtype(dt))
    except (ValueError, TypeError) as e:
        _check_nesting(data, np.dtype(dt))  # (nested lists of unequal lengths: PyTorch's error, naming the dim)
        if np.dtype(dt).kind in "iu" and ("NaN" in str(e) or "infinity" in str(e)):
            raise _overflow(dt) from None
        if "not 'complex'" in str(e):  # (a complex number for a real dtype: PyTorch's unpacking texts)
            raise TypeError("must be real number, not complex" if np.dtype(dt).kind == "f" else
                            "'complex' object cannot be interpreted as an integer") from None
        raise TypeError(f"could not make a tensor from {type(data).__name__}: {e}") from None
    return _make(xp.asarray(arr), requires_grad)  # (numpy's asarray of an array is the array itself)


def _cast_array(array, dt):
    """An array (or a Tensor's) copied into dtype `dt`; complex values to a real dtype lose their imaginary
    part with PyTorch's warning, not numpy's (bool keeps their truth)."""
    if array.dtype.kind == "c" and dt.kind not in "cb":
        warn_complex_to_real()
        array = array.real
    return array.astype(dt)


def _check_numbers(data, dt, leaves):
    """PyTorch's refusals of Python data (numbers in nested sequences, `leaves` their element types) for
    numpy dtype `dt`, which numpy would take: an integer dtype refuses a float past its range (-0.5 for
    uint8) where numpy would truncate it, and numpy scalars without `__index__`."""
    _numpy_scalars(leaves if isinstance(data, _SEQUENCES) else (type(data),), dt)
    if dt.kind in "iu" and (builtins.float in leaves or np.float64 in leaves or isinstance(data, builtins.float)):
        floats = np.fromiter(_floats_in(data), np.float64)
        info = np.iinfo(dt)
        if floats.size and not (floats.min() >= info.min and floats.max() <= info.max):
            raise _overflow(dt)


def _floats_in(data):
    if isinstance(data, _SEQUENCES):
        for d in data:
            yield from _floats_in(d)
    elif isinstance(data, builtins.float):
        yield data


def _numpy_scalars(kinds, dt):
    """PyTorch reads a number for an integer or bool dtype as Python's float, int or bool, else by
    `__index__`, which numpy's float32, float16, complex64 (and, for an integer dtype, its bool) lack;
    numpy's float64 and complex128 are Python's float and complex."""
    if dt.kind not in "iub":
        return
    for kind in kinds:
        if issubclass(kind, (np.floating, np.complexfloating, np.bool_)) and not (
                issubclass(kind, (builtins.float, builtins.complex)) and (dt.kind == "b" or issubclass(kind, builtins.float))
                or dt.kind == "b" and issubclass(kind, np.bool_)):
            raise TypeError(f"'numpy.{kind.__name__}' object cannot be interpreted as an integer")


def _tensors_as_numbers(data, integral):
    """PyTorch reads a Tensor inside `tensor()`'s lists as one number, whatever its shape: `[t1, t2]` of
    one-element tensors is 1-d, not (2, 1), and a larger tensor is refused by `float(t)` (ValueError), or
    by `operator.index(t)` for an integer or bool result (TypeError, floating tensors too)."""
    if isinstance(data, Tensor):
        return operator.index(data) if integral else float(data)
    if isinstance(data, _SEQUENCES):
        return [_tensors_as_numbers(d, integral) for d in data]
    return data


def _overflow(dt):
    return RuntimeError(f"value cannot be converted to type {dtypes.from_numpy_dtype(np.dtype(dt)).name} without overflow")


def _wrapped(data, dt):
    """Integers numpy refuses for integer dtype `dt`, as PyTorch takes them: within the dtype's range (an
    unsigned one's from -max, wrapping as C does: tensor([-1], dtype=uint8) is 255), else refused."""
    if dt.kind not in "iu":
        raise _overflow(dt)
    try:
        wide = np.array(data, dtype=np.int64)
    except (OverflowError, ValueError) as e:  # (a Python int past int64: PyTorch's reading of it fails first)
        raise (_overflow(dt) if "float" in str(e) or "NaN" in str(e) else
               ValueError("Overflow when unpacking long long")) from None
    info = np.iinfo(dt)
    if wide.size and not (wide.max() <= info.max and wide.min() >= (-info.max if dt.kind == "u" else info.min)):
        raise _overflow(dt)
    return wide.astype(dt)


_PLAIN_NUMBERS = {builtins.int, builtins.bool}


def _check_nesting(data, dt):
    """PyTorch's errors for nested sequences that do not make a box: each dim's length is the first
    element's (`[[1, 2], [3]]`: "expected sequence of length 2 at dim 1 (got 1)")."""
    shape, first = [], data
    while isinstance(first, (list, tuple)):
        shape.append(len(first))
        if not first:
            break
        first = first[0]

    def check(seq, dim):
        if dim == len(shape):
            if isinstance(seq, (list, tuple)):  # (a sequence where the first element's depth has a number)
                kind = type(seq).__name__
                raise TypeError(f"must be real number, not {kind}" if dt.kind in "fc" else
                                f"'{kind}' object cannot be interpreted as an integer")
            return
        if not isinstance(seq, (list, tuple)):
            raise TypeError("not a sequence")
        if len(seq) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(seq)})")
        for item in seq:
            check(item, dim + 1)

    check(data, 0)


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but shares memory with an array of the right dtype and device."""
    dtype = dtype_argument(dtype, "as_tensor")
    if isinstance(data, Tensor):  # the tensor itself, or its conversion (recorded by autograd), never a warned copy
        return data.to(device=device, dtype=dtype)
    if getattr(data, "is_sparse", False):  # (a sparse COO tensor, as a tensor is: itself)
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray):
        _numpy_source(data)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _dt(dtype)) and (device is None or str(device) == "cpu"):
        return Tensor._wrap(_writeable(data))
    return tensor(data, dtype=dtype, device=device)


_HEAP_TYPE = 1 << 9  # (Py_TPFLAGS_HEAPTYPE: a class made by a class statement)


def from_numpy(array):
    """A tensor sharing memory with a numpy array (a read-only array: a copy, with PyTorch's warning)."""
    if not isinstance(array, np.ndarray):
        kind = type(array)  # (named as Python's C API names a type: a class written in C (a numpy scalar's) with
        #                    its module, one written in Python (a Tensor, a Parameter) by its name alone)
        in_c = not kind.__flags__ & _HEAP_TYPE and kind.__module__ != "builtins"
        raise TypeError(f"expected np.ndarray (got {kind.__module__ + '.' if in_c else ''}{kind.__name__})")
    _numpy_source(array)
    return Tensor._wrap(_writeable(array))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with a Python buffer (bytearray, array.array, mmap, ...): `count` elements
    (-1: all) from byte `offset`. A read-only buffer (bytes) is copied, with a warning, as from_numpy's array."""
    dt = _dt(dtype_argument(dtype, "frombuffer"))
    length = memoryview(buffer).nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % dt.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({dt.itemsize})")
        count = (length - offset) // dt.itemsize
    elif offset + count * dt.itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    return _make(_writeable(np.frombuffer(buffer, dtype=dt, count=count, offset=offset)), requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D tensor of `size` elements mapped from a file: shared=True writes go to the file (created or grown to
    fit), otherwise to a private copy-on-write mapping of it."""
    dt = _dt(dtype_argument(dtype, "from_file"))
    needed = size * dt.itemsize
    mode = "r+b" if shared else "rb"
    try:
        if shared:
            with open(filename, "ab") as f:  # (creates it; grows it to the mapping's size)
                if f.tell() < needed:
                    f.truncate(needed)
        with open(filename, mode) as f:
            length = os.fstat(f.fileno()).st_size
    except OSError as e:
        raise RuntimeError(f"unable to open file <{filename}> in {'read-write' if shared else 'read-only'} mode: "
                           f"{e.strerror} ({e.errno})") from None
    if length < needed:
        raise RuntimeError(f"file <{filename}> size <{length}> is smaller than the required mapping size <{needed}>")
    if size == 0:
        return _make(np.empty(0, dt), requires_grad)
    return _make(np.memmap(filename, dtype=dt, mode="r+" if shared else "c", shape=(size,)).view(np.ndarray), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """An uninitialized tensor of shape `size` laid out with `stride` (in elements) over memory of its own."""
    size, stride = _size((size,), "empty_strided"), tuple(builtins.int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    xp, dt = module_for(device), _dt(dtype_argument(dtype, "empty_strided"))
    n = 1 + builtins.sum((sz - 1) * st for sz, st in zip(size, stride)) if all(size) else 0
    filled = _deterministic["mode"] and _deterministic["fill_uninitialized_memory"]
    memory = _known_fill(xp, n, dt) if filled else xp.empty(n, dtype=dt)
    return _make(xp.lib.stride_tricks.as_strided(memory, size, tuple(st * dt.itemsize for st in stride)), requires_grad)


def _writeable(array):
    """`array`, or a copy where numpy marks it read-only (np.asarray of a PIL image, np.frombuffer, a memmap
    opened 'r'): PyTorch shares it anyway and lets writes through; numpy would refuse them here."""
    if array.flags.writeable:
        return array
    warn_once("read-only array", "The given NumPy array is not writable, and PyTorch does not support non-writable "
              "tensors. This means writing to this tensor will result in undefined behavior. You may want to copy the "
              "array to protect its data or make it writable before converting it to a tensor. This type of warning "
              "will be suppressed for the rest of this program.")
    return array.copy()


def _filled(fill, size, dtype, device, requires_grad, name="empty"):
    if type(requires_grad) is not builtins.bool:
        _grad_flag(requires_grad, name)
    xp = module_for(device)
    dt = _dt(dtype)
    if recording.hook.recorder is not None and xp is np:
        # inside a minigrad.compile capture: a step that makes a new one at each replay, so that what the
        # call writes into it (a mask's entries, a one-hot's ones) starts from the same values each call,
        # and a leaf made here (requires_grad=True) is a new leaf each call, as eagerly
        return recording.hook.recorder.on_call(_fresh, fill, _size(size, name), dt, requires_grad)
    return _fresh(fill, _size(size, name), dt, requires_grad, xp)


def _known_fill(xp, size, dtype):
    """What PyTorch's deterministic mode fills uninitialized memory with: NaN, or the dtype's largest value."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return xp.full(size, np.nan, dtype=dtype)
    return xp.full(size, True if dtype.kind == "b" else np.iinfo(dtype).max, dtype=dtype)


def _fresh(fill, size, dtype, requires_grad, xp=np):
    if isinstance(fill, Tensor):  # (full's fill may be a 0-d tensor)
        fill = fill.array
    if isinstance(fill, str):  # "empty"
        if _deterministic["mode"] and _deterministic["fill_uninitialized_memory"]:
            return _make(_known_fill(xp, size, dtype), requires_grad)
        arr = xp.empty(size, dtype=dtype)
    elif fill == 0:
        arr = xp.zeros(size, dtype=dtype)
    elif fill == 1:
        arr = xp.ones(size, dtype=dtype)
    else:
        arr = xp.full(size, fill, dtype=dtype)
    return _make(arr, requires_grad)


@_size_keyword
def zeros(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A tensor of zeros of shape `size`."""
    if (layout is not None or pin_memory is not False) and placement_argument("zeros", layout, pin_memory, None):
        return _sparse_zeros(size, dtype, device, requires_grad, layout)
    return _filled(0, size, dtype_argument(dtype, "zeros"), device, requires_grad, "zeros")


@_size_keyword
def ones(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A tensor of ones of shape `size`."""
    if (layout is not None or pin_memory is not False) and placement_argument("ones", layout, pin_memory, "full"):
        return _sparse_zeros(size, dtype, device, requires_grad, layout)
    return _filled(1, size, dtype_argument(dtype, "ones"), device, requires_grad, "ones")


@_size_keyword
def empty(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """An uninitialised tensor of shape `size`."""
    if (layout is not None or pin_memory is not False) and placement_argument("empty", layout, pin_memory, None):
        return _sparse_zeros(size, dtype, device, requires_grad, layout)
    return _filled("empty", size, dtype_argument(dtype, "empty"), device, requires_grad, "empty")


def full(size, fill_value, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A tensor of shape `size` filled with `fill_value` (dtype inferred from it, as PyTorch does)."""
    if layout is not None or pin_memory is not False:
        placement_argument("full", layout, pin_memory, "full")
    dtype = dtype_argument(dtype, "full")
    if isinstance(fill_value, (builtins.complex, np.complexfloating)):
        fill_value = _complex_fill(fill_value, dtype)
        dtype = dtypes.default_complex() if dtype is None else dtype
    if dtype is None:  # (a 0-d tensor's or numpy integer's kind counts, as a Python number's: bool, int64, else float)
        kind = fill_value.array.dtype.kind if isinstance(fill_value, Tensor) else None
        dtype = np.bool_ if isinstance(fill_value, bool) or kind == "b" else \
            np.int64 if isinstance(fill_value, (builtins.int, np.integer)) or kind in ("i", "u") else None
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type_name(size)}")
    if not isinstance(fill_value, (builtins.int, builtins.float, builtins.bool, builtins.complex, np.number,
                                   np.bool_)) and not (hasattr(fill_value, "shape") and fill_value.shape == ()):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}")
    if dtype is not None:
        from .ops._util import checked_scalar

        fill_value = checked_scalar(fill_value, _dt(dtype))
    return _filled(fill_value, (tuple(size),), dtype, device, requires_grad, "full")


def _sparse_zeros(size, dtype, device, requires_grad, layout):
    """zeros/empty with a sparse layout: PyTorch's all-zero sparse tensor (no stored values)."""
    out = zeros(*size, dtype=dtype, device=device).to_sparse(layout=layout)
    return out.requires_grad_(True) if requires_grad else out


# the C++ types PyTorch's text names where a complex fill does not fit a real dtype
_FILL_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int32": "int"}


def _complex_fill(value, dtype):
    """A complex fill value for `dtype`: kept for a complex one (or none given), its real part for a real
    one where the imaginary part is 0 (bool: its truth), else PyTorch's refusal."""
    if dtype is None:
        return value
    npd = np.dtype(_dt(dtype))
    if npd.kind == "c":
        return value
    if npd.kind == "b":
        return bool(value)
    if value.imag != 0:
        name = _FILL_TYPES.get(npd.name, npd.name + "_t")
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value.real


# (layout= and memory_format= are accepted and change nothing: a *_like result here is dense and row-major,
# and a memory format is a layout of strides, never of values)
def _like(t, dtype, device, name, args=None):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(t)}")
    dtype = dtype_argument(dtype, name, args)
    return (dtype if dtype is not None else t.dtype), (device if device is not None else t.device)


def _own_array(input, dtype, device):
    """input's numpy array where a `*_like` takes everything from it (dtype, device, shape) outside a
    minigrad.compile capture: the usual `zeros_like(p)`, whose shape and dtype need no checks; else None."""
    a = input.array if type(input) is Tensor else None
    if type(a) is np.ndarray and dtype is None and device is None and recording.hook.recorder is None:
        return a
    return None


def zeros_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
               pin_memory=False):
    if (layout is not None or pin_memory is not False) and placement_argument("zeros_like", layout, pin_memory, None):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    a = _own_array(input, dtype, device)
    if a is not None:
        return _make(np.zeros(a.shape, dtype=a.dtype), requires_grad)
    dt, dev = _like(input, dtype, device, "zeros_like")
    return zeros(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
              pin_memory=False):
    if (layout is not None or pin_memory is not False) and placement_argument("ones_like", layout, pin_memory, "empty_strided"):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    a = _own_array(input, dtype, device)
    if a is not None:
        return _make(np.ones(a.shape, dtype=a.dtype), requires_grad)
    dt, dev = _like(input, dtype, device, "ones_like")
    return ones(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
               pin_memory=False):
    if (layout is not None or pin_memory is not False) and placement_argument("empty_like", layout, pin_memory, "empty_strided"):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    dt, dev = _like(input, dtype, device, "empty_like")
    return empty(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
              pin_memory=False):
    if (layout is not None or pin_memory is not False) and placement_argument("full_like", layout, pin_memory, "empty_strided"):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    dt, dev = _like(input, dtype, device, "full_like")
    return full(tuple(input.shape), fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


_ARANGE_OVERLOADS = (
    "Number end, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
    "None, bool pin_memory = False, bool requires_grad = False",
    "Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False",
    "Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout "
    "= None, torch.device device = None, bool pin_memory = False, bool requires_grad = False")


class _Unset:
    """A bound not given (a None given is a mistake: PyTorch's parser refuses it, where `arange(0, None)` read as
    `arange(0)` would be an empty range without a word)."""

    def __repr__(self):
        return "None"


_UNSET = _Unset()


def arange(start=_UNSET, end=_UNSET, step=1, dtype=None, device=None, requires_grad=False, layout=None,
           pin_memory=False):
    """Values from start (inclusive) to end (exclusive); int64 unless a bound is a float. `arange(end=n)` starts
    at 0, as PyTorch's."""
    if layout is not None or pin_memory is not False:
        placement_argument("arange", layout, pin_memory, "arange.start_out")
    if start is None or end is None:
        if end is _UNSET:
            raise TypeError("arange(): argument 'end' (position 1) must be Number, not NoneType")
        if start is _UNSET:  # (`arange(end=None)`)
            raise TypeError("arange(): argument 'end' must be Number, not NoneType")
        raise TypeError(invalid_arguments("arange", (start, end), _ARANGE_OVERLOADS))
    start, end = (None if v is _UNSET else v for v in (start, end))
    if start is None:
        if end is None:  # (PyTorch's parser: no bound at all, or keywords without one)
            if step == 1 and dtype is None and device is None and not requires_grad:
                raise TypeError(invalid_arguments("arange", (), _ARANGE_OVERLOADS))
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        start = 0
    given = (start,) if end is None else (start, end) if not isinstance(step, Tensor) and step == 1 else (start, end, step)
    dtype = dtype_argument(dtype, "arange", given)
    # a bound held in a 0-d tensor (`arange(lengths.max())`) counts as its number: an integer tensor's is an int
    if builtins.any(isinstance(v, Tensor) and v.numel() != 1 or isinstance(v, (str, bytes, list, tuple))
                    for v in given):  # (no Number: PyTorch's parser's words)
        if end is None:
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not {type_name(start)}")
        raise TypeError(invalid_arguments("arange", given, _ARANGE_OVERLOADS))
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if builtins.any(isinstance(v, complex) for v in (start, end, step)):  # (PyTorch reads its bounds as doubles: a
        if builtins.any(isinstance(v, complex) and v.imag for v in (start, end, step)):  # complex one is its real
            raise RuntimeError("value cannot be converted to type double without overflow")  # part, if it is all)
        start, end, step = (v.real if isinstance(v, complex) else v for v in (start, end, step))
    kind = None if dtype is None else np.dtype(_dt(dtype))
    if kind == np.bool_:
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if kind == np.int64 and builtins.all(map(math.isfinite, (start, end, step))):
        if builtins.int(step) == 0 != step:  # (PyTorch's int64 range truncates its bounds and step first)
            raise ValueError("step must be nonzero")
        start, end, step = builtins.int(start), builtins.int(end), builtins.int(step)
    if dtype is None:
        is_int = builtins.all(isinstance(v, (builtins.int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if is_int else None
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    xp = module_for(device)
    if recording.hook.recorder is not None and xp is np:  # inside a minigrad.compile capture: as `tensor`'s
        return recording.hook.recorder.on_call(_arange, start, end, step, _dt(dtype), requires_grad)
    return _arange(start, end, step, _dt(dtype), requires_grad, xp)


def _arange(start, end, step, dtype, requires_grad, xp=np):
    if np.dtype(dtype).kind == "f" and xp is np:  # PyTorch's CPU values: step * i + start, one fused
        n = math.ceil((end - start) / step)      # multiply-add in double, then rounded once to the dtype
        i = np.arange(n, dtype=np.float64)
        return _make(_fma64(np.full(n, float(step)), i, np.full(n, float(start))).astype(dtype, copy=False),
                     requires_grad)
    return _make(xp.arange(start, end, step, dtype=dtype), requires_grad)


def deprecated_range(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """PyTorch's deprecated `torch.range(start, end, step=1)`: from start to end *inclusive*, in the default
    float dtype unless dtype is given. It is minigrad.range (named otherwise here, to leave this module
    the builtin range)."""
    if end is None:  # (PyTorch's argument parser's text, before any warning)
        raise TypeError('range() missing 1 required positional arguments: "end"')
    dtype = dtype_argument(dtype, "range")
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = builtins.int((end - start) / step) + 1  # PyTorch's size: truncated, then the end itself
    values = start + step * np.arange(n, dtype=np.float64)  # (start + i*step, in double, as PyTorch's)
    return _make(module_for(device).asarray(values.astype(_dt(dtype))), requires_grad)


def _made_in_capture(device):
    """Inside a minigrad.compile capture, on the CPU: a factory's tensor is a step made again at each replay."""
    return recording.hook.recorder is not None and module_for(device) is np


def _space_overloads(base=""):
    keywords = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                "None, bool pin_memory = False, bool requires_grad = False")
    return tuple(f"{a} start, {b} end, int steps, {base}{keywords}"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number")))


def _steps_argument(fn, args):
    """PyTorch's argument parser's refusal of `steps` missing, or not an int (`steps=n / 2`, a bool)."""
    steps = args[2]
    if steps is None or isinstance(steps, (builtins.bool, builtins.float, np.bool_, np.floating)):
        raise TypeError(invalid_arguments(fn, [a for a in args if a is not None],
                                          _space_overloads("float base = 10.0, " if fn == "logspace" else "")))


def linspace(start, end, steps=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """`steps` evenly spaced values from start to end (an integer dtype truncates, as PyTorch)."""
    if layout is not None or pin_memory is not False:
        placement_argument("linspace", layout, pin_memory, "linspace.out")
    if type(steps) is not builtins.int:
        _steps_argument("linspace", (start, end, steps))
    dtype = dtype_argument(dtype, "linspace", (start, end, steps))
    if _made_in_capture(device):
        return recording.hook.recorder.on_call(_linspace, start, end, steps, _dt(dtype), None, requires_grad)
    return _linspace(start, end, steps, dtype, device, requires_grad)


def _linspace(start, end, steps, dtype, device, requires_grad):
    xp = module_for(device)
    if dtype is None and builtins.any(isinstance(v, (builtins.complex, np.complexfloating)) for v in (start, end)):
        dtype = dtypes.default_complex()  # (complex ends: the default complex dtype, as PyTorch infers it)
    dt = np.dtype(_dt(dtype))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dt.kind == "b":
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    if dt.kind == "c":  # each part its own real ramp, in the parts' dtype
        real = np.dtype(dt.char.lower())
        start, end = complex(start), complex(end)
        return _make(xp.asarray(_float_ramp(start.real, end.real, steps, real)
                                + 1j * _float_ramp(start.imag, end.imag, steps, real)).astype(dt), requires_grad)
    if dt.kind in "iub":
        # PyTorch's integer linspace: start + step*i for the first half, end - step*(steps-1-i) for
        # the rest, computed in double and truncated towards zero
        i = np.arange(steps, dtype=np.float64)
        step = (float(end) - float(start)) / (steps - 1) if steps > 1 else 0.0
        vals = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i)) if steps > 1 else i + start
        return _make(xp.asarray(np.trunc(vals).astype(dt)), requires_grad)
    return _make(xp.asarray(_float_ramp(start, end, steps, dt)), requires_grad)


def _two_product(a, b):
    """a * b as p + e exactly (Dekker's split; float64 arrays)."""
    p = a * b
    ah = a * 134217729.0
    ah = ah - (ah - a)
    al = a - ah
    bh = b * 134217729.0
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a, b, c):
    """a * b + c rounded once (as a fused multiply-add; float64 arrays)."""
    p, e = _two_product(a, b)
    s = p + c
    bb = s - p
    return s + (((p - (s - bb)) + (c - bb)) + e)


def _float_ramp(start, end, steps, dt):
    """PyTorch's CPU linspace in float dtype dt, bit for bit: step = (end - start) / (steps - 1) in dt, then
    start + step*i for the first steps // 2 values and end - step*(steps-1-i) for the rest, each one fused
    multiply-add rounded to dt (float32, float64); float16 rounds the product and the sum each to half."""
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    lo, hi = dt.type(start), dt.type(end)
    if steps <= 1:
        return np.full(steps, lo, dtype=dt)
    with np.errstate(over="ignore", invalid="ignore"):
        step = dt.type(dt.type(hi - lo) / dt.type(steps - 1))
        i = np.arange(steps)
        first = i < steps // 2
        k = np.where(first, i, steps - 1 - i)
        if dt == np.float16:
            prod = np.float16(step) * k.astype(np.float16)
            return np.where(first, lo + prod, hi - prod).astype(dt)
        mul = np.where(first, np.float64(step), -np.float64(step))
        add = np.where(first, np.float64(lo), np.float64(hi))
        if dt == np.float64:
            return _fma64(mul, k.astype(np.float64), add)
        # float32: step * k is exact in float64 (24 + 24 bits), so one rounding of the sum, then to float32
        return (mul * k + add).astype(dt)


def logspace(start, end, steps=None, base=10.0, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    """`steps` values base**e, the exponents e evenly spaced from start to end (an integer dtype truncates).

    As PyTorch: the exponents are stepped in double from both ends toward the middle (start + step*i
    for the first half, end - step*(steps-1-i) for the rest); each power is the C library's pow in
    double, then rounded (or truncated) to the dtype (PyTorch's float32 values for endpoints that are
    not integers may differ in the last place)."""
    if layout is not None or pin_memory is not False:
        placement_argument("logspace", layout, pin_memory, "logspace.out")
    if type(steps) is not builtins.int:
        _steps_argument("logspace", (start, end, steps) if base == 10.0 else (start, end, steps, base))
    dtype = dtype_argument(dtype, "logspace", (start, end, steps) if base == 10.0 else (start, end, steps, base))
    if _made_in_capture(device):
        return recording.hook.recorder.on_call(_logspace, start, end, steps, base, _dt(dtype), None, requires_grad)
    return _logspace(start, end, steps, base, dtype, device, requires_grad)


def _logspace(start, end, steps, base, dtype, device, requires_grad):
    xp = module_for(device)
    dt = _dt(dtype)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))  # 0-d tensors, as PyTorch
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    lo, hi = float(start), float(end)
    if dt.kind in "iub":
        lo, hi = float(math.trunc(lo)), float(math.trunc(hi))  # integer dtypes truncate the ends, as PyTorch
    i = np.arange(steps, dtype=np.float64)
    if steps > 1:
        step = (hi - lo) / (steps - 1)
        exps = np.where(i < steps // 2, lo + step * i, hi - step * ((steps - 1) - i))
    else:
        exps = np.full(steps, lo)  # one value: base**start (no step to take)
    # the C library's pow, as PyTorch's kernel calls it (numpy's own pow rounds some values differently)
    vals = np.array([math.pow(float(base), e) for e in exps.tolist()], dtype=np.float64)
    if dt.kind in "iu":
        vals = np.trunc(vals)
    return _make(xp.asarray(vals.astype(dt)), requires_grad)


def _window(name, shape, window_length, periodic, dtype, device, requires_grad, exact=False):
    """A window of `window_length` points: shape(n, N) at n = 0..N-1.
    periodic: the first window_length points of the symmetric window one longer (for spectral analysis).
    As PyTorch, the shapes are computed in the window's own float type, one rounded step at a time (its
    scalars rounded to that type first), so a float32 window is not a rounded float64 one; `exact` windows
    (kaiser's) are computed in double and rounded once."""
    if not isinstance(window_length, builtins.int) or isinstance(window_length, builtins.bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dt = _dt(dtype_argument(dtype, name, (window_length,)))
    if dt.kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={dtypes.cpp_name(dt)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        N = window_length + 1 if periodic else window_length
        work = np.dtype(np.float64) if exact else dt if dt in (np.float16, np.float32, np.float64) else np.dtype(np.float32)
        values = shape(np.arange(window_length, dtype=work), N, work.type)
    return _make(module_for(device).asarray(values.astype(dt)), requires_grad)


def _cos(x):
    # PyTorch's float cosine is within an ulp of the true one: the correctly rounded value is the nearest guess
    return np.cos(x.astype(np.float64)).astype(x.dtype)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", lambda n, N, s: s(alpha) - s(beta) * _cos(n * s(2 * math.pi / (N - 1))),
                   window_length, periodic, dtype, device, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """sin^2(pi n / (N - 1)), computed as the Hamming window with alpha = beta = 1/2 (as PyTorch does)."""
    return _window("hann_window", lambda n, N, s: s(0.5) - s(0.5) * _cos(n * s(2 * math.pi / (N - 1))),
                   window_length, periodic, dtype, device, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    def shape(n, N, s):
        x = n * s(math.pi / (N - 1))
        return (_cos(x * s(4)) * s(0.08) - _cos(x * s(2)) * s(0.5)) + s(0.42)

    return _window("blackman_window", shape, window_length, periodic, dtype, device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangle 1 - |2 n / (N - 1) - 1|: 2 n / (N - 1) rising, then 2 minus it."""
    def shape(n, N, s):
        x = n * s(2 / (N - 1))
        return np.where(n >= ((N - 1) >> 1) + 1, s(2) - x, x)

    return _window("bartlett_window", shape, window_length, periodic, dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """I0(beta sqrt(1 - ((n - m) / m)^2)) / I0(beta), m = (N - 1) / 2 and I0 the modified Bessel function."""
    def shape(n, N, s):
        m = (N - 1) / 2
        return np.i0(beta * np.sqrt(np.maximum(1 - ((n - m) / m) ** 2, 0.0))) / np.i0(beta)

    return _window("kaiser_window", shape, window_length, periodic, dtype, device, requires_grad, exact=True)


def eye(n, m=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    if layout is not None or pin_memory is not False:
        placement_argument("eye", layout, pin_memory, "eye.m_out")
    if not isinstance(n, (builtins.int, np.integer, Tensor)) or isinstance(n, builtins.bool):
        raise TypeError(f"eye(): argument 'n' (position 1) must be int, not {type_name(n)}")
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dtype = dtype_argument(dtype, "eye", (n,) if m is None else (n, m))
    if _made_in_capture(device):
        return recording.hook.recorder.on_call(_eye, n, m, _dt(dtype), requires_grad)
    return _eye(n, m, _dt(dtype), requires_grad, module_for(device))


def _eye(n, m, dtype, requires_grad, xp=np):
    return _make(xp.eye(n, m, dtype=dtype), requires_grad)


def _drawn(draw, generator, *args):
    """`draw(*args, generator)`; inside a minigrad.compile capture, a step that draws again at each replay
    from the generator as it is then (the default one, or the given one: the same object, which the guards
    check): fresh numbers, in eager's order, from eager's stream."""
    if recording.hook.recorder is not None:
        return recording.hook.recorder.on_call(draw, *args, generator)
    return draw(*args, generator)


@_size_keyword
def randn(*size, dtype=None, device=None, requires_grad=False, generator=None, layout=None, pin_memory=False):
    """Samples of N(0, 1) from the seeded default generator."""
    if layout is not None or pin_memory is not False:
        placement_argument("randn", layout, pin_memory, "normal_")
    return _drawn(_randn, generator, _size(size, "randn"), dtype_argument(dtype, "randn", size), device, requires_grad)


def _randn(size, dtype, device, requires_grad, generator):
    rng = generator or random.generator(module_for(device))
    return _make(random.floats(rng, "normal", size, _dt(dtype)), requires_grad)


@_size_keyword
def rand(*size, dtype=None, device=None, requires_grad=False, generator=None, layout=None, pin_memory=False):
    """Samples of U[0, 1) from the seeded default generator."""
    if layout is not None or pin_memory is not False:
        placement_argument("rand", layout, pin_memory, "uniform_")
    return _drawn(_rand, generator, _size(size, "rand"), dtype_argument(dtype, "rand", size), device, requires_grad)


def _rand(size, dtype, device, requires_grad, generator):
    rng = generator or random.generator(module_for(device))
    return _make(random.floats(rng, "uniform", size, _dt(dtype)), requires_grad)


_RANDINT_KEYWORDS = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                     "None, bool pin_memory = False, bool requires_grad = False")
_RANDINT_OVERLOADS = tuple(f"{bounds}, tuple of ints size, *, {generator}{_RANDINT_KEYWORDS}"
                           for bounds in ("int high", "int low, int high")
                           for generator in ("torch.Generator generator, ", ""))


def randint(low, high=None, size=None, dtype=None, device=None, generator=None, requires_grad=False):
    """Integers uniform in [low, high) (int64 by default; float ones, asked for with dtype, may require grad)."""
    if requires_grad is not False:
        _grad_flag(requires_grad, "randint")
        return _requiring_grad(randint(low, high, size, dtype, device, generator))
    if type(size) is tuple and type(low) is builtins.int and type(high) is builtins.int and dtype is None and device is None \
            and (generator is None or type(generator) is random.Generator and generator.device.type == "cpu") \
            and (not recording.recorders_made or recording.hook.recorder is None):
        # the usual call, `randint(0, n, (B,), generator=g)` on the CPU, outside a capture: the checks and the
        # draw of the general path below, in fewer calls (a small model draws a batch so at every step)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        rng = (generator or random.default_generator)._rng
        for s in size:  # (plain sizes, the usual, taken as they are: _size's checks for the others)
            if type(s) is not builtins.int or s < 0:
                size = _randint_size(size, (low, high, size))
                break
        return Tensor._wrap(random.integers(rng, low, high, size))
    given = [a for a in (low, high, size) if a is not None]
    dtype = dtype_argument(dtype, "randint", tuple(given))
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        if isinstance(low, (builtins.float, np.floating)):
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not {type_name(low)}")
        low, high, size = 0, low, high
    if size is None and isinstance(high, (builtins.int, np.integer)):  # (randint(10, 3): the size as an int)
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type_name(high)}")
    if size is None or not isinstance(size, (tuple, list)) or isinstance(low, (tuple, list)) \
            or builtins.any(isinstance(b, (builtins.float, np.floating)) for b in (low, high)):
        raise TypeError(invalid_arguments("randint", given, _RANDINT_OVERLOADS))
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _drawn(_randint, generator, low, high, _randint_size(size, given), dtype, device)


def _randint_size(size, given):
    """randint's size as a tuple of ints, refused as PyTorch's parser does: with low and high `given` too, a bad first
    entry fits none of its overloads; else the size is the last argument given."""
    try:
        return _size((size,), "randint")
    except TypeError as e:
        if len(given) == 3 and "at pos 0" in str(e):
            raise TypeError(invalid_arguments("randint", given, _RANDINT_OVERLOADS)) from None
        raise TypeError(str(e).replace("(position 1)", f"(position {len(given)})")) from None


def _randint(low, high, size, dtype, device, generator):
    rng = generator or random.generator(module_for(device))
    return Tensor._wrap(random.integers(rng, low, high, size).astype(_dt(dtype, dtypes.int64), copy=False))  # (int64: no copy)


_RANDPERM_OVERLOADS = tuple(o.replace("tuple of ints size", "int n") for o in RAND_OVERLOADS)


def randperm(n, dtype=None, device=None, generator=None, layout=None, pin_memory=False, requires_grad=False):
    try:
        n = int_argument(n, "randperm", "'n' (position 1)")
    except TypeError:  # (with keywords, PyTorch's parser tries both overloads: its text lists them, and the
        # keywords, here those not left at their defaults, latest first as it prints them)
        given = {k: v for k, v in (("requires_grad", requires_grad), ("pin_memory", pin_memory), ("layout", layout),
                                   ("generator", generator), ("device", device), ("dtype", dtype))
                 if v is not (False if k in ("requires_grad", "pin_memory") else None)}
        if not given:
            raise
        raise TypeError(invalid_arguments("randperm", [n], _RANDPERM_OVERLOADS, given)) from None
    if layout is not None or pin_memory is not False:
        placement_argument("randperm", layout, pin_memory, "randperm.generator_out")
    out = _drawn(_randperm, generator, n, dtype_argument(dtype, "randperm", (n,)), device)
    if requires_grad and not out.is_floating_point():  # (the factory's text, not requires_grad_'s)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return out.requires_grad_(True) if requires_grad else out


def _randperm(n, dtype, device, generator):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    rng = generator or random.generator(module_for(device))
    return Tensor._wrap(rng.permutation(n).astype(_dt(dtype, dtypes.int64)))


def randn_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
               pin_memory=False, generator=None):
    if (layout is not None or pin_memory is not False) and placement_argument("randn_like", layout, pin_memory, "empty_strided"):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    dt, dev = _like(input, dtype, device, "randn_like", (input,))
    return randn(input.shape, dtype=dt, device=dev, requires_grad=requires_grad, generator=generator)


def rand_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
              pin_memory=False, generator=None):
    if (layout is not None or pin_memory is not False) and placement_argument("rand_like", layout, pin_memory, "empty_strided"):
        return _sparse_zeros((tuple(input.shape),), dtype or input.dtype, device, requires_grad, layout)
    dt, dev = _like(input, dtype, device, "rand_like", (input,))
    return rand(input.shape, dtype=dt, device=dev, requires_grad=requires_grad, generator=generator)


def randint_like(input, low=0, high=None, dtype=None, device=None, requires_grad=False, layout=None,
                 memory_format=None):
    """Integers uniform in [low, high) (or [0, low) with one bound) in input's shape, dtype and device."""
    dt, dev = _like(input, dtype, device, "randint_like", (input, low) if high is None else (input, low, high))
    if high is None:
        low, high = 0, low
    if dt.is_complex:
        from .ops.complex import refuse

        refuse("randint_like", Tensor._wrap(np.empty(0, dt.np)))
    out = randint(low, high, tuple(input.shape), dtype=dt, device=dev)
    return _requiring_grad(out) if requires_grad else out


def bernoulli(input, p=None, generator=None):
    """1 with probability `input` (or `p`) element by element, else 0, in input's dtype (no gradient)."""
    return _drawn(_bernoulli, generator, input, p)


def _bernoulli(input, p, generator):
    if input.array.dtype.kind == "c":
        from .ops.complex import refuse

        refuse("bernoulli_" if isinstance(p, (int, float)) else "bernoulli_tensor", input)
    rng = generator or random.generator(module_for(input.device))
    probs = input.array if p is None else p
    random.check_probability(probs)
    return Tensor._wrap((rng.random(input.array.shape) < probs).astype(input.array.dtype))


def normal(mean, std=1.0, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Samples of N(mean, std^2): mean and std tensors (broadcast) or numbers (then `size` gives the shape).
    Written as mean + std * N(0, 1), so the samples are differentiable in mean and std, as PyTorch's."""
    dtype = dtype_argument(dtype, "normal", tuple(a for a in (mean, std, size) if a is not None))
    random.check_std(std.array if isinstance(std, Tensor) else std)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        shape = tuple(like.shape)
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            from .ops._util import broadcast_shapes

            shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
        noise = randn(shape, dtype=like.dtype, device=like.device, generator=generator)
        return mean + std * noise
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments: with a float mean and std, "
                        "size= is needed")
    out = randn(size, dtype=dtype, device=device, generator=generator)
    with _no_grad():
        out = out * std + mean
    return _requiring_grad(out) if requires_grad else out


def _no_grad():
    from .autograd import no_grad

    return no_grad()


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of the number s, in the default float dtype unless `dtype` (PyTorch's rule)."""
    dtype = dtype_argument(dtype, "scalar_tensor") or dtypes.default_float
    if isinstance(s, Tensor) and s.array.ndim == 0:  # (a 0-d tensor is a number here: no copy-construct warning)
        s = s.item()
    if not isinstance(s, (builtins.int, builtins.float, builtins.complex, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type_name(s)}")
    if isinstance(s, (builtins.complex, np.complexfloating)) and dtype.np.kind != "c":
        return full((), s, dtype=dtype, device=device, requires_grad=requires_grad)  # (full's refusal of its imaginary part)
    return tensor(s, dtype=dtype, device=device, requires_grad=requires_grad)


def asarray(obj, dtype=None, device=None, copy=None, requires_grad=False):
    """`obj` as a tensor, sharing memory where it can (as_tensor's rule), or a copy when copy=True."""
    dtype = dtype_argument(dtype, "asarray")
    if copy is False and dtype is not None and hasattr(obj, "dtype") and dtypes.get_dtype(obj.dtype) != dtype:
        raise ValueError(f"can't alias tensor with dtype '{dtypes.get_dtype(obj.dtype)._legacy[:-6]}' into dtype "
                         f"'{dtypes.get_dtype(dtype)._legacy[:-6]}'.")
    t = _copied(obj, dtype, device, False) if copy else as_tensor(obj, dtype=dtype, device=device)
    return _requiring_grad(t) if requires_grad else t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of shape `size` laid out in memory in the order physical_layout gives its dims
    (outermost first): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is channels-last."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    physical = empty(*[size[d] for d in order], dtype=dtype, device=device)
    return physical.permute(*np.argsort(order).tolist()).requires_grad_(requires_grad)
