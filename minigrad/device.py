"""Devices and array modules: numpy on the CPU, cupy on CUDA.

Engine code is written once against an array module `xp` (numpy's API), chosen per array by
`array_module(x)`. cupy is imported only the first time a CUDA device is asked for.
"""
import numpy as np

_cupy = None


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError:
            raise RuntimeError(
                "device='cuda' needs cupy, which is not installed. Install the GPU extra "
                "(pip install -e '.[cuda13]' or '.[cuda12]') on a machine with an NVIDIA GPU."
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
    except RuntimeError:
        return False


class device:
    """Where a tensor lives: `device('cpu')` or `device('cuda')` (`'cuda:0'` also accepted)."""

    __slots__ = ("type", "index")

    def __init__(self, spec="cpu"):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        s = str(spec)
        kind, _, idx = s.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {s}")
        self.type = kind
        self.index = int(idx) if idx else None

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type

    def __hash__(self):
        return hash(self.type)


CPU = device("cpu")
_CUDA = device("cuda")


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


def module_for(dev):
    """The array module for a device spec (imports cupy on first CUDA use)."""
    if dev is None:
        return np
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
