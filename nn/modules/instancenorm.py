"""InstanceNorm1d, 2d and 3d: each channel of each sample normalized over its positions; the parameters and
running statistics (off by default) are BatchNorm's."""
from .. import functional as F
from .batchnorm import _NormBase


class _InstanceNorm(_NormBase):
    _batched = 0  # the input rank with a batch dim (one less: a single sample)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        if input.ndim not in (self._batched - 1, self._batched):
            raise ValueError(f"expected {self._batched - 1}D or {self._batched}D input (got {input.ndim}D input)")
        single = input.ndim == self._batched - 1
        x = input.unsqueeze(0) if single else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim={1 - single} to match num_features ({self.num_features}), "
                             f"but got: {x.shape[1]}.")
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if single else y


class InstanceNorm1d(_InstanceNorm):
    """Shapes: (N, C, L) or (C, L) -> the same."""

    _batched = 3


class InstanceNorm2d(_InstanceNorm):
    """Shapes: (N, C, H, W) or (C, H, W) -> the same."""

    _batched = 4


class InstanceNorm3d(_InstanceNorm):
    """Shapes: (N, C, D, H, W) or (C, D, H, W) -> the same."""

    _batched = 5
