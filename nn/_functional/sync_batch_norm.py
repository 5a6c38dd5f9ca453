"""SyncBatchNorm's op (PyTorch's torch.nn.modules._functions.SyncBatchNorm): batch norm whose statistics are
those of the whole batch spread over the ranks of a process group. The forward gathers every rank's
(mean, biased var, count) per channel and merges them; the backward all-reduces the two per-channel sums
that the input gradient needs, so every rank's gradient is the full batch's. Statistics and sums are kept
in float64, so the merged values round once, as one process's would. The weight and bias gradients stay
this rank's own (DistributedDataParallel averages them, as it does PyTorch's)."""
import numpy as np

import minigrad.distributed as dist

from ._common import Function, Tensor, once_differentiable, xp_of


def _axes(x):
    return (0,) + tuple(range(2, x.ndim))  # every dim but the channels (dim 1)


def _per_channel(v, x):
    """A (C,) float64 array shaped to broadcast over x (N, C, *), in x's dtype."""
    return v.astype(x.dtype, copy=False).reshape((1, -1) + (1,) * (x.ndim - 2))


class SyncBatchNorm(Function):
    node_name = "SyncBatchNormBackward"

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        x = input.array
        xp = xp_of(x)
        C = x.shape[1]
        n = x.size // C if C else 0
        if n > 0:  # this rank's statistics: mean = sum x / n;  var = sum (x - mean)^2 / n
            mean = x.sum(axis=_axes(x), dtype=np.float64) / n
            d = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
            var = (d * d).sum(axis=_axes(x)) / n
            mine = xp.concatenate([mean, var, xp.asarray([float(n)])])
        else:  # an empty batch still joins the collective, with a count of 0 (its row is then left out)
            mine = xp.zeros(2 * C + 1, dtype=np.float64)
        rows = [Tensor._wrap(xp.empty_like(mine)) for _ in range(world_size)]
        dist.all_gather(rows, Tensor._wrap(mine), process_group)
        every = xp.stack([r.array for r in rows])
        every = every[every[:, -1] >= 1]
        means, vars_, counts = every[:, :C], every[:, C:2 * C], every[:, -1:]
        # the whole batch's: N = sum n_r;  mean = sum n_r mean_r / N;  var = sum n_r (var_r + (mean_r - mean)^2) / N
        N = counts.sum()
        mean = (counts * means).sum(axis=0) / N
        var = (counts * (vars_ + (means - mean) ** 2)).sum(axis=0) / N
        invstd = 1.0 / xp.sqrt(var + eps)
        if running_mean is not None:  # PyTorch's update: the unbiased variance var N / (N - 1) into running_var
            with np.errstate(divide="ignore", invalid="ignore"):
                unbiased = var * (N / (N - 1))
            for buf, new in ((running_mean, mean), (running_var, unbiased)):
                buf.array[...] = (1.0 - momentum) * buf.array + momentum * new.astype(buf.array.dtype, copy=False)
                buf._bump_version()
        ctx.save(input=input, weight=weight)
        ctx.mean, ctx.invstd, ctx.count, ctx.process_group = mean, invstd, N, process_group
        if n == 0:
            return xp.empty_like(x)
        # y = (x - mean) invstd w + b = x scale + shift per channel
        scale = invstd if weight is None else invstd * weight.array
        shift = -mean * scale if bias is None else bias.array - mean * scale
        y = x * _per_channel(scale, x)
        y += _per_channel(shift, x)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        # x_hat = (x - mean) invstd;  gw = sum g x_hat;  gb = sum g  (this rank's sums)
        # gx = invstd w (g - sum_all g / N - x_hat sum_all(g x_hat) / N), the sums over every rank
        x, weight = ctx.saved_tensors
        x, g = x.array, grad_output.array
        xp = xp_of(x)
        needs = ctx.needs_input_grad
        C = x.shape[1]
        if x.size == 0:  # no gradient here, but the other ranks wait for this rank's (zero) sums
            if needs[0]:
                dist.all_reduce(Tensor._wrap(xp.zeros(2 * C, dtype=np.float64)), group=ctx.process_group)
            return (None,) * 9
        invstd = ctx.invstd
        xhat = (x - _per_channel(ctx.mean, x)) * _per_channel(invstd, x)
        sum_dy = g.sum(axis=_axes(x), dtype=np.float64)
        sum_dy_xhat = (g * xhat).sum(axis=_axes(x), dtype=np.float64)
        gx = None
        if needs[0]:
            sums = Tensor._wrap(xp.concatenate([sum_dy, sum_dy_xhat]))
            dist.all_reduce(sums, group=ctx.process_group)
            total_dy, total_dy_xhat = sums.array[:C], sums.array[C:]
            k = invstd if weight is None else invstd * weight.array
            gx = g - _per_channel(total_dy / ctx.count, x)
            gx -= xhat * _per_channel(total_dy_xhat / ctx.count, x)
            gx *= _per_channel(k, x)
        dtype = x.dtype if weight is None else weight.array.dtype
        gw = Tensor._wrap(sum_dy_xhat.astype(dtype)) if weight is not None and needs[1] else None
        gb = Tensor._wrap(sum_dy.astype(dtype)) if weight is not None and needs[2] else None
        return (None if gx is None else Tensor._wrap(gx)), gw, gb, None, None, None, None, None, None


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
    """Batch norm in training with the statistics of every rank's batch in `process_group` (None: the world)."""
    return SyncBatchNorm.apply(input, weight, bias, running_mean, running_var, float(eps), float(momentum),
                               process_group, int(world_size))
