"""PyTorch's legacy CrossMapLRN2d (nn.CrossMapLRN2d's op): local response normalization across channels, with
the forward's and backward's channel windows exactly as PyTorch's legacy code sums them (which differ from each
other and from F.local_response_norm's), so that values and gradients are PyTorch's."""
from minigrad.device import array_module

from ._common import Function, Tensor, once_differentiable


def _window_sums(a, lo, hi):
    """sum of a[:, lo[c]:hi[c]] along the channel dim (1) for every channel c, by a running sum."""
    xp = array_module(a)
    run = xp.concatenate([xp.zeros_like(a[:, :1]), xp.cumsum(a, axis=1)], axis=1)
    return run[:, hi] - run[:, lo]


class CrossMapLRN2d(Function):
    node_name = "CrossMapLRN2dBackward"

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        x = input.array
        xp = array_module(x)
        C = x.shape[1]
        pre_pad = int((size - 1) / 2 + 1)
        c = xp.arange(C)
        # channels c - pre_pad + 1 .. c + pre_pad - 1; PyTorch's running sum never drops channel 0 (it drops
        # channel c - pre_pad only once c > pre_pad), and that is kept
        lo = xp.where(c > pre_pad, c - pre_pad + 1, 0)
        squares = x * x
        scale = _window_sums(squares, lo, xp.minimum(c + pre_pad, C))
        scale[:, c > pre_pad] += squares[:, :1]
        scale = scale * (alpha / size) + k  # scale = k + alpha/size * sum of the window's x^2
        out = scale ** -beta * x
        ctx.save(input=input)
        ctx.scale, ctx.out, ctx.size, ctx.alpha, ctx.beta = scale, out, size, alpha, beta
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        # dx = scale^-beta g - 2 alpha beta / size * x * (sum over a window of g out / scale), PyTorch's window
        x, ga = ctx._saved_input.array, g.array
        xp = array_module(x)
        C, size = x.shape[1], ctx.size
        ratio = ga * ctx.out / ctx.scale
        c = xp.arange(C)
        start = c - int(size - (size - 1) / 2)
        acc = _window_sums(ratio, xp.clip(start, 0, C), xp.clip(start + size, 0, C))
        grad = ctx.scale ** -ctx.beta * ga - (2 * ctx.alpha * ctx.beta / size) * x * acc
        return Tensor._wrap(grad), None, None, None, None


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    return CrossMapLRN2d.apply(input, size, alpha, beta, k)
