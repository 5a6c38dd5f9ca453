"""The restricted unpickler behind `minigrad.load`: it reads a pickle and never runs code it was not told to.

Python's own unpickler calls whatever a file names (`os.system`, `builtins.eval`, any class), so a
checkpoint could run anything. This one interprets the opcodes itself, as PyTorch's weights_only
unpickler does, and a GLOBAL in the file resolves only to:

- minigrad's reconstructors for PyTorch's names (`torch._utils._rebuild_tensor_v2`, `torch.FloatStorage`,
  `torch.float32`, `torch.Size`, `torch.device`, `collections.OrderedDict`, `_codecs.encode`, ...), so
  minigrad and PyTorch read each other's files, and numpy arrays, dtypes and scalars through its own
  checks (no object arrays);
- the globals the user allowed (`minigrad.serialization.add_safe_globals` / `safe_globals`), which are
  called as pickle would call them: the user vouches for them;
- with weights_only=False only: classes that are `nn.Module` subclasses, found in a module that is
  already imported (a module is never imported for a file). They are rebuilt as `object.__new__(cls)`
  with the saved attributes put into `__dict__`: no `__init__`, `__reduce__`, `__setstate__` or
  `__new__` of theirs runs. The functions of minigrad's ops and nn.functional may be referenced as
  values (an attribute holding `F.gelu`), never called while loading. The standard library's
  record and value types that training scripts keep in checkpoints (`argparse.Namespace` of the
  command line, `pathlib` paths, `datetime` values, `defaultdict(list)`, `range`, ...) are rebuilt
  too, as pickle rebuilds them, from plain values only (numbers, strings, bytes, tuples): their
  constructors then only store them. The builtin types are only named, as a defaultdict's factory.

Anything else is refused with one line naming the global and the way to allow it. Dict keys and set
members must be plain values (numbers, strings, bytes, None, tuples of them) or objects of minigrad's
or the user's allowed types, so hashing runs no foreign `__hash__` either.
"""
import _compat_pickle
import argparse
import collections
import datetime
import math
import pathlib
import pickle
import struct
import sys
import threading
import types
from pickle import UnpicklingError

import numpy as np

from . import dtypes
from .device import device as Device
from .tensor import Size, Tensor

# modules never called into, even when a user lists one of their globals (as PyTorch)
BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_ALLOW_HOW = ("Please use `minigrad.serialization.add_safe_globals([{0}])` or the "
              "`minigrad.serialization.safe_globals([{0}])` context manager to allowlist this global if you "
              "trust this class/function.")


def unsupported_global(full, hint=""):
    shown = full[len("builtins."):] if full.startswith("builtins.") else full  # `[eval]` reads as Python
    return UnpicklingError(f"Weights only load failed: Unsupported global: GLOBAL {shown} was not an allowed global "
                           f"by default. {_ALLOW_HOW.format(shown)}{hint}")


def _fail(what):
    return UnpicklingError(f"Weights only load failed: {what}")


# ---- the values PyTorch's names stand for ------------------------------------------------------------
class StorageType:
    """`torch.FloatStorage` and friends (dtype set), or `torch.storage.UntypedStorage` (bytes)."""

    def __init__(self, name, np_dtype):
        self.name, self.dtype = name, None if np_dtype is None else np.dtype(np_dtype)

    def __repr__(self):
        return f"torch.{self.name}"


class Unsupported:
    """A PyTorch name minigrad knows but cannot represent (bfloat16, complex): an error where it is used."""

    def __init__(self, full, why):
        self.full, self.why = full, why

    def error(self):
        return _fail(f"{self.full}: {self.why}")


class Storage:
    """One storage of a checkpoint: a 1-d array (typed, or uint8 for an untyped storage) on its device."""

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


_TensorMarker = type("Tensor", (), {"__repr__": lambda self: "torch.Tensor"})()
_ParameterMarker = type("Parameter", (), {"__repr__": lambda self: "torch.nn.parameter.Parameter"})()


def _ints(seq, what):
    if not isinstance(seq, (tuple, list)) or not all(type(v) is int and v >= 0 for v in seq):
        raise _fail(f"bad tensor {what} {seq!r}")
    return tuple(seq)


def _tensor_view(storage, offset, size, stride, dtype=None):
    """The array `size`/`stride` describe from element `offset` of `storage`, checked to lie inside it."""
    if isinstance(storage, Unsupported):
        raise storage.error()
    if not isinstance(storage, Storage):
        raise _fail(f"a tensor's storage must come from the checkpoint, got {type(storage).__name__}")
    a = storage.array
    if dtype is not None:  # an untyped storage (bytes) read as `dtype`
        if a.dtype != np.uint8 or a.size % dtype.itemsize:
            raise _fail(f"a storage of {a.size} bytes cannot hold {dtype} elements")
        a = a.view(dtype)
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if type(offset) is not int or offset < 0 or len(size) != len(stride):
        raise _fail(f"bad tensor layout (offset {offset!r}, size {size}, stride {stride})")
    if 0 in size:  # no element to reach: the strides are kept as saved, as PyTorch keeps them
        return np.lib.stride_tricks.as_strided(a[:0], size, tuple(s * a.itemsize for s in stride)) if isinstance(
            a, np.ndarray) else a[:0].reshape(size)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= a.size:
        raise _fail(f"a tensor of size {list(size)} and stride {list(stride)} from offset {offset} reaches past its "
                    f"storage of {a.size} elements")
    overlapping = any(s == 0 and n > 1 for n, s in zip(size, stride))  # an expanded tensor: writes would alias
    item = a.itemsize
    tricks = sys.modules[type(a).__module__.split(".")[0]].lib.stride_tricks  # numpy's or cupy's
    kwargs = {"writeable": not overlapping} if isinstance(a, np.ndarray) else {}
    return tricks.as_strided(a[offset:], size, tuple(s * item for s in stride), **kwargs)


def _tensor(array, requires_grad):
    if not isinstance(requires_grad, bool):
        raise _fail(f"bad requires_grad {requires_grad!r}")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._wrap(array, requires_grad=requires_grad and array.dtype.kind in "fc")


def _check_hooks(hooks):
    if not (hooks is None or (isinstance(hooks, dict) and not hooks)):
        raise _fail("tensors with backward hooks are not loaded (hooks are code)")


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(_tensor_view(storage, storage_offset, size, stride), False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _check_hooks(backward_hooks)
    return _tensor(_tensor_view(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    _check_hooks(backward_hooks)
    if isinstance(dtype, Unsupported):
        raise dtype.error()
    if not isinstance(dtype, dtypes.dtype):
        raise _fail(f"bad tensor dtype {dtype!r}")
    if isinstance(dtype, dtypes._NoArrayDtype):  # a dtype minigrad can name but holds no arrays of
        raise Unsupported(f"torch.{dtype.name}", _NO_DTYPE).error()
    return _tensor(_tensor_view(storage, storage_offset, size, stride, dtype.np), requires_grad)


def _parameter(data, requires_grad):
    from nn.parameter import Parameter  # nn sits above the engine: imported only when a file holds Parameters

    if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
        raise _fail("a Parameter must be rebuilt from a tensor and a bool")
    return Parameter(data, requires_grad=requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    _check_hooks(backward_hooks)
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    if state:
        raise _fail("Parameters with extra attributes are not loaded")
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _rebuild_from_type_v2(func, new_type, args, state):
    # PyTorch's route for tensors with attributes or of subclasses: only plain Tensors and Parameters here
    if func not in _TENSOR_REBUILDERS or new_type not in (_TensorMarker, _ParameterMarker) or state:
        raise _fail("only plain Tensors and Parameters are loaded (not tensor subclasses or tensors with attributes)")
    t = func(*args)
    return _parameter(t, t.requires_grad) if new_type is _ParameterMarker else t


_TENSOR_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3)


def _size(*args):
    if len(args) > 1 or (args and not isinstance(args[0], (tuple, list))):
        raise _fail("torch.Size takes one tuple of ints")
    return Size(_ints(args[0] if args else (), "Size"))


def _device(kind, index=None):
    if not isinstance(kind, str) or not (index is None or type(index) is int):
        raise _fail(f"bad device {kind!r}, {index!r}")
    return Device(kind if index is None else f"{kind}:{index}")


def _codecs_encode(obj, encoding="utf-8"):
    # how protocol 2 spells bytes; the codec registry is not consulted (it can import modules)
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise _fail(f"_codecs.encode only of a str as latin1/utf-8/ascii, got {type(obj).__name__} {encoding!r}")
    return obj.encode(encoding)


def _plain_dtype(d):
    if not isinstance(d, np.dtype) or d.hasobject:
        raise _fail(f"numpy arrays of Python objects are not loaded (dtype {d!r})")
    return d


def _np_dtype(spec, align=False, copy=True):
    if not isinstance(spec, str):
        raise _fail(f"bad numpy dtype {spec!r}")
    return _plain_dtype(np.dtype(spec, bool(align), True))  # always a copy: its state is set next


def _np_reconstruct(cls, shape, typecode):
    if cls is not np.ndarray:
        raise _fail(f"numpy's _reconstruct only of numpy.ndarray, got {cls!r}")
    return np.empty(0, dtype=np.uint8)  # its contents come from BUILD (numpy's own __setstate__)


def _np_scalar(dtype, data=None):
    _plain_dtype(dtype)
    if not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise _fail(f"bad numpy scalar of {dtype}")
    return np.frombuffer(data, dtype)[0]


def _np_frombuffer(buf, dtype, shape, order):
    _plain_dtype(dtype)
    shape = _ints(shape, "shape")
    if not isinstance(buf, (bytes, bytearray)) or len(buf) != math.prod(shape) * dtype.itemsize or order not in "CF":
        raise _fail("bad numpy array buffer")
    return np.frombuffer(buf, dtype).reshape(shape, order=order).copy()


def _set_of(kind):
    def make(items=()):
        items = list(items)
        for v in items:
            _check_key(v)
        return kind(items)
    return make


def _ordered_dict(items=()):
    items = list(items.items() if isinstance(items, dict) else items)
    for k, _ in items:
        _check_key(k)
    return collections.OrderedDict(items)


def _counter(items=()):
    if not isinstance(items, dict):
        raise _fail("collections.Counter only from a dict")
    for k in items:
        _check_key(k)
    return collections.Counter(items)


def _complex(real=0.0, imag=0.0):
    if not all(type(v) in (int, float) for v in (real, imag)):
        raise _fail("complex() of two numbers only")
    return complex(real, imag)


def _bytearray(source=b"", encoding=None):
    if encoding is None and isinstance(source, bytes):
        return bytearray(source)
    return bytearray(_codecs_encode(source, encoding))


def _slice(*args):
    if not 1 <= len(args) <= 3 or not all(v is None or type(v) is int for v in args):
        raise _fail("slice() of ints or None only")
    return slice(*args)


_NO_DTYPE = "minigrad has no such dtype (convert the tensors, e.g. with .float(), before saving)"


def defaults():
    """PyTorch's names (and the builtins and numpy names pickles use) -> what minigrad makes of them.

    Callables here are minigrad's own checked reconstructors; the rest are values."""
    table = {
        "collections.OrderedDict": _ordered_dict,
        "collections.Counter": _counter,
        "builtins.set": _set_of(set),
        "builtins.frozenset": _set_of(frozenset),
        "builtins.complex": _complex,
        "builtins.bytearray": _bytearray,
        "builtins.slice": _slice,
        "_codecs.encode": _codecs_encode,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.Size": _size,
        "torch.device": _device,
        "torch.Tensor": _TensorMarker,
        "torch.nn.parameter.Parameter": _ParameterMarker,
        "torch.storage.UntypedStorage": StorageType("UntypedStorage", None),
    }
    for d in dtypes._BY_NP.values():
        table[f"torch.{d.name}"] = d
        if d.name != "uint16":  # PyTorch has no typed storage for uint16: such tensors use an untyped one
            storage = d._legacy.replace("Tensor", "Storage")
            table[f"torch.{storage}"] = StorageType(storage, d.np)
    table["torch.cfloat"], table["torch.cdouble"], table["torch.bfloat16"] = (dtypes.complex64, dtypes.complex128,
                                                                            dtypes.bfloat16)
    for name in ("complex32", "BFloat16Storage", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
        table[f"torch.{name}"] = Unsupported(f"torch.{name}", _NO_DTYPE)
    for core in ("numpy.core", "numpy._core"):
        table[f"{core}.multiarray._reconstruct"] = _np_reconstruct
        table[f"{core}.multiarray.scalar"] = _np_scalar
        table[f"{core}.numeric._frombuffer"] = _np_frombuffer
    table["numpy.dtype"] = _np_dtype
    table["numpy.ndarray"] = np.ndarray
    return table


DEFAULTS = defaults()


# a defaultdict's default factory: named in the file, never called while loading
FACTORIES = {f"builtins.{c.__name__}": c for c in (list, dict, set, int, float, str, tuple)}


def _empty_bytes(*args):
    # protocol 2 pickles b"" as bytes() (other bytes as _codecs.encode): PyTorch's full unpickler reads it
    if args:
        raise _fail("bytes() without arguments only")
    return b""


def _defaultdict(factory=None, *rest):
    if rest or not (factory is None or any(factory is c for c in FACTORIES.values())):
        raise _fail("defaultdict() with a builtin container or number type as its default factory only")
    return collections.defaultdict(factory)


# weights_only=False: standard value types scripts keep in checkpoints. Each is rebuilt only from plain
# values (numbers, strings, bytes, tuples of them, or values of these types rebuilt before): its
# constructor then stores them and calls nothing of another object's
STDLIB_DATA = {f"{c.__module__}.{c.__qualname__}": c for c in (
    argparse.Namespace, types.SimpleNamespace, range,
    pathlib.PurePath, pathlib.PurePosixPath, pathlib.PureWindowsPath, pathlib.Path, pathlib.PosixPath,
    pathlib.WindowsPath,
    datetime.date, datetime.time, datetime.datetime, datetime.timedelta, datetime.timezone)}
_STDLIB_VALUES = tuple(STDLIB_DATA.values())
_STDLIB_IDS = {id(v) for v in _STDLIB_VALUES}
STDLIB_DATA["builtins.Ellipsis"] = Ellipsis
STDLIB_DATA["collections.defaultdict"] = _defaultdict  # (it checks its factory itself)
STDLIB_DATA["builtins.bytes"] = _empty_bytes


def _plain_value(v):
    """A number, string, bytes or None, a tuple of such, or a standard value type's value built before."""
    return type(v) in _PLAIN or isinstance(v, _STDLIB_VALUES) or (type(v) is tuple and all(map(_plain_value, v)))


def _check_stdlib_args(func, args):
    if id(func) in _STDLIB_IDS and not all(map(_plain_value, args)):
        raise _fail(f"{_name(func)} is rebuilt from plain values (numbers, strings, bytes, tuples) only")
CALLABLE_DEFAULTS = {id(v) for v in DEFAULTS.values() if callable(v) and not isinstance(v, (type, dtypes.dtype))}

_PLAIN = (str, int, float, bool, type(None), bytes, complex)
_OWN_KEYS = (dtypes.dtype, Device, Tensor, np.generic)  # (numpy scalars hash in numpy's C code)
_this_load = threading.local()  # .user_types: the allowed classes of the load running in this thread


def _user_types():
    return getattr(_this_load, "user_types", ())


def _check_key(k):
    t = type(k)
    if t in _PLAIN or isinstance(k, _OWN_KEYS) or t in _user_types():
        return
    if t in (tuple, frozenset, Size):
        for v in k:
            _check_key(v)
        return
    raise _fail(f"a dict key or set member of type {t.__module__}.{t.__qualname__} (only plain values and "
                "allowed types are hashed)")


def _lookup_loaded(module, name):
    """`module.name` from an already imported module, read from the namespaces (no import, no __getattr__)."""
    obj = sys.modules.get(module)
    if obj is None:
        return None, f"its module {module} is not imported (minigrad.load never imports modules: import it first)"
    for part in name.split("."):
        if isinstance(obj, types.ModuleType):
            ns = object.__getattribute__(obj, "__dict__")
        elif isinstance(obj, type):
            ns = type.__getattribute__(obj, "__dict__")  # past any metaclass __getattribute__
        else:
            return None, f"{module} has no {name}"
        if part not in ns:
            return None, f"{module} has no {name}"
        obj = ns[part]
    return obj, None


def _module_class():
    nn = sys.modules.get("nn")  # a Module subclass can exist only once nn is imported
    return getattr(getattr(nn, "module", None), "Module", None)


_OP_MODULES = ("nn.functional", "nn._functional.", "nn.init", "minigrad.ops.", "minigrad.special")


def _tensor_op(obj):
    """A function of minigrad's ops or nn.functional (an attribute such as `self.act = F.gelu`): tensor math,
    harmless whatever it is called with, so a module may hold a reference to it."""
    mod = getattr(obj, "__module__", None) or ""
    return callable(obj) and not isinstance(obj, type) and any(mod == m or mod.startswith(m) for m in _OP_MODULES)


class Unpickler:
    """Reads one pickle from `file`; `persistent_load(pid)` supplies storages; `user_globals` maps
    "module.name" -> object for what the user allowed; `modules` allows nn.Module classes (weights_only=False)."""

    def __init__(self, file, persistent_load=None, user_globals=None, modules=False, encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.persistent_load = persistent_load
        self.user = {**STDLIB_DATA, **(user_globals or {})} if modules else dict(user_globals or {})
        self.user_ids = {id(v) for v in self.user.values()}
        self.modules = modules
        self.module_classes = set()  # ids of the Module classes this file named
        self.encoding = encoding
        self.memo = {}

    # ---- globals ----------------------------------------------------------------------------
    def find_class(self, module, name):  # pickle.Unpickler's hook name; here an allow-list, never an import
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names, as pickle maps them
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module.split(".")[0] in BLOCKED_MODULES:
            raise _fail(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self.user:
            return self.user[full]
        if full in DEFAULTS:
            return DEFAULTS[full]
        if self.modules and full in FACTORIES:  # (a value: REDUCE and NEWOBJ refuse to call it)
            return FACTORIES[full]
        base = _module_class()
        if self.modules:
            obj, why = _lookup_loaded(module, name)
            if obj is None and why.startswith("its module"):
                raise unsupported_global(full, f" ({why})")
            if isinstance(obj, type) and base is not None and issubclass(obj, base) and obj.__new__ is object.__new__:
                self.module_classes.add(id(obj))
                return obj
            if obj is not None and _tensor_op(obj):
                return obj  # a reference (never called: REDUCE and NEWOBJ refuse it)
            raise unsupported_global(full, " (weights_only=False loads nn.Module subclasses and standard value types such as argparse.Namespace too, never other code)")
        obj, _ = _lookup_loaded(module, name)
        hint = ""
        if isinstance(obj, type) and base is not None and issubclass(obj, base):
            hint = (" It is an nn.Module subclass: minigrad.load(f, weights_only=False) rebuilds whole modules "
                    "without running their code.")
        raise unsupported_global(full, hint)

    # ---- the stack ----------------------------------------------------------------------------
    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def load(self):
        self.metastack, self.stack = [], []
        read = self.read
        before = _user_types()
        _this_load.user_types = tuple(v for v in self.user.values() if isinstance(v, type))
        try:
            while True:
                key = read(1)
                if not key:
                    raise EOFError("the pickle ends before its STOP")
                op = _OPS.get(key[0])
                if op is None:
                    raise _fail(f"Unsupported operand {key[0]} ({pickle_opcode_name(key[0])})")
                if op(self) is _STOP:
                    return self.stack.pop()
        finally:
            _this_load.user_types = before

    def line(self):
        data = self.readline()
        if not data.endswith(b"\n"):
            raise EOFError("the pickle ends inside an opcode")
        return data[:-1]

    def take(self, n):
        data = self.read(n)
        if len(data) != n:
            raise EOFError("the pickle ends inside an opcode")
        return data

    def push(self, v):
        self.stack.append(v)


_STOP = object()
_OPS = {}


def _op(code):
    def register(fn):
        _OPS[code[0] if isinstance(code, bytes) else code] = fn
        return fn
    return register


def pickle_opcode_name(code):
    for op in __import__("pickletools").opcodes:
        if op.code.encode("latin-1") == bytes([code]):
            return op.name
    return "unknown"


def _unpack(fmt, data):
    return struct.unpack(fmt, data)[0]


@_op(pickle.PROTO)
def _proto(u):
    proto = u.take(1)[0]
    if not 2 <= proto <= 5:
        raise _fail(f"pickle protocol {proto} (2 to 5 are read)")


@_op(pickle.FRAME)
def _frame(u):
    u.take(8)  # a frame only groups opcodes for buffering


@_op(pickle.STOP)
def _stop(u):
    return _STOP


@_op(pickle.MARK)
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


@_op(pickle.POP)
def _pop(u):
    if u.stack:
        u.stack.pop()
    else:
        u.pop_mark()


@_op(pickle.POP_MARK)
def _pop_mark(u):
    u.pop_mark()


@_op(pickle.DUP)
def _dup(u):
    u.push(u.stack[-1])


for _code, _value in ((pickle.NONE, None), (pickle.NEWTRUE, True), (pickle.NEWFALSE, False)):
    _OPS[_code[0]] = (lambda v: lambda u: u.push(v))(_value)
for _code, _make in ((pickle.EMPTY_LIST, list), (pickle.EMPTY_DICT, dict), (pickle.EMPTY_SET, set),
                     (pickle.EMPTY_TUPLE, tuple)):
    _OPS[_code[0]] = (lambda m: lambda u: u.push(m()))(_make)


@_op(pickle.BININT)
def _binint(u):
    u.push(_unpack("<i", u.take(4)))


@_op(pickle.BININT1)
def _binint1(u):
    u.push(u.take(1)[0])


@_op(pickle.BININT2)
def _binint2(u):
    u.push(_unpack("<H", u.take(2)))


@_op(pickle.LONG1)
def _long1(u):
    u.push(pickle.decode_long(u.take(u.take(1)[0])))


@_op(pickle.LONG4)
def _long4(u):
    n = _unpack("<i", u.take(4))
    if n < 0:
        raise _fail("LONG4 with a negative length")
    u.push(pickle.decode_long(u.take(n)))


@_op(pickle.BINFLOAT)
def _binfloat(u):
    u.push(_unpack(">d", u.take(8)))


def _text(u, n):
    u.push(str(u.take(n), "utf-8", "surrogatepass"))


_OPS[pickle.SHORT_BINUNICODE[0]] = lambda u: _text(u, u.take(1)[0])
_OPS[pickle.BINUNICODE[0]] = lambda u: _text(u, _unpack("<I", u.take(4)))
_OPS[pickle.BINUNICODE8[0]] = lambda u: _text(u, _unpack("<Q", u.take(8)))
_OPS[pickle.SHORT_BINBYTES[0]] = lambda u: u.push(u.take(u.take(1)[0]))
_OPS[pickle.BINBYTES[0]] = lambda u: u.push(u.take(_unpack("<I", u.take(4))))
_OPS[pickle.BINBYTES8[0]] = lambda u: u.push(u.take(_unpack("<Q", u.take(8))))
_OPS[pickle.BYTEARRAY8[0]] = lambda u: u.push(bytearray(u.take(_unpack("<Q", u.take(8)))))


def _py2_string(u, n):
    data = u.take(n)  # a Python 2 str: bytes, or text in the encoding asked for (latin1 for numpy's data)
    u.push(data if u.encoding == "bytes" else data.decode(u.encoding, "strict"))


_OPS[pickle.SHORT_BINSTRING[0]] = lambda u: _py2_string(u, u.take(1)[0])
_OPS[pickle.BINSTRING[0]] = lambda u: _py2_string(u, _unpack("<i", u.take(4)))


@_op(pickle.TUPLE)
def _tuple(u):
    u.push(tuple(u.pop_mark()))


@_op(pickle.TUPLE1)
def _tuple1(u):
    u.stack[-1] = (u.stack[-1],)


@_op(pickle.TUPLE2)
def _tuple2(u):
    u.stack[-2:] = [(u.stack[-2], u.stack[-1])]


@_op(pickle.TUPLE3)
def _tuple3(u):
    u.stack[-3:] = [(u.stack[-3], u.stack[-2], u.stack[-1])]


@_op(pickle.LIST)
def _list(u):
    u.push(u.pop_mark())


def _target_list(u):
    target = u.stack[-1]
    if type(target) is not list:
        raise _fail(f"can only append to lists, not to {type(target).__name__}")
    return target


@_op(pickle.APPEND)
def _append(u):
    v = u.stack.pop()
    _target_list(u).append(v)


@_op(pickle.APPENDS)
def _appends(u):
    items = u.pop_mark()
    _target_list(u).extend(items)


_DICTS = (dict, collections.OrderedDict, collections.Counter, collections.defaultdict)


def _set_items(u, items):
    target = u.stack[-1]
    if type(target) not in _DICTS and type(target) not in _user_types():
        raise _fail(f"can only set items of dicts, not of {type(target).__name__}")
    for k, v in items:
        _check_key(k)
        target[k] = v


@_op(pickle.DICT)
def _dict(u):
    items = u.pop_mark()
    u.push({})
    _set_items(u, zip(items[::2], items[1::2]))


@_op(pickle.SETITEM)
def _setitem(u):
    v = u.stack.pop()
    k = u.stack.pop()
    _set_items(u, [(k, v)])


@_op(pickle.SETITEMS)
def _setitems(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise _fail("SETITEMS with an odd number of items")
    _set_items(u, zip(items[::2], items[1::2]))


@_op(pickle.ADDITEMS)
def _additems(u):
    items = u.pop_mark()
    target = u.stack[-1]
    if type(target) is not set:
        raise _fail(f"can only add items to sets, not to {type(target).__name__}")
    for v in items:
        _check_key(v)
    target.update(items)


@_op(pickle.FROZENSET)
def _frozenset(u):
    items = u.pop_mark()
    for v in items:
        _check_key(v)
    u.push(frozenset(items))


@_op(pickle.GLOBAL)
def _global(u):
    module = u.line().decode("utf-8")
    name = u.line().decode("utf-8")
    u.push(u.find_class(module, name))


@_op(pickle.STACK_GLOBAL)
def _stack_global(u):
    name = u.stack.pop()
    module = u.stack.pop()
    if type(name) is not str or type(module) is not str:
        raise _fail("STACK_GLOBAL needs two strings")
    u.push(u.find_class(module, name))


def _name(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


@_op(pickle.REDUCE)
def _reduce(u):
    args = u.stack.pop()
    func = u.stack[-1]
    if id(func) not in CALLABLE_DEFAULTS and id(func) not in u.user_ids:
        raise _fail(f"REDUCE of {_name(func)}: minigrad.load calls only its own reconstructors and the globals "
                    "allowed with minigrad.serialization.add_safe_globals")
    if type(args) is not tuple:
        raise _fail("REDUCE with arguments that are not a tuple")
    _check_stdlib_args(func, args)
    u.stack[-1] = func(*args)


def _new(u, cls, args, kwargs):
    if id(cls) in u.user_ids and isinstance(cls, type):
        _check_stdlib_args(cls, tuple(args) + tuple(kwargs.values()))
        return cls.__new__(cls, *args, **kwargs)
    if id(cls) in u.module_classes:
        if args or kwargs:
            raise _fail(f"{_name(cls)} is rebuilt without constructor arguments")
        return object.__new__(cls)
    raise _fail(f"NEWOBJ of {_name(cls)}: only nn.Module subclasses (with weights_only=False) and classes allowed "
                "with minigrad.serialization.add_safe_globals are created")


@_op(pickle.NEWOBJ)
def _newobj(u):
    args = u.stack.pop()
    cls = u.stack.pop()
    u.push(_new(u, cls, args, {}))


@_op(pickle.NEWOBJ_EX)
def _newobj_ex(u):
    kwargs = u.stack.pop()
    args = u.stack.pop()
    cls = u.stack.pop()
    u.push(_new(u, cls, args, kwargs))


def _set_attributes(inst, state):
    """pickle's default BUILD: a dict into __dict__, and (dict, slots) into the slots."""
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for table in (state, slots):
        if table is not None and (not isinstance(table, dict) or not all(type(k) is str for k in table)):
            raise _fail(f"bad state for {type(inst).__name__}")
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        object.__setattr__(inst, k, v)


@_op(pickle.BUILD)
def _build(u):
    state = u.stack.pop()
    inst = u.stack[-1]
    t = type(inst)
    if t is np.ndarray:  # numpy's own __setstate__, once the state is checked to hold no Python objects
        if not (isinstance(state, tuple) and len(state) in (4, 5) and isinstance(state[-1], (bytes, bytearray))):
            raise _fail("numpy arrays of Python objects are not loaded")
        _plain_dtype(state[-3])
        inst.__setstate__(state)
    elif isinstance(inst, np.dtype):
        inst.__setstate__(state)
        _plain_dtype(inst)
    elif t is collections.OrderedDict:  # a state dict's `_metadata`
        _set_attributes(inst, state)
    elif id(t) in u.module_classes:  # never the class's own __setstate__
        _set_attributes(inst, state)
    elif id(t) in u.user_ids:  # allowed by the user: as pickle builds it
        setstate = getattr(t, "__setstate__", None)
        if setstate is not None:
            setstate(inst, state)
        else:
            _set_attributes(inst, state)
    else:
        raise _fail(f"BUILD of a {t.__module__}.{t.__qualname__}: only numpy arrays, OrderedDicts, nn.Module "
                    "subclasses (weights_only=False) and allowed classes are built")


def _memo_put(u, i):
    if i < 0:
        raise _fail("negative memo index")
    u.memo[i] = u.stack[-1]


def _memo_get(u, i):
    if i not in u.memo:
        raise _fail(f"memo index {i} was never stored")
    u.push(u.memo[i])


_OPS[pickle.BINPUT[0]] = lambda u: _memo_put(u, u.take(1)[0])
_OPS[pickle.LONG_BINPUT[0]] = lambda u: _memo_put(u, _unpack("<I", u.take(4)))
_OPS[pickle.MEMOIZE[0]] = lambda u: _memo_put(u, len(u.memo))
_OPS[pickle.PUT[0]] = lambda u: _memo_put(u, int(u.line()))
_OPS[pickle.BINGET[0]] = lambda u: _memo_get(u, u.take(1)[0])
_OPS[pickle.LONG_BINGET[0]] = lambda u: _memo_get(u, _unpack("<I", u.take(4)))
_OPS[pickle.GET[0]] = lambda u: _memo_get(u, int(u.line()))


@_op(pickle.BINPERSID)
def _binpersid(u):
    pid = u.stack.pop()
    if u.persistent_load is None:
        raise _fail("a persistent id in a pickle that has no storages")
    u.push(u.persistent_load(pid))
