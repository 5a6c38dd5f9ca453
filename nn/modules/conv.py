"""Conv1d/2d/3d and ConvTranspose1d/2d/3d: convolution layers with PyTorch's parameters, init and
padding modes."""
import math

import minigrad

from .. import functional as F
from .. import init
from ..module import Module, init_named
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
        tup = lambda v: (v,) * n if isinstance(v, int) else tuple(v)  # noqa: E731
        # PyTorch judges the padding before the padding mode (its texts print sets, whose order is hash-seeded)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of ['valid', 'same']")
            if padding == "same" and any(s != 1 for s in tup(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
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
        return _conv_repr(self)


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


class Conv3d(_ConvNd):
    """3-D convolution. Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out);
    weight (out_channels, in_channels/groups, kD, kH, kW), bias (out_channels,). padding and padding_mode as
    Conv2d's."""

    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """The transposed convolutions: weight (in_channels, out_channels/groups, *kernel_size), as PyTorch."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        Module.__init__(self)
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        tup = lambda v: (v,) * n if isinstance(v, int) else tuple(v)  # noqa: E731
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        self.padding, self.output_padding = tup(padding), tup(output_padding)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(minigrad.empty(in_channels, out_channels // groups, *self.kernel_size, device=device,
                                               dtype=dtype))
        if bias:
            self.bias = Parameter(minigrad.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()  # (the fan-in is weight.size(1) * prod(kernel), as PyTorch's)

    def _output_padding(self, input, output_size):
        """output_padding, or the one that makes the output `output_size` (its last n entries: the spatial sizes)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = [int(v) for v in output_size]
        if len(output_size) not in (n, input.ndim):
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {input.ndim} "
                             f"elements (got {len(output_size)})")
        output_size = output_size[-n:]
        spatial = list(input.shape[-n:])
        # the smallest output a transposed conv gives, and the stride - 1 sizes output_padding can add to it
        lo = [(s - 1) * st - 2 * p + d * (k - 1) + 1 for s, st, p, d, k in
              zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        hi = [m + st - 1 for m, st in zip(lo, self.stride)]
        if any(not a <= o <= b for o, a, b in zip(output_size, lo, hi)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {lo} to {hi} "
                             f"(for an input of {minigrad.Size(input.shape[-n:])})")
        return tuple(o - a for o, a in zip(output_size, lo))

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                              self.dilation)

    def extra_repr(self):
        return _conv_repr(self)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (conv1d's adjoint in its input). Shapes: input (N, C_in, L) or (C_in, L) ->
    (N, C_out, L_out), L_out = (L - 1) s - 2p + d (k - 1) + output_padding + 1; weight (in_channels,
    out_channels/groups, k), bias (out_channels,). forward(input, output_size=None)."""

    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution ("deconvolution", conv2d's adjoint in its input). Shapes: input (N, C_in, H, W)
    or (C_in, H, W) -> (N, C_out, H_out, W_out), H_out = (H - 1) s - 2p + d (kH - 1) + output_padding + 1; weight
    (in_channels, out_channels/groups, kH, kW), bias (out_channels,). forward(input, output_size=None) picks the
    output_padding that gives output_size."""

    _n = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (conv3d's adjoint in its input). Shapes: input (N, C_in, D, H, W) or
    (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out), each size as ConvTranspose2d's; weight (in_channels,
    out_channels/groups, kD, kH, kW), bias (out_channels,). forward(input, output_size=None)."""

    _n = 3
    _fn = staticmethod(F.conv_transpose3d)


def _conv_repr(m):
    """PyTorch's extra_repr of a convolution, transposed or not: the settings that differ from the defaults."""
    n = m._n
    s = f"{m.in_channels}, {m.out_channels}, kernel_size={m.kernel_size}, stride={m.stride}"
    if m.padding != (0,) * n:
        s += f", padding={m.padding}"
    if m.dilation != (1,) * n:
        s += f", dilation={m.dilation}"
    if getattr(m, "output_padding", (0,) * n) != (0,) * n:
        s += f", output_padding={m.output_padding}"
    if m.groups != 1:
        s += f", groups={m.groups}"
    if m.bias is None:
        s += ", bias=False"
    if m.padding_mode != "zeros":
        s += f", padding_mode={m.padding_mode}"
    return s


init_named(Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
