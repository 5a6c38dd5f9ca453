"""Conv1d and Conv2d: convolution layers with PyTorch's parameters, init and padding modes."""
import math

import minigrad

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _n = 0  # spatial dims
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
        tup = lambda v: (v,) * n if isinstance(v, int) else tuple(v)  # noqa: E731
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of ['valid', 'same']")
            if padding == "same" and any(s != 1 for s in tup(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        self.padding = padding if isinstance(padding, str) else tup(padding)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(minigrad.empty(out_channels, in_channels // groups, *self.kernel_size, device=device,
                                               dtype=dtype))
        if bias:
            self.bias = Parameter(minigrad.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's init: weight kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)); bias alike."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _pad_amounts(self):
        """F.pad's tuple for a non-'zeros' padding_mode (last dim first)."""
        if self.padding == "valid":
            return (0, 0) * self._n
        if self.padding == "same":
            tot = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            return tuple(v for t in reversed(tot) for v in (t // 2, t - t // 2))
        return tuple(v for p in reversed(self.padding) for v in (p, p))

    def forward(self, input):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            x = F.pad(input, self._pad_amounts(), mode=self.padding_mode)
            return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution. Shapes: input (N, C_in, L) or (C_in, L) -> (N, C_out, L_out); weight
    (out_channels, in_channels/groups, kernel_size), bias (out_channels,)."""

    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution. Shapes: input (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out); weight
    (out_channels, in_channels/groups, kH, kW), bias (out_channels,). padding: an int, a pair, 'valid' or
    'same'; padding_mode 'zeros', 'reflect', 'replicate' or 'circular'."""

    _n = 2
    _fn = staticmethod(F.conv2d)
