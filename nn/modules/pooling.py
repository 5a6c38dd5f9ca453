"""The pooling layers (max, average, adaptive average, adaptive max, LP and max unpooling; 1-d, 2-d and 3-d): the
functional pools with their arguments fixed."""
from .. import functional as F
from ..module import Module, init_named


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """The max over each window. Shapes: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) (see F.max_pool2d)."""

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The max over each window. Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) (see
    F.max_pool3d)."""

    _fn = staticmethod(F.max_pool3d)


class AvgPool2d(Module):
    """The mean over each window. Shapes: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) (see F.avg_pool2d)."""

    _fn = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                            self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """The mean over each window. Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) (see
    F.avg_pool3d)."""

    _fn = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool2d(Module):
    """Averages to a fixed output size. Shapes: (N, C, H, W) or (C, H, W) -> (N, C, *output_size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Averages to a fixed output size. Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size)."""

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class MaxPool1d(_MaxPoolNd):
    """The max over each window. Shapes: (N, C, L) or (C, L) -> (N, C, L_out) (see F.max_pool1d)."""

    _fn = staticmethod(F.max_pool1d)


class AvgPool1d(Module):
    """The mean over each window. Shapes: (N, C, L) or (C, L) -> (N, C, L_out) (see F.avg_pool1d)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={_one(self.kernel_size)}, stride={_one(self.stride)}, padding={_one(self.padding)}"


def _one(v):  # PyTorch's AvgPool1d shows its sizes as 1-tuples
    return v if isinstance(v, tuple) else (v,)


class AdaptiveAvgPool1d(Module):
    """Averages to a fixed length. Shapes: (N, C, L) or (C, L) -> (N, C, output_size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """The max over adaptive windows to a fixed output size. Shapes: (N, C, H, W) or (C, H, W) -> (N, C,
    *output_size); with return_indices also the flat indices (see F.adaptive_max_pool2d)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """The max over adaptive windows to a fixed output size. Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C,
    *output_size); with return_indices also the flat indices (see F.adaptive_max_pool3d)."""

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(Module):
    """The max over adaptive windows to a fixed length. Shapes: (N, C, L) or (C, L) -> (N, C, output_size)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The p-norm of each window. Shapes: (N, C, L) or (C, L) -> (N, C, L_out) (see F.lp_pool1d)."""

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """The p-norm of each window. Shapes: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) (see F.lp_pool2d)."""

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """The p-norm of each window. Shapes: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) (see
    F.lp_pool3d)."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    _n = 0
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        tup = lambda v: (v,) * self._n if isinstance(v, int) else tuple(v)  # noqa: E731
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """max_pool1d's partial inverse (zeros where no max was). forward(input, indices, output_size=None): (N, C, L) or
    (C, L) -> (N, C, L_out) (see F.max_unpool1d)."""

    _n = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """max_pool2d's partial inverse (zeros where no max was). forward(input, indices, output_size=None): (N, C, H, W)
    or (C, H, W) -> (N, C, H_out, W_out) (see F.max_unpool2d)."""

    _n = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """max_pool3d's partial inverse (zeros where no max was). forward(input, indices, output_size=None): (N, C, D, H,
    W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) (see F.max_unpool3d)."""

    _n = 3
    _fn = staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    """Max pooling over windows of kernel_size at pseudo-random starts (F.fractional_max_pool2d/3d), to
    output_size or to output_ratio of the input's size; `_random_samples` (N, C, n) in [0, 1), a buffer,
    fixes the starts."""

    n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name, as_n = type(self).__name__, lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * self.n
        if self.n == 3 and not all(k > 0 for k in as_n(kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = as_n(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = as_n(output_size) if output_size is not None else None
        self.output_ratio = as_n(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = F.fractional_max_pool2d if self.n == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)  # (its own name)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    n = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)


init_named(AvgPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
init_named(AdaptiveAvgPool1d, AdaptiveAvgPool2d, owner="_AdaptiveAvgPoolNd")
init_named(AdaptiveMaxPool1d, AdaptiveMaxPool2d, owner="_AdaptiveMaxPoolNd")
