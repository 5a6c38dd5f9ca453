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
        ctx.scale = 1.0 / (1.0 - p)
        ctx.impl = backends.find("dropout", x.array, p)
        y, keep = _forward(ctx.impl, x.array, p, ctx.scale)
        ctx.save(mask=keep)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g * keep / (1 - p)
        return Tensor._wrap(_backward(ctx.impl, g.array, ctx._saved_mask.array, ctx.scale)), None

    @staticmethod
    def array_step(needs, x, p):
        impl, scale = backends.find("dropout", x.array, p), 1.0 / (1.0 - p)
        prepared = getattr(impl, "prepared_step", None)  # (the backend's kernels looked up once)
        steps = None if prepared is None else prepared(x.array, p)
        if steps is not None:
            return steps
        return (lambda xd: _forward(impl, xd, p, scale)), (lambda keep, g: (_backward(impl, g, keep, scale),))


    @staticmethod
    def double_backward(ctx, g):  # create_graph through an incoming gradient that requires grad: recorded
        keep = ctx._saved_mask.array
        return g * Tensor._wrap(keep.astype(g.array.dtype) * ctx.scale), None


def _forward(impl, xd, p, scale):
    """(y, keep) for array xd: the mask drawn, the kept entries scaled (by `impl`, a backend, or numpy)."""
    if impl is not None:
        return impl.forward(xd, p)
    xp = xp_of(xd)
    keep = keep_mask(xp, xd.shape, p)
    return blockwise(_scale_kept, 0, xp.empty(xd.shape, xd.dtype), xd, keep, scale), keep


def _backward(impl, gd, keep, scale):
    if impl is not None:
        return impl.backward(gd, keep, scale)
    return blockwise(_scale_kept, 0, xp_of(gd).empty(gd.shape, gd.dtype), gd, keep, scale)


def _scale_kept(o, x, keep, scale):  # o = x * keep * scale
    xp_of(o).multiply(x, scale, out=o)
    o *= keep


class KeepMask(Function):
    """A 0/1 tensor of `shape` in `dtype`, each 1 with probability 1 - p (the channel and alpha dropouts'
    masks): drawn inside an op, so that minigrad.compile's replay draws it again from the generator."""

    @staticmethod
    def forward(ctx, like, shape, p):  # `like`: a tensor of the mask's dtype and device (no gradient flows to it)
        return keep_mask(xp_of(like.array), shape, p).astype(like.array.dtype)

    @staticmethod
    def backward(ctx, g):
        return None, None, None


def dropout(input, p=0.5, training=True, inplace=False):
    check_tensor(input, "input", "dropout")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * input.new_zeros(())  # (zeros in input's dtype, integers and bools too, as PyTorch's)
    if input.array.dtype.kind != "f":  # the kept values are scaled by 1 / (1 - p)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {input.dtype._legacy[:-6]}")
    return Dropout.apply(input, float(p))


def written(input, out, inplace):
    """`out`, or with `inplace` input given out's values and returned (an in-place write: its version moves,
    and autograd takes the gradient through it; a leaf that requires grad refuses it, as in PyTorch)."""
    return input.copy_(out) if inplace else out
