"""dropout as one NativeDropoutBackward0 node that saves only its boolean keep-mask.
The reference (primitive ops, autograd): nn/_functional/reference.py's dropout."""
from minigrad import backends
from minigrad.backends.arrays import keep_mask

from ._common import Function, Tensor, blockwise, check_tensor, once_differentiable, xp_of

class Dropout(Function):
    node_name = "NativeDropoutBackward0"
    backward_ignores_inputs = True  # (gx is g times the kept mask's scale: no x in it)

    @staticmethod
    def forward(ctx, x, p):  # y = x * keep / (1 - p)
        xd = x.array
        xp = xp_of(xd)
        ctx.scale = 1.0 / (1.0 - p)
        ctx.impl = backends.find("dropout", xd, p)
        if ctx.impl is not None:
            y, keep = ctx.impl.forward(xd, p)
        else:
            keep = keep_mask(xp, xd.shape, p)
            y = blockwise(_scale_kept, 0, xp.empty(xd.shape, xd.dtype), xd, keep, ctx.scale)
        ctx.save(mask=keep)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g * keep / (1 - p)
        keep = ctx._saved_mask.array
        gd = g.array
        if ctx.impl is not None:
            return Tensor(ctx.impl.backward(gd, keep, ctx.scale)), None
        return Tensor(blockwise(_scale_kept, 0, xp_of(gd).empty(gd.shape, gd.dtype), gd, keep, ctx.scale)), None


    @staticmethod
    def double_backward(ctx, g):  # create_graph through an incoming gradient that requires grad: recorded
        keep = ctx._saved_mask.array
        return g * Tensor(keep.astype(g.array.dtype) * ctx.scale), None


def _scale_kept(o, x, keep, scale):  # o = x * keep * scale
    xp_of(o).multiply(x, scale, out=o)
    o *= keep


def dropout(input, p=0.5, training=True, inplace=False):
    check_tensor(input, "input", "dropout")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    return Dropout.apply(input, float(p))
