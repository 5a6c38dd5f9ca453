"""The ops behind torch.special's names that minigrad.special does not take from elsewhere: erfcx,
ndtri, log_ndtr, entr, xlogy and xlog1py, the modified Bessel functions i0, i0e, i1, i1e, the
Hurwitz zeta function, the regularized incomplete gamma functions and the multivariate log-gamma.
Forward on arrays (special_array.py, bessel_array.py), backward in Tensor ops (so twice
differentiable), with PyTorch's derivatives (each in a comment).

Also, without a gradient as in PyTorch (their results never require grad): the Bessel functions
J0, J1, Y0, Y1, K0, K1 (and scaled), modified_bessel_i0/i1, spherical_bessel_j0 and the orthogonal
polynomials (Chebyshev T, U, V, W and their shifted forms, Hermite H and He, Laguerre, Legendre).
"""
import math

import numpy as np

from .. import dtypes as _dtypes
from ..autograd.function import Function, keep_absent_edges, keep_operand_shapes, keeps_operand_shapes
from ..device import array_module
from ..tensor import Tensor
from . import bessel_array, special_array
from .special_array import fused, rounded
from ._util import binary_operands, cast, float_operands, in_float32, sum_to, type_name
from .array_op import array_op
from .complex import _scalar_type, refuse
from .elementwise import BOOL_NEGATION, _binary, _unary, add_scalar, exp, log, mul_scalar, sign, where
from .pointwise import _float_unary, digamma, erf, lgamma

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)

# The ops whose PyTorch CPU kernels are built for float32 and float64 only (integers are promoted first):
# float16 and complex tensors are refused in the kernel's name.
FLOAT_KERNELS = {name: f"{name}_cpu" for name in (
    "erfcx", "ndtri", "log_ndtr", "zeta", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")}


def check_kernel(opname, t):
    """PyTorch's refusal where op `opname` (a key of FLOAT_KERNELS, else nothing refused) meets a tensor `t` of
    the computation's dtype that its kernel lacks."""
    dt = t.array.dtype
    if (dt.kind == "c" or dt == np.float16) and opname in FLOAT_KERNELS:
        raise NotImplementedError(f"\"{FLOAT_KERNELS[opname]}\" not implemented for '{_scalar_type(dt)}'")


def _unary_saving_both(opname, node, array_fn, backward):
    """A one-input op that saves its input and its result: forward `array_fn(x)` on the array,
    backward `backward(g, input, result)` in Tensor ops."""

    def forward(ctx, a):
        ctx.save(self=a)
        return array_fn(a.array)

    def bwd(ctx, g):
        a, result = ctx.saved_tensors
        return backward(g, a, result)

    cls = type(opname.capitalize(), (Function,), dict(node_name=node, saves_result=True,
                                                      forward=staticmethod(forward), backward=staticmethod(bwd)))
    return _checked_unary(opname, _unary(cls, opname))


def _checked_unary(opname, op):
    """op, refusing first the dtypes that PyTorch's kernel of `opname` lacks."""
    if opname not in FLOAT_KERNELS:
        return op

    def checked(input):
        if isinstance(input, Tensor):
            check_kernel(opname, input)
        return op(input)

    checked.__name__, checked.__doc__ = op.__name__, op.__doc__
    return checked


# ---- the error function family ------------------------------------------------------------------
erfcx = _unary_saving_both("erfcx", "SpecialErfcxBackward0", special_array.erfcx,
                           lambda g, a, r: g * (2.0 * a * r - TWO_OVER_SQRT_PI))  # d erfcx(a) = (2 a erfcx(a) - 2/sqrt(pi)) da
ndtri = _checked_unary("ndtri", _float_unary(
    "ndtri", "SpecialNdtriBackward0", lambda xp, x: special_array.ndtri(x),
    lambda g, r: g * (SQRT_2PI * exp(r * r * 0.5)), saves="result"))  # d ndtri(p) = sqrt(2 pi) e^(x^2/2) dp
log_ndtr = _unary_saving_both("log_ndtr", "SpecialLogNdtrBackward0", special_array.log_ndtr,
                              lambda g, a, r: g * exp(-(r + a * a * 0.5)) / SQRT_2PI)  # d log ndtr(a) = pdf(a) / ndtr(a) da


def ndtr(input):
    """The standard normal CDF, as PyTorch's composite computes it: (1 + erf(x / sqrt2)) * 0.5 (which rounds to
    0 below x ~ -8.3, where erfc(-x / sqrt2) / 2 would not)."""
    x = input if input.array.dtype.kind == "f" else input.to(_dtypes.default_float)
    z = mul_scalar(x, special_array.SQRT_HALF)
    if z.array.dtype == np.float32:
        # 1 + erf cancels below x ~ -1, so each ulp of erf is many of the result: PyTorch's float32 erf is
        # within an ulp of the exact value, which the float64 erf rounded once gives; the float32 rational does not
        e = cast(erf(cast(z, np.float64)), np.float32)
    else:
        e = erf(z)
    return mul_scalar(add_scalar(e, 1.0), 0.5)


def _entr(xp, x):
    return xp.where(x > 0, -x * xp.log(x), xp.where(x == 0, x.dtype.type(0), xp.where(x < 0, -np.inf, x)))


entr = _float_unary("entr", "SpecialEntrBackward0", _entr,
                    lambda g, a: g * -(log(a) + 1.0))  # d(-a ln a) = -(ln a + 1) da (-inf for a < 0, 0 at 0)


# ---- xlogy, xlog1py -----------------------------------------------------------------------------
def _three_nodes(cls, name, node):
    """cls, and its subclasses for a number as first and as second argument (PyTorch's three node names)."""
    return cls, type(f"{name}ScalarSelf", (cls,), {"node_name": node + "1"}), \
        type(f"{name}ScalarOther", (cls,), {"node_name": node + "2"})


def _binary_float_op(nodes, input, other, opname=None):
    """Apply the node for (tensor, tensor), (number, tensor) or (tensor, number), integers promoted to
    the default float (or, with `opname`, refused as PyTorch refuses them)."""
    cls = nodes[1] if not isinstance(input, Tensor) else nodes[2] if not isinstance(other, Tensor) else nodes[0]
    a, b = binary_operands(input, other)
    check_kernel(nodes[0].__name__.lower(), a)
    if a.array.dtype.kind != "f":
        if opname is not None or a.array.dtype.kind == "c":  # (never the real part silently)
            opname = opname or cls.__name__.lower().rstrip("0123456789").replace("tensor", "").replace("scalar", "")
            raise NotImplementedError(f"\"{opname}_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
        a, b = float_operands(input, other)
    if cls is nodes[0]:
        return _binary(cls, a, b)
    # a number argument is no edge of PyTorch's node
    return keep_absent_edges(_binary(cls, a, b), (a, b), (), drop=(0,) if cls is nodes[1] else (1,))


def _x_times(xp, x, y, fn):
    """x * fn(y), 0 where x == 0 and y is not nan."""
    out = x * fn(y)
    return xp.where((x == 0) & ~xp.isnan(y), out.dtype.type(0), out)


class Xlogy(Function):
    node_name = "XlogyBackward0"
    number_other = False  # (its subclass for a number `other`: PyTorch's other formula)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _x_times(xp, a.array, b.array, xp.log)

    @staticmethod
    def backward(ctx, g):  # d(a log b) = log b da + a / b db; PyTorch's da is 0 where a == 0 and b <= 0
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # (a number b: 0 where a == 0 unless b > 0, so at a nan b too)
            off = ~(b > 0) if ctx._forward_cls.number_other else b <= 0
            ga = sum_to(where((a == 0) & off, 0.0, xlogy(g, b)), a_shape)
        if ctx.needs_input_grad[1]:
            gb = sum_to(g * a / b, b_shape)
        return ga, gb


class Xlog1py(Function):
    node_name = "SpecialXlog1PyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _x_times(xp, a.array, b.array, xp.log1p)

    @staticmethod
    def backward(ctx, g):  # d(a log(1 + b)) = log(1 + b) da + a / (1 + b) db; da is 0 where a == 0 and b <= -1
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(where((a == 0) & (b <= -1), 0.0, xlog1py(g, b)), a_shape)
        if ctx.needs_input_grad[1]:
            gb = sum_to(g * a / (b + 1.0), b_shape)
        return ga, gb


_XLOGY = _three_nodes(Xlogy, "Xlogy", "XlogyBackward")
_XLOGY[2].number_other = True
_XLOG1PY = _three_nodes(Xlog1py, "Xlog1py", "SpecialXlog1PyBackward")


def xlogy(input, other):
    """input * log(other), 0 where input is 0 (and other is not nan); either may be a number."""
    return _binary_float_op(_XLOGY, input, other)


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (and other is not nan); either may be a number."""
    return _binary_float_op(_XLOG1PY, input, other)


# ---- the modified Bessel functions of the first kind ----------------------------------------------
def _near_zero(a, slope):
    """slope(safe a), but 1/2 (the limit at 0) where not |a| > eps of a's dtype, nan included, as PyTorch's:
    there the divisions by a would round (subnormal a/2 over a) or overflow."""
    eps = float(np.finfo(a.array.dtype).eps)
    safe = abs(a) > eps
    return where(safe, slope(where(safe, a, eps)), 0.5)


def _i1_grad(g, a, r):  # d I1(a) = (I0(a) - I1(a)/a) da, 1/2 at 0
    return g * _near_zero(a, lambda x: i0(x) - r / x)


def _i1e_grad(g, a, r):  # d(e^-|a| I1(a)) = (i0e(a) - i1e(a) (sgn(a) + 1/a)) da, 1/2 at 0
    return g * _near_zero(a, lambda x: i0e(x) - r * (sign(x) + 1.0 / x))


def _bessel_i(nu, scaled=False):
    """I_nu (or e^-|x| I_nu) of an array; half in float32 (minigrad's float32 method), rounded once, as PyTorch's
    half kernels."""
    def fn(x):
        return bessel_array.bessel_i(x, nu, scaled=scaled)
    return lambda x: in_float32(fn, x) if x.dtype == np.float16 else fn(x)


i0 = _float_unary("i0", "I0Backward0", lambda xp, x, fn=_bessel_i(0): fn(x),
                  lambda g, a: g * i1(a))  # d I0(a) = I1(a) da
i0e = _unary_saving_both("i0e", "SpecialI0EBackward0", _bessel_i(0, scaled=True),
                         lambda g, a, r: g * (i1e(a) - sign(a) * r))  # d(e^-|a| I0(a)) = (i1e(a) - sgn(a) i0e(a)) da
i1 = _unary_saving_both("i1", "SpecialI1Backward0", _bessel_i(1), _i1_grad)
i1e = _unary_saving_both("i1e", "SpecialI1EBackward0", _bessel_i(1, scaled=True), _i1e_grad)


# ---- zeta, the incomplete gamma functions, the multivariate log-gamma --------------------------------
class Zeta(Function):
    node_name = "SpecialZetaBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        return special_array.zeta(a.array, b.array).astype(a.array.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):  # d zeta(x, q) = -x zeta(x + 1, q) dq; PyTorch has no derivative in x
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        a, b = ctx.saved_tensors
        return None, sum_to(g * -a * zeta(a + 1.0, b), ctx._shapes[1])


class ZetaBoolSelf(Zeta):
    @staticmethod
    def backward(ctx, g):  # PyTorch's formula negates `self` as it came: a bool one refuses
        raise RuntimeError(BOOL_NEGATION)


ZetaBoolSelf.__name__ = "Zeta"  # (the kernel's name, for check_kernel)
_ZETA = _three_nodes(Zeta, "Zeta", "SpecialZetaBackward")


def zeta(input, other):
    """The Hurwitz zeta function sum_k (other + k)^-input (the Riemann zeta at other = 1); either may be a number."""
    if isinstance(input, Tensor) and isinstance(other, Tensor) and input.array.dtype == np.bool_:
        return _binary_float_op((ZetaBoolSelf,) + _ZETA[1:], input, other)
    return _binary_float_op(_ZETA, input, other)


def _incomplete_gamma(upper):
    name = "igammac" if upper else "igamma"

    class IncompleteGamma(Function):
        node_name = "IgammacBackward0" if upper else "IgammaBackward0"
        keep_state = staticmethod(keep_operand_shapes)

        @staticmethod
        def forward(ctx, a, x):
            ctx.save(self=a, other=x)
            return special_array.gammainc(a.array, x.array, upper).astype(a.array.dtype, copy=False)

        @staticmethod
        def backward(ctx, g):  # d P(a, x) = -d Q(a, x) = x^(a-1) e^-x / Gamma(a) dx; none in a (as PyTorch)
            if ctx.needs_input_grad[0]:
                raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
            a, x = ctx.saved_tensors
            density = exp((a - 1) * log(x) - x - lgamma(a))  # (a - 1: an integer a stays integer, as PyTorch)
            return None, sum_to(g * (-density if upper else density), ctx._shapes[1])

    IncompleteGamma.__name__ = IncompleteGamma.__qualname__ = "Igammac" if upper else "Igamma"
    nodes = (IncompleteGamma,) * 3

    def op(input, other):
        out = _binary_float_op(nodes, input, other, opname=name)
        if out.grad_fn is not None and isinstance(input, Tensor) and isinstance(other, Tensor) and \
                input.array.dtype != other.array.dtype:  # PyTorch's formula runs on the operands as they came
            out.grad_fn.save(self=input, other=other)
        return out

    op.__name__ = "gammaincc" if upper else "gammainc"
    op.__doc__ = ("The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)." if upper else
                  "The regularized lower incomplete gamma function P(input, other) = gamma(input, other) / Gamma(input).")
    return op


gammainc = igamma = _incomplete_gamma(False)
gammaincc = igammac = _incomplete_gamma(True)


def _mvlgamma_args(x, p):
    """The arguments x - (p-1)/2, ..., x - 1/2, x + 0.0, as PyTorch makes them: an arange of offsets in x's
    dtype added to x (so a float32 x rounds as there, and -0.0 + 0.0 is +0.0)."""
    return [x + (0.5 * k - 0.5 * (p - 1)) for k in range(p)]


class Mvlgamma(Function):
    node_name = "MvlgammaBackward0"

    @staticmethod
    def forward(ctx, a, p):
        ctx.save(self=a)
        ctx.p = p
        out = sum(special_array.lgamma(arg) for arg in _mvlgamma_args(a.array, p))
        return array_module(a.array).asarray(out + p * (p - 1) * math.log(math.pi) / 4, dtype=a.array.dtype)

    @staticmethod
    def backward(ctx, g):  # d sum_i log Gamma(a - i/2) = sum_i digamma(a - i/2) da
        return g * sum(digamma(arg) for arg in _mvlgamma_args(ctx._saved_self, ctx.p)), None


def multigammaln(input, p):
    """The multivariate log-gamma of dimension p: sum_(i<p) log Gamma(input - i/2) + p (p-1)/4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.array.dtype.kind != "f":
        refuse("mvlgamma", input)
        input = input.to(_dtypes.default_float)
    return Mvlgamma.apply(input, p)


mvlgamma = multigammaln


# ---- without a gradient (as in PyTorch): J, Y, K, spherical j0, the orthogonal polynomials ----------
def _no_grad(opname, array_fn):
    def op(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{opname}(): argument 'input' must be Tensor, not {type_name(input)}")
        check_kernel(opname, input)
        x = input if input.array.dtype.kind == "f" else input.to(_dtypes.default_float)
        return array_op(array_fn, x)

    op.__name__ = opname
    op.__doc__ = f"Elementwise {opname} (no gradient, as in PyTorch)."
    return op


bessel_j0 = _no_grad("bessel_j0", lambda x: bessel_array.bessel_jy(x, "j", 0))
bessel_j1 = _no_grad("bessel_j1", lambda x: bessel_array.bessel_jy(x, "j", 1))
bessel_y0 = _no_grad("bessel_y0", lambda x: bessel_array.bessel_jy(x, "y", 0))
bessel_y1 = _no_grad("bessel_y1", lambda x: bessel_array.bessel_jy(x, "y", 1))
modified_bessel_i0 = _no_grad("modified_bessel_i0", lambda x: bessel_array.bessel_i(x, 0, modified=True))
modified_bessel_i1 = _no_grad("modified_bessel_i1", lambda x: bessel_array.bessel_i(x, 1, modified=True))
modified_bessel_k0 = _no_grad("modified_bessel_k0", lambda x: bessel_array.bessel_k(x, 0))
modified_bessel_k1 = _no_grad("modified_bessel_k1", lambda x: bessel_array.bessel_k(x, 1))
scaled_modified_bessel_k0 = _no_grad("scaled_modified_bessel_k0", lambda x: bessel_array.bessel_k(x, 0, scaled=True))
scaled_modified_bessel_k1 = _no_grad("scaled_modified_bessel_k1", lambda x: bessel_array.bessel_k(x, 1, scaled=True))
spherical_bessel_j0 = _no_grad("spherical_bessel_j0", bessel_array.spherical_j0)


def _polynomial(opname, first, step, ends=None, closed=None, shifted=False):
    """The op of an orthogonal polynomial family p_n(x), n the integer part of `n` (0 for n < 0), as PyTorch's
    kernel computes it, in x's dtype: p_0 = 1, p_1 = first(t) and the three-term recurrence
    p_(k+1) = step(k, t, p_k, p_(k-1)); `ends(t, n)`: the (where, value) pairs taken exactly (t = +-1);
    `closed = (m, f)`: f(t, n), the trigonometric form, for n > m and |t| < 1; `shifted`: of t = 2x - 1."""

    def values(x, n):
        xp = array_module(x)
        t = x + x - 1 if shifted else x
        t, n = xp.broadcast_arrays(t, xp.trunc(n))
        out = xp.where(n == 0, 1, 0).astype(t.dtype)
        top = int(n.max()) if n.size else 0
        prev, cur = xp.ones_like(t), first(t)
        for k in range(1, top + 1):
            out = xp.where(n == k, cur, out)
            if k < top:
                prev, cur = cur, step(k, t, cur, prev)
        if closed is not None and top > closed[0]:
            inside = (n > closed[0]) & (abs(t) < 1)
            out = xp.where(inside, closed[1](xp, xp.where(inside, t, 0), n), out)
        for where_, value in ends(xp, t, n) if ends is not None else ():
            out = xp.where(where_, value, out)
        return xp.where(n < 0, 0, out).astype(x.dtype, copy=False)

    def op(input, n):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{opname}(): expected a Tensor argument")
        x, m = binary_operands(input, n)
        check_kernel(opname, x)
        if x.array.dtype.kind != "f":
            x, m = cast(x, _dtypes.default_float.np), cast(m, _dtypes.default_float.np)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return array_op(values, x, m)

    op.__name__ = opname
    op.__doc__ = f"The {opname.replace('_', ' ')} of degree n at input, elementwise (no gradient, as in PyTorch)."
    return op


def _odd(n):
    return n % 2 != 0


# The values at t = +-1, where the recurrence and the trigonometric forms lose them: T_n(1) = 1, T_n(-1) = (-1)^n,
# U_n(+-1) = (+-1)^n (n + 1), V_n(1) = 1, V_n(-1) = (-1)^n (2n + 1), W_n(1) = 2n + 1, W_n(-1) = (-1)^n.
def _t_ends(xp, t, n):
    return [(abs(t) == 1, xp.where((t < 0) & _odd(n), -1, 1))]


def _u_ends(xp, t, n):
    return [(abs(t) == 1, xp.where((t < 0) & _odd(n), -(n + 1), n + 1))]


def _v_ends(xp, t, n):
    return [(t == 1, 1), (t == -1, xp.where(_odd(n), -(n + n + 1), n + n + 1))]


def _w_ends(xp, t, n):
    return [(t == 1, n + n + 1), (t == -1, xp.where(_odd(n), -1, 1))]


def _t_closed(xp, t, n):  # T_n(cos a) = cos(n a)
    return rounded(xp.cos, n * rounded(xp.arccos, t))


def _u_closed(xp, t, n):  # U_n(cos a) = sin((n + 1) a) / sin a
    a = rounded(xp.arccos, t)
    sin_a = rounded(xp.sin, a)
    return xp.where(sin_a != 0, rounded(xp.sin, (n + 1) * a) / sin_a, (n + 1) * rounded(xp.cos, (n + 1) * a) / t)


def _v_closed(xp, t, n):  # V_n(cos a) = cos((n + 1/2) a) / cos(a / 2)
    a = rounded(xp.arccos, t)
    return xp.where(rounded(xp.sin, a / 2) != 1, rounded(xp.cos, (n + 0.5) * a) / rounded(xp.cos, a / 2),
                    xp.where(_odd(n), -(n + n + 1), n + n + 1))


def _w_closed(xp, t, n):  # W_n(cos a) = sin((n + 1/2) a) / sin(a / 2)
    a = rounded(xp.arccos, t)
    return xp.where(rounded(xp.cos, a / 2) != 1, rounded(xp.sin, (n + 0.5) * a) / rounded(xp.sin, a / 2),
                    xp.where(t > 0, n + n + 1, xp.where(_odd(n), -1, 1)))


def _chebyshev(name, first, ends, closed_above, closed, shifted=False):
    # (PyTorch takes the trigonometric form from a lower degree for some shifted families)
    return _polynomial(name, first, lambda k, t, p, q: fused(t + t, p, -q), ends, (closed_above, closed), shifted)


chebyshev_polynomial_t = _chebyshev("chebyshev_polynomial_t", lambda t: t, _t_ends, 6, _t_closed)
chebyshev_polynomial_u = _chebyshev("chebyshev_polynomial_u", lambda t: t + t, _u_ends, 8, _u_closed)
chebyshev_polynomial_v = _chebyshev("chebyshev_polynomial_v", lambda t: t + t - 1, _v_ends, 8, _v_closed)
chebyshev_polynomial_w = _chebyshev("chebyshev_polynomial_w", lambda t: t + t + 1, _w_ends, 8, _w_closed)
shifted_chebyshev_polynomial_t = _chebyshev("shifted_chebyshev_polynomial_t", lambda t: t, _t_ends, 6, _t_closed, True)
shifted_chebyshev_polynomial_u = _chebyshev("shifted_chebyshev_polynomial_u", lambda t: t + t, _u_ends, 6, _u_closed,
                                            True)
shifted_chebyshev_polynomial_v = _chebyshev("shifted_chebyshev_polynomial_v", lambda t: t + t - 1, _v_ends, 6, _v_closed,
                                            True)
shifted_chebyshev_polynomial_w = _chebyshev("shifted_chebyshev_polynomial_w", lambda t: t + t + 1, _w_ends, 4, _w_closed,
                                            True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda x: x + x,
                                   lambda k, x, p, q: fused(x + x, p, -((k + k) * q)))  # H_(k+1) = 2x H_k - 2k H_(k-1)
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda x: x,
                                    lambda k, x, p, q: fused(x, p, -(k * q)))  # He_(k+1) = x He_k - k He_(k-1)
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", lambda x: 1 - x,
                                    lambda k, x, p, q: fused(k + k + (1 - x), p, -(k * q)) / (k + 1),
                                    lambda xp, x, n: [(x == 0, 1)])  # L_n(0) = 1
legendre_polynomial_p = _polynomial("legendre_polynomial_p", lambda x: x,
                                    lambda k, x, p, q: fused((k + k + 1) * x, p, -(k * q)) / (k + 1), _t_ends)

keeps_operand_shapes(Xlog1py, Xlogy, Zeta)  # (their callers keep the operands' shapes; the subclasses inherit it)
