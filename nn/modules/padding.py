"""The padding modules, as `torch.nn`'s: F.pad with its mode and amounts fixed.

    ReflectionPad1d/2d/3d (mirror, the edge not repeated), ReplicationPad1d/2d/3d (repeat the edge),
    CircularPad1d/2d/3d (wrap around), ConstantPad1d/2d/3d (a value), ZeroPad1d/2d/3d (zeros)

`padding` is an int (every side the same) or a tuple of 2, 4 or 6 ints in F.pad's order: (left, right),
then (top, bottom), then (front, back); the module keeps it as a tuple, as PyTorch's. The Nd module pads
the last N dims of an (N+1)- or (N+2)-dimensional input: (C, *) or (N, C, *).
"""
from .. import functional as F
from ..module import Module, init_named
from .utils import _ntuple


class _PadNd(Module):
    """F.pad(input, self.padding, mode); the subclasses set `mode` and the number of padded dims."""

    mode = "constant"
    n_dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self.n_dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        # (PyTorch's circular modules check the input's rank themselves, with a ValueError of their own)
        if input.dim() not in (self.n_dims + 1, self.n_dims + 2):
            raise ValueError(f"expected {self.n_dims + 1}D or {self.n_dims + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _Zero:
    """ZeroPadNd is ConstantPadNd(padding, 0.0) (a subclass, as PyTorch's), with the value left out of its repr."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim by mirroring about the edge (the edge itself not repeated; each amount < the size).
    Shapes: (C, W) or (N, C, W) -> (..., W + left + right)."""

    mode = "reflect"


class ReflectionPad2d(_PadNd):
    """ReflectionPad1d on the last 2 dims. Shapes: (C, H, W) or (N, C, H, W)."""

    mode, n_dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """ReflectionPad1d on the last 3 dims. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    mode, n_dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values. Shapes: (C, W) or (N, C, W) -> (..., W + left + right)."""

    mode = "replicate"


class ReplicationPad2d(_PadNd):
    """ReplicationPad1d on the last 2 dims. Shapes: (C, H, W) or (N, C, H, W)."""

    mode, n_dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """ReplicationPad1d on the last 3 dims. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    mode, n_dims = "replicate", 3


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (the left pad comes from the right end, and so on).
    Shapes: (C, W) or (N, C, W) -> (..., W + left + right)."""


class CircularPad2d(_CircularPadNd):
    """CircularPad1d on the last 2 dims. Shapes: (C, H, W) or (N, C, H, W)."""

    n_dims = 2


class CircularPad3d(_CircularPadNd):
    """CircularPad1d on the last 3 dims. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    n_dims = 3


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with `value` (negative amounts crop). Shapes: (C, W) or (N, C, W)."""


class ConstantPad2d(_ConstantPadNd):
    """ConstantPad1d on the last 2 dims. Shapes: (C, H, W) or (N, C, H, W)."""

    n_dims = 2


class ConstantPad3d(_ConstantPadNd):
    """ConstantPad1d on the last 3 dims. Shapes: (C, D, H, W) or (N, C, D, H, W)."""

    n_dims = 3


class ZeroPad1d(_Zero, ConstantPad1d):
    """ConstantPad1d with value 0. Shapes: (C, W) or (N, C, W)."""


class ZeroPad2d(_Zero, ConstantPad2d):
    """ConstantPad2d with value 0 (e.g. the asymmetric 'same' padding of an even kernel).
    Shapes: (C, H, W) or (N, C, H, W)."""


class ZeroPad3d(_Zero, ConstantPad3d):
    """ConstantPad3d with value 0. Shapes: (C, D, H, W) or (N, C, D, H, W)."""


init_named(ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
           ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
           ZeroPad1d, ZeroPad2d, ZeroPad3d)
