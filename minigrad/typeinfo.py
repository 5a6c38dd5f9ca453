"""PyTorch's dtype helpers: finfo, iinfo, promote_types, result_type, can_cast and the default
floating dtype (get_default_dtype / set_default_dtype)."""
import numpy as np

from . import dtypes
from ._warn_once import warn_once
from .tensor import dtype_argument


class finfo:
    """Machine limits of a floating dtype (`minigrad.finfo(minigrad.float32).eps`)."""

    def __init__(self, type=None):
        d = dtype_argument(type, "finfo", arg="type", position=1) or dtypes.default_float
        if d.is_complex:  # (a complex dtype's limits are its parts')
            d = dtypes.get_dtype(np.finfo(d.np).dtype)
        if not d.is_floating_point:
            raise TypeError("minigrad.finfo() requires a floating point input type. "
                            "Use minigrad.iinfo to handle 'minigrad.finfo'")
        if d is dtypes.bfloat16:  # (numpy has no bfloat16: PyTorch's values; float32's exponent, 8 bits of mantissa)
            self.bits, self.eps, self.max, self.min = 16, 2.0**-7, 3.3895313892515355e38, -3.3895313892515355e38
            self.tiny = self.smallest_normal = 2.0**-126
            self.resolution = 0.01
        else:
            info = np.finfo(d.np)
            self.bits, self.eps, self.max, self.min = info.bits, float(info.eps), float(info.max), float(info.min)
            self.tiny = self.smallest_normal = float(info.tiny)
            self.resolution = 10.0 ** -info.precision  # (PyTorch's: a Python float, not numpy's rounded one)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (`minigrad.iinfo(minigrad.int64).max`)."""

    def __init__(self, type):
        d = dtype_argument(type, "iinfo", arg="type", position=1, required=True)
        if d.is_floating_point or d.is_complex:
            raise TypeError("minigrad.iinfo() requires an integer input type. "
                            "Use minigrad.finfo to handle 'minigrad.iinfo'")
        if d.np == np.bool_:
            raise TypeError("minigrad.bool is not supported by minigrad.iinfo")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = d.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # (C++ stream style, as PyTorch)


def promote_types(type1, type2):
    """The dtype PyTorch promotes two dtypes to (int64 with float32 is float32)."""
    type1 = dtype_argument(type1, "promote_types", arg="type1", position=1, required=True)
    type2 = dtype_argument(type2, "promote_types", arg="type2", position=2, required=True)
    return dtypes.from_numpy_dtype(dtypes.promote_types(type1.np, type2.np))


def result_type(tensor1, tensor2):
    """The dtype of an elementwise op on these operands (tensors or numbers), by PyTorch's rules."""
    return dtypes.from_numpy_dtype(dtypes.result_type(tensor1, tensor2))


def can_cast(from_, to):
    """Whether PyTorch casts `from_` to `to` in place (no float to int, no int to bool)."""
    f = dtype_argument(from_, "can_cast", arg="from_", position=1, required=True).np
    t = dtype_argument(to, "can_cast", arg="to", position=2, required=True).np
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    return order[f.kind] <= order[t.kind]


def get_default_dtype():
    return dtypes.default_float


def set_default_dtype(d):
    """The dtype of float tensors made from Python floats (float32 unless changed; float64 allowed)."""
    if not isinstance(d, dtypes.dtype):  # (not get_dtype: numpy reads None as float64)
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    d.np  # noqa: B018 (bfloat16's clear error now, rather than at every tensor made after)
    dtypes.default_float = d


def set_default_tensor_type(t):
    """PyTorch's deprecated way to set the default float dtype: a legacy type (`minigrad.DoubleTensor`) or its
    name ('torch.DoubleTensor'). Warns once a process, as PyTorch."""
    from .legacy_types import BY_NAME, LegacyTensorType

    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "minigrad") or name not in BY_NAME:
            raise ModuleNotFoundError(f"No module named '{t}'")  # (PyTorch imports the dotted name)
        t = BY_NAME[name]
    if not isinstance(t, LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(t.dtype)
