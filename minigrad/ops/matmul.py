"""Matrix products: `matmul` (`@`) for 1-D, 2-D and batched, broadcasting shapes."""
from ..autograd.function import Function
from ..device import array_module
from ._util import sum_to


class Matmul(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a if ctx.needs_input_grad[1] else None, mat2=b if ctx.needs_input_grad[0] else None)
        return array_module(a.data).matmul(a.data, b.data)

    @staticmethod
    def backward(ctx, g):  # d(AB) = dA B^T... : gA = g B^T, gB = A^T g (summed over broadcast batches)
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
        # treat vectors as matrices, as matmul does, so one formula serves every case
        if a_vec:
            g = g.unsqueeze(-2)
        if b_vec:
            g = g.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            B = b.unsqueeze(-1) if b_vec else b
            ga = g @ B.mT
            ga = sum_to(ga.squeeze(-2) if a_vec else ga, a_shape)
        if ctx.needs_input_grad[1]:
            A = a.unsqueeze(0) if a_vec else a
            gb = A.mT @ g
            gb = sum_to(gb.squeeze(-1) if b_vec else gb, b_shape)
        return ga, gb


class Dot(Matmul):
    node_name = "DotBackward0"


class Mv(Matmul):
    node_name = "MvBackward0"


class Bmm(Matmul):
    node_name = "BmmBackward0"


class BroadcastMatmul(Matmul):
    node_name = "MatmulBackward0"


def _check(a, b):
    sa, sb = a.data.shape, b.data.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        if len(sa) <= 2 and len(sb) <= 2:
            fa = "x".join(str(s) for s in (sa if len(sa) == 2 else (1,) + sa))
            fb = "x".join(str(s) for s in (sb if len(sb) == 2 else sb + (1,)))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({fa} and {fb})")
        raise RuntimeError(
            f"matmul: the last dim of the first tensor ({k_a}) must match the second-to-last dim of the second "
            f"({k_b}); shapes {list(sa)} and {list(sb)}"
        )
    if len(sa) > 2 and len(sb) > 2:
        from ._util import broadcast_shapes

        broadcast_shapes(sa[:-2], sb[:-2])


def matmul(input, other):
    """Matrix product with numpy's rules: 1-D operands are vectors, leading dims broadcast."""
    from ._util import binary_operands

    a, b = binary_operands(input, other)
    _check(a, b)
    na, nb = a.data.ndim, b.data.ndim
    if na == 2 and nb == 2:
        cls = Matmul
    elif na == 1 and nb == 1:
        cls = Dot
    elif na == 2 and nb == 1:
        cls = Mv
    elif na == 3 and nb == 3 and a.data.shape[0] == b.data.shape[0]:
        cls = Bmm
    else:
        cls = BroadcastMatmul
    out = cls.apply(a, b)
    if out.grad_fn is not None:
        out.grad_fn._shapes = (a.data.shape, b.data.shape)
    return out


mm = bmm = matmul


def dot(input, other):
    return matmul(input, other)
