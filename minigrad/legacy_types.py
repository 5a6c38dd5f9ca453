"""PyTorch's legacy tensor types, `torch.FloatTensor` and its kin: constructors of one dtype
(`torch.LongTensor([1, 2])`, `torch.FloatTensor(2, 3)`), and checks and conversions by type
(`isinstance(t, torch.FloatTensor)`, `t.type(torch.LongTensor)`). Every tensor is a `Tensor`; these
name a (dtype, CPU) pair, as PyTorch's do. And the argument rules the legacy constructors share with
`torch.Tensor(...)` and `x.new(...)` (`legacy_new`): sizes, data, a tensor to alias, and PyTorch's errors for
the rest, kept here so that tensor.py stays the tensor itself.
"""

import sys
from builtins import float as builtins_float
from builtins import int as builtins_int

import numpy as np

from . import dtypes
from .factory import _cast_array, _check_nesting, _check_numbers, _leaves, _numpy_source, _size, _wrapped, _tensors_as_numbers, _writeable
from .ops._util import type_name
from .tensor import Size, Tensor


def legacy_from_numpy(array):
    """PyTorch's `torch.Tensor(array)`: the array itself when it has the default dtype (shared, as from_numpy
    shares it), else a copy in the default dtype; refused where PyTorch's sharing would refuse it."""
    _numpy_source(array)
    if array.dtype != dtypes.default_float.np:
        return _cast_array(array, dtypes.default_float.np)
    return _writeable(array)


_NEW_OVERLOADS = (  # PyTorch's legacy constructor's overloads as its argument errors list them, with the names
    # those errors match keywords against (PyTorch reads a name as the word after the last space: "None")
    ("(*, torch.device device = None)", ("*", "None")),
    ("(torch.Storage storage)", ("storage",)),
    ("(Tensor other)", ("other",)),
    ("(tuple of ints size, *, torch.device device = None)", ("size", "*", "None")),
    ("(object data, *, torch.device device = None)", ("data", "*", "None")),
)


def _invalid_new_args(args, kwargs):
    """PyTorch's TypeError for arguments no overload of the legacy constructor takes: every overload, and under
    each one with as many parameters as were given, the keywords it lacks or else the arguments, each marked
    as not matching ("!list of [int]!")."""
    def described(x):
        if type(x) in (list, tuple):
            inner = ", ".join(type_name(e) for e in x) + ("," if type(x) is tuple and len(x) == 1 else "")
            return f"{type(x).__name__} of " + (f"({inner})" if type(x) is tuple else f"[{inner}]")
        return type_name(x)

    got = [type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in kwargs.items()]
    text = f"new() received an invalid combination of arguments - got ({', '.join(got)}{', ' if kwargs and not args else ''}), " \
           "but expected one of:\n"
    for overload, names in _NEW_OVERLOADS:
        text += f" * {overload}\n"
        if len(args) + len(kwargs) == len(names):
            unmatched = [k for k in kwargs if k not in names[len(names) - len(kwargs):]]
            if unmatched:
                text += f"      didn't match because some of the keywords were incorrect: {', '.join(unmatched)}\n"
            else:
                marked = [f"!{described(a)}!" for a in args] + [f"!{k}={described(v)}!" for k, v in kwargs.items()]
                text += f"      didn't match because some of the arguments have invalid types: ({', '.join(marked)})\n"
    return TypeError(text)


def _options(npd):
    return (f"TensorOptions(dtype={dtypes.cpp_name(npd)}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _is_index(x):  # (a 0-d integer array too: PyTorch reads `Tensor(np.array(3))` as a size, by __index__)
    return type(x) is builtins_int or isinstance(x, np.integer) or (
        isinstance(x, (Tensor, np.ndarray)) and x.ndim == 0 and x.dtype.kind in "iu")


def legacy_new(dtype, args, kwargs, device="cpu", method=False, typed=True):
    """What PyTorch's legacy constructors make of their arguments (`torch.Tensor(...)`, `torch.LongTensor(...)`,
    `x.new(...)`), in `dtype`, with PyTorch's errors: an array, or the tensor given (`torch.Tensor(t)`, an
    alias, refused unless of `dtype` where `typed`: all but torch.Tensor's). Sizes (`(2, 3)`, a Size, `size=(2, 3)`) give zeros of that shape (PyTorch's are uninitialised),
    a sequence its values converted, nothing an empty tensor. `device`: the one the constructor makes on."""
    if not args and "data" in kwargs:  # (`torch.Tensor(data=[1, 2])`)
        kwargs = dict(kwargs)
        args = (kwargs.pop("data"),)
    where, device = kwargs.get("device"), str(device).split(":")[0]
    if set(kwargs) - {"device", "size"} or "size" in kwargs and (args or type(kwargs["size"]) not in (tuple, list, Size)):
        raise _invalid_new_args(args, kwargs)
    data = args[0] if args else None
    if len(args) == 1 and isinstance(data, Tensor):
        if where is not None:
            raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  Use "
                               "torch.as_tensor(...) instead." if method else
                               "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
                               "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.")
        if typed and data.array.dtype != dtype.np:
            raise TypeError(f"expected {_options(dtype.np)} (got {_options(data.array.dtype)})")
        return data
    if where is not None and str(where).split(":")[0] != device:
        raise RuntimeError(f"legacy constructor expects device type: {device} but device type: "
                           f"{str(where).split(':')[0]} was passed")
    if not args:
        return np.zeros(_size((kwargs["size"],), "new"), dtype=dtype.np) if "size" in kwargs else np.empty((0,), dtype.np)
    if _is_index(data) or len(args) == 1 and type(data) is Size:  # sizes: `Tensor(2, 3)`, `Tensor(np.int64(3))`
        return np.zeros(_size(args, "new"), dtype=dtype.np)
    if len(args) > 1:
        raise _invalid_new_args(args, kwargs)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if type(data) is np.ndarray:
        return legacy_from_numpy(data) if dtype is dtypes.default_float else _numpy_source(data).astype(dtype.np, copy=False)
    if isinstance(data, (np.generic, dict)) or not hasattr(type(data), "__getitem__"):
        raise TypeError(f"new(): data must be a sequence (got {type_name(data)})")
    first = data
    while type(first) in (list, tuple) and first:
        first = first[0]
    if isinstance(first, str):  # (PyTorch takes the first element's nesting for the shape: a string's too)
        raise ValueError(f"too many dimensions '{type(first).__name__}'")
    leaves = _leaves(data)
    for kind in leaves:
        if not issubclass(kind, (builtins_int, builtins_float, np.number, np.bool_, np.ndarray, Tensor)):
            raise TypeError(f"must be real number, not {kind.__name__}")
    if any(issubclass(kind, Tensor) for kind in leaves):  # one number per tensor, as tensor()'s
        data = _tensors_as_numbers(data, dtype.np.kind in "iub")
    _check_numbers(data, np.dtype(dtype.np), leaves)
    try:
        return np.array(data, dtype=dtype.np)
    except OverflowError:
        return _wrapped(data, np.dtype(dtype.np))
    except ValueError:
        _check_nesting(data, np.dtype(dtype.np))  # (nested sequences of unequal lengths: PyTorch's error, naming the dim)
        raise


sys.modules["minigrad.tensor"].legacy_new = legacy_new  # (`minigrad.tensor` names the factory function)


class LegacyTensorType(type):
    """The class of `FloatTensor` and its kin: calling one makes a Tensor of its dtype, and a tensor is
    an instance of it when it has that dtype on the CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.array.dtype == cls.dtype.np and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        data = legacy_new(cls.dtype, args, kwargs)
        return data if isinstance(data, Tensor) else Tensor._wrap(data)  # (`torch.FloatTensor(t)`: t itself)

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy(dtype):
    return LegacyTensorType(dtype._legacy, (), {"dtype": dtype, "__doc__": f"Tensors of {dtype.name} on the CPU."})


FloatTensor, DoubleTensor, HalfTensor = _legacy(dtypes.float32), _legacy(dtypes.float64), _legacy(dtypes.float16)
LongTensor, IntTensor, ShortTensor = _legacy(dtypes.int64), _legacy(dtypes.int32), _legacy(dtypes.int16)
CharTensor, ByteTensor, BoolTensor = _legacy(dtypes.int8), _legacy(dtypes.uint8), _legacy(dtypes.bool_)
BY_NAME = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                   CharTensor, ByteTensor, BoolTensor)}
