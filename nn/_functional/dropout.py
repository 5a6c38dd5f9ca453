"""dropout as one NativeDropoutBackward0 node that saves only its boolean keep-mask.
The reference (primitive ops, autograd): nn/_functional/reference.py's dropout."""
import numpy as np

import minigrad
from minigrad import backends

from ._common import Function, Tensor, blockwise, check_tensor, for_blocks, once_differentiable, xp_of

CHUNK = 1 << 20  # mask elements per random stream (fixed, so masks do not depend on the thread count)


def keep_mask(xp, shape, p):
    """A bool array, True with probability 1 - p, drawn from minigrad's default generator (so
    `minigrad.manual_seed` makes it reproducible).

    On the CPU each element compares 16 random bits with round(p * 65536) (p is used to 1/65536),
    which is twice as fast as drawing float32 uniforms; a large mask is cut in fixed chunks, each
    drawn from its own stream (seeded from the default generator).
    """
    if xp is not np:
        return minigrad.random.generator(xp).random(shape, dtype="float32") >= p
    n = int(np.prod(shape))
    gen = minigrad.random.generator(np).bit_generator
    threshold = int(round(p * 65536.0))
    mask = np.empty(n, dtype=bool)
    if n <= CHUNK:
        np.greater_equal(_bits16(gen, n), threshold, out=mask)
        return mask.reshape(shape)
    streams = np.random.SeedSequence(int(gen.random_raw())).spawn((n + CHUNK - 1) // CHUNK)

    def chunks(lo, hi):
        for c in range(lo, hi):
            a, b = c * CHUNK, min((c + 1) * CHUNK, n)
            np.greater_equal(_bits16(np.random.PCG64(streams[c]), b - a), threshold, out=mask[a:b])

    for_blocks(len(streams), chunks, 1)
    return mask.reshape(shape)


def _bits16(bit_generator, n):
    """n uniform uint16 values (raw generator output, 4 per 64-bit draw)."""
    return bit_generator.random_raw((n + 3) // 4).view(np.uint16)[:n]


class Dropout(Function):
    node_name = "NativeDropoutBackward0"

    @staticmethod
    def forward(ctx, x, p):  # y = x * keep / (1 - p)
        xd = x.array
        xp = xp_of(xd)
        ctx.scale = 1.0 / (1.0 - p)
        fast = backends.lookup("dropout", xd)
        if fast is not None:
            y, keep = fast.forward(xd, p)
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
        fast = backends.lookup("dropout", gd)
        if fast is not None:
            return Tensor(fast.backward(gd, keep, ctx.scale)), None
        return Tensor(blockwise(_scale_kept, 0, xp_of(gd).empty(gd.shape, gd.dtype), gd, keep, ctx.scale)), None


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
