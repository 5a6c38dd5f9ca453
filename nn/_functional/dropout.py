"""dropout as one NativeDropoutBackward0 node that saves only its boolean keep-mask."""
import minigrad

from ._common import Function, Tensor, check_tensor, once_differentiable, xp_of


def keep_mask(xp, shape, p):
    """A bool array, True with probability 1 - p, from minigrad's default generator (manual_seed-able)."""
    u = minigrad.random.generator(xp).random(shape, dtype="float32")
    return u >= p


class Dropout(Function):
    node_name = "NativeDropoutBackward0"

    @staticmethod
    def forward(ctx, x, p):  # y = x * keep / (1 - p)
        xd = x.data
        xp = xp_of(xd)
        keep = keep_mask(xp, xd.shape, p)
        ctx.scale = 1.0 / (1.0 - p)
        ctx.save(mask=Tensor(keep))
        out = xp.multiply(xd, ctx.scale)
        out *= keep
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g * keep / (1 - p)
        keep = ctx._saved_mask.data
        gx = xp_of(keep).multiply(g.data, ctx.scale)
        gx *= keep
        return Tensor(gx), None


def dropout(input, p=0.5, training=True, inplace=False):
    check_tensor(input, "input", "dropout")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    return Dropout.apply(input, float(p))
