"""LayerNorm: normalise over the trailing dimensions, then scale and shift."""
import numbers

import minigrad

from .. import functional as F
from .. import init
from .._functional.cross_map_lrn import cross_map_lrn2d
from ..module import Module
from ..parameter import Parameter


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims.

    Shapes: input (*, *normalized_shape) -> output of the same shape; weight and bias
    normalized_shape (weight ones, bias zeros). `bias=False` drops the bias (nanoGPT's option);
    `elementwise_affine=False` drops both.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(minigrad.empty(*self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(minigrad.empty(*self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the initial values again (PyTorch's init for this layer)."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):  # (F.layer_norm checks the input, with PyTorch's texts)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Each group of num_channels / num_groups channels normalized per sample, then weight and bias per channel.
    Shapes: input (N, C, *) -> the same; weight ones and bias zeros of (C,) when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        for name, wanted in (("weight", affine), ("bias", affine and bias)):
            value = Parameter(minigrad.empty(num_channels, device=device, dtype=dtype)) if wanted else None
            self.register_parameter(name, value)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims (eps None: the dtype's
    machine epsilon). Shapes: input (*, *normalized_shape) -> the same; weight ones of normalized_shape."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(minigrad.empty(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Each channel divided by (k + alpha * mean of the squares of the `size` channels around it)^beta.
    Shapes: (N, C, *) -> the same (see F.local_response_norm)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """PyTorch's legacy LRN across channels, on (N, C, H, W) input: x / (k + alpha/size * window sum of x^2)^beta,
    with its legacy windows (nn/_functional/cross_map_lrn.py); LocalResponseNorm is the one to use."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
