"""The memory a tensor views, as PyTorch's `Tensor.storage()` shows it: every element of the array that owns
the memory, those outside the view too (makemore's lecture prints `a.storage()` to show that `view` only
reinterprets one row of numbers). A storage shares the memory: writing into it writes into the tensors."""
import numpy as np

from . import dtypes
from .device import device_of

warned = False  # Tensor.storage()'s deprecation warning, given once


def _memory(array):
    """The array owning `array`'s memory (the root of its views), as a flat array of bytes."""
    root = array
    while getattr(root, "base", None) is not None and hasattr(root.base, "__array_interface__"):
        root = root.base
    if root.flags.f_contiguous and not root.flags.c_contiguous:  # (column-major memory, from_numpy's: its
        root = root.T  # transpose is row-major over the same bytes in the same order)
    elif not root.flags.c_contiguous:  # (a view of memory numpy does not own, strided: only what is seen)
        root = np.ascontiguousarray(array)
    return root.reshape(-1).view(np.uint8)


class TypedStorage:
    """The elements of a tensor's memory, in `dtype`, one dimension."""

    def __init__(self, data=0, dtype=None):  # (a size or a list of numbers: a new storage of them, zero-filled)
        if dtype is None:
            dtype = getattr(type(self), "dtype", None) or dtypes.default_float
        if not hasattr(data, "__array_interface__") and not hasattr(data, "__cuda_array_interface__"):
            data = np.zeros(data, dtype.np) if isinstance(data, int) else np.array(data, dtype.np).reshape(-1)
        self._data, self.dtype = data, dtype

    def __len__(self):
        return self._data.size

    def size(self):
        return self._data.size

    def element_size(self):
        return self._data.itemsize

    def nbytes(self):
        return self._data.nbytes

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    @property
    def device(self):
        return device_of(self._data)

    def tolist(self):
        return self._data.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(self._data[i], self.dtype)
        return self._data[i].item()

    def __setitem__(self, i, value):
        self._data[i] = value

    def fill_(self, value):
        self._data[...] = value
        return self

    def _header(self):
        return f"{type(self).__module__}.{type(self).__name__}(dtype={self.dtype}, device={self.device})"

    def __repr__(self):  # each element as its Python number, one a line, then what it is
        return " " + "\n ".join(str(v) for v in self.tolist()) + f"\n[{self._header()} of size {len(self)}]"

    __str__ = __repr__


class UntypedStorage(TypedStorage):
    """The bytes of a tensor's memory."""

    def __init__(self, data=0):
        if isinstance(data, int):
            data = np.zeros(data, np.uint8)
        self._data, self.dtype = data, None

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(self._data[i])
        return self._data[i].item()

    def _header(self):
        return f"{type(self).__module__}.{type(self).__name__}(device={self.device})"


def typed_storage(array):
    data = _memory(array)
    if data.size % array.itemsize:  # (bytes that do not make whole elements: only the view's own)
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return TypedStorage(data.view(array.dtype), dtypes.from_numpy_dtype(array.dtype))


def untyped_storage(array):
    return UntypedStorage(_memory(array))


class _LegacyStorageType(type):
    """PyTorch's per-dtype storage classes (FloatStorage, LongStorage, ...): a tensor's storage() is a TypedStorage
    and counts as an instance of the class of its dtype, as `isinstance(t.storage(), torch.FloatStorage)` does."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and type(obj) is not UntypedStorage and obj.dtype == cls.dtype


_LEGACY_NAMES = {}  # "FloatStorage" -> its dtype


def _legacy_storage_names():
    if not _LEGACY_NAMES:
        for dt in dtypes._BY_NP.values():
            _LEGACY_NAMES[dt._legacy[:-6] + "Storage"] = dt
    return _LEGACY_NAMES


_LEGACY_CLASSES = {}


def legacy_storage_class(name):
    """The class `name` (FloatStorage, ...), made on first use; None for a name that is not one."""
    dt = _legacy_storage_names().get(name)
    if dt is None:
        return None
    if name not in _LEGACY_CLASSES:
        _LEGACY_CLASSES[name] = _LegacyStorageType(name, (TypedStorage,), {"dtype": dt, "__module__": "minigrad"})
    return _LEGACY_CLASSES[name]


def storage_type(dt):
    return legacy_storage_class(dt._legacy[:-6] + "Storage")
