"""Lazy modules: layers whose input size is read from their first input (`nn.LazyLinear(10)` learns its
in_features from the first batch), as PyTorch's. Until then their parameters are UninitializedParameter
(no shape); the first call materializes them in place, draws their initial values as the plain layer
does, and the module becomes that layer (a LazyLinear is then a Linear)."""
import itertools

import minigrad

from ..module import init_named
from ..parameter import UninitializedBuffer, UninitializedParameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear


class LazyModuleMixin:
    """Before a module's `__call__`: `initialize_parameters(*args)` from the first input, then the module
    becomes `cls_to_become` (whose `__call__` has no such step)."""

    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer))
                   for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            with minigrad.no_grad():
                self.initialize_parameters(*args, **kwargs)
            if self.has_uninitialized_params():
                raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        if self.cls_to_become is None:
            return super().__call__(*args, **kwargs)
        self.__class__ = self.cls_to_become
        return self(*args, **kwargs)  # (now the plain layer's call)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self._in_size() != 0:
            super().reset_parameters()


class LazyLinear(LazyModuleMixin, Linear):
    """nn.Linear with in_features read from the first input's last dim. Shapes: (*, in) -> (*, out_features)."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _in_size(self):
        return self.in_features

    def initialize_parameters(self, input):
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    _transposed = False

    def _in_size(self):
        return self.in_channels

    def _lazy_parameters(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input):
        self.in_channels = input.shape[0] if input.ndim == self._n + 1 else input.shape[1]  # (an unbatched input)
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        if self._transposed:
            self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
        else:
            self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    """nn.Conv1d with in_channels read from the first input."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    """nn.Conv2d with in_channels read from the first input."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    """nn.Conv3d with in_channels read from the first input."""

    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    """nn.ConvTranspose1d with in_channels read from the first input."""

    cls_to_become = ConvTranspose1d
    _transposed = True

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    """nn.ConvTranspose2d with in_channels read from the first input."""

    cls_to_become = ConvTranspose2d
    _transposed = True

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    """nn.ConvTranspose3d with in_channels read from the first input."""

    cls_to_become = ConvTranspose3d
    _transposed = True

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class _LazyBatchNormMixin(LazyModuleMixin):
    def _in_size(self):
        return self.num_features

    def _lazy_state(self, affine, track_running_stats, device, dtype):
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = minigrad.tensor(0, dtype=minigrad.int64, device=device)

    def initialize_parameters(self, input):
        self.num_features = input.shape[1]
        for t in (self.weight, self.bias, self.running_mean, self.running_var):
            if t is not None:
                t.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyBatchNormMixin, BatchNorm1d):
    """nn.BatchNorm1d with num_features read from the first input."""

    cls_to_become = BatchNorm1d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_state(affine, track_running_stats, device, dtype)


class LazyBatchNorm2d(_LazyBatchNormMixin, BatchNorm2d):
    """nn.BatchNorm2d with num_features read from the first input."""

    cls_to_become = BatchNorm2d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_state(affine, track_running_stats, device, dtype)


class LazyBatchNorm3d(_LazyBatchNormMixin, BatchNorm3d):
    """nn.BatchNorm3d with num_features read from the first input."""

    cls_to_become = BatchNorm3d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_state(affine, track_running_stats, device, dtype)


class _LazyInstanceNorm(_LazyBatchNormMixin):
    # (PyTorch's lazy instance norms are affine and track running statistics by default, unlike the plain ones)
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_state(affine, track_running_stats, device, dtype)


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """nn.InstanceNorm1d with num_features read from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """nn.InstanceNorm2d with num_features read from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """nn.InstanceNorm3d with num_features read from the first input."""

    cls_to_become = InstanceNorm3d


init_named(LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, _LazyInstanceNorm, owner="_LazyNormBase")
