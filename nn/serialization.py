"""Checkpoints that cannot run code: `nn.save(obj, path)` / `nn.load(path)` on safetensors files.

A checkpoint is a standard safetensors file (an 8-byte header length, a JSON header, the raw
tensor bytes). Its tensors are the tensors and arrays found in `obj`; everything else about
`obj` (dicts with str or int keys, lists, tuples, numbers, strings, bools, None) is a JSON tree
kept in the header's `__metadata__` under "minigrad.tree", where each tensor is a reference
by name. Loading parses JSON and copies bytes, and nothing else: no pickle, so a malicious
file cannot execute code.

The tree's JSON: plain values and str-keyed dicts are themselves; everything else is an
object with a tag key:
    {"__tensor__": name[, "requires_grad": true][, "parameter": true]}   a minigrad Tensor / Parameter
    {"__ndarray__": name}                                                a numpy array
    {"__tuple__": [...]}                                                 a tuple
    {"__dict__": [[key, value], ...]}       a dict with non-str keys (or keys that look like tags)
    {"__float__": "nan" | "inf" | "-inf"}                                a non-finite float
Tensor names are the path of keys to them joined by "/" (a state dict's own keys when it is
saved alone), so other safetensors tools show meaningful names. A tensor whose array appears
twice (tied weights) is stored once and loads as one Tensor. "minigrad.crc32" is a CRC-32 of
all tensor bytes and "minigrad.tree_crc32" one of the tree's JSON text, so corruption of the data
or a hand edit of the tree is detected (files written before the tree had one load unchecked).
"""
import json
import math
import os
import zlib

import numpy as np
import safetensors
import safetensors.numpy

from minigrad import Tensor
from minigrad.device import to_device
from minigrad.serialization import CheckpointError, atomic_write, temporaries  # noqa: F401 (one mechanism each)

from .parameter import Parameter

FORMAT_VERSION = 1
_TAGS = ("__tensor__", "__ndarray__", "__tuple__", "__dict__", "__float__")


# ---- encoding -------------------------------------------------------------------------------
class _Encoder:
    """Turns an object into (JSON tree, {name: contiguous numpy array})."""

    def __init__(self):
        self.arrays = {}
        self.name_of = {}  # id(array) -> name: a shared array is stored once
        self.keep = []  # the arrays whose ids are in name_of stay alive until saved

    def add(self, array, path):
        key = id(array)
        if key in self.name_of:
            return self.name_of[key]
        name = "/".join(path) or "tensor"
        base, n = name, 1
        while name in self.arrays or name == "__metadata__":  # the one name safetensors reserves
            name, n = f"{base}#{n}", n + 1
        self.keep.append(array)
        self.name_of[key] = name
        array = to_device(array, "cpu")
        # (not np.ascontiguousarray: it turns a 0-d array into a 1-d one)
        self.arrays[name] = array if array.flags.c_contiguous else array.copy(order="C")
        return name

    def encode(self, obj, path):
        if obj is None or isinstance(obj, (bool, str, int)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, np.generic):  # numpy scalars are stored as the Python number they hold
            return self.encode(obj.item(), path)
        if isinstance(obj, Tensor):
            node = {"__tensor__": self.add(obj.array, path)}
            if obj.requires_grad:
                node["requires_grad"] = True
            if isinstance(obj, Parameter):
                node["parameter"] = True
            return node
        if isinstance(obj, np.ndarray):
            return {"__ndarray__": self.add(obj, path)}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]
        if isinstance(obj, dict):
            if all(isinstance(k, str) for k in obj) and not any(k in _TAGS for k in obj):
                return {k: self.encode(v, path + [k]) for k, v in obj.items()}
            return {"__dict__": [[self.encode(k, path), self.encode(v, path + [str(k)])] for k, v in obj.items()]}
        where = "/".join(path) or "the top level"
        raise TypeError(f"nn.save: cannot store a {type(obj).__name__} at {where}: checkpoints hold tensors, numpy "
                        "arrays, numbers, strings, bools, None, and lists, tuples and dicts of them (never pickled "
                        "objects)")


def _checksum(arrays):
    """CRC-32 of every array's bytes, in name order."""
    crc = 0
    for name in sorted(arrays):
        a = arrays[name]
        if a.size:
            crc = zlib.crc32(a.reshape(-1).view(np.uint8), crc)
    return f"{crc:08x}"


def _text_checksum(text):
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def save(obj, path):
    """Write `obj` (a state dict, an optimizer state dict, a checkpoint dict of those, ...) to `path`.

    Shapes: tensors of any shape (0-d and empty included) and dtype are stored exactly.
    The write is atomic: a temporary file in the same folder is written, flushed to disk
    (fsync) and renamed over `path`, so a crash leaves either the old file or the new one.
    """
    path = os.fspath(path)
    enc = _Encoder()
    tree = enc.encode(obj, [])
    text = json.dumps(tree, allow_nan=False, separators=(",", ":"))
    metadata = {
        "format": "minigrad",
        "minigrad.format_version": str(FORMAT_VERSION),
        "minigrad.tree": text,
        "minigrad.tree_crc32": _text_checksum(text),
        "minigrad.crc32": _checksum(enc.arrays),
    }
    atomic_write(path, lambda tmp: safetensors.numpy.save_file(enc.arrays, tmp, metadata=metadata))


# ---- decoding -------------------------------------------------------------------------------
def _check_header(path):
    """Fail early, and say why, on a file that cannot be a safetensors file."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(9)
    n = int.from_bytes(head[:8], "little")
    if len(head) == 9 and head[8:9] == b"{" and n <= size - 8:
        return
    if head.startswith(b"PK\x03\x04") or head[:1] == b"\x80":
        raise CheckpointError(f"{path}: this looks like a PyTorch/pickle checkpoint; nn.load reads only safetensors "
                              "files and never unpickles (unpickling can run arbitrary code)")
    if len(head) < 9:
        raise CheckpointError(f"{path}: not a checkpoint: the file is {size} bytes, too short to hold a safetensors "
                              "header (truncated?)")
    raise CheckpointError(f"{path}: not a safetensors checkpoint: bad header (claims {n} header bytes in a file "
                              f"of {size}); the file is truncated, corrupted or of another format")


def load(path, device=None):
    """Read a file written by `save`; tensors come back as minigrad Tensors on the CPU (or `device`).

    Raises FileNotFoundError for a missing file, and CheckpointError (naming the file and the
    problem) for one that is truncated, corrupted, or not a safetensors file. A safetensors file
    written by another tool (no minigrad tree) loads as a flat {name: Tensor} dict.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(2, f"No such checkpoint file: '{path}'", path)
    if os.path.isdir(path):
        raise CheckpointError(f"{path}: is a folder, not a checkpoint file")
    _check_header(path)
    try:
        with safetensors.safe_open(path, framework="np") as f:
            metadata = f.metadata() or {}
            arrays = {name: f.get_tensor(name) for name in f.keys()}
    except Exception as e:  # safetensors' own error type: truncated data, bad offsets, bad JSON, bad dtype
        raise CheckpointError(f"{path}: corrupted or truncated safetensors file ({e})") from None

    def tensor(name, requires_grad=False, parameter=False):
        data = arrays[name] if device is None else to_device(arrays[name], device)
        if parameter:
            return Parameter(data, requires_grad=requires_grad)
        return Tensor._wrap(data, requires_grad=requires_grad)

    if "minigrad.tree" not in metadata:
        return {name: tensor(name) for name in arrays}
    version = metadata.get("minigrad.format_version", "?")
    if version != str(FORMAT_VERSION):
        raise CheckpointError(f"{path}: checkpoint format version {version} is not one this minigrad reads "
                              f"({FORMAT_VERSION})")
    if metadata.get("minigrad.crc32") != _checksum(arrays):
        raise CheckpointError(f"{path}: checksum mismatch: the tensor data is corrupted")
    text = metadata["minigrad.tree"]
    if "minigrad.tree_crc32" in metadata and metadata["minigrad.tree_crc32"] != _text_checksum(text):
        raise CheckpointError(f"{path}: checksum mismatch: the header's object tree was edited or is corrupted")
    try:
        tree = json.loads(text)
    except ValueError as e:
        raise CheckpointError(f"{path}: corrupted header: the object tree is not valid JSON ({e})") from None
    return _Decoder(path, arrays, tensor).decode_all(tree)


class _Decoder:
    """Rebuilds the object from its JSON tree; every tensor name must exist and be used."""

    def __init__(self, path, arrays, make_tensor):
        self.path, self.arrays, self.make_tensor = path, arrays, make_tensor
        self.made = {}  # name -> Tensor: a name referenced twice gives one shared Tensor
        self.used = set()

    def fail(self, what):
        raise CheckpointError(f"{self.path}: corrupted checkpoint: {what}")

    def decode_all(self, tree):
        obj = self.decode(tree)
        unused = set(self.arrays) - self.used
        if unused:
            self.fail(f"tensors not referenced by the object tree: {sorted(unused)[:5]}")
        return obj

    def name(self, name):
        if not isinstance(name, str) or name not in self.arrays:
            self.fail(f"the object tree refers to tensor {name!r}, which the file does not hold")
        self.used.add(name)
        return name

    def decode(self, node):
        try:
            return self._decode(node)
        except (TypeError, ValueError, AttributeError) as e:  # a tag whose value has the wrong shape
            self.fail(f"malformed object tree ({type(e).__name__}: {e})")

    def _decode(self, node):
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "__tensor__" in node:
            name = self.name(node["__tensor__"])
            if name not in self.made:
                self.made[name] = self.make_tensor(name, bool(node.get("requires_grad")), bool(node.get("parameter")))
            return self.made[name]
        if "__ndarray__" in node:
            return self.arrays[self.name(node["__ndarray__"])]
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__dict__" in node:
            try:
                return {_hashable(self.decode(k)): self.decode(v) for k, v in node["__dict__"]}
            except (TypeError, ValueError) as e:
                self.fail(f"bad dict entry ({e})")
        if "__float__" in node:
            return float(node["__float__"])
        return {k: self.decode(v) for k, v in node.items()}


def _hashable(key):
    hash(key)  # a TypeError for a key that cannot be a dict key
    return key
