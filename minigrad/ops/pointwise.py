"""More elementwise ops with PyTorch's names: trigonometric and hyperbolic functions and their
inverses, exp2/log2/log10, erf/erfc, rounding, fmod/remainder, copysign, atan2, logaddexp, lerp,
the bitwise ops and isclose. Forward on arrays, backward in Tensor ops (twice differentiable)."""
import math

import numpy as np

from . import special_array
from ..autograd.function import Function, keeps_operand_shapes
from ..device import array_module
from .. import dtypes as _dtypes
from ..tensor import Tensor
from .array_op import array_op
from .complex import check_same_dtype, refuse
from ._util import binary_operands, cast, float_operands, in_float32, not_dense, return_type, sum_to, type_name
from ._util import quiet as _quiet
from .elementwise import _BOOL_SUB, _binary, _unary, complex_fill, exp, sqrt, where, zeros_like_grad

LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _unary_class(name, node, array_fn, backward, saves="self"):
    """A one-input Function: forward `array_fn(xp, x)`, backward `backward(g, saved)` in Tensor ops,
    where `saved` is the input (saves="self") or the result (saves="result")."""

    def forward(ctx, a):
        if saves == "self":
            ctx.save(self=a)
        return _quiet(array_fn, array_module(a.array), a.array)

    def bwd(ctx, g):
        if saves is None:
            return backward(g, None)
        return backward(g, ctx._saved_self if saves == "self" else ctx._saved_result)

    cls = type(name, (Function,), dict(node_name=node, saves_result=saves == "result",
                                        forward=staticmethod(forward), backward=staticmethod(bwd)))
    return cls


def _float_unary(opname, node, array_fn, backward, saves="self"):
    return _unary(_unary_class(opname.capitalize(), node, array_fn, backward, saves), opname)


# ---- trigonometric and hyperbolic -------------------------------------------------------------
tan = _float_unary("tan", "TanBackward0", lambda xp, x: xp.tan(x),
                   lambda g, r: g * (1.0 + r * r), saves="result")  # d tan a = (1 + tan^2 a) da
asin = _float_unary("asin", "AsinBackward0", lambda xp, x: xp.arcsin(x),
                    lambda g, a: g / sqrt(1.0 - a * a))  # d asin a = da / sqrt(1 - a^2)
acos = _float_unary("acos", "AcosBackward0", lambda xp, x: xp.arccos(x),
                    lambda g, a: -g / sqrt(1.0 - a * a))  # d acos a = -da / sqrt(1 - a^2)
atan = _float_unary("atan", "AtanBackward0", lambda xp, x: xp.arctan(x),
                    lambda g, a: g / (1.0 + a * a))  # d atan a = da / (1 + a^2)
sinh = _float_unary("sinh", "SinhBackward0", lambda xp, x: xp.sinh(x),
                    lambda g, a: g * cosh(a))  # d sinh a = cosh a da
cosh = _float_unary("cosh", "CoshBackward0", lambda xp, x: xp.cosh(x),
                    lambda g, a: g * sinh(a))  # d cosh a = sinh a da
asinh = _float_unary("asinh", "AsinhBackward0", lambda xp, x: xp.arcsinh(x),
                     lambda g, a: g / sqrt(a * a + 1.0))  # d asinh a = da / sqrt(a^2 + 1)
acosh = _float_unary("acosh", "AcoshBackward0", lambda xp, x: xp.arccosh(x),
                     lambda g, a: g / sqrt(a * a - 1.0))  # d acosh a = da / sqrt(a^2 - 1)
atanh = _float_unary("atanh", "AtanhBackward0", lambda xp, x: xp.arctanh(x),
                     lambda g, a: g / (1.0 - a * a))  # d atanh a = da / (1 - a^2)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh

# ---- exponentials, logarithms, error functions ------------------------------------------------
exp2 = _float_unary("exp2", "Exp2Backward0", lambda xp, x: xp.exp2(x),
                    lambda g, r: g * r * LN2, saves="result")  # d 2^a = 2^a ln 2 da
log2 = _float_unary("log2", "Log2Backward0", lambda xp, x: xp.log2(x),
                    lambda g, a: g / (a * LN2))  # d log2 a = da / (a ln 2)
def _log10(xp, x):
    # float32 in float64, rounded once: as PyTorch's float32 kernel (numpy's own is an ulp off on many elements);
    # half through that float32, rounded once (a float16 midpoint is where the two differ)
    if x.dtype == np.float16:
        return in_float32(lambda a: _log10(xp, a), x)
    return special_array.rounded(xp.log10, x) if x.dtype == np.float32 else xp.log10(x)


log10 = _float_unary("log10", "Log10Backward0", _log10,
                     lambda g, a: g / (a * LN10))  # d log10 a = da / (a ln 10)
expm1 = _float_unary("expm1", "Expm1Backward0", lambda xp, x: xp.expm1(x),
                     lambda g, r: g * (r + 1.0), saves="result")  # d (e^a - 1) = e^a da
log1p = _float_unary("log1p", "Log1PBackward0", lambda xp, x: xp.log1p(x),
                     lambda g, a: g / (a + 1.0))  # d log(1 + a) = da / (1 + a)
erf = _float_unary("erf", "ErfBackward0", lambda xp, x: special_array.erf(x),
                   lambda g, a: g * (TWO_OVER_SQRT_PI * exp(-(a * a))))  # d erf a = 2/sqrt(pi) e^(-a^2) da
erfc = _float_unary("erfc", "ErfcBackward0", lambda xp, x: special_array.erfc(x),
                    lambda g, a: g * (-TWO_OVER_SQRT_PI * exp(-(a * a))))  # d erfc a = -d erf a


# ---- rounding: flat almost everywhere, so a zero gradient ---------------------------------------
def _rounding(opname, node, array_fn):
    cls = _unary_class(opname.capitalize(), node, array_fn, lambda g, a: zeros_like_grad(g), saves=None)

    def op(input):
        try:
            dtype = input.array.dtype
        except (AttributeError, NotImplementedError):
            return not_dense(opname, input)
        if dtype.kind == "b":
            raise NotImplementedError(f"\"{opname}_vml_cpu\" not implemented for 'Bool'")
        if dtype.kind in "iuc":  # integers are already whole: a copy, as in PyTorch
            refuse(opname, input)
            return array_op("copy", input)
        return cls.apply(input)

    op.__name__ = opname
    op.__doc__ = f"Elementwise {opname} (integer tensors are returned as a copy; zero gradient)."
    return op


floor = _rounding("floor", "FloorBackward0", lambda xp, x: xp.floor(x))
ceil = _rounding("ceil", "CeilBackward0", lambda xp, x: xp.ceil(x))
trunc = _rounding("trunc", "TruncBackward0", lambda xp, x: xp.trunc(x))
fix = trunc
_round0 = _rounding("round", "RoundBackward0", lambda xp, x: xp.round(x))  # half to even, as PyTorch


class RoundDecimals(Function):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, a, decimals):
        xp = array_module(a.array)
        return _quiet(lambda: xp.round(a.array, decimals))

    @staticmethod
    def backward(ctx, g):  # flat almost everywhere
        return zeros_like_grad(g), None


def round(input, decimals=None):
    """Round half to even (to `decimals` places); zero gradient. Given decimals, even 0, it is PyTorch's other
    overload: its node RoundBackward1, and an integer tensor refused, not copied."""
    if decimals is None:
        return _round0(input)
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("round", input, decimals=decimals)
    if kind in "iubc":
        refuse("round" if decimals == 0 else "round_decimals", input)
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")
    return RoundDecimals.apply(input, decimals)


class Frac(Function):
    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, a):
        return a.array - array_module(a.array).trunc(a.array)

    @staticmethod
    def backward(ctx, g):  # d(a - trunc a) = da
        return g


def frac(input):
    """input - trunc(input) (floating tensors only)."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("frac", input)
    if kind != "f":
        refuse("frac", input)
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{input.dtype._legacy[:-6]}'")
    return Frac.apply(input)


class Frexp(Function):
    node_name = "FrexpBackward0"

    @staticmethod
    def forward(ctx, a):
        m, e = array_module(a.array).frexp(a.array)
        e = e.astype(np.int32)
        ctx.mark_non_differentiable(e)
        ctx.save(exponent=e)
        return m, e

    @staticmethod
    def backward(ctx, gm, ge):  # mantissa = a / 2^exponent, the exponent constant almost everywhere
        # PyTorch's grad / exponent.exp2(): 2^exponent in the default float dtype, so a float64 input's
        # exponent past 127 gives a 0 gradient (2^128 is float32's inf), and a half's is taken in float32;
        # made exactly with ldexp (numpy's float32 exp2(127) is an ulp off)
        e = ctx._saved_exponent.array
        xp = array_module(e)
        scale = Tensor._wrap(_quiet(xp.ldexp, xp.ones((), _dtypes.default_float.np), e))
        return (gm / scale).to(gm.dtype)


frexp_result = return_type("frexp", ("mantissa", "exponent"))


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2^exponent, |mantissa| in [0.5, 1) (0, inf and nan kept as
    they are, exponent 0); the exponent int32."""
    if input.array.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return frexp_result(*Frexp.apply(input))


# ---- binary: fmod, remainder, copysign, atan2, logaddexp ----------------------------------------
def _zero_division(a, b):
    # (an empty result divides nothing: no error, as PyTorch)
    if a.array.dtype.kind in "iu" and a.array.size and not bool((b.array != 0).all()):
        raise RuntimeError("ZeroDivisionError")


def _two_kinds(tensor_cls, scalar_cls, input, other, floats=False, bool_name=None, extra=()):
    """Apply the op's node for a tensor `other` or for a number (PyTorch names them apart); `extra`, further
    arguments of its forward."""
    scalar = not isinstance(other, Tensor)
    a, b = (float_operands if floats else binary_operands)(input, other)
    if bool_name and a.array.dtype == np.bool_:
        raise NotImplementedError(f"\"{bool_name}_cpu\" not implemented for 'Bool'")
    if a.array.dtype.kind == "c" and (floats or bool_name):  # (real-only formulas: PyTorch's error)
        refuse(bool_name or tensor_cls.__name__.lower().replace("tensor", ""), a)
    return _binary(scalar_cls if scalar else tensor_cls, a, b, *extra)


class FmodTensor(Function):
    node_name = "FmodBackward1"

    @staticmethod
    def forward(ctx, a, b):
        _zero_division(a, b)
        ctx.save(self=a, other=b)
        return _quiet(array_module(a.array).fmod, a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # fmod(a, b) = a - trunc(a/b) b: da, -trunc(a/b) db
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        return (sum_to(g, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(-g * (a / b).trunc(), b_shape) if ctx.needs_input_grad[1] else None)


class FmodScalar(FmodTensor):
    node_name = "FmodBackward0"


def fmod(input, other):
    """The C remainder: the sign of `input` (a - trunc(a / b) * b)."""
    return _two_kinds(FmodTensor, FmodScalar, input, other, bool_name="fmod")


class RemainderTensor(Function):
    node_name = "RemainderBackward1"

    @staticmethod
    def forward(ctx, a, b):
        _zero_division(a, b)
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        if a.array.dtype.kind == "f":
            return _quiet(lambda: _float_remainder(xp, a.array, b.array))
        return xp.remainder(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # remainder(a, b) = a - floor(a/b) b: da, -floor(a/b) db
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        return (sum_to(g, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(-g * Tensor._wrap(_quiet(_floor_quotient, a.array, b.array)), b_shape)
                if ctx.needs_input_grad[1] else None)


def _floor_quotient(x, y):
    """floor(x / y) as PyTorch's div(rounding_mode="floor"): where x / y rounded onto an integer (-5e-324 / 30 to
    -0.0, not -1) or is not finite (inf / 1: nan), the exact floor division; elsewhere floor(x / y) is it."""
    xp = array_module(x)
    t = xp.asarray(x / y)
    q = xp.asarray(xp.floor(t))
    redo = q == t
    if redo.any():
        q[redo] = xp.floor_divide(xp.broadcast_to(x, t.shape)[redo], xp.broadcast_to(y, t.shape)[redo])
    return q


def _float_remainder(xp, x, y):
    """PyTorch's float remainder: fmod (exact), moved by y where its sign is not y's; a zero keeps x's sign
    (-6. % 2 is -0.), where numpy's remainder gives y's."""
    mod = xp.fmod(x, y)
    return xp.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


class RemainderScalar(RemainderTensor):
    node_name = "RemainderBackward0"


def remainder(input, other):
    """Python's modulus: the sign of `other` (a - floor(a / b) * b)."""
    return _two_kinds(RemainderTensor, RemainderScalar, input, other, bool_name="remainder")


def rremainder(input, other):
    """other % input, for `2 % t`."""
    return remainder(_as_tensor(other, input), input)


def rfloordiv(input, other):
    """other // input, for `2 // t`."""
    from .elementwise import floor_divide

    return floor_divide(_as_tensor(other, input), input)


def _as_tensor(x, like):
    """A Python number as a 0-d tensor (a wrapped number: it promotes as the number would)."""
    if isinstance(x, Tensor):
        return x
    a, _ = binary_operands(x, like)
    return a


class CopysignTensor(Function):
    node_name = "CopysignBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a)
        return array_module(a.array).copysign(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # d copysign(a, b) = sign(a) sign(result) da (0 at a == 0); nothing to b
        a, result = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        ga = None
        if ctx.needs_input_grad[0]:
            # (the ratio first, as PyTorch: g * result underflows at a subnormal result)
            ga = sum_to(where(a == 0, 0.0, g * (result / where(a == 0, 1.0, a))), a_shape)
        return ga, (zeros_like_grad(g, b_shape) if ctx.needs_input_grad[1] else None)


class CopysignScalar(CopysignTensor):
    node_name = "CopysignBackward1"


def copysign(input, other):
    """|input| with the sign of `other` (floating result)."""
    return _two_kinds(CopysignTensor, CopysignScalar, input, other, floats=True)


class Atan2(Function):
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b, dtypes):
        ctx.save(self=a, other=b)
        ctx.dtypes = dtypes
        return array_module(a.array).arctan2(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # d atan2(a, b) = (b da - a db) / (a^2 + b^2)
        # PyTorch's atan2_backward works on the operands as they came: each squared in its own dtype (a
        # float32 square underflows to 0 beside a float64 operand), 1 / 0 taken as 0 (atan2(0, 0)'s gradient; a
        # subnormal sum's inf reciprocal stays), and a bool `self` negated for the other's gradient, which refuses.
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        da, db = ctx.dtypes
        if da == np.bool_ and ctx.needs_input_grad[1]:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        a2, b2 = a * a, b * b
        if da is not None and da.kind == "f" and da.itemsize < a2.array.dtype.itemsize:
            a2 = cast(cast(a2, da), a2.array.dtype)
        if db is not None and db.kind == "f" and db.itemsize < b2.array.dtype.itemsize:
            b2 = cast(cast(b2, db), b2.array.dtype)
        d = a2 + b2
        recip = where(d == 0, 0.0, 1.0 / d)
        return (sum_to(g * b * recip, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g * -a * recip, b_shape) if ctx.needs_input_grad[1] else None, None)


def atan2(input, other):
    """The angle of (other, input): atan(input / other) in the right quadrant."""
    dtypes = tuple(t.array.dtype if isinstance(t, Tensor) else None for t in (input, other))
    return _two_kinds(Atan2, Atan2, input, other, floats=True, extra=(dtypes,))


arctan2 = atan2


class Hypot(Function):
    """numpy's hypot of the promoted operands: sqrt(a*a + b*b) would overflow (hypot(1e200, 1e200)), give NaN
    for hypot(-inf, nan) where it is inf, and square a float32 before a float64 promotion."""
    node_name = "HypotBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        return array_module(a.array).hypot(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # PyTorch's: g a / r, g b / r (NaN at r = 0)
        a, b = ctx.saved_tensors[:2]  # (the result saved after them)
        a_shape, b_shape = ctx._shapes
        r = ctx._saved_result  # (g a first: g / r overflows at a subnormal r)
        return (sum_to(g * a / r, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g * b / r, b_shape) if ctx.needs_input_grad[1] else None)


def _refuse_bool_operand(ctx):
    """PyTorch's backward of logaddexp and logaddexp2 subtracts the operands as they came: a bool one refuses."""
    if ctx.bool_operand:
        raise RuntimeError(_BOOL_SUB)


class Logaddexp(Function):
    node_name = "LogaddexpBackward0"

    @staticmethod
    def forward(ctx, a, b, bool_operand):
        ctx.save(self=a, other=b)
        ctx.bool_operand = bool_operand
        return _quiet(array_module(a.array).logaddexp, a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # d log(e^a + e^b) = da / (1 + e^(b-a)) + db / (1 + e^(a-b))
        _refuse_bool_operand(ctx)
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        return (sum_to(g / (1.0 + exp(b - a)), a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g / (1.0 + exp(a - b)), b_shape) if ctx.needs_input_grad[1] else None, None)


def _mul_add(x, y, z):
    """x * y + z rounded once, as a fused multiply-add (y a number): float32 in float64, where x * y is exact;
    float64 with the product's rounding error recovered by Dekker's split of x and y into halves."""
    if x.dtype == np.float32:
        return (x.astype(np.float64) * float(np.float32(y)) + z).astype(np.float32)
    p = x * y
    xs, ys = x * 134217729.0, y * 134217729.0  # (2^27 + 1: the halves have 26 bits)
    xh, yh = xs - (xs - x), ys - (ys - y)
    xl, yl = x - xh, y - yh
    return (p + z) + (((xh * yh - p) + xh * yl + xl * yh) + xl * yl)


def _logaddexp2(xp, x, y):
    # as PyTorch's kernel: max + log1p(2^-|x - y|) / ln 2 (in one fused multiply-add), x where both are one infinity
    out = _mul_add(xp.log1p(xp.exp2(-xp.abs(x - y))), 1.0 / LN2, xp.maximum(x, y))
    return xp.where(xp.isinf(x) & (x == y), x, out)


class Logaddexp2(Function):
    node_name = "Logaddexp2Backward0"

    @staticmethod
    def forward(ctx, a, b, bool_operand):
        ctx.save(self=a, other=b)
        ctx.bool_operand = bool_operand
        xp = array_module(a.array)
        if a.array.dtype == np.float16:
            return _quiet(in_float32, lambda x, y: _logaddexp2(xp, x, y), a.array, b.array)
        return _quiet(_logaddexp2, xp, a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # d log2(2^a + 2^b) = da / (1 + 2^(b-a)) + db / (1 + 2^(a-b))
        _refuse_bool_operand(ctx)
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        return (sum_to(g / (1.0 + exp2(b - a)), a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g / (1.0 + exp2(a - b)), b_shape) if ctx.needs_input_grad[1] else None, None)


def has_bool(*operands):
    """Whether one of the operands is a bool tensor."""
    return any(isinstance(t, Tensor) and t.array.dtype == np.bool_ for t in operands)


def logaddexp(input, other):
    """log(exp(input) + exp(other)), without overflow (floating tensors only, as PyTorch)."""
    a, _ = binary_operands(input, other)
    if a.array.dtype.kind != "f":
        raise NotImplementedError(f"\"logaddexp_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
    return _two_kinds(Logaddexp, Logaddexp, input, other, extra=(has_bool(input, other),))


def _lerp(a, b, w):
    """a + w (b - a) from the nearer end, as PyTorch computes it: w = 1 gives b exactly (not 0 at a = 1e300, b = 1),
    as one fused multiply-add b - (b - a) (1 - w) there (its zero signs), a float32 one rounded once."""
    xp = array_module(a)
    d = b - a
    with np.errstate(invalid="ignore", over="ignore"):
        if isinstance(w, (int, float, complex)):  # a number weight, in the ends' dtype
            w = d.dtype.type(w)
            coeff, base = (w, a) if abs(w) < 0.5 else (-(1 - w), b)
        else:
            large = xp.abs(w) >= 0.5
            coeff, base = xp.where(large, -(1 - w), w), xp.where(large, b, a)
        return special_array.fused(coeff, d, base)


class LerpScalar(Function):
    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, a, b, weight):
        ctx.weight = weight
        return _lerp(a.array, b.array, weight)

    @staticmethod
    def backward(ctx, g):  # d(a + w (b - a)) = (1 - w) da + w db
        a_shape, b_shape = ctx._shapes
        w = ctx.weight
        return (sum_to(g * (1.0 - w), a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g * w, b_shape) if ctx.needs_input_grad[1] else None, None)


class LerpTensor(Function):
    node_name = "LerpBackward1"

    @staticmethod
    def keep_state(node, inputs, outputs):  # the three operands' shapes, to which backward sums the gradients
        node._shapes3 = tuple(t.array.shape for t in inputs)

    @staticmethod
    def forward(ctx, a, b, w):
        ctx.save(self=a, end=b, weight=w)
        return _lerp(a.array, b.array, w.array)

    @staticmethod
    def backward(ctx, g):  # d(a + w (b - a)) = (1 - w) da + w db + (b - a) dw
        a, b, w = ctx.saved_tensors
        a_shape, b_shape, w_shape = ctx._shapes3
        if ctx.needs_input_grad[2]:
            # PyTorch takes b - a in the dtype a and b had before a 0-d weight promoted them (float32's rounding)
            d = b - a if ctx.end_dtype is None else cast(b, ctx.end_dtype) - cast(a, ctx.end_dtype)
        # (PyTorch takes 1 - w in the dtype a 0-d weight had before promotion: float32's rounding)
        rest = 1.0 - (w if ctx.weight_dtype is None else cast(w, ctx.weight_dtype))
        return (sum_to(g * rest, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g * w, b_shape) if ctx.needs_input_grad[1] else None,
                sum_to(g * d, w_shape) if ctx.needs_input_grad[2] else None)


LerpTensor._backward_cls.end_dtype = None  # (a lerp whose 0-d weight promoted float input and end keeps theirs)
LerpTensor._backward_cls.weight_dtype = None  # (and one whose float input promoted a 0-d float weight keeps its)


_LERP_OVERLOADS = ("Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
                   "Tensor input, Tensor end, Number weight, *, Tensor out = None")


def lerp_method(fn, name):
    """`t.lerp(end, weight)` or `t.lerp_(...)` of fn: PyTorch's parser's text, its arguments counted from after self,
    for an `end` that is no Tensor or a wrong number of them."""
    def op(self, *args, **kwargs):
        if not kwargs and (len(args) != 2 or not isinstance(args[0], Tensor)):
            from ..tensor import invalid_arguments

            raise TypeError(invalid_arguments(name, args, ("Tensor end, Tensor weight", "Tensor end, Number weight")))
        return fn(self, *args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = fn.__doc__
    return op


def lerp(input, end, weight):
    """input + weight * (end - input); `weight` a number or a tensor (all floating, one dtype)."""
    from ._util import broadcast_shapes

    if not (isinstance(input, Tensor) and isinstance(end, Tensor)):  # (an ndarray end: PyTorch's parser's words)
        from ..tensor import invalid_arguments

        raise TypeError(invalid_arguments("lerp", (input, end, weight), _LERP_OVERLOADS))
    end_dtype = weight_dtype = None
    if end.array.dtype != input.array.dtype:  # (PyTorch checks the dtypes before it looks for a kernel)
        raise RuntimeError(f"expected dtype {_dtypes.cpp_name(input.array.dtype)} for `end` but got dtype {_dtypes.cpp_name(end.array.dtype)}")
    if isinstance(weight, complex) and input.array.dtype.kind != "c":  # (a number PyTorch converts to input's dtype)
        complex_fill(weight, input.dtype)
        weight = weight.real
    if isinstance(weight, Tensor) and weight.array.dtype != input.array.dtype:
        if weight.array.ndim:
            raise RuntimeError(f"expected dtype {_dtypes.cpp_name(input.array.dtype)} for `weight` but got dtype {_dtypes.cpp_name(weight.array.dtype)}")
        # a 0-d weight of another dtype takes part in promotion as a 0-d tensor does (float64 input, float32 weight:
        # float64; int64 input, float64 weight: float64), as PyTorch's lerp does
        dt = _dtypes.result_type(input, end, weight)
        if dt != input.array.dtype and input.array.dtype.kind == "f":
            end_dtype = input.array.dtype
        if weight.array.dtype.kind == "f" and np.dtype(dt).itemsize > weight.array.dtype.itemsize:
            weight_dtype = weight.array.dtype
        input, end, weight = cast(input, dt), cast(end, dt), cast(weight, dt)
    broadcast_shapes(input.array.shape, end.array.shape)  # (after the dtypes, as PyTorch)
    if input.array.dtype.kind not in "fc":
        kind = "scalar" if not isinstance(weight, Tensor) else "tensor"
        raise NotImplementedError(f"\"lerp_kernel_{kind}\" not implemented for '{input.dtype._legacy[:-6]}'")
    if not isinstance(weight, Tensor):
        return _binary(LerpScalar, input, end, weight)

    broadcast_shapes(broadcast_shapes(input.array.shape, end.array.shape), weight.array.shape)
    out = LerpTensor.apply(input, end, weight)
    if out.grad_fn is not None:
        LerpTensor.keep_state(out.grad_fn, (input, end, weight), out)
        if end_dtype is not None:
            out.grad_fn.end_dtype = end_dtype
        if weight_dtype is not None:
            out.grad_fn.weight_dtype = weight_dtype
    return out


# ---- bitwise (integers and bool; no gradient) --------------------------------------------------
def _bitwise(name, ufunc, kernel):
    def op(input, other):
        a, b = binary_operands(input, other)
        if a.array.dtype.kind in "fc":
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
        if "shift" in name and a.array.dtype == np.bool_:
            a, b = cast(a, np.dtype(np.int64)), cast(b, np.dtype(np.int64))
        return array_op(lambda x, y: array_module(x).asarray(getattr(array_module(x), ufunc)(x, y), dtype=x.dtype), a, b)

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} of integer or bool tensors (the promoted integer dtype)."
    return op


bitwise_and = _bitwise("bitwise_and", "bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor", "bitwise_xor")
bitwise_left_shift = _bitwise("bitwise_left_shift", "left_shift", "lshift")  # (PyTorch's kernels' names)
bitwise_right_shift = _bitwise("bitwise_right_shift", "right_shift", "rshift")


def bitwise_not(input):
    """Bit flip of an integer tensor, logical not of a bool tensor."""
    if input.array.dtype.kind in "fc":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{input.dtype._legacy[:-6]}'")
    return array_op("invert", input)


def invert(input):
    """~input: bitwise_not, but PyTorch's operator refuses a float or complex tensor in its own words."""
    if input.array.dtype.kind in "fc":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(input)


def _reflected(fn):
    def op(self, other):
        return fn(_as_tensor(other, self), self)

    return op


# ---- closeness ---------------------------------------------------------------------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other|, elementwise (a bool tensor)."""
    check_same_dtype(input, other)
    a, b = binary_operands(input, other)

    def close(x, y):
        xp = array_module(x)
        with np.errstate(invalid="ignore", over="ignore"):
            if x.dtype.kind not in "fc":
                return xp.asarray(xp.abs(x.astype(np.float64) - y) <= atol + rtol * xp.abs(y.astype(np.float64)))
            return xp.asarray(xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))

    return array_op(close, a, b)



# ---- special functions -------------------------------------------------------------------------------
SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0

# (half in float32, rounded once, as PyTorch's half kernel: rounding float64 once differs on midpoints)
erfinv = _float_unary("erfinv", "ErfinvBackward0",
                      lambda xp, x: in_float32(special_array.erfinv, x) if x.dtype == np.float16 else special_array.erfinv(x),
                      lambda g, r: g * (SQRT_PI_OVER_2 * exp(r * r)), saves="result")  # d erfinv y = sqrt(pi)/2 e^(x^2) dy
lgamma = _float_unary("lgamma", "LgammaBackward0", lambda xp, x: special_array.lgamma(x),
                      lambda g, a: g * digamma(a))  # d log Gamma(a) = digamma(a) da
digamma = _float_unary("digamma", "DigammaBackward0", lambda xp, x: special_array.digamma(x),
                       lambda g, a: g * polygamma(1, a))  # d digamma(a) = polygamma(1, a) da


class Polygamma(Function):
    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, n, a):
        ctx.save(self=a)
        ctx.n = n
        return _quiet(special_array.polygamma, n, a.array)

    @staticmethod
    def backward(ctx, g):  # d polygamma(n, a) = polygamma(n + 1, a) da
        return None, g * polygamma(ctx.n + 1, ctx._saved_self)


def polygamma(n, input):
    """The n-th derivative of digamma (n >= 0): digamma and trigamma for n = 0, 1, else
    (-1)^(n+1) n! zeta(n + 1, input)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma(): argument 'input' must be Tensor, not {type_name(input)}")
    if input.array.dtype.kind != "f":
        if input.array.dtype.kind == "c":
            refuse({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), input)
        input = input.to(_dtypes.default_float)
    return Polygamma.apply(int(n), input)

keeps_operand_shapes(Atan2, CopysignScalar, CopysignTensor, FmodScalar, FmodTensor, Hypot, LerpScalar, Logaddexp, Logaddexp2, RemainderScalar, RemainderTensor)  # (their callers keep the operands' shapes)
