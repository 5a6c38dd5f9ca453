"""Devices and array modules: numpy on the CPU, cupy on CUDA.

Engine code is written once against an array module `xp` (numpy's API), chosen per array by
`array_module(x)`. cupy is imported only the first time a CUDA device is asked for.
"""
import re

import numpy as np

_cupy = None


class NoCudaError(AssertionError, RuntimeError):
    """CUDA asked for where cupy is not installed: PyTorch's CPU build raises AssertionError("Torch not compiled
    with CUDA enabled"), so `except AssertionError` code works as there; minigrad's other CUDA errors are
    RuntimeErrors, so `except RuntimeError` catches this one too."""


class OutOfMemoryError(RuntimeError):
    """`torch.OutOfMemoryError` (also `torch.cuda.OutOfMemoryError`)."""


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError:
            raise NoCudaError(
                "Torch not compiled with CUDA enabled: minigrad's device='cuda' needs cupy, which is not installed. "
                "Install the GPU extra (pip install -e '.[cuda13]' or '.[cuda12]') on a machine with an NVIDIA GPU."
            ) from None
        except Exception as e:  # a cupy that fails to load (CUDA libraries missing or mismatched)
            raise RuntimeError(f"device='cuda' needs cupy, but importing it failed: {e}") from None
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # cupy raises its own CUDARuntimeError when no driver is present
            raise RuntimeError(f"device='cuda' was asked for, but no CUDA GPU is available ({e})") from None
        if n == 0:
            raise RuntimeError("device='cuda' was asked for, but no CUDA GPU is available")
        _cupy = cupy
    return _cupy


def cuda_is_available():
    """True when cupy imports and sees at least one GPU (never raises)."""
    try:
        _import_cupy()
        return True
    except RuntimeError:  # (NoCudaError is one too)
        return False


# the device types PyTorch's parser knows (its error lists them); minigrad has the first two
_TORCH_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_SPEC = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")  # 'cuda', 'cuda:1' (no sign, no leading zero)


class device:
    """Where a tensor lives: `device('cpu')`, `device('cuda')`, `device('cuda:1')`, `device('cuda', 1)`,
    `device(type='cuda', index=1)`. As PyTorch's, a device is equal only to a device of the same type and index
    (never to a string: compare `d.type == 'cuda'`)."""

    __module__ = "minigrad"  # (PyTorch's torch.device)

    __slots__ = ("type", "index")

    def __init__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs:  # the usual call, device('cuda:0') or device(d): no more work
            spec, index = args[0], None
            if isinstance(spec, device):
                self.type, self.index = spec.type, spec.index
                return
        else:
            spec, index = _arguments(args, kwargs)
        if isinstance(spec, bytes):
            spec = spec.decode()
        if not isinstance(spec, str):
            if isinstance(spec, int) and not isinstance(spec, bool):  # PyTorch's: the accelerator's index
                if not cuda_is_available():
                    raise RuntimeError("Cannot access accelerator device when none is available.")
                spec, index = "cuda", spec
            elif len(args) == 1 and not kwargs and not isinstance(spec, list):  # (PyTorch's overloads, one by one)
                raise TypeError(f"device() received an invalid combination of arguments - got ({_type_name(spec)}), "
                                "but expected one of:\n * (torch.device device)\n      didn't match because some of "
                                f"the arguments have invalid types: (!{_type_name(spec)}!)\n * (str type, int index "
                                "= -1)\n")
            else:
                raise TypeError(f"device(): argument 'type' (position 1) must be str, not {_type_name(spec)}")
        match = _SPEC.fullmatch(spec)
        if match is None:
            raise RuntimeError(f"Invalid device string: '{spec}'")
        kind, idx = match.groups()
        if kind not in ("cpu", "cuda"):
            if kind in _TORCH_TYPES:
                raise RuntimeError(f"minigrad has no '{kind}' device: its devices are cpu and cuda")
            raise RuntimeError(f"Expected one of {', '.join(_TORCH_TYPES)} device type at start of device string: {kind}")
        if idx is not None and index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = kind
        self.index = int(idx) if idx is not None else index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented  # (PyTorch's: a device is never equal to a string)
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):  # `with device(...):` the factories' default device within, as PyTorch's
        _entered.append(_default)
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        global _default
        _default = _entered.pop()


def _arguments(args, kwargs):
    """(type, index) from PyTorch's signature device(type, index=None), its errors for bad arguments."""
    if len(args) > 2:
        raise TypeError(f"device() takes at most 2 arguments ({len(args)} given)")
    for name in kwargs:
        if name not in ("type", "index"):
            raise TypeError(f"device() got an unexpected keyword argument '{name}'")
    if args and "type" in kwargs or len(args) == 2 and "index" in kwargs:
        raise TypeError(f"device() got multiple values for argument '{'index' if len(args) == 2 else 'type'}'")
    spec = args[0] if args else kwargs.get("type")
    if spec is None:
        got = ", ".join(f"{k}={_type_name(v)}" for k, v in kwargs.items())
        raise TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected one of: "
                        "(minigrad.device device) or (str type, int index = -1)")
    index = args[1] if len(args) == 2 else kwargs.get("index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        where = " (position 2)" if len(args) == 2 else ""
        raise TypeError(f"device(): argument 'index'{where} must be int, not {_type_name(index)}")
    if isinstance(spec, device):
        raise TypeError("device(): argument 'type' (position 1) must be str, not minigrad.device")
    return spec, index


def _type_name(v):
    return "minigrad.device" if isinstance(v, device) else type(v).__name__


CPU = device("cpu")
_CUDA = device("cuda", 0)  # a GPU tensor's device, as PyTorch's: cuda:0


def one_to_one(a):
    """True when no two elements of the view `a` share memory: its axes, by increasing stride, each
    step over the whole extent of the ones before (a sufficient test)."""
    extent = a.itemsize
    for stride, n in sorted([(abs(st), n) for st, n in zip(a.strides, a.shape) if n > 1]):
        if stride < extent:
            return False
        extent = stride * n
    return True


def array_module(x):
    """numpy or cupy, whichever owns array `x`."""
    if isinstance(x, np.ndarray) or _cupy is None:
        return np
    return _cupy if isinstance(x, _cupy.ndarray) else np


def pick(keep, a, b=None):
    """`a` where `keep`, else `b` (else +0.0 when b is None), exactly: each element is one of the two, so an
    inf or NaN not picked never shows (unlike a product with a 0/1 mask, where inf 0 is NaN). On numpy a
    select on the bits, b ^ ((a ^ b) & m) with m all ones where keep: a few vectorized passes, where numpy's
    where with a mask of random signs is a branch per element (~20 times slower). Below a few hundred
    elements those passes' calls cost more than where's branches: where, the same elements."""
    xp = array_module(a)
    if xp is not np or max(np.size(keep), np.size(a)) < 512:
        return xp.where(keep, a, a.dtype.type(0) if b is None else b)
    ints = np.dtype(f"i{a.dtype.itemsize}")
    shape = np.broadcast_shapes(np.shape(keep), np.shape(a), np.shape(b))
    m = np.empty(shape, ints)  # the one new array: the result is built in it
    np.negative(keep, out=m, dtype=ints)  # True -> all ones
    if b is None:
        m &= a.view(ints)
        return m.view(a.dtype)
    bi = b.view(ints)
    m &= a.view(ints) ^ bi
    m ^= bi
    return m.view(a.dtype)


_default = None  # the device factories use when none is given (set_default_device); None: the CPU
_device = device  # (set_default_device's argument is named `device`, as PyTorch names it)
_entered = []  # the defaults that `with device(...)` blocks replaced, innermost last


def set_default_device(device):
    """The device factories (zeros, randn, tensor, a layer's parameters, ...) make tensors on when given
    none, as `torch.set_default_device`; None: the CPU again. Tensors from arrays (`from_numpy`,
    `Tensor(array)`) stay where their array is."""
    global _default
    d = None if device is None else device if isinstance(device, _device) else _device(device)
    _default = None if d is None or d.type == "cpu" else d


def get_default_device():
    """The device factories use when given none (`set_default_device`): the CPU unless set."""
    return _default if _default is not None else device("cpu")


def module_for(dev):
    """The array module for a device spec (imports cupy on first CUDA use); None: the default device's."""
    if dev is None:
        if _default is None:
            return np
        dev = _default
    d = dev if isinstance(dev, device) else device(dev)
    return _import_cupy() if d.type == "cuda" else np


def device_of(x):
    """The device an array lives on."""
    return CPU if isinstance(x, np.ndarray) or _cupy is None or not isinstance(x, _cupy.ndarray) else _CUDA


def to_device(x, dev):
    """Copy array `x` to device `dev` (a no-op when it is already there)."""
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda":
        cp = _import_cupy()
        return x if isinstance(x, cp.ndarray) else cp.asarray(x)
    if _cupy is not None and isinstance(x, _cupy.ndarray):
        return _cupy.asnumpy(x)
    return x
