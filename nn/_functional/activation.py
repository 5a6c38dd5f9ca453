"""gelu, relu, softmax and log_softmax, each one backward node on raw arrays.

The elementwise math runs block by block, one block after the other (see `_common.for_blocks`):
every pass over a block stays in cache. Constants are Python floats, so
float32 stays float32.
"""
import math
import warnings

import numpy as np

from minigrad import backends
from minigrad.ops import elementwise, reduction
from minigrad.ops.scatter import make_inplace
from minigrad.ops._util import in_float32
from minigrad.backends.arrays import pick
from minigrad.ops.special_array import ERF32_ALPHA, ERF32_BETA, erf
from minigrad.tensor import dtype_argument, int_argument

from . import reference
from ._common import (
    Function, Tensor, blockwise, check_tensor, once_differentiable, second_order, xp_of,
)

SQRT1_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
K_TANH = math.sqrt(2.0 / math.pi)
A_TANH = 0.044715


# float32 gelu(x) = x (1/2 + c P(c^2) / Q(c^2)),  c = clip(x, +-4 sqrt2): special_array.py's float32 rational for
# erf(u), u = x / sqrt2, with the 1/sqrt2 and the outer 1/2 folded into its coefficients (u^2 = c^2 / 2,
# powers of two, exact), which saves two of the 29 passes over each block. Past the clip the folded
# constant can round to just below -1/2; the max with 0 keeps gelu(x) from turning positive there.
_GELU_CLIP = 4.0 * math.sqrt(2.0)
_GELU_P = tuple(a * 0.5 * SQRT1_2 / 2.0 ** (len(ERF32_ALPHA) - 1 - j) for j, a in enumerate(ERF32_ALPHA))
_GELU_Q = tuple(b / 2.0 ** (len(ERF32_BETA) - 1 - j) for j, b in enumerate(ERF32_BETA))


def _horner(q, z, coeffs):  # q = coeffs[0] z^n + ... + coeffs[n]
    np.multiply(z, coeffs[0], out=q)
    for a in coeffs[1:-1]:
        q += a
        q *= z
    q += coeffs[-1]


def _gelu_fwd(o, x, s1, s2):  # gelu(x) = x/2 (1 + erf(x/sqrt2))
    if type(x) is np.ndarray and x.dtype != np.float64:  # the folded float32 form above
        x.clip(-_GELU_CLIP, _GELU_CLIP, out=o)  # the method: half the call overhead of np.clip
        np.multiply(o, o, out=s1)
        _horner(s2, s1, _GELU_P)
        o *= s2
        _horner(s2, s1, _GELU_Q)
        o /= s2
        o += 0.5
        np.maximum(o, 0.0, out=o)
        o *= x
        return
    xp = xp_of(x)
    xp.multiply(x, SQRT1_2, out=o)
    erf(o, out=o)
    o += 1.0
    o *= x
    o *= 0.5


def _gelu_bwd_from_out(o, x, y, g, s1):  # gelu'(x) = Phi(x) + x phi(x), with Phi(x) = y / x from the output
    xp = xp_of(x)
    xp.multiply(x, x, out=s1)
    s1 *= -0.5
    xp.exp(s1, out=s1)
    s1 *= x
    s1 *= INV_SQRT_2PI  # x phi(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        xp.divide(y, x, out=o)  # Phi(x): no second erf
    xp.copyto(o, 0.5, where=x == 0.0)  # 0/0 at x = 0, where Phi = 1/2
    o += s1
    o *= g


def _gelu_tanh_fwd(o, x, s1):  # gelu(x) ~ x/2 (1 + tanh(k (x + a x^3)))
    xp = xp_of(x)
    xp.multiply(x, x, out=o)
    o *= A_TANH
    o += 1.0
    o *= x
    o *= K_TANH
    xp.tanh(o, out=o)
    o += 1.0
    o *= x
    o *= 0.5


def _gelu_tanh_bwd(o, x, g, s1, s2):  # d/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3a x^2),  t = tanh(k (x + a x^3))
    xp = xp_of(x)
    xp.multiply(x, x, out=s1)
    xp.multiply(s1, A_TANH, out=o)
    o += 1.0
    o *= x
    o *= K_TANH
    xp.tanh(o, out=o)  # t
    s1 *= 3.0 * A_TANH
    s1 += 1.0
    s1 *= x
    s1 *= 0.5 * K_TANH  # x/2 k (1 + 3a x^2)
    xp.multiply(o, o, out=s2)
    xp.subtract(1.0, s2, out=s2)  # 1 - t^2
    s1 *= s2
    o += 1.0
    o *= 0.5
    o += s1
    o *= g


def _gelu_forward(x, approximate, impl):
    """The backend `impl`'s forward, or (None) the numpy (or cupy) passes."""
    if x.dtype == np.float16:  # in float32, rounded once, as PyTorch computes half (the float32 forms overflow it)
        return _gelu_forward(x.astype(np.float32), approximate, None).astype(np.float16)
    if impl is not None:
        return impl.forward(x, approximate)
    out = xp_of(x).empty(x.shape, dtype=x.dtype)
    if approximate == "tanh":
        return blockwise(_gelu_tanh_fwd, 1, out, x)
    return blockwise(_gelu_fwd, 2, out, x)


def _gelu_backward(xd, y, g, approximate, impl):
    """gx for the input xd and (the exact form) the output y, by the backend `impl` or numpy's passes."""
    if xd.dtype == np.float16:  # (in float32, as the forward; its output again in float32, not the rounded one)
        x32 = xd.astype(np.float32)
        y32 = None if approximate == "tanh" else _gelu_forward(x32, approximate, None)
        return _gelu_backward(x32, y32, g.astype(np.float32), approximate, None).astype(np.float16)
    if impl is not None:
        return impl.backward(xd, y, g, approximate)
    gx = xp_of(xd).empty(xd.shape, dtype=xd.dtype)
    if approximate == "tanh":
        blockwise(_gelu_tanh_bwd, 2, gx, xd, g)
    else:
        blockwise(_gelu_bwd_from_out, 1, gx, xd, y, g)
    return gx


class Gelu(Function):
    """gelu(x) = x Phi(x), Phi the standard normal CDF; the reference is nn/_functional/reference.py's gelu."""

    node_name = "GeluBackward0"
    # The output is saved too: the next layer keeps that same array alive anyway (no extra memory),
    # and backward then gets Phi(x) = gelu(x) / x with one division instead of a second erf.
    saves_result = True

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save(self=x)
        ctx.approximate = approximate
        ctx.impl = backends.find("gelu", x.array, approximate)
        return _gelu_forward(x.array, approximate, ctx.impl)

    @staticmethod
    def array_forward(x, approximate):
        impl = backends.find("gelu", x.array, approximate)
        return lambda x: _gelu_forward(x, approximate, impl)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g (Phi(x) + x phi(x))
        y = None if ctx.approximate == "tanh" else ctx._saved_result.array  # (the tanh form keeps no output)
        return Tensor._wrap(_gelu_backward(ctx._saved_self.array, y, g.array, ctx.approximate, ctx.impl)), None

    @staticmethod
    def array_step(needs, x, approximate):
        impl = backends.find("gelu", x.array, approximate)
        prepared = getattr(impl, "prepared_step", None)  # (the backend's kernels looked up once)
        steps = None if prepared is None else prepared(x.array, approximate)
        if steps is not None:
            return steps

        def forward(xd):
            y = _gelu_forward(xd, approximate, impl)
            return y, (xd, None if approximate == "tanh" else y)  # (the tanh form keeps no output)

        return forward, lambda saved, g: (_gelu_backward(saved[0], saved[1], g, approximate, impl),)


    @staticmethod
    def double_backward(ctx, g):  # create_graph: gx = g (Phi(x) + x phi(x)) as recorded ops
        x = ctx._saved_self
        if ctx.approximate == "tanh":  # d/dx 0.5 x (1 + t), t = tanh(k (x + c x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
            k, c = math.sqrt(2.0 / math.pi), 0.044715
            t = (k * (x + c * x * x * x)).tanh()
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)), None
        phi = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return g * (0.5 * (1 + (x * (1 / math.sqrt(2.0))).erf()) + x * phi), None


class GeluTanh(Gelu):
    """The tanh form's backward needs only the input."""

    node_name = "GeluBackward0"
    saves_result = False


def gelu(input, approximate="none"):
    check_tensor(input, "input", "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{input.dtype._legacy[:-6]}'")
    return (GeluTanh if approximate == "tanh" else Gelu).apply(input, approximate)


def _relu_backward(y, g):
    return elementwise.relu_backward_array(g, y)


class Relu(Function):
    node_name = "ReluBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, x):  # relu(x) = max(x, 0)
        return elementwise.relu_array(x.array)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # d relu = [y > 0] g (a NaN y passes g, as PyTorch's)
        return Tensor._wrap(_relu_backward(ctx._saved_result.array, g.array))

    @staticmethod
    def array_step(needs, x):
        def forward(xd):
            y = elementwise.relu_array(xd)
            return y, y

        return forward, lambda y, g: (_relu_backward(y, g),)

    @staticmethod
    def double_backward(ctx, g):  # create_graph: g where y > 0 (or NaN), one recorded node as PyTorch's
        return elementwise.ThresholdBackward.apply(g, ctx._saved_result, 0.0)


class Threshold(Function):
    node_name = "ThresholdBackward0"

    @staticmethod
    def forward(ctx, x, threshold, value):  # value where x <= threshold, else x (a NaN x stays, as PyTorch's)
        ctx.save(self=x)
        ctx.threshold = threshold
        xd = x.array
        return xp_of(xd).where(xd <= threshold, xd.dtype.type(value), xd)

    @staticmethod
    def backward(ctx, g):
        x, threshold = ctx._saved_self, ctx.threshold
        if _recording():
            return elementwise.ThresholdBackward.apply(g, x, threshold), None, None
        return Tensor._wrap(elementwise.ThresholdBackward.grad_array(g.array, x.array, threshold)), None, None


class _Shrink(Function):
    """hardshrink and softshrink: the gradient passes where |x| > lambd (and at NaN), as PyTorch's shrink_backward."""

    @classmethod
    def forward(cls, ctx, x, lambd):
        ctx.save(self=x)
        ctx.lambd = lambd
        return cls.shrink_array(x.array, x.array.dtype.type(lambd))

    @classmethod
    def backward(cls, ctx, g):
        x, lambd = ctx._saved_self, ctx.lambd
        if _recording():
            return cls.backward_cls.apply(g, x, lambd), None
        return Tensor._wrap(ShrinkBackward.grad_array(g.array, x.array, lambd)), None


class ShrinkBackward(elementwise.PiecewiseBackward):
    node_name = "HardshrinkBackwardBackward0"

    @staticmethod
    def grad_array(g, xd, lambd):
        lambd = xd.dtype.type(lambd)
        inside = (xd >= -lambd) & (xd <= lambd)
        return xp_of(xd).where(inside, xd.dtype.type(0), g)


class SoftshrinkBackward(ShrinkBackward):
    node_name = "SoftshrinkBackwardBackward0"


class Hardshrink(_Shrink):
    node_name = "HardshrinkBackward0"
    backward_cls = ShrinkBackward

    @staticmethod
    def shrink_array(xd, lambd):  # 0 on [-lambd, lambd], else x (NaN stays NaN)
        return xp_of(xd).where((xd >= -lambd) & (xd <= lambd), xd.dtype.type(0), xd)


class Softshrink(_Shrink):
    node_name = "SoftshrinkBackward0"
    backward_cls = SoftshrinkBackward

    @staticmethod
    def shrink_array(xd, lambd):  # x * 0 in between, as PyTorch's: -0.0 for negative x, NaN for NaN
        xp = xp_of(xd)
        return xp.where(xd > lambd, xd - lambd, xp.where(xd < -lambd, xd + lambd, xd * 0))


def _shrinkable(input, kernel):
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")


_IN_PLACE = {}  # activation -> its in-place form (make_inplace), made on first use


def relu_(input):
    """relu written into input: with nothing to record, one pass over its array; recorded, relu of input
    itself (no clone: the node saves its result, not its input) written back."""
    return _relu_in_place(input)


def _in_place(fn, input, *args):
    """`fn(input, *args, inplace=True)`: input itself, holding fn's result (PyTorch's relu_ and the like: its
    version bumped, its history the op's node; the op runs on a copy, so what it saves is not overwritten)."""
    op = _IN_PLACE.get(fn)
    if op is None:
        op = _IN_PLACE[fn] = make_inplace(fn, fn.__name__)
    return op(input, *args)


def relu(input, inplace=False):
    if inplace:
        return _relu_in_place(input)
    check_tensor(input, "input", "relu")
    if input.array.dtype.kind != "f":  # integers: the engine's relu keeps their dtype (and refuses bools), as PyTorch
        return _mg().relu(input)
    return Relu.apply(input)


_relu_in_place = make_inplace(relu, "relu", into=elementwise.relu_into, clone=False)


# ---- softmax / log_softmax: minigrad's own ops (one SoftmaxBackward0 / LogSoftmaxBackward0 node) ----
def _softmax_args(input, dim, dtype, name):
    check_tensor(input, "input", name)
    dtype = dtype_argument(dtype, name)
    if dtype is not None:
        input = input.to(dtype)
    dim = int_argument(dim, name, "'dim' (position 1)")  # (F.softmax is the method's: its position)
    n = max(input.array.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    if input.array.dtype.kind != "f" and input.array.size:  # (integers and bools: dtype= says what to compute in)
        raise reduction.softmax_dtype_error(input, dim % n, name)
    return input, dim % n


def _implicit_dim(name, input, stacklevel):
    """PyTorch's legacy choice of dim when none is given, with its deprecation warning (stacklevel counted
    from here, as PyTorch's _get_softmax_dim)."""
    check_tensor(input, "input", name)
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if input.ndim in (0, 1, 3) else 1


# (_stacklevel + 1 below: F.softmax and F.log_softmax are nn/functional.py's, which call these)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmax", input, _stacklevel + 1)
    return _rows_op(input, dim, dtype, "softmax", reduction.Softmax.rows_apply, reference.softmax)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("log_softmax", input, _stacklevel + 1)
    return _rows_op(input, dim, dtype, "log_softmax", reduction.LogSoftmax.rows_apply, reference.log_softmax)


def _rows_op(input, dim, dtype, name, fused, ref):
    op = backends.pick(fused, ref)
    if dtype is None and type(input) is Tensor and type(dim) is int:  # the usual: checked in one place
        a = input.array
        nd = a.ndim
        if nd and a.dtype.kind == "f" and -nd <= dim < nd:
            return op(input, dim % nd)
    input, dim = _softmax_args(input, dim, dtype, name)
    if input.array.ndim == 0 and op is ref:  # (the reference's reductions: a 0-d input as one element)
        return op(input.reshape(1), 0).reshape(())
    return op(input, dim)  # (the fused op takes a 0-d input itself: one node, as PyTorch's)


def sigmoid(input):
    """1 / (1 + e^-x): minigrad.sigmoid. Shape: (*) -> (*)."""
    if isinstance(input, Tensor) and input.array.dtype.kind == "f":
        return elementwise.Sigmoid.apply(input)
    return input.sigmoid()  # (the engine's op: its promotion of integers, its errors)


# ---- more activations (silu ... softmin): forward on arrays; backward on arrays too, unless create_graph=True
# asks for its graph (grad mode on during backward): then in Tensor ops of the saved input, differentiated again.
# A piecewise op picks its pieces (`pick`, `where`), never multiplies by a 0/1 mask: an inf or NaN gradient
# where a piece has slope 0 gives 0 there, as PyTorch's
def _floating(t, name):
    """PyTorch's refusal of integer input to a smooth activation (NotImplementedError naming the dtype)."""
    check_tensor(t, "input", name)
    if t.array.dtype.kind != "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{t.dtype._legacy[:-len("Tensor")]}\'')


def _softplus_array(z):
    """log(1 + e^z) as PyTorch computes it (softplus below its threshold, mish): e^z overflows past 88 in
    float32, where the result is then inf as PyTorch's. (numpy's logaddexp, which would not overflow, is a
    scalar loop of C library calls, ~40 times numpy's vectorized exp and log1p.)"""
    if z.ndim == 0:  # (a ufunc gives a 0-d input back as a scalar, which log1p's out= cannot write into)
        return _softplus_array(z.reshape(1)).reshape(())
    xp = xp_of(z)
    with np.errstate(over="ignore"):  # (an inf there is the value, as PyTorch's, and softplus' threshold skips it)
        e = xp.exp(z)
    return xp.log1p(e, out=e)


def _recording():  # whether backward runs under create_graph=True, whose result must be a graph
    return _mg().is_grad_enabled()


def _mg():  # minigrad's Tensor ops (imported late: nn imports minigrad, this keeps module loading flat)
    import minigrad

    return minigrad


class Silu(Function):
    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):  # silu(x) = x sigmoid(x)
        ctx.save(self=x)
        impl = backends.find("sigmoid", x.array)
        if impl is not None:  # the backend's sigmoid and product in one call
            return impl.silu(x.array)
        if x.array.dtype == np.float16:
            return in_float32(_silu_array, x.array)
        return _silu_array(x.array)

    @staticmethod
    def backward(ctx, g):  # silu' = s (1 + x (1 - s)),  s = sigmoid(x)
        x = ctx._saved_self
        if not _mg().is_grad_enabled():  # no graph of the backward wanted: on the arrays
            if x.array.dtype == np.float16:
                return Tensor._wrap(in_float32(_silu_grad_array, g.array, x.array))
            return Tensor._wrap(_silu_grad_array(g.array, x.array))
        s = _mg().sigmoid(x)
        return g * (s * (x * (1.0 - s) + 1.0))


def _silu_array(x):
    s = elementwise._sigmoid(None, x)
    if type(s) is np.ndarray and s.dtype == x.dtype:  # (a new array of x's: the product into it)
        return np.multiply(x, s, out=s)
    return x * s


def _silu_grad_array(g, x):
    s = _sigmoid_array(x)
    return g * (s * (x * (1.0 - s) + 1.0))


def _sigmoid_array(x):  # minigrad.sigmoid's forward on an array (a backend's loop where one takes it)
    return elementwise._sigmoid(backends.find("sigmoid", x), x)


class Mish(Function):
    node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, x):  # mish(x) = x tanh(softplus(x))
        ctx.save(self=x)
        return x.array * xp_of(x.array).tanh(_softplus_array(x.array))

    @staticmethod
    def backward(ctx, g):  # mish' = t + x (1 - t^2) sigmoid(x),  t = tanh(softplus(x))
        x = ctx._saved_self
        if not _recording():
            return Tensor._wrap(_mish_grad_array(x.array, g.array))
        mg = _mg()
        t = mg.tanh(Softplus.apply(x, 1.0, 20.0))
        return g * (t + x * (1.0 - t * t) * mg.sigmoid(x))


def _mish_grad_array(xd, g):
    if xd.ndim == 0:  # (a ufunc gives a 0-d input back as a scalar, which the in-place steps cannot write into)
        return _mish_grad_array(xd.reshape(1), g.reshape(1)).reshape(())
    xp = xp_of(xd)
    t = xp.tanh(_softplus_array(xd))
    d = t * t
    xp.subtract(1.0, d, out=d)
    d *= xd
    d *= _sigmoid_array(xd)
    d += t
    d *= g
    return d


class Elu(Function):
    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):  # elu(x) = scale (x if x > 0 else alpha (e^(input_scale x) - 1))
        ctx.save(self=x)
        ctx.params = alpha, scale, input_scale
        return _elu_array(x.array, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, g):  # elu' = scale alpha input_scale e^(input_scale x) where x <= 0, else scale (NaN x too)
        x = ctx._saved_self
        alpha, scale, input_scale = ctx.params
        if not _recording():
            return Tensor._wrap(_elu_grad_array(x.array, g.array, alpha, scale, input_scale)), None, None, None
        neg = x.array <= 0
        e = _mg().exp(x.clamp(max=0.0) * input_scale) * (alpha * input_scale * scale)
        return _mg().where(Tensor._wrap(neg), g * e, g * scale), None, None, None


class EluInPlace(Elu):
    """elu_, selu_ and celu_: PyTorch names the in-place forms' nodes apart, as their formula reads the result
    (overwritten input) where this one reads the input it copied: the same derivative. Reading the result
    needs a positive slope, so PyTorch refuses the rest in backward."""
    node_name = "EluBackward1"

    @staticmethod
    def backward(ctx, g):
        if ctx.params[0] < 0:
            raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                               "supported. This is caused by calling in-place forward function with a negative "
                               "slope, please call out-of-place version instead.")
        return Elu.backward(ctx, g)


class CeluInPlace(EluInPlace):
    node_name = "CeluBackward1"


def elu_node_(input, alpha=1.0):
    """elu with the in-place forms' node (make_inplace writes it back)."""
    _floating(input, "elu")
    return EluInPlace.apply(input, float(alpha), 1.0, 1.0)


def selu_node_(input):
    _floating(input, "elu")
    return EluInPlace.apply(input, SELU_ALPHA, SELU_SCALE, 1.0)


def celu_node_(input, alpha=1.0):
    _floating(input, "elu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return CeluInPlace.apply(input, float(alpha), 1.0, 1.0 / alpha)


elu_node_.__name__, selu_node_.__name__, celu_node_.__name__ = "elu", "selu", "celu"  # (make_inplace's messages)


def _elu_array(xd, alpha, scale, input_scale):
    if xd.ndim == 0:  # (a ufunc gives a 0-d input back as a scalar, which expm1's out= cannot write into)
        return _elu_array(xd.reshape(1), alpha, scale, input_scale).reshape(())
    xp = xp_of(xd)
    # alpha (e^(input_scale min(x, 0)) - 1) - min(-x, 0): each term is 0 where the other counts, so no where
    # (with random signs a branch per element in numpy); on a tie numpy's minimum gives its second operand,
    # so x = -0.0 gives -0.0, as PyTorch's
    y = xp.minimum(0.0, xd)
    if input_scale != 1.0:
        y *= input_scale
    xp.expm1(y, out=y)
    y *= alpha
    y -= xp.minimum(-xd, 0.0)
    if scale != 1.0:
        y *= scale
    return y


def _elu_grad_array(xd, g, alpha, scale, input_scale):
    if xd.ndim == 0:  # (as _elu_array's)
        return _elu_grad_array(xd.reshape(1), g.reshape(1), alpha, scale, input_scale).reshape(())
    e = xp_of(xd).minimum(xd, 0.0)
    if input_scale != 1.0:
        e *= input_scale
    xp_of(xd).exp(e, out=e)
    e *= alpha * input_scale
    e *= g
    gx = pick(xd <= 0, e, g)
    if scale != 1.0:
        gx *= scale
    return gx


class Celu(Elu):
    node_name = "CeluBackward0"


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class LeakyRelu(Function):
    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, slope):  # x if x > 0 else slope x
        ctx.save(self=x)
        ctx.slope = slope
        xd = x.array
        impl = backends.find("leaky_relu", xd)
        if impl is not None:
            return impl.forward(xd, slope)
        if _between_0_and_1(slope, xd):  # x > 0 exactly where x > slope x: the max picks (no where: below)
            return xp_of(xd).maximum(xd, xd * slope)
        return xp_of(xd).where(xd > 0, xd, xd * slope)

    @staticmethod
    def backward(ctx, g):  # 1 if x > 0 else slope
        if _recording():
            return LeakyReluBackward.apply(g, ctx._saved_self, ctx.slope), None
        return Tensor._wrap(LeakyReluBackward.grad_array(g.array, ctx._saved_self.array, ctx.slope)), None


class LeakyReluInPlace(LeakyRelu):
    """leaky_relu_ with 0 < slope <= 1: as PyTorch's, the node saves the result (y > 0 exactly where x > 0),
    so the op runs on the tensor itself, not on a clone of it."""

    node_name = "LeakyReluBackward1"  # (PyTorch's name for the node that saved the result)
    saves_result = True

    @staticmethod
    def forward(ctx, x, slope):
        ctx.slope = slope
        xd = x.array
        impl = backends.find("leaky_relu", xd)
        return xp_of(xd).maximum(xd, xd * slope) if impl is None else impl.forward(xd, slope)

    @staticmethod
    def backward(ctx, g):
        if _recording():
            return LeakyReluBackward.apply(g, ctx._saved_result, ctx.slope), None
        return Tensor._wrap(LeakyReluBackward.grad_array(g.array, ctx._result_array(), ctx.slope)), None


def _leaky_relu_into(arr, negative_slope=0.01):
    """leaky_relu written over a float array with nothing to record: the forward's max, into the array."""
    if type(arr) is not np.ndarray or arr.dtype.kind != "f" or not _between_0_and_1(negative_slope, arr):
        return False
    impl = backends.find("leaky_relu", arr)
    if impl is not None and arr.flags.c_contiguous:
        impl.forward_(arr, float(negative_slope))
    else:
        np.maximum(arr, arr * float(negative_slope), out=arr)
    return True


def _leaky_relu_own(input, negative_slope=0.01):
    _floating(input, "leaky_relu")
    if _between_0_and_1(negative_slope, input.array):
        return LeakyReluInPlace.apply(input, float(negative_slope))
    from minigrad.ops.shape import clone  # (another slope: the input saved, so a copy of it)

    return LeakyRelu.apply(clone(input), float(negative_slope))


leaky_relu_ = make_inplace(_leaky_relu_own, "leaky_relu", into=_leaky_relu_into, clone=False)


class LeakyReluBackward(elementwise.PiecewiseBackward):
    node_name = "LeakyReluBackwardBackward0"

    @staticmethod
    def grad_array(g, xd, slope):
        impl = backends.find("leaky_relu", xd)
        if impl is not None and g.dtype == xd.dtype:
            return impl.backward(g, xd, slope)
        xp = xp_of(xd)
        if _between_0_and_1(slope, xd):
            return g * xp.maximum((xd > 0).astype(xd.dtype), slope)
        return g * xp.where(xd > 0, 1.0, slope).astype(xd.dtype)


def _pick(keep, g):
    """g where the array `keep` holds, else 0: on the arrays, or recorded under create_graph."""
    if _recording():
        return _mg().where(Tensor._wrap(keep), g, 0.0)
    return Tensor._wrap(pick(keep, g.array))


def _between_0_and_1(slope, like):
    """Whether 0 < slope <= 1 in `like`'s dtype, where a leaky relu's select is a max: numpy's where with
    a mask that is not all one way is a branch per element, ~20 times a max's time on random signs (a
    slope of 0 is left out: there max(inf, 0 inf) would be NaN)."""
    return 0.0 < like.dtype.type(slope) <= 1.0


class Hardtanh(Function):
    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, x, lo, hi):  # clip(x, lo, hi)
        ctx.save(self=x)
        ctx.bounds = lo, hi
        return xp_of(x.array).clip(x.array, lo, hi)

    @staticmethod
    def backward(ctx, g):
        if _recording():
            return HardtanhBackward.apply(g, ctx._saved_self, *ctx.bounds), None, None
        return Tensor._wrap(HardtanhBackward.grad_array(g.array, ctx._saved_self.array, *ctx.bounds)), None, None


class HardtanhBackward(elementwise.PiecewiseBackward):
    node_name = "HardtanhBackwardBackward0"

    @staticmethod
    def grad_array(g, xd, lo, hi):  # g, but 0 where x <= lo or x >= hi (a NaN x passes g, as PyTorch's)
        if xd.ndim == 0:  # (a comparison of a 0-d array gives a scalar, which logical_not's out= cannot write into)
            return HardtanhBackward.grad_array(g.reshape(1), xd.reshape(1), lo, hi).reshape(())
        keep = xd <= lo
        keep |= xd >= hi
        xp_of(xd).logical_not(keep, out=keep)
        return pick(keep, g)


class Hardswish(Function):
    node_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx, x):  # x relu6(x + 3) / 6
        ctx.save(self=x)
        return _hardswish_array(x.array)

    @staticmethod
    def backward(ctx, g):  # 0 up to -3, g (x/3 + 1/2) strictly inside (-3, 3), g from 3 and at NaN (PyTorch's ends)
        x = ctx._saved_self
        if not _recording():
            return Tensor._wrap(_hardswish_grad_array(x.array, g.array))
        mid, high = _hardswish_pieces(x.array)
        return _mg().where(Tensor._wrap(mid), g * (x / 3.0 + 0.5), _pick(high, g))


# (a ufunc gives a 0-d input back as a scalar, which the in-place steps below cannot write into: 0-d runs as 1 element)
def _hardswish_array(x):
    if x.ndim == 0:
        return _hardswish_array(x.reshape(1)).reshape(())
    xd = x.astype(np.float32) if x.dtype == np.float16 else x  # in float32, rounded once, as PyTorch's half
    y = xd + 3.0
    y.clip(0.0, 6.0, out=y)  # (in place, the array's method: one new array for the result, not three)
    y *= xd
    y /= 6.0
    return y.astype(x.dtype, copy=False)


def _hardswish_pieces(xd):  # the masks of -3 < x < 3 and of x >= 3 or NaN
    if xd.ndim == 0:
        return tuple(m.reshape(()) for m in _hardswish_pieces(xd.reshape(1)))
    below = xd < 3.0
    mid = xd > -3.0
    mid &= below
    return mid, xp_of(xd).logical_not(below, out=below)


def _hardswish_grad_array(xd, ga):
    if xd.ndim == 0:
        return _hardswish_grad_array(xd.reshape(1), ga.reshape(1)).reshape(())
    mid, high = _hardswish_pieces(xd)
    inner = xd / 3.0
    inner += 0.5
    inner *= ga
    gx = pick(mid, inner)
    del inner  # (its memory for the next pick's: one fewer array alive, no fresh pages)
    ints = gx.view(f"i{gx.itemsize}")
    ints |= pick(high, ga).view(ints.dtype)  # the pieces are disjoint: each element is +0.0 in one of them
    return gx


# PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, in float64 too: its gradients, not g / 6
_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


class Hardsigmoid(Function):
    node_name = "HardsigmoidBackward0"

    @staticmethod
    def forward(ctx, x):  # relu6(x + 3) / 6
        ctx.save(self=x)
        return xp_of(x.array).clip(x.array + 3.0, 0.0, 6.0) / 6.0

    @staticmethod
    def backward(ctx, g):  # g/6 strictly inside (-3, 3), else 0
        xd = ctx._saved_self.array
        keep = xd > -3.0
        keep &= xd < 3.0
        gx = _pick(keep, g) * _ONE_SIXTH_F32
        if not _recording():
            return gx
        # create_graph: PyTorch has no derivative of this backward, and says so when asked
        return second_order(ctx, gx, RuntimeError("derivative for aten::hardsigmoid_backward is not implemented"),
                            *[g] if g.requires_grad else [], name="NotImplemented")


class Softplus(Function):
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta, threshold):  # log(1 + e^(beta x)) / beta; x itself where beta x > threshold
        ctx.save(self=x)
        ctx.params = beta, threshold
        xd = x.array
        bx = xd * beta
        y = _softplus_array(bx)
        if beta != 1.0:
            y /= beta
        return xp_of(xd).where(bx > threshold, xd, y)  # (a mask mostly one way: where's branch is predicted)

    @staticmethod
    def backward(ctx, g):  # g sigmoid(beta x); g where beta x > threshold
        x = ctx._saved_self
        beta, threshold = ctx.params
        bx = x.array * beta
        lin = bx > threshold
        if not _recording():
            s = _sigmoid_array(bx)
            s *= g.array
            return Tensor._wrap(pick(lin, g.array, s)), None, None
        return _mg().where(Tensor._wrap(lin), g, g * _mg().sigmoid(x * beta)), None, None


class LogSigmoid(Function):
    node_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):  # log sigmoid(x) = -softplus(-x) = min(x, 0) - log(1 + e^-|x|) (no overflow), PyTorch's form
        ctx.save(self=x)
        if x.array.dtype == np.float16:
            return in_float32(_log_sigmoid_array, x.array)
        return _log_sigmoid_array(x.array)

    @staticmethod
    def backward(ctx, g):  # sigmoid(-x)
        if not _recording():
            if g.array.dtype == np.float16:
                return Tensor._wrap(in_float32(_log_sigmoid_grad_half, ctx._saved_self.array, g.array))
            s = _sigmoid_array(-ctx._saved_self.array)
            s *= g.array
            return Tensor._wrap(s)
        return g * _mg().sigmoid(-ctx._saved_self)


def _log_sigmoid_grad_half(x, g):
    # PyTorch's half kernel reads the e^-|x| its forward kept, rounded to half, as 1 - b / (1 + b) for x < 0 and
    # b / (1 + b) otherwise (x and g here in float32): sigmoid(-x) from the unrounded e^-|x| is up to 2 ulps off
    b = np.exp(-np.abs(x)).astype(np.float16).astype(np.float32)
    s = b / (b + 1.0)
    return np.where(x < 0.0, 1.0 - s, s) * g


def _log_sigmoid_array(xd):
    if xd.ndim == 0:  # (a ufunc gives a 0-d input back as a scalar, which log1p's out= cannot write into)
        return _log_sigmoid_array(xd.reshape(1)).reshape(())
    xp = xp_of(xd)
    e = xp.exp(-xp.abs(xd))
    xp.log1p(e, out=e)
    return xp.subtract(xp.minimum(xd, 0.0), e, out=e)


def silu(input, inplace=False):
    """x sigmoid(x) (swish). Shape: (*) -> (*). One `SiluBackward0` node."""
    if inplace:
        return _in_place(silu, input)
    _floating(input, "silu")
    return Silu.apply(input)


def mish(input, inplace=False):
    """x tanh(softplus(x)). Shape: (*) -> (*). One `MishBackward0` node."""
    if inplace:
        return _in_place(mish, input)
    _floating(input, "mish")
    return Mish.apply(input)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (e^x - 1) otherwise. Shape: (*) -> (*). One `EluBackward0` node."""
    if inplace:
        return _in_place(elu_node_, input, alpha)
    _floating(input, "elu")
    return Elu.apply(input, float(alpha), 1.0, 1.0)


def selu(input, inplace=False):
    """scale elu(x, alpha) with PyTorch's fixed alpha ~1.6733 and scale ~1.0507. One `EluBackward0` node."""
    if inplace:
        return _in_place(selu_node_, input)
    _floating(input, "elu")
    return Elu.apply(input, SELU_ALPHA, SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (e^(x/alpha) - 1)); alpha 0 raises. One `CeluBackward0` node."""
    if inplace:
        return _in_place(celu_node_, input, alpha)
    _floating(input, "elu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return Celu.apply(input, float(alpha), 1.0, 1.0 / alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, negative_slope x otherwise. One `LeakyReluBackward0` node."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    _floating(input, "leaky_relu")
    return LeakyRelu.apply(input, float(negative_slope))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val]; the gradient passes strictly inside. One `HardtanhBackward0` node."""
    if inplace:
        return _in_place(hardtanh, input, min_val, max_val)
    check_tensor(input, "input", "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.array.dtype.kind in "iu":  # integer input stays integer (no gradient)
        min_val, max_val = int(min_val), int(max_val)
    return Hardtanh.apply(input, min_val, max_val)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), a `HardtanhBackward0` node as in PyTorch."""
    if inplace:
        return _in_place(relu6, input)
    return hardtanh(input, 0.0, 6.0)


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6. One `HardswishBackward0` node."""
    if inplace:
        return _in_place(hardswish, input)
    _floating(input, "hardswish")
    return Hardswish.apply(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6. One `HardsigmoidBackward0` node."""
    if inplace:
        return _in_place(hardsigmoid, input)
    _floating(input, "hardsigmoid")
    return Hardsigmoid.apply(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, and x itself where beta x > threshold. One `SoftplusBackward0` node."""
    _floating(input, "softplus")
    return Softplus.apply(input, float(beta), float(threshold))


def softsign(input):  # x / (1 + |x|): composite, as PyTorch (a DivBackward0 node)
    check_tensor(input, "input", "softsign")
    return input / (input.abs() + 1)


def logsigmoid(input):
    """log(sigmoid(x)), computed as -softplus(-x) (no overflow). One `LogSigmoidBackward0` node."""
    _floating(input, "log_sigmoid")
    return LogSigmoid.apply(input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # softmax(-x): a SoftmaxBackward0 after a NegBackward0
    check_tensor(input, "input", "softmin")
    if dim is None:
        dim = _implicit_dim("softmin", input, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim, _stacklevel)
