"""BatchNorm1d, 2d and 3d and SyncBatchNorm: per-channel normalization with running statistics, as PyTorch's."""
import minigrad
from minigrad.autograd import recording

from .. import functional as F
from .. import init
from ..module import Module, init_named
from ..parameter import Parameter


def _count_batch(counter):
    """num_batches_tracked += 1, in place (a version bump); minigrad.compile replays it as one call (a
    write to the buffer's array outside an op would happen at the capture only)."""
    if recording.hook.recorder is not None:
        return recording.hook.recorder.on_call(_count_batch, counter)
    counter.array[...] += 1
    counter._bump_version()


class _NormBase(Module):
    """What the batch and instance norms share (PyTorch's): the affine parameters and the running statistics."""

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
        # layer's count (0 where it has none), as PyTorch's: not a missing key
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in local:
            count = self.num_batches_tracked
            local[key] = minigrad.tensor(0, dtype=minigrad.int64) if count is None else count

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

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
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


class BatchNorm1d(_BatchNorm):
    """Shapes: (N, C) or (N, C, L) -> the same; statistics per channel C over N (and L)."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Shapes: (N, C, H, W) -> the same; statistics per channel C over N, H and W."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Shapes: (N, C, D, H, W) -> the same; statistics per channel C over N, D, H and W."""

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm of an input of any rank (N, C, *) -> the same, whose training statistics are those of the whole
    batch spread over the ranks of `process_group` (None: every rank), as PyTorch's: each rank's output and
    input gradient are those of one BatchNorm over all the ranks' inputs. In eval, outside an initialized
    minigrad.distributed, or in a group of one, it is plain BatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input):
        if not isinstance(input, minigrad.Tensor):
            raise TypeError(f"{self._short_repr()}: expected a minigrad Tensor as input, got {type(input).__name__}")
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        # (the collectives load with the first SyncBatchNorm: `import nn` leaves them out, as most scripts never sync)
        import minigrad.distributed as dist
        from .._functional.sync_batch_norm import sync_batch_norm

        world_size = 1
        if self.training and dist.is_initialized():
            world_size = dist.get_world_size(self.process_group or None)
        if world_size <= 1:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            _count_batch(self.num_batches_tracked)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        keep = self.track_running_stats
        return sync_batch_norm(input, self.weight, self.bias, self.running_mean if keep else None,
                               self.running_var if keep else None, self.eps, factor, self.process_group or None,
                               world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every BatchNorm*d in it (itself included) replaced by a SyncBatchNorm that shares its
        parameters, running statistics and mode; returns the converted module (the same one unless it was a
        BatchNorm itself)."""
        from .instancenorm import _InstanceNorm  # (instancenorm builds on this file)

        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


init_named(_BatchNorm)
