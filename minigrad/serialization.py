"""`minigrad.save(obj, f)` / `minigrad.load(f)`: PyTorch's checkpoint files, written and read without running code.

The file is PyTorch's own format, so PyTorch and minigrad read each other's: a zip archive holding
`archive/data.pkl` (the object, pickled with protocol 2), one record `archive/data/<key>` per
storage (the raw little-endian bytes, each aligned to 64 bytes in the file as PyTorch aligns them),
and `byteorder`, `version`, `.format_version`, `.storage_alignment`, `.data/serialization_id`.
A tensor is pickled as PyTorch pickles one: `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, OrderedDict())`, its storage a persistent id `('storage', torch.FloatStorage,
key, location, numel)`; a Parameter as `torch._utils._rebuild_parameter(tensor, requires_grad, ...)`,
dtypes, `Size` and `device` as `torch.float32`, `torch.Size`, `torch.device`. Tensors that view one
array (tied weights, slices) share one storage, as in PyTorch (saving a small slice of a big array
saves the whole array: clone it first). Anything else (dicts, lists, numbers, numpy arrays, a whole
Module) is pickled as pickle pickles it.

Loading never runs code from the file: `_weights_only_unpickler.py` interprets the pickle and
allows only minigrad's reconstructors, plain containers and numpy data, the globals allowed with
`add_safe_globals` / `safe_globals`, and, with `weights_only=False`, whole modules whose classes
(nn.Module subclasses) are already imported and the standard library's value types (argparse.Namespace,
paths, dates, ...); it refuses anything else (`os.system`, `eval`, ...)
with one line naming the global. Zip records carry CRC-32s, so corrupted data is found; a
truncated, foreign or non-checkpoint file gives one `CheckpointError` line naming it. Files that
`nn.save` wrote (safetensors) load here too.

This module is part of the engine: it imports nothing of nn (Parameters and Modules are handled
by functions that reach nn only when a file holds them).
"""
import contextlib
import io
import os
import pickle
import sys
import types
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from . import _weights_only_unpickler as _wou
from . import dtypes
from ._atomic_files import atomic_write, temporaries  # noqa: F401 (minigrad.serialization's, as before)
from .device import cuda_is_available, to_device
from .device import device as Device
from .tensor import Size, Tensor

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "CheckpointError", "default_restore_location", "SourceChangeWarning"]

DEFAULT_PROTOCOL = 2  # PyTorch's
_ALIGNMENT = 64  # PyTorch aligns each storage record to 64 bytes in the file, so it can be memory-mapped
_ZIP_MAGIC = b"PK\x03\x04"
_LEGACY_MAGIC = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19."  # the first pickle of a pre-1.6 PyTorch file


class CheckpointError(RuntimeError):
    """A file that is not a readable checkpoint (truncated, corrupted, or of another format)."""


# ---- the globals a user allows ---------------------------------------------------------------------
_safe = []  # objects, or (object, "module.name") pairs


def _check_safe_list(items, fn):
    if not isinstance(items, (list, tuple, set)):
        raise TypeError(f"{fn} expects a list of classes/functions, got {type(items).__name__}")
    for g in items:
        if isinstance(g, tuple) and not (len(g) == 2 and isinstance(g[1], str)):
            raise TypeError(f"{fn}: a tuple entry must be (object, 'module.name'), got {g!r}")
    return list(items)


def add_safe_globals(safe_globals):
    """Allow `minigrad.load` to rebuild these classes / call these functions (`(obj, "module.name")`
    names one saved under another path). Only for globals you trust: loading will call them."""
    for g in _check_safe_list(safe_globals, "add_safe_globals"):
        if g not in _safe:
            _safe.append(g)


def get_safe_globals():
    """The globals allowed with add_safe_globals (and any `safe_globals` block now running)."""
    return list(_safe)


def clear_safe_globals():
    _safe.clear()


class safe_globals:
    """`with minigrad.serialization.safe_globals([MyConfig]):` the globals are allowed inside the block only."""

    def __init__(self, safe_globals):
        self.globals = _check_safe_list(safe_globals, "safe_globals")

    def __enter__(self):
        self.before = list(_safe)
        add_safe_globals(self.globals)
        return self

    def __exit__(self, *exc):
        _safe[:] = self.before
        return False


def _user_globals():
    """"module.name" -> object for the allowed globals."""
    out = {}
    for g in _safe:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{getattr(g, '__qualname__', g.__name__)}")
        out[name] = obj
    return out


# ---- writing -----------------------------------------------------------------------------------------
class _Global:
    """A global named in the file as PyTorch names it (`torch._utils._rebuild_tensor_v2`): written
    without being looked up, so no torch is needed to write it."""

    __slots__ = ("module", "name")
    _made = {}

    def __call__(self, *args):  # (pickle asks a reduce's function to be callable; this one is only written)
        raise TypeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")

    def __new__(cls, module, name):
        g = cls._made.get((module, name))
        if g is None:  # one object per name, so the pickle's memo writes each name once
            g = cls._made[(module, name)] = object.__new__(cls)
            g.module, g.name = module, name
        return g


class _StorageRef:
    """A storage to write: a C-contiguous 1-d little-endian array, its record key and location."""

    def __init__(self, array, key, location):
        self.array, self.key, self.location = array, key, location


def _storage_type(d):
    if d == np.uint16:  # no typed storage in PyTorch for uint16: an untyped one (bytes) and the dtype
        return _Global("torch.storage", "UntypedStorage")
    return _Global("torch", dtypes.from_numpy_dtype(d)._legacy.replace("Tensor", "Storage"))


# pickle._Pickler, Python's own pickler in Python, is the one that lets a subclass add a dispatch entry:
# _Global writes a GLOBAL opcode without importing the module (the C pickler must look every name up)
class _Pickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []  # _StorageRef, in key order
        self._by_root = {}  # id(root array) -> _StorageRef
        self._alive = []  # the roots whose ids key _by_root

    def write_global(self, g):
        if self.proto >= 4:
            self.save(g.module)
            self.save(g.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + g.module.encode("utf-8") + b"\n" + g.name.encode("utf-8") + b"\n")
        self.memoize(g)

    dispatch[_Global] = write_global

    def save_global(self, obj, name=None):
        try:
            super().save_global(obj, name)
        except pickle.PicklingError:
            # a global Python cannot find again (a class defined in a function): PyTorch pickles with the C
            # pickler, whose refusal (type and words) is the one to give
            try:
                pickle.dumps(obj, self.proto)
            except Exception as e:  # noqa: BLE001 (re-raised as it is)
                raise e from None
            raise

    dispatch[types.FunctionType] = save_global
    # (through save, so a dtype named twice is written once and then fetched from the memo)
    dispatch[dtypes.dtype] = dispatch[dtypes._NoArrayDtype] = lambda self, d: self.save(_Global("torch", d.name))

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            a = obj.array
            numel = a.nbytes if a.dtype == np.uint16 else a.size
            return ("storage", _storage_type(a.dtype), obj.key, obj.location, numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return _Global("torch", "Size"), (tuple(obj),)
        if isinstance(obj, Device):
            return (_Global("torch", "device"), (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _reduce_tensor(self, t):
        parameter = getattr(sys.modules.get("nn.parameter"), "Parameter", None)  # none exist before nn is imported
        if parameter is not None and isinstance(t, parameter):
            data = Tensor._wrap(t.array)  # the plain tensor inside (PyTorch pickles a Parameter so)
            return _Global("torch._utils", "_rebuild_parameter"), (data, t.requires_grad, OrderedDict())
        a, location = t.array, "cpu"
        if not isinstance(a, np.ndarray):  # a GPU array: its bytes are written from the host
            location = f"cuda:{int(a.device.id)}"
            a = to_device(a, "cpu")
        ref, offset, stride = self._storage(a, location)
        if not a.size:  # numpy's strides of an empty array are not always PyTorch's: the tensor's own are
            stride = Tensor._wrap(a).stride()
        args = (ref, offset, tuple(a.shape), stride, t.requires_grad, OrderedDict())
        if a.dtype == np.uint16:
            return _Global("torch._utils", "_rebuild_tensor_v3"), args + (dtypes.uint16,)
        return _Global("torch._utils", "_rebuild_tensor_v2"), args

    def _storage(self, a, location):
        """(storage, offset, stride in elements) for array `a`: the array it views when that is a plain
        C-contiguous array of the same dtype (so views share a storage), else a contiguous copy of its own."""
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        item = a.itemsize
        if (root is not a and a.size and root.flags.c_contiguous and root.dtype == a.dtype and _little(a.dtype)
                and all(s >= 0 and s % item == 0 for s in a.strides)):
            start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if start >= 0 and start % item == 0:
                return self._ref(root, location), start // item, tuple(s // item for s in a.strides)
        if a.flags.c_contiguous and _little(a.dtype) and a.base is None:
            own = a
        else:
            own = np.array(a, dtype=a.dtype.newbyteorder("<"), order="C")
        return self._ref(own, location), 0, tuple(s // item for s in own.strides)

    def _ref(self, root, location):
        ref = self._by_root.get(id(root))
        if ref is None:
            ref = _StorageRef(root.reshape(-1), str(len(self.storages)), location)
            self._by_root[id(root)] = ref
            self._alive.append(root)
            self.storages.append(ref)
        return ref


def _little(d):
    """Whether arrays of dtype d hold little-endian bytes (the order the files are written in)."""
    return d.byteorder == "<" or d.byteorder == "|" or (d.byteorder == "=" and sys.byteorder == "little")


def _add_record(z, name, data):
    """One stored (uncompressed) zip record whose data starts at a multiple of 64 bytes in the file:
    the local header's extra field is padded (PyTorch's "FB" field) to get there."""
    data = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = n = data.nbytes
    zip64 = n * 1.05 > zipfile.ZIP64_LIMIT  # zipfile then adds a 20-byte zip64 extra field after ours
    start = z.start_dir + 30 + len(name.encode("utf-8")) + (20 if zip64 else 0)
    pad = -(start + 4) % _ALIGNMENT
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with z.open(info, "w", force_zip64=zip64) as out:
        out.write(data)


def _write_zip(f, pickled, storages):
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        _add_record(z, "archive/data.pkl", pickled)
        _add_record(z, "archive/.format_version", b"1")
        _add_record(z, "archive/.storage_alignment", str(_ALIGNMENT).encode())
        _add_record(z, "archive/byteorder", b"little")
        for ref in storages:
            _add_record(z, f"archive/data/{ref.key}", ref.array)
        _add_record(z, "archive/version", b"3\n")
        # PyTorch writes a random id; this one is derived from the pickle, so the same object makes the same file
        ident = zlib.crc32(pickled) * 10**30 + sum(ref.array.nbytes for ref in storages) % 10**30
        _add_record(z, "archive/.data/serialization_id", f"{ident:040d}"[-40:].encode())


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` to `f` (a path, or a binary file object) as a PyTorch checkpoint.

    `obj` may be a tensor, a state dict, an optimizer's state dict, a dict of those with numbers,
    strings, numpy arrays, ..., or a whole Module (loaded back with `weights_only=False`). Tensors
    keep their dtype, shape, values, requires_grad and Parameter-ness; `.grad` is not saved (as in
    PyTorch). A path is written atomically: a temporary file in the same folder, flushed to disk
    and renamed over `f`, so a crash leaves the old file or the new one.
    """
    if pickle_module not in (None, pickle):
        raise ValueError("minigrad.save writes with its own pickler: pickle_module= must be left unset")
    if not _use_new_zipfile_serialization:
        raise ValueError("minigrad.save writes only the zip format (PyTorch's since 1.6), not the legacy one")
    if pickle_protocol < 0:  # pickle's (and so PyTorch's) way to ask for the highest
        pickle_protocol = pickle.HIGHEST_PROTOCOL
    if pickle_protocol > pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pickle protocol must be <= {pickle.HIGHEST_PROTOCOL}")  # (pickle's words, as PyTorch's)
    if pickle_protocol < 2:  # protocols 0 and 1 write opcodes no weights_only reader (PyTorch's or minigrad's) reads
        raise ValueError(f"pickle_protocol must be 2 to 5, got {pickle_protocol}")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    pickled, storages = buf.getvalue(), pickler.storages
    if isinstance(f, (str, os.PathLike)):
        try:
            atomic_write(f, lambda tmp: _write_zip(tmp, pickled, storages))
        except (FileNotFoundError, NotADirectoryError):
            # PyTorch names the folder the user gave, not the temporary file inside it
            name = os.fspath(f)
            parent = name[:max(name.rfind("/"), name.rfind(os.sep))]
            if parent and not os.path.isdir(parent):
                raise RuntimeError(f"Parent directory {parent} does not exist.") from None
            raise
        except IsADirectoryError as e:  # a folder given for the file: PyTorch's RuntimeError
            raise RuntimeError(f"open file failed with strerror: {e.strerror}") from None
    elif hasattr(f, "write"):
        if getattr(f, "seekable", lambda: False)():
            _write_zip(f, pickled, storages)
        else:  # zipfile needs to seek back over each record's header: build it in memory first
            mem = io.BytesIO()
            _write_zip(mem, pickled, storages)
            f.write(mem.getvalue())
    else:
        raise TypeError(f"minigrad.save: f must be a path or a binary file object, got {type(f).__name__}")


# ---- reading -----------------------------------------------------------------------------------------
def _name_of(f):
    return os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")


def _location(map_location, location, storage):
    """Where a storage saved at `location` goes: (device string, or None for `storage` as given back)."""
    if map_location is None:
        return location, storage
    if isinstance(map_location, (str, Device)):
        return str(map_location), storage
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
        return str(target), storage
    # PyTorch's (storage, location) -> storage or None, the storage as a 1-d Tensor here
    try:
        out = map_location(Tensor._wrap(storage), location)
    except Exception as e:
        raise _UserError(e) from None
    if out is None:
        return location, storage
    return None, out.array if isinstance(out, Tensor) else out


def default_restore_location(storage, location):
    """A storage (a 1-d Tensor here, as a map_location function gets it) moved to `location` ('cpu', 'cuda:0')."""
    return Tensor._wrap(_to_location(storage.array, location))


class SourceChangeWarning(Warning):
    """PyTorch's warning for a pickled module whose source changed (minigrad saves no source: never given here)."""


class _UserError(Exception):
    """An error of the user's map_location function, carried out of the unpickler's error handling as it is."""

    def __init__(self, error):
        self.error = error


def _check_map_location(map_location):
    if not (map_location is None or isinstance(map_location, (str, Device, dict)) or callable(map_location)):
        raise TypeError(f"map_location should be a str, a device, a dict or a callable, got "
                        f"{type(map_location).__name__}")


def _to_location(array, where):
    kind = where.split(":")[0]
    if kind == "cpu":
        return to_device(array, "cpu")
    if kind == "cuda":
        if not cuda_is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but minigrad.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use minigrad.load with "
                               "map_location=minigrad.device('cpu') to map your storages to the CPU.")
        return to_device(array, "cuda")
    raise RuntimeError(f"don't know how to restore data location of a storage (tagged with {where})")


class _ZipReader:
    """The records of a zip checkpoint, and the storages its pickle asks for."""

    def __init__(self, z, name, map_location):
        self.z, self.name, self.map_location = z, name, map_location
        names = z.namelist()
        self.prefix = names[0].split("/")[0] if names else ""
        if f"{self.prefix}/data.pkl" not in names:
            raise CheckpointError(f"{name}: a zip file, but not a checkpoint (it holds no {self.prefix or 'archive'}"
                                  "/data.pkl)")
        order = self.record("byteorder", missing=b"little").decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise CheckpointError(f"{name}: corrupted checkpoint: byteorder record {order!r}")
        self.swap = order == "big"
        self.storages = {}

    def record(self, rel, missing=None):
        full = f"{self.prefix}/{rel}"
        try:
            return self.z.read(full)
        except KeyError:
            if missing is not None:
                return missing
            raise CheckpointError(f"{self.name}: corrupted checkpoint: the record {full} is missing") from None

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise pickle.UnpicklingError(f"Weights only load failed: a persistent id {pid!r} (only storages load)")
        _, kind, key, location, numel = pid
        if isinstance(kind, _wou.Unsupported):
            raise kind.error()
        if not isinstance(kind, _wou.StorageType) or type(numel) is not int or not isinstance(key, str):
            raise pickle.UnpicklingError(f"Weights only load failed: bad storage id {pid!r}")
        if key not in self.storages:
            self.storages[key] = self._read_storage(kind, key, location, numel)
        return self.storages[key]

    def _read_storage(self, kind, key, location, numel):
        dtype = kind.dtype or np.dtype(np.uint8)
        full = f"{self.prefix}/data/{key}"
        try:
            info = self.z.getinfo(full)
        except KeyError:
            raise CheckpointError(f"{self.name}: corrupted checkpoint: the storage record {full} is missing") from None
        if info.file_size != numel * dtype.itemsize:
            raise CheckpointError(f"{self.name}: corrupted checkpoint: {full} holds {info.file_size} bytes, not the "
                                  f"{numel * dtype.itemsize} of {numel} {kind} elements")
        array = np.empty(numel, dtype=dtype.newbyteorder(">") if self.swap else dtype)
        with self.z.open(info) as r:
            if r.readinto(memoryview(array).cast("B")) != info.file_size or r.read(1):
                raise CheckpointError(f"{self.name}: corrupted checkpoint: {full} is truncated")
        if self.swap:
            array = array.astype(dtype)
        where, array = _location(self.map_location, location, array)
        if where is not None:
            array = _to_location(array, where)
        return _wou.Storage(array, dtype)


def _open(f):
    """(binary file object, name, whether we opened it)."""
    if isinstance(f, (str, os.PathLike)):
        if os.path.isdir(f):
            raise IsADirectoryError(21, "Is a directory", os.fspath(f))
        return open(f, "rb"), os.fspath(f), True
    if not hasattr(f, "read"):
        raise TypeError(f"minigrad.load: f must be a path or a binary file object, got {type(f).__name__}")
    if not (hasattr(f, "seek") and getattr(f, "seekable", lambda: False)()):
        f = io.BytesIO(f.read())
    return f, _name_of(f), False


def _kind(head, size):
    if head.startswith(_ZIP_MAGIC) or head.startswith(b"PK\x05\x06"):
        return "zip"
    if len(head) >= 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") <= size - 8:
        return "safetensors"
    if head.startswith(_LEGACY_MAGIC):
        return "legacy"
    if head[:1] == b"\x80":
        return "pickle"
    return "unknown"


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read an object written by `minigrad.save` or `torch.save` (or a safetensors file by `nn.save`).

    map_location: None (each tensor where it was saved), 'cpu' / 'cuda' / a device (all there), a
    dict {saved location: new location}, or `fn(storage, location)` returning a tensor or None.
    weights_only: True (the default, as PyTorch's since 2.6): tensors, containers, numbers, strings,
    numpy arrays and the globals allowed with `add_safe_globals`; False: also whole modules whose
    classes are nn.Module subclasses already imported, and the standard library's value types scripts
    keep in checkpoints (argparse.Namespace, pathlib paths, datetime values, defaultdict, ...).
    Neither runs code from the file (see the module docstring). mmap is accepted with a path, as PyTorch's; the
    tensors are read into memory.
    """
    if pickle_module not in (None, pickle):
        raise ValueError("minigrad.load reads with its own restricted unpickler: pickle_module= must be left unset")
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise TypeError(f"load() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    encoding = pickle_load_args.get("encoding", "utf-8")
    _check_map_location(map_location)
    weights_only = True if weights_only is None else bool(weights_only)
    fobj, name, opened = _open(f)
    try:
        start = fobj.tell()
        head = fobj.read(16)
        size = fobj.seek(0, os.SEEK_END) - start
        fobj.seek(start)
        kind = _kind(head, size)
        if kind == "zip":
            if mmap and not isinstance(f, (str, os.PathLike)):  # (PyTorch maps only a file it opens itself)
                raise ValueError("f must be a file path in order to use the mmap argument")
            return _load_zip(fobj, name, map_location, weights_only, encoding)
        if kind == "safetensors" and isinstance(f, (str, os.PathLike)):
            return _load_safetensors(f, map_location)
        raise CheckpointError(f"{name}: " + {
            "safetensors": "a safetensors file: pass its path (minigrad.load(path)), or use nn.load",
            "legacy": "a checkpoint in PyTorch's legacy format (before 1.6), which minigrad does not read: load it "
                      "in PyTorch and save it again with torch.save",
            "pickle": "a bare pickle, not a checkpoint (minigrad.load reads the zip files minigrad.save and "
                      "torch.save write, and safetensors files; it never unpickles other files)",
            "unknown": "empty file, not a checkpoint" if size == 0 else
                       "not a checkpoint (neither a zip file of minigrad.save / torch.save nor a safetensors file)",
        }[kind])
    finally:
        if opened:
            fobj.close()


def _load_zip(fobj, name, map_location, weights_only, encoding):
    try:
        z = zipfile.ZipFile(fobj)
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"{name}: truncated or corrupted checkpoint (its zip directory cannot be read: "
                              f"{e})") from None
    try:
        with z:
            reader = _ZipReader(z, name, map_location)
            data = io.BytesIO(reader.record("data.pkl"))
            return _wou.Unpickler(data, reader.persistent_load, _user_globals(), modules=not weights_only,
                                  encoding=encoding).load()
    except (pickle.UnpicklingError, RuntimeError):  # a refused global (one line), CheckpointError, a device error
        raise
    except _UserError as e:
        raise e.error from None
    except (EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{name}: truncated or corrupted checkpoint ({e})") from None
    except Exception as e:  # malformed opcodes or arguments: corrupted, or made to look like a checkpoint
        raise CheckpointError(f"{name}: corrupted checkpoint: its pickle is malformed ({type(e).__name__}: "
                              f"{e})") from None


def _load_safetensors(path, map_location):
    import importlib

    nn_serialization = importlib.import_module("nn.serialization")  # nn's format; nn is above the engine
    obj = nn_serialization.load(path)

    def move(x):
        if isinstance(x, Tensor):
            where, array = _location(map_location, "cpu", x.array)
            array = array if where is None else _to_location(array, where)
            if array is x.array:
                return x
            if type(x) is Tensor:
                return Tensor._wrap(array, requires_grad=x.requires_grad)
            return type(x)(Tensor._wrap(array), requires_grad=x.requires_grad)  # a Parameter
        if isinstance(x, dict):
            return {k: move(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(move(v) for v in x)
        return x

    if map_location is None:
        return obj
    try:
        return move(obj)
    except _UserError as e:
        raise e.error from None


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint names that `minigrad.load` (weights_only=True) would refuse, read
    without loading anything ("module.name" strings, sorted)."""
    import pickletools

    fobj, name, opened = _open(f)
    try:
        with zipfile.ZipFile(fobj) as z:
            pickled = _ZipReader(z, name, None).record("data.pkl")
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"{name}: not a zip checkpoint ({e})") from None
    finally:
        if opened:
            fobj.close()
    allowed = set(_wou.DEFAULTS) | set(_user_globals())
    found, strings = set(), []
    with contextlib.suppress(Exception):  # a damaged pickle: report what was read before the damage
        for op, arg, _ in pickletools.genops(pickled):
            if op.name == "GLOBAL":
                found.add(arg.replace(" ", "."))
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.add(f"{strings[-2]}.{strings[-1]}")
            if isinstance(arg, str) and "UNICODE" in op.name:
                strings.append(arg)
    return sorted(g for g in found if g.replace("__builtin__.", "builtins.") not in allowed)
