"""dtypes with PyTorch's names, and PyTorch's type-promotion rule.

A `dtype` is a thin named wrapper over a numpy dtype, so that `t.dtype` prints
`minigrad.float32` as PyTorch prints `torch.float32`, while the arrays stay plain
numpy/cupy arrays.
"""
import builtins

import numpy as np

from .device import array_module


class dtype:
    """A tensor element type: `minigrad.float32`, `float64`, `int64`, `bool`, ..."""

    __module__ = "minigrad"  # (PyTorch's torch.dtype)

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "itemsize", "_legacy")

    def __init__(self, name, np_dtype, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.itemsize = self.np.itemsize
        self._legacy = legacy  # PyTorch's legacy type name, used in its error texts

    def __repr__(self):
        return f"minigrad.{self.name}"

    @property
    def is_signed(self):
        """Whether the dtype holds negative numbers (floats and signed integers; not uint8, not bool)."""
        return self.is_floating_point or self.np.kind in "ic"

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self.name == other.name  # (one object per dtype; aliases are the same object)
        try:
            return self.np == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.np)


float16 = dtype("float16", np.float16, "HalfTensor")
float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
int8 = dtype("int8", np.int8, "CharTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
uint16 = dtype("uint16", np.uint16, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, "UInt64Tensor")
int32 = dtype("int32", np.int32, "IntTensor")
int64 = dtype("int64", np.int64, "LongTensor")
bool_ = dtype("bool", np.bool_, "BoolTensor")
complex64 = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, "ComplexDoubleTensor")
half, float, double, long, int, short = float16, float32, float64, int64, int32, int16  # PyTorch aliases
cfloat, cdouble = complex64, complex128


class _NoArrayDtype(dtype):
    """A PyTorch dtype numpy has no array type for (bfloat16): it can be named, compared, put in a dict
    and asked about (`finfo`), but anything that would make an array of it raises one clear line."""

    __slots__ = ("_instead",)

    def __init__(self, name, itemsize, legacy, instead):
        self.name, self.itemsize, self._legacy = name, itemsize, legacy
        self.is_floating_point, self.is_complex = True, False
        self._instead = instead

    @property
    def np(self):  # (every array-making path asks a dtype for its numpy dtype: this is where they all fail)
        raise TypeError(f"{self.name} tensors are not supported by minigrad (numpy has no {self.name}): "
                        f"use {self._instead} instead")

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return hash(self.name)


bfloat16 = _NoArrayDtype("bfloat16", 2, "BFloat16Tensor", "float32 or float16")


_CLASSIC = {"ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "HalfTensor", "FloatTensor",
            "DoubleTensor"}  # (the types PyTorch's legacy tensor classes name; the later ones only a backend type)


def type_text(dt):
    """A tensor type as PyTorch's error texts name it (toString of its options): the legacy class for the
    classic types (minigrad.FloatTensor), the CPU backend type for the others (CPUBoolType, CPUComplexFloatType)."""
    if dt._legacy in _CLASSIC:
        return f"minigrad.{dt._legacy}"
    return f"CPU{dt._legacy[:-6]}Type"


def bfloat16_round(a):
    """`a` rounded to bfloat16's 8 significant bits (to nearest, ties to even), held in float32: where PyTorch
    computes in bfloat16, minigrad, with no bfloat16 arrays, rounds float32 results to it."""
    xp = array_module(a)
    bits = xp.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & 0xFFFF0000
    return bits.view(np.float32)

_BY_NP = {d.np: d for d in (float16, float32, float64, int8, uint8, int16, uint16, uint32, uint64, int32, int64, bool_,
                            complex64, complex128)}
_BY_NAME = {d.name: d for d in _BY_NP.values()}
_BY_NAME.update(half=half, float=float32, double=float64, long=int64, int=int32, short=int16, bfloat16=bfloat16,
                cfloat=complex64, cdouble=complex128)

default_float = float32


def get_dtype(d):
    """Normalize a minigrad dtype, numpy dtype, Python type or name to a minigrad dtype."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str):
        if d in _BY_NAME:
            return _BY_NAME[d]
        raise TypeError(f"unknown dtype {d!r}")
    if d is builtins.float:  # (Python's float is a double: float64 whatever the default, as PyTorch maps it)
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    if d is builtins.complex:
        return complex128
    try:
        return _BY_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}") from None


def from_numpy_dtype(npd):
    """The minigrad dtype of an array's numpy dtype."""
    try:
        return _BY_NP[npd]
    except KeyError:
        raise TypeError(f"arrays of dtype {npd} are not supported (use float32, float64, complex64, int64 or "
                        "bool)") from None


def default_complex():
    """The complex dtype of the default float (complex64 for float32): a Python complex number's."""
    return complex128 if default_float is float64 else complex64


# C++'s names of the dtypes, as PyTorch's error messages print them ("expected ... float, but got double")
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "uint16": "short unsigned int",
              "uint32": "unsigned int", "uint64": "long unsigned int",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def cpp_name(npd):
    """numpy dtype `npd`'s name in PyTorch's C++ messages ("float", "long int"; numpy's name otherwise)."""
    name = np.dtype(npd).name
    return _CPP_NAMES.get(name, name)


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # promotion moves up these categories only


def _category(npd):
    return _CATEGORY[npd.kind]


def _is_wide_unsigned(npd):  # PyTorch's "barebones" uint16/32/64: promoted only with themselves and floats
    return npd.kind == "u" and npd.itemsize > 1


def promote_types(a, b):
    """PyTorch's promote_types: like numpy's, except that a type of a lower category (bool < integer <
    floating < complex) never widens one of a higher: int64 with float32 is float32 and with complex64
    complex64, where numpy says float64 and complex128. (float64 with complex64 is complex128 in both.)"""
    if a == b:
        return a
    if (_is_wide_unsigned(a) and b.kind != "f") or (_is_wide_unsigned(b) and a.kind != "f"):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{_BY_NP[a]._legacy[:-6]} and {_BY_NP[b]._legacy[:-6]}")
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb and (ca < 2 or cb < 2):
        return a if ca > cb else b
    return np.promote_types(a, b)


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority operand (0-dim tensor, then Python scalar)
    # only changes the result when it is of a higher category.
    if higher is None:
        return lower
    if lower is None or _CATEGORY[lower.kind] <= _CATEGORY[higher.kind]:
        return higher
    return promote_types(higher, lower)  # (float64 with a complex scalar: complex128)


def result_type(*operands):
    """PyTorch's promotion: dimensioned tensors, then 0-dim tensors, then Python scalars.

    `float32 tensor * 2.0` stays float32; `int64 tensor * 2.0` becomes float32 (the default
    float), not float64 as numpy would make it.
    """
    dim = zero = scalar = None
    for x in operands:
        data = getattr(x, "array", None)
        if data is not None and hasattr(data, "dtype"):
            if data.ndim:
                dim = data.dtype if dim is None else promote_types(dim, data.dtype)
            else:
                zero = data.dtype if zero is None else promote_types(zero, data.dtype)
        else:
            t = type(x)
            if t is builtins.bool:  # (numpy's bool_, no Python bool, counts as a float, as in PyTorch)
                s = np.dtype(np.bool_)
            elif isinstance(x, (builtins.int, np.integer)):
                s = np.dtype(np.int64)
            elif isinstance(x, complex):
                s = default_complex().np
            else:
                s = default_float.np
            scalar = s if scalar is None else promote_types(scalar, s)
    return _combine(dim, _combine(zero, scalar))
