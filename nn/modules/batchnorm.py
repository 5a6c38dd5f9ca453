"""BatchNorm1d and BatchNorm2d: per-channel normalization with running statistics, as PyTorch's."""
import minigrad
from minigrad.autograd import recording

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


def _count_batch(counter):
    """num_batches_tracked += 1, in place (a version bump); minigrad.compile replays it as one call (a
    write to the buffer's array outside an op would happen at the capture only)."""
    if recording.hook.recorder is not None:
        return recording.hook.recorder.on_call(_count_batch, counter)
    counter.array[...] += 1
    counter._bump_version()


class _BatchNorm(Module):
    _dims = ()  # the input ranks this layer takes
    _version = 2  # (PyTorch's: version 2 added num_batches_tracked)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(minigrad.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(minigrad.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", minigrad.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", minigrad.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", minigrad.tensor(0, dtype=minigrad.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def _upgrade_state_dict(self, local, prefix, version):
        # a state dict from before num_batches_tracked (or a plain dict, with no version) keeps this
        # layer's count, as PyTorch's: not a missing key
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.num_batches_tracked is not None and key not in local:
            local[key] = self.num_batches_tracked

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        """Running statistics to (0, 1, 0 batches), weight to ones, bias to zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def forward(self, input):
        if not isinstance(input, minigrad.Tensor):
            raise TypeError(f"{self._short_repr()}: expected a minigrad Tensor as input, got {type(input).__name__}")
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            _count_batch(self.num_batches_tracked)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        # batch statistics when training, and in eval without running statistics to use
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Shapes: (N, C) or (N, C, L) -> the same; statistics per channel C over N (and L)."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Shapes: (N, C, H, W) -> the same; statistics per channel C over N, H and W."""

    _dims = (4,)
