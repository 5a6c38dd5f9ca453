"""Ops PyTorch runs as one kernel with one backward node (AddmmBackward0, AddcmulBackward0, LogitBackward0,
Rot90Backward0, ...), which a training step may call: one Function each, forward on arrays, backward in
Tensor ops (twice differentiable). composite.py keeps their argument checks and calls these."""
import math

import numpy as np

from ..autograd.function import Function, keeps_operand_shapes
from ..device import array_module
from ..tensor import Tensor
from . import elementwise, matmul, reduction
from ._util import cast, in_float32, sum_to, sum_to_array
from ._util import quiet as _quiet, scaled as _scaled
from .special_array import rounded
from ..autograd.grad_mode import state


def _h(t):
    """t's conjugate transpose over its last two dims (its transpose, for real t): the adjoint of a product."""
    return t.mT.conj() if t.array.dtype.kind == "c" else t.mT


# ---- input * beta + (mat1 op mat2) * alpha ----------------------------------------------------------------
class _AddProduct(Function):
    """beta * input + alpha * product(a, b); subclasses give the product on arrays and its two gradients."""

    @staticmethod
    def product(a, b):
        raise NotImplementedError

    @staticmethod
    def grads(g, a, b):  # (the gradients of product(a, b) in a and in b, given g)
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, input, a, b, beta, alpha):
        need = ctx.needs_input_grad
        ctx.save(self=None, mat1=a if need[2] else None, mat2=b if need[1] else None)
        ctx.input_shape, ctx.beta, ctx.alpha = input.array.shape, beta, alpha
        prod = _scaled(cls.product(a.array, b.array), alpha)
        if beta == 0:  # input's values are not read (a NaN in it stays out), as in PyTorch
            return prod
        return _scaled(input.array, beta) + prod

    @classmethod
    def backward(cls, ctx, g):
        need = ctx.needs_input_grad
        _, a, b = ctx.saved_tensors
        gi = sum_to(_scaled(g, ctx.beta), ctx.input_shape) if need[0] else None
        ga, gb = cls.grads(_scaled(g, ctx.alpha), a, b, need[1], need[2])
        return gi, ga, gb, None, None


class Addmm(_AddProduct):  # mat1 @ mat2: g mat2^H, mat1^H g
    node_name = "AddmmBackward0"
    product = staticmethod(matmul.product)

    @staticmethod
    def grads(g, a, b, need_a, need_b):
        if not state.grad_enabled and g.array.dtype.kind != "c":  # no graph of the backward: the products on arrays
            return (Tensor._wrap(matmul.product(g.array, b.array.T)) if need_a else None,
                    Tensor._wrap(matmul.matmul_arrays(a.array.T, g.array)) if need_b else None)
        return (matmul.mm(g, _h(b)) if need_a else None), (matmul.mm(_h(a), g) if need_b else None)


class Addmv(_AddProduct):  # mat @ vec: g vec^H (outer), mat^H g
    node_name = "AddmvBackward0"
    product = staticmethod(matmul.matmul_arrays)

    @staticmethod
    def grads(g, a, b, need_a, need_b):
        bc = b.conj() if b.array.dtype.kind == "c" else b
        return (g.unsqueeze(1) * bc.unsqueeze(0) if need_a else None), (matmul.matmul(_h(a), g) if need_b else None)


class Baddbmm(_AddProduct):  # batch1 @ batch2 per batch: g batch2^H, batch1^H g
    node_name = "BaddbmmBackward0"
    product = staticmethod(matmul.matmul_arrays)

    @staticmethod
    def grads(g, a, b, need_a, need_b):
        return (matmul.bmm(g, _h(b)) if need_a else None), (matmul.bmm(_h(a), g) if need_b else None)


class Addbmm(_AddProduct):  # sum over the batch of batch1 @ batch2: each batch gets g
    node_name = "AddbmmBackward0"

    @staticmethod
    def product(a, b):
        return matmul.matmul_arrays(a, b).sum(0)

    @staticmethod
    def grads(g, a, b, need_a, need_b):
        return (matmul.matmul(g, _h(b)) if need_a else None), (matmul.matmul(_h(a), g) if need_b else None)


class Addr(_AddProduct):  # vec1 vec2^T: g vec2*, g^H vec1 (conjugated)
    node_name = "AddrBackward0"

    @staticmethod
    def product(a, b):
        return a[:, None] * b[None, :]

    @staticmethod
    def grads(g, a, b, need_a, need_b):
        ac, bc = (a.conj(), b.conj()) if g.array.dtype.kind == "c" else (a, b)
        return (matmul.matmul(g, bc) if need_a else None), (matmul.matmul(g.mT, ac) if need_b else None)


# ---- input + value * tensor1 (* or /) tensor2 ---------------------------------------------------------------
class Addcmul(Function):
    node_name = "AddcmulBackward0"

    @staticmethod
    def forward(ctx, input, t1, t2, value):  # input + value t1 t2
        need = ctx.needs_input_grad
        ctx.save(self=None, tensor1=t1 if need[2] else None, tensor2=t2 if need[1] else None)
        ctx.shapes, ctx.value = (input.array.shape, t1.array.shape, t2.array.shape), value
        if input.array.dtype == np.float16:  # PyTorch's half kernel: in float32 (value too), its (value t1) t2 + input
            # one fused multiply-add (as its compiler contracts it), rounded once: the float32 product is exact in float64
            return in_float32(lambda x, a, b: ((np.float32(value) * a).astype(np.float64) * b + x).astype(np.float32),
                              input.array, t1.array, t2.array)
        return input.array + _scaled(t1.array * t2.array, value)

    @staticmethod
    def backward(ctx, g):  # d = da + value (t2 dt1 + t1 dt2)
        need, (si, s1, s2) = ctx.needs_input_grad, ctx.shapes
        _, t1, t2 = ctx.saved_tensors
        gv = _scaled(g, ctx.value)
        if g.array.dtype.kind == "c":
            t1, t2 = (None if t1 is None else t1.conj()), (None if t2 is None else t2.conj())
        return (sum_to(g, si) if need[0] else None, sum_to(gv * t2, s1) if need[1] else None,
                sum_to(gv * t1, s2) if need[2] else None, None)


class Addcdiv(Function):
    node_name = "AddcdivBackward0"

    @staticmethod
    def forward(ctx, input, t1, t2, value):  # input + value t1 / t2
        need = ctx.needs_input_grad
        ctx.save(self=None, tensor1=t1 if need[2] else None, tensor2=t2 if need[1] or need[2] else None)
        ctx.shapes, ctx.value = (input.array.shape, t1.array.shape, t2.array.shape), value
        if input.array.dtype == np.float16:  # as Addcmul's
            return in_float32(lambda x, a, b: x + np.float32(value) * _quiet(np.divide, a, b), input.array, t1.array,
                              t2.array)
        return input.array + _scaled(_quiet(np.divide, t1.array, t2.array), value)

    @staticmethod
    def backward(ctx, g):  # d = da + value (dt1 / t2 - t1 dt2 / t2^2)
        need, (si, s1, s2) = ctx.needs_input_grad, ctx.shapes
        _, t1, t2 = ctx.saved_tensors
        if not state.grad_enabled and g.array.dtype.kind != "c":  # no graph of the backward: on arrays
            ga, gv, d = g.array, _scaled(g.array, ctx.value), t2.array
            q = gv / d
            return (Tensor._wrap(sum_to_array(ga, si)) if need[0] else None,
                    Tensor._wrap(sum_to_array(q, s1)) if need[1] else None,
                    Tensor._wrap(sum_to_array(-q * t1.array / d, s2)) if need[2] else None, None)
        gv = _scaled(g, ctx.value)
        if g.array.dtype.kind == "c":
            t1, t2 = (None if t1 is None else t1.conj()), t2.conj()
        return (sum_to(g, si) if need[0] else None, sum_to(gv / t2, s1) if need[1] else None,
                sum_to(-gv * t1 / (t2 * t2), s2) if need[2] else None, None)


# ---- elementwise ----------------------------------------------------------------------------------------
class NanToNum(Function):
    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):  # nan, inf, -inf replaced; the rest kept
        ctx.save(self=a)
        return array_module(a.array).nan_to_num(a.array, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):  # 1 where a is finite, 0 where it was replaced
        return elementwise.where(elementwise.isfinite(ctx._saved_self), g, 0.0), None, None, None


class Logit(Function):
    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, a, eps):  # log(x / (1 - x)), x = a clamped to [eps, 1 - eps]
        ctx.save(self=a)
        ctx.eps = eps
        x = a.array
        if eps is not None:  # (as PyTorch: 1 - eps in x's dtype, and below eps first: eps > 1/2 gives eps, not 1 - eps)
            lo = x.dtype.type(eps)
            x = array_module(x).where(x < lo, lo, array_module(x).minimum(x, 1 - lo))
        return _quiet(lambda x: array_module(x).log(x / (1.0 - x)), x)

    @staticmethod
    def backward(ctx, g):  # 1 / (a (1 - a)); outside [eps, 1 - eps] 0 (no eps: outside [0, 1] NaN)
        a, eps = ctx._saved_self, ctx.eps
        lo, hi, fill = (0.0, 1.0, math.nan) if eps is None else (eps, 1.0 - eps, 0.0)
        d = g / (a * (1.0 - a))
        if not state.grad_enabled:  # PyTorch's logit_backward kernel: g inf at 0 and 1 (+inf at a = -0.0, g > 0)
            d = elementwise.where((a == 0) | (a == 1), g * math.inf, d)
        return elementwise.where((a < lo) | (a > hi), fill, d), None


class Sinc(Function):
    node_name = "SincBackward0"

    @staticmethod
    def forward(ctx, a):  # sin(pi a) / (pi a), 1 at 0
        ctx.save(self=a)
        return _sinc_array(a.array)

    @staticmethod
    def backward(ctx, g):  # (cos(pi a) pi a - sin(pi a)) / (pi a^2), 0 where pi a^2 is 0
        a = ctx._saved_self
        zero = a * a * math.pi == 0  # (PyTorch's test: a tiny a, whose square underflows, gives 0 too, not 0/0)
        safe = elementwise.where(zero, 1.0, a)
        px = safe * math.pi
        d = (elementwise.cos(px) * px - elementwise.sin(px)) / (safe * safe * math.pi)
        return elementwise.where(zero, 0.0, g * (d.conj() if d.array.dtype.kind == "c" else d))


def _times_number(x, c):
    """x * c; float16 in float32 (c too), rounded once, as PyTorch's half multiplication by a number."""
    return in_float32(np.multiply, x, np.float32(c)) if x.dtype == np.float16 else x * c


def _sinc_array(x):
    if x.dtype == np.float16:  # PyTorch's half sinc: in float32, rounded once
        return in_float32(_sinc_array, x)
    xp = array_module(x)
    px = x * math.pi
    zero = x == 0
    # float32's sin in float64, rounded once: the C library's sinf that PyTorch's kernel calls (numpy's own is
    # an ulp off on some elements, by CPU)
    sin = rounded(xp.sin, px) if x.dtype == np.float32 else xp.sin(px)
    return xp.where(zero, 1.0, _quiet(np.divide, sin, xp.where(zero, 1.0, px))).astype(x.dtype, copy=False)


class Deg2Rad(Function):
    node_name = "Deg2RadBackward0"
    backward_ignores_inputs = True

    @staticmethod
    def forward(ctx, a):  # a pi / 180
        return _times_number(a.array, math.pi / 180.0)

    @staticmethod
    def backward(ctx, g):
        return g * (math.pi / 180.0)


class Rad2Deg(Function):
    node_name = "Rad2DegBackward0"
    backward_ignores_inputs = True

    @staticmethod
    def forward(ctx, a):  # a 180 / pi
        return _times_number(a.array, 180.0 / math.pi)

    @staticmethod
    def backward(ctx, g):
        return g * (180.0 / math.pi)


class Fmax(Function):
    node_name = "FmaxBackward0"
    pick = staticmethod(lambda xp, a, b: xp.isnan(b) | (a >= b))  # where the result is a (a NaN loses to a number)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        return xp.where(cls.pick(xp, a.array, b.array), a.array, b.array)

    @classmethod
    def backward(cls, ctx, g):  # g to the operand picked
        a, b = ctx.saved_tensors
        pick = Tensor._wrap(cls.pick(array_module(a.array), a.array, b.array))
        a_shape, b_shape = ctx._shapes
        need = ctx.needs_input_grad
        return (sum_to(elementwise.where(pick, g, 0.0), a_shape) if need[0] else None,
                sum_to(elementwise.where(pick, 0.0, g), b_shape) if need[1] else None)


class Fmin(Fmax):
    node_name = "FminBackward0"
    pick = staticmethod(lambda xp, a, b: xp.isnan(b) | (a <= b))


def _exp2_in(e, dtype):
    """2^e in `dtype`: a float32 one rounded once from float64, as the C library's powf that PyTorch's kernel
    calls (numpy's float32 power is an ulp off at times: 2^0.9999999)."""
    xp = array_module(e)
    if dtype == np.float32:
        return xp.power(2.0, e.astype(np.float64)).astype(np.float32)
    return xp.power(dtype.type(2.0), e.astype(dtype, copy=False))


class Ldexp(Function):
    node_name = "LdexpBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, e, scale_dtype, dtype):  # a 2^e, 2^e in scale_dtype, the product in dtype
        ctx.save(other=e)
        ctx.dtypes = scale_dtype, dtype, a.array.dtype
        p = _quiet(_exp2_in, e.array, scale_dtype)
        return _quiet(np.multiply, a.array.astype(dtype, copy=False), p.astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, g):  # d = 2^e da + result ln 2 de (the result itself, as PyTorch: where it overflowed, inf)
        e, result = ctx.saved_tensors
        scale_dtype, _, a_dtype = ctx.dtypes
        if e.array.dtype.kind == "f":  # (the formula's 2^other in other's own dtype, a 0-d one too)
            scale_dtype = e.array.dtype
        wide = np.dtype(np.float64) if scale_dtype == np.float32 else scale_dtype  # (rounded once, as forward)
        p = cast(elementwise.pow(2.0, cast(e, wide)), scale_dtype)
        a_shape, e_shape = ctx._shapes
        need = ctx.needs_input_grad
        return (cast(sum_to(g * p, a_shape), a_dtype) if need[0] else None,
                cast(sum_to(g * result * math.log(2.0), e_shape), e.array.dtype) if need[1] else None, None, None)


class Rot90(Function):
    node_name = "Rot90Backward0"
    backward_ignores_inputs = True

    @staticmethod
    def forward(ctx, a, k, d0, d1):  # k quarter turns from d0 towards d1 (a new tensor, strided as PyTorch's)
        ctx.turn = k, d0, d1
        xp, x = array_module(a.array), a.array
        if k == 1:
            return xp.swapaxes(xp.flip(x, d1).copy(), d0, d1)
        if k == 2:
            return xp.flip(x, (d0, d1)).copy(order="K")
        if k == 3:
            return xp.flip(xp.swapaxes(x, d0, d1), d1).copy(order="K")
        return x.copy(order="K")

    @staticmethod
    def backward(ctx, g):  # the turn undone
        k, d0, d1 = ctx.turn
        return Rot90.apply(g, (4 - k) % 4, d0, d1), None, None, None


keeps_operand_shapes(Fmax, Ldexp)  # (their callers keep the operands' shapes)


# ---- (var or std, mean) in one node ---------------------------------------------------------------------
class VarMean(Function):
    node_name = "VarMeanBackward0"
    spread = reduction.Var

    @classmethod
    def forward(cls, ctx, a, dims, correction, keepdim):  # (var or std, mean) over dims
        spread = cls.spread.forward(ctx, a, dims, correction, keepdim)
        ctx.shape = a.array.shape
        return spread, reduction._mean_array(a.array, dims, keepdim)

    @classmethod
    def backward(cls, ctx, g_spread, g_mean):  # the sum of the two reductions' gradients
        gs = None if g_spread is None else cls.spread.backward(ctx, g_spread)[0]
        gm = None if g_mean is None else reduction.Mean.backward(ctx, g_mean)[0]
        return (gm if gs is None else gs if gm is None else gs + gm), None, None, None


class StdMean(VarMean):
    node_name = "StdMeanBackward0"
    spread = reduction.Std
    saves_result = True  # (the std, which its gradient reads)
