"""Elementwise ops. Each forward works on arrays; each backward is written in Tensor ops, so a
backward run with create_graph=True is itself recorded (second derivatives come free)."""
import builtins
import math
import numbers
import operator
import numpy as np

from .. import backends
from .._warn_once import warn_once
from ..autograd import function as _function
from ..autograd import recording
from ..autograd.function import FREED_MESSAGE, Function, keep_absent_edges, keep_operand_shapes, keeps_operand_shapes
from ..autograd.grad_mode import state
from ..device import array_module, pick
from ..tensor import Tensor
from ..dtypes import cpp_name, result_type
from .array_op import array_op
from .out import out_call
from .complex import check_same_dtype as _check_same_dtype, refuse as _refuse
from ._util import (
    fp_quiet, fp_restore,
    _check_broadcast, as_tensor_like, checked_scalar, binary_operands, broadcast_shapes, cast, float_only, float_operands, sum_to, sum_to_array, type_name,
    too_many_positional, in_float32, not_dense, output_shape_error, operand_type_error,
)


_BOOL_SUB = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
    "use the `~` or `logical_not()` operator instead."
)


def _array_grad(a):
    """The Tensor of a gradient a backward computed on arrays (a numpy scalar where 0-d arrays' arithmetic made one)."""
    return Tensor._output(a, None) if type(a) is np.ndarray else Tensor._wrap(a)


def zeros_like_grad(g, shape=None):
    """The zero gradient of a flat op: zeros, not g * 0 (which would turn an inf or nan g into nan)."""
    xp = array_module(g.array)
    return Tensor._wrap(xp.zeros(g.array.shape if shape is None else shape, dtype=g.array.dtype))


# ---- binary arithmetic ------------------------------------------------------------------
class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if alpha != 1:
            ctx.alpha = alpha
            return a.array + alpha * b.array
        return a.array + b.array

    @staticmethod
    def backward(ctx, g):  # d(a + alpha b) = da + alpha db
        a_shape, b_shape = ctx._a_shape, ctx._b_shape  # (None: the output's shape, g's: nothing to sum)
        alpha = ctx.alpha  # (1 unless forward kept another: the node class's default)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g if a_shape is None else sum_to(g, a_shape)
        if ctx.needs_input_grad[1]:
            gb = g if alpha == 1 else g * alpha
            if b_shape is not None:
                gb = sum_to(gb, b_shape)
        return ga, gb

    @staticmethod
    def array_forward(a, b, alpha=1):
        return _add_arrays if alpha == 1 else None

    @staticmethod
    def array_step(needs, a, b, alpha=1):
        return _sum_step(needs, a, b, alpha, False)


def _add_arrays(x, y):
    return x + y


_add_arrays.expression = "{0} + {1}"  # (a compiled replay writes the sum in its code: the engine's gradient sums)


def _sum_step(needs, a, b, alpha, subtract):
    """Add's and Sub's array_step (alpha 1, one dtype): x +- y; the gradient summed back to each shape."""
    if alpha != 1 or a.array.dtype != b.array.dtype:
        return None
    a_shape, b_shape = a.array.shape, b.array.shape

    def forward(x, y):
        return (x - y) if subtract else (x + y), None

    def backward(saved, g):
        return (sum_to_array(g, a_shape) if needs[0] else None,
                sum_to_array(-g if subtract else g, b_shape) if needs[1] else None)

    return forward, backward


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if alpha != 1:
            ctx.alpha = alpha
            return a.array - alpha * b.array
        return a.array - b.array

    @staticmethod
    def backward(ctx, g):  # d(a - alpha b) = da - alpha db
        a_shape, b_shape = ctx._a_shape, ctx._b_shape  # (None: the output's shape, g's: nothing to sum)
        alpha = ctx.alpha  # (1 unless forward kept another: the node class's default)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g if a_shape is None else sum_to(g, a_shape)
        if ctx.needs_input_grad[1]:
            if alpha == 1 and not state.grad_enabled:  # no graph wanted: -g of the array
                gb = -g.array
                gb = _array_grad(gb if b_shape is None else sum_to_array(gb, b_shape))
            else:
                gb = -g if alpha == 1 else g * -alpha
                if b_shape is not None:
                    gb = sum_to(gb, b_shape)
        return ga, gb

    @staticmethod
    def array_step(needs, a, b, alpha=1):
        return _sum_step(needs, a, b, alpha, True)


class RsubScalar(Function):
    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, a, other):  # `other` is a 0-dim array of a's dtype: not an input, no edge
        return other - a.array

    @staticmethod
    def backward(ctx, g):  # d(c - a) = -da
        return -g, None

    @staticmethod
    def array_step(needs, a, other):
        return (lambda x: (other - x, None)), (lambda saved, g: (-g,))


class Reciprocal(Function):
    node_name = "ReciprocalBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return array_module(a.array).reciprocal(a.array)  # (the ufunc: 1.0 / x's bits without its Python float operand)

    @staticmethod
    def backward(ctx, g):  # d(1/a) = -da / a^2
        r = ctx._saved_result
        return g * -(r * r)


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a if ctx.needs_input_grad[1] else None, other=b if ctx.needs_input_grad[0] else None)
        return a.array * b.array

    @staticmethod
    def backward(ctx, g):  # d(ab) = b da + a db
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        dt = g.array.dtype
        if not state.grad_enabled and (a is None or a.array.dtype == dt) and (b is None or b.array.dtype == dt):
            # no graph of the backward wanted, and nothing to promote: the arrays' products, no recorded ops
            ga, gb = _mul_grads(g.array, None if a is None else a.array, None if b is None else b.array,
                                ctx.needs_input_grad, a_shape, b_shape)
            return None if ga is None else _array_grad(ga), None if gb is None else _array_grad(gb)
        if g.array.dtype.kind == "c":  # PyTorch's convention: each factor's gradient is g times the other's conjugate
            a, b = (None if a is None else a.conj()), (None if b is None else b.conj())
        return (sum_to(g * b, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(g * a, b_shape) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def array_step(needs, a, b):
        if a.array.dtype != b.array.dtype or a.array.dtype.kind == "c":
            return None
        a_shape, b_shape = a.array.shape, b.array.shape

        def forward(x, y):  # (saved as forward saves them: each for the other's gradient)
            return x * y, (x if needs[1] else None, y if needs[0] else None)

        def backward(saved, g):
            return _mul_grads(g, saved[0], saved[1], needs, a_shape, b_shape)

        return forward, backward


def _mul_grads(g, a, b, needs, a_shape, b_shape):  # d(ab) = b da + a db, on arrays
    if g.dtype.kind == "c":  # (complex: times the other factor's conjugate, see Mul.backward)
        a, b = (None if a is None else a.conj()), (None if b is None else b.conj())
    ga = gb = None
    if needs[0]:
        ga = g * b
        if ga.shape != a_shape:  # (the shapes tested here: the usual, the output's shape, then needs no call)
            ga = sum_to_array(ga, a_shape)
    if needs[1]:
        gb = g * a
        if gb.shape != b_shape:
            gb = sum_to_array(gb, b_shape)
    return ga, gb


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a if ctx.needs_input_grad[1] else None, other=b)
        return a.array / b.array

    @staticmethod
    def backward(ctx, g):  # d(a/b) = da/b - (a/b)/b db (PyTorch's order: no b*b to overflow)
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        dt = g.array.dtype
        if not state.grad_enabled and (a is None or a.array.dtype == dt) and b.array.dtype == dt:
            # no graph of the backward wanted, and nothing to promote: the same steps on the arrays
            ga, gb = _div_grads(g.array, None if a is None else a.array, b.array, ctx.needs_input_grad, a_shape,
                                b_shape)
            return None if ga is None else _array_grad(ga), None if gb is None else _array_grad(gb)
        if g.array.dtype.kind == "c":  # (complex: the conjugates of the factors, as Mul's)
            a, b = (None if a is None else a.conj()), b.conj()
        return (sum_to(g / b, a_shape) if ctx.needs_input_grad[0] else None,
                sum_to(-g * (a / b / b), b_shape) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def array_step(needs, a, b):
        if a.array.dtype != b.array.dtype or a.array.dtype.kind != "f":
            return None
        a_shape, b_shape = a.array.shape, b.array.shape

        def forward(x, y):
            return x / y, (x if needs[1] else None, y)

        def backward(saved, g):
            return _div_grads(g, saved[0], saved[1], needs, a_shape, b_shape)

        return forward, backward


def _div_grads(g, a, b, needs, a_shape, b_shape):  # Div.backward's Tensor formula, step by step, on arrays
    if g.dtype.kind == "c":
        a, b = (None if a is None else a.conj()), b.conj()
    gb = None
    if needs[1]:  # -g ((a / b) / b): the same steps, into one array (g has the output's shape, as a / b)
        xp = array_module(g)
        gb = xp.divide(a, b, out=xp.empty(g.shape, g.dtype))  # (out=: an array even where g is 0-d)
        xp.divide(gb, b, out=gb)
        xp.multiply(gb, g, out=gb)
        xp.negative(gb, out=gb)
        if gb.shape != b_shape:  # (the shapes tested here: the usual, the output's shape, then needs no call)
            gb = sum_to_array(gb, b_shape)
    ga = None
    if needs[0]:
        ga = g / b
        if ga.shape != a_shape:
            ga = sum_to_array(ga, a_shape)
    return ga, gb


class _NumberOperand(Function):
    """A recorded op of a float tensor and a Python number (`x * 2.0`, `x / 3`, `x + 1.0`, `x - 1`): the number
    kept on the node as it is, rather than wrapped as a 0-d tensor, saved and broadcast as a tensor operand
    (a third of the op's time on a small tensor). The node is the tensor op's (MulBackward0, ...) with
    PyTorch's two edges, the number's none. Only eager ops come here: minigrad.compile captures the tensor op."""

    @classmethod
    def apply(cls, a, number):
        out = _apply(cls, a, number)
        node = out.grad_fn
        node.next_functions += _NUMBER_EDGE
        node._tensor_positions = _BOTH_POSITIONS  # (backward gives a gradient per edge: (g, None))
        return out


_apply = Function.apply.__func__
_NUMBER_EDGE = ((None, 0),)
_BOTH_POSITIONS = (0, 1)


class MulNumber(_NumberOperand):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, number):
        ctx.other = number
        return a.array * number  # (numpy takes the number in the array's dtype, as PyTorch)

    @staticmethod
    def backward(ctx, g):
        if ctx._freed:  # (PyTorch saves the number: a second backward is refused as for a saved tensor)
            raise RuntimeError(FREED_MESSAGE)
        return g * ctx.other, None


class DivNumber(_NumberOperand):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, number):
        ctx.other = number
        return a.array / number

    @staticmethod
    def backward(ctx, g):
        if ctx._freed:
            raise RuntimeError(FREED_MESSAGE)
        return g / ctx.other, None


class AddNumber(_NumberOperand):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, number):
        return a.array + number

    @staticmethod
    def backward(ctx, g):
        return g, None


class SubNumber(_NumberOperand):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, number):
        return a.array - number

    @staticmethod
    def backward(ctx, g):
        return g, None


class HalfMulNumber(MulNumber):
    """A float16 tensor times a number: PyTorch's half kernel takes the number in float32, as it was given
    (not rounded to half first), and rounds the product once."""
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, number):
        ctx.other = number
        return in_float32(np.multiply, a.array, np.float32(number))


class HalfDivNumber(DivNumber):
    """A float16 tensor divided by a number, as HalfMulNumber: the number in float32, one rounding."""
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, number):
        ctx.other = number
        return in_float32(np.divide, a.array, np.float32(number))


def _half_number(input, other):
    """`other` as a Python float where `input` is a float16 tensor that a real number (or a 0-d float32 or
    float64 tensor without a gradient, which PyTorch treats as a number) multiplies or divides; else None."""
    if type(input) is not Tensor and not isinstance(input, Tensor) or input.array.dtype != np.float16:
        return None
    if other.__class__ is builtins.float or other.__class__ is builtins.int:
        return float(other)
    if isinstance(other, Tensor) and other.array.ndim == 0 and input.array.ndim > 0 and \
            other.array.dtype in (np.float32, np.float64) and not other._requires_grad:
        return float(other.array)
    return None


def _half_by_number(cls, fn, input, number):
    """input (float16) * or / number (fn), recorded as the tensor op (cls) where a gradient is wanted."""
    if input._requires_grad and state.grad_enabled:
        return cls.apply(input, number)
    return Tensor._wrap(in_float32(fn, input.array, np.float32(number)))


def _saved_number(node):
    """`_saved_other` of a node that kept a Python number: PyTorch's 0-d tensor of it (float64 or int64)."""
    if node._freed:
        raise RuntimeError(FREED_MESSAGE)
    return Tensor._wrap(np.asarray(node.other))


def _release_number(node):
    node._freed = True


class MulScalar(MulNumber):
    """PyTorch's mul(Tensor, Scalar), which its composite ops call inside (cross_entropy's smoothing, trapezoid):
    a MulBackward1 node, one edge, the tensor's."""
    node_name = "MulBackward1"
    apply = classmethod(_apply)  # (Function's: the number gets no edge)


class DivScalar(DivNumber):
    """PyTorch's div(Tensor, Scalar), as its composite ops call it: a DivBackward1 node, one edge."""
    node_name = "DivBackward1"
    apply = classmethod(_apply)


class AddScalar(AddNumber):
    """PyTorch's add(Tensor, Scalar), as its composite ops call it: an AddBackward1 node, one edge."""
    node_name = "AddBackward1"
    apply = classmethod(_apply)


def add_scalar(input, number):
    """input + number as PyTorch's composite ops record it (AddBackward1); a floating input."""
    return AddScalar.apply(input, number)


def mul_scalar(input, number):
    """input * number as PyTorch's composite ops record it (MulBackward1); a floating input."""
    return MulScalar.apply(input, number)


def div_scalar(input, number):
    """input / number as PyTorch's composite ops record it (DivBackward1); a floating input."""
    return DivScalar.apply(input, number)


for _cls in (MulNumber, DivNumber, MulScalar, DivScalar, HalfMulNumber, HalfDivNumber):
    _cls._backward_cls._saved_other = property(_saved_number)
    _cls._backward_cls._saved_self = None
    _cls._backward_cls.release_saved = _release_number
# PyTorch's nodes of `+` and `-` keep alpha (1 unless given), that of `1 - x` too
for _cls in (Add, Sub, RsubScalar, AddNumber, SubNumber):
    _cls._backward_cls.alpha = 1  # (a forward given another alpha keeps it on its node)
    _cls._backward_cls._saved_alpha = property(lambda node: node.alpha)


class PowScalar(Function):
    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save(self=a)
        ctx.exponent = exponent
        return pow_scalar_array(a.array, exponent)

    @staticmethod
    def backward(ctx, g):  # d(a^e) = e a^(e-1) da
        (a,) = ctx.saved_tensors
        e = ctx.exponent
        if e == 0 and e.__class__ is not builtins.bool:  # (PyTorch's `x ** False` takes the formula: NaN at 0)
            return zeros_like_grad(g), None
        x = a.array
        if x.dtype.kind == "c":  # holomorphic: PyTorch's convention passes back g conj(f'(z))
            return g * (e * a ** (e - 1)).conj(), None
        if not state.grad_enabled and x.dtype == g.array.dtype and x.dtype.itemsize >= 4 and (
                e.__class__ is builtins.float or -_EXACT_INT <= e <= _EXACT_INT):
            # no graph of the backward wanted: the formula's three steps on the arrays (`x ** 2`'s backward
            # cost four times its forward through recorded ops), the number in the array's dtype as mul takes it
            return Tensor._wrap(g.array * (pow_scalar_array(x, e - 1) * e)), None
        return g * (e * a ** (e - 1)), None


PowScalar._backward_cls._saved_exponent = property(lambda node: node.exponent)  # PyTorch's name for it


def pow_scalar_array(x, e):
    """x ** e for an array and a Python number, in PyTorch's way for the exponents it treats apart: x*x*x
    for 3 (a GELU's cube), 1 / (x*x) for -2 and 1 / sqrt(x) for -0.5, each with PyTorch's bits. Other whole
    exponents of a float array go through |x| and put the sign back: a C library's pow takes a slow path for
    a negative base, 50-100 times the time of a positive one. (numpy's own cases, 0, 1, 2, -1 and 0.5,
    stay numpy's, and so does float16, whose power numpy takes in float32 and rounds once, as PyTorch's
    half: x*x*x in float16 would round at each step.) A 0-d x gives a 0-d array, not numpy's scalar."""
    dt = x.dtype
    if dt.kind != "f" or dt.itemsize < 4 or e in (0, 1, 2, -1, 0.5):
        return x ** e
    if e.__class__ is not builtins.int and not e.is_integer() and e != -0.5 or not -2**53 <= e <= 2**53:
        return x ** e  # (a fractional power of a negative base is NaN either way)
    xp = np if x.__class__ is np.ndarray else array_module(x)
    if e == 3:
        out = x * x * x
    elif e == -2:
        out = 1 / (x * x)
    elif e == -0.5:
        out = 1 / xp.sqrt(x)
    else:
        out = xp.power(xp.abs(x), e)
        if e % 2:  # an odd power keeps the base's sign (of -0.0 and -inf too)
            out = xp.copysign(out, x)
    return out if x.ndim else xp.asarray(out)  # (numpy's ufuncs make a 0-d array's result a scalar)


class PowTensor(Function):
    node_name = "PowBackward1"
    saves_result = True

    @staticmethod
    def forward(ctx, a, b, bool_exponent=False, dtypes=(None, None)):
        ctx.save(self=a, other=b)
        ctx.bool_exponent = bool_exponent
        ctx.dtypes = dtypes  # the operands' own dtypes where promotion changed them (else None)
        x, y = a.array, b.array
        if y.dtype.kind in "iu" and x.dtype.kind in "iu" and bool((y < 0).any()):
            return _int_pow_negative(x, y)
        return x ** y

    @staticmethod
    def backward(ctx, g):  # d(a^b) = b a^(b-1) da + a^b log(a) db
        a, b, result = ctx.saved_tensors
        a_shape, b_shape = ctx._shapes
        ga = gb = None
        holomorphic = result.array.dtype.kind == "c"  # then g conj(f'(z)), PyTorch's convention
        if ctx.needs_input_grad[0]:
            if ctx.bool_exponent:  # PyTorch's b - 1 refuses a bool exponent (before its promotion)
                raise RuntimeError(_BOOL_SUB)
            # where b == 0 the gradient is 0 (not 0 * a^-1, nan at a == 0), as in PyTorch. PyTorch's formula takes
            # the operands as given: b - 1 in b's own dtype (a float32 1e-8 - 1 is -1: a negative base's
            # gradient is finite), and the power promotes as the forward did
            own_a, own_b = ctx.dtypes
            x = a if own_a is None else cast(a, own_a)
            e = b if own_b is None else cast(b, own_b)
            d = e * x ** (e - 1)
            ga = sum_to(where(b == 0, 0.0, g * (d.conj() if holomorphic else d)), a_shape)
        if ctx.needs_input_grad[1]:
            # where a == 0 and b >= 0 the gradient is 0, not nan (PyTorch's convention; re b of a complex b)
            zero = (a == 0) & ((b.real if b.array.dtype.kind == "c" else b) >= 0)
            d = result * log(where(zero, 1.0, a))
            gb = sum_to(where(zero, 0.0, g * (d.conj() if holomorphic else d)), b_shape)
        return ga, gb


def _int_pow_negative(x, y):
    """Integer x ** y where some y < 0 (numpy refuses them all): PyTorch's integer power, 1 / x ** -y rounded
    towards 0, so 1 for x == 1, +-1 for x == -1 and 0 for every other x (0 too)."""
    xp = array_module(x)
    neg = y < 0
    out = x ** xp.where(neg, 0, y)
    inverse = xp.where(x == 1, 1, xp.where(x == -1, xp.where(y % 2 == 0, 1, -1), 0)).astype(out.dtype)
    return xp.where(neg, inverse, out)


class RPow(Function):
    node_name = "PowBackward2"
    saves_result = True

    @staticmethod
    def forward(ctx, base, b):
        ctx.base = base
        if base == 0:
            ctx.save(exponent=b)
        return np.asarray(base, dtype=b.array.dtype) ** b.array if array_module(b.array) is np else base ** b.array

    @staticmethod
    def backward(ctx, g):  # d(c^b) = c^b log(c) db
        if ctx.base == 0:  # 0^b: PyTorch's convention, gradient 0 where b >= 0
            b, result = ctx.saved_tensors
            return None, where(b >= 0, 0.0, g * result * float("-inf"))
        (result,) = ctx.saved_tensors
        if result.array.dtype.kind == "c":  # g conj(c^b log c), log c complex for a complex or negative c
            return None, g * (result * builtins.complex(np.log(builtins.complex(ctx.base)))).conj()
        return None, g * result.conj() * float(np.log(ctx.base))


class Maximum(Function):
    node_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        return xp.maximum(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # the larger input gets the gradient; ties split it in half
        a, b = ctx.saved_tensors
        return _minmax_backward(g, a, b, ctx, operator.gt)


class Minimum(Function):
    node_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a, other=b)
        xp = array_module(a.array)
        return xp.minimum(a.array, b.array)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return _minmax_backward(g, a, b, ctx, operator.lt)


def _minmax_backward(g, a, b, ctx, wins):
    # picked with where, not multiplied by a 0/1 mask: an inf gradient on the losing side stays out; a side
    # loses only where the other wins (`wins(other, side)`), so at a NaN both get g, as in PyTorch
    split = where(a == b, g * 0.5, g)
    a_shape, b_shape = ctx._shapes
    return (sum_to(where(wins(b, a), 0.0, split), a_shape) if ctx.needs_input_grad[0] else None,
            sum_to(where(wins(a, b), 0.0, split), b_shape) if ctx.needs_input_grad[1] else None)


def _binary(cls, a, b, *extra):
    a, b = binary_operands(a, b)
    return apply_binary(cls, a, b, *extra)


def apply_binary(cls, a, b, *extra):
    """`cls` applied to two operands already of one dtype (the shapes kept for its backward's sums)."""
    out = cls.apply(a, b, *extra) if extra else cls.apply(a, b)  # (a star call builds its arguments' tuple anew)
    if out.grad_fn is not None:
        a_shape, b_shape, shape = a.array.shape, b.array.shape, out.array.shape
        if a_shape != shape or b_shape != shape:  # (the usual, operands of the output's shape: nothing to keep)
            out.grad_fn._keep_shapes(a_shape, b_shape)
    return out


def _plain_operand(a, b, ints=True):
    """How `a` + `b`, `a` - `b`, `a` * `b` or `a` / `b` runs when `a` is a float32 or float64 Tensor outside a
    minigrad.compile capture, with nothing to promote: where a gradient is to be recorded, `b` itself (a Tensor
    of the same array type and dtype), applied to the Function as it is, or _RECORD_NUMBER for a small Python
    number (the op's _NumberOperand then records it); else what the array op
    takes (`b`'s array, or `b`, a small Python number), the op then the array op alone: the same call as
    its Function's forward, the same bits. None: the op runs as usual.
    With `ints` (not for `/`, which makes floats of ints), an int64 Tensor and a small Python int too:
    an index's arithmetic, `i + block_size` (int64 stays int64 in numpy as in PyTorch, wrapping alike)."""
    if type(a) is not Tensor and not isinstance(a, Tensor) or \
            recording.recorders_made and recording.hook.recorder is not None or _function.dual_apply is not None:
        return None  # (a subclass: nn.Parameter, `self.weight * x`)
    x = a.array
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        if ints and b.__class__ is builtins.int and x.dtype == np.int64 and -_SMALL_INT <= b <= _SMALL_INT:
            return b
        return None
    tb = type(b)
    if tb is Tensor or tb is not builtins.float and isinstance(b, Tensor):  # (a Parameter: `x * self.weight`)
        y = b.array
        if type(y) is not type(x) or y.dtype != x.dtype:
            return None
        if (a._requires_grad or b._requires_grad) and state.grad_enabled:  # (a thread-local read last)
            xs, ys = x.shape, y.shape
            if xs != ys and xs[len(xs) - len(ys):] != ys:  # (the usual, the same shapes or a bias's, needs no call)
                _check_broadcast(xs, ys)
            return b
        return y  # (shapes that do not broadcast: numpy's ValueError, which the caller makes PyTorch's error)
    if tb is builtins.float or (tb is builtins.int and -_EXACT_INT <= b <= _EXACT_INT):
        if not (a._requires_grad and state.grad_enabled):
            return b  # (numpy casts a Python number to the array's dtype, as a 0-d tensor of it would be)
        if type(x) is np.ndarray:  # `x * 0.5` recorded: the op's _NumberOperand, which keeps the number
            return _RECORD_NUMBER
    return None


_RECORD_NUMBER = object()  # _plain_operand's answer where the op of a tensor and a number is to be recorded


def _refuse_shapes(a, b):
    """PyTorch's error where the operands' shapes do not broadcast, raised after numpy's ValueError (the op
    that succeeds, the usual, then pays no check)."""
    try:
        broadcast_shapes(a.shape, b.shape)
    except RuntimeError as e:
        raise RuntimeError(*e.args) from None  # (numpy's error is no part of it)


_EXACT_INT = 1 << 24  # integers a float32 holds exactly
_SMALL_INT = 1 << 24  # an index's offset added to an int64 tensor as an array op (larger: the general path's checks)


def refuse_float_alpha(alpha, input, other):
    """PyTorch's refusal of a float alpha where the result is integral (`int_t.add(1, alpha=0.5)`)."""
    if isinstance(alpha, float) and result_type(input, other).kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, *args, alpha=1, _method=False):
    """input + alpha * other, broadcasting."""
    if args:  # (alpha is keyword-only, as in PyTorch: a third positional is only its deprecated overload's other)
        other, alpha = _alpha_first("add", other, args, _method)
    if alpha.__class__ is not builtins.int or alpha != 1:
        if alpha != 1:
            check_other("add", input, other, _method)
            refuse_float_alpha(alpha, input, other)
            return _binary(Add, input, other, alpha)
    o = _plain_operand(input, other)
    if o is not None:
        if o is _RECORD_NUMBER:
            return AddNumber.apply(input, other)
        if isinstance(o, Tensor):
            return apply_binary(Add, input, o)
        fp = fp_quiet()  # (as Function.apply's forward: inf and nan without numpy's warnings)
        try:
            return Tensor._wrap(input.array + o)
        except ValueError:  # (shapes that do not broadcast: PyTorch's error; any other: numpy's)
            _refuse_shapes(input, other)
            raise
        finally:
            fp_restore(fp)
    try:
        return _binary(Add, input, other)
    except TypeError:  # (an `other` that is no operand: the parser's text, found once it failed)
        check_other("add", input, other, _method)
        raise


def check_other(name, input, other, method):
    """PyTorch's parser text for an `other` that is neither a Tensor nor a number, its position counted as the
    method's or the function's (through an operator, Python's own text)."""
    if not isinstance(other, (Tensor, numbers.Number, np.generic)) and not hasattr(other, "shape"):
        raise operand_type_error(input, other, f"{name}(): argument 'other' (position {1 if method else 2}) must be "
                                               f"Tensor, not {type_name(other)}")


def _alpha_first(name, alpha, args, method):
    """(other, alpha) of PyTorch's deprecated `x.add(alpha, other)` overload, which it warns about once a
    process; PyTorch's error for any other extra positional argument (`x.add(y, 2.0)`: alpha is keyword-only)."""
    if len(args) != 1 or isinstance(alpha, Tensor):
        given = len(args) + (1 if method else 2)
        raise TypeError(too_many_positional(name, given - len(args), given))
    warn_once("alpha first", f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\n"
              f"Consider using one of the following signatures instead:\n\t{name}(Tensor other, *, Number alpha = 1)")
    return args[0], alpha


def _is_bool(x):
    return x.__class__ is builtins.bool or (isinstance(x, Tensor) and x.array.dtype == np.bool_)


def refuse_bool_sub(input, other):
    """PyTorch's refusal of a subtraction with a bool operand, in its words for one bool and for two."""
    a, b = _is_bool(input), _is_bool(other)
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError(_BOOL_SUB)


def sub(input, other, *args, alpha=1, _method=False):
    """input - alpha * other, broadcasting (bool operands are refused, as in PyTorch)."""
    if args:  # x.sub(alpha, other), as add's
        other, alpha = _alpha_first("sub", other, args, _method)
    o = _plain_operand(input, other) if alpha == 1 else None  # (floats and int64: no bool gets through)
    if o is not None:
        if o is _RECORD_NUMBER:
            return SubNumber.apply(input, other)
        if isinstance(o, Tensor):
            return apply_binary(Sub, input, o)
        fp = fp_quiet()  # (as Function.apply's forward: inf and nan without numpy's warnings)
        try:
            return Tensor._wrap(input.array - o)
        except ValueError:  # (shapes that do not broadcast: PyTorch's error; any other: numpy's)
            _refuse_shapes(input, other)
            raise
        finally:
            fp_restore(fp)
    refuse_bool_sub(input, other)
    if alpha != 1:
        check_other("sub", input, other, _method)
        refuse_float_alpha(alpha, input, other)
        return _binary(Sub, input, other, alpha)
    try:
        return _binary(Sub, input, other)
    except TypeError:  # (as add's)
        check_other("sub", input, other, _method)
        raise


def rsub(input, other, alpha=1):
    """other - alpha * input (for `2 - t`): PyTorch's RsubBackward1 when `other` is a number."""
    if alpha == 1 and (other.__class__ is builtins.float or other.__class__ is builtins.int) and \
            type(input) is Tensor and input.array.dtype.kind == "f":  # `1 - g`: no bool to refuse, the number in g's dtype
        return RsubScalar.apply(input, array_module(input.array).asarray(other, dtype=input.array.dtype))
    refuse_bool_sub(input, other)
    if alpha != 1:
        refuse_float_alpha(alpha, input, other)
        return rsub(mul(input, alpha), other)
    if isinstance(other, Tensor):
        return _binary(Sub, other, input)
    a, b = binary_operands(input, other)
    return RsubScalar.apply(a, b.array)


def mul(input, other):
    """input * other, broadcasting."""
    o = _plain_operand(input, other)
    if o is not None:
        if o is _RECORD_NUMBER:
            return MulNumber.apply(input, other)
        if isinstance(o, Tensor):
            return apply_binary(Mul, input, o)
        fp = fp_quiet()  # (as Function.apply's forward: inf and nan without numpy's warnings)
        try:
            return Tensor._wrap(input.array * o)
        except ValueError:  # (shapes that do not broadcast: PyTorch's error; any other: numpy's)
            _refuse_shapes(input, other)
            raise
        finally:
            fp_restore(fp)
    if getattr(other, "is_sparse", False):  # (dense * sparse is sparse in PyTorch: zero off its elements)
        return other * input
    n = _half_number(input, other)
    if n is not None:
        return _half_by_number(HalfMulNumber, np.multiply, input, n)
    return _binary(Mul, input, other)


def div(input, other, rounding_mode=None):
    """input / other (true division; int inputs give float32), or floor/trunc division."""
    if rounding_mode is not None:
        return _rounded_div(input, other, rounding_mode)
    o = _plain_operand(input, other, ints=False)
    if o is not None:
        if o is _RECORD_NUMBER:
            return DivNumber.apply(input, other)
        if isinstance(o, Tensor):
            return apply_binary(Div, input, o)
        fp = fp_quiet()  # (as Function.apply's forward: inf and nan without numpy's warnings)
        try:
            return Tensor._wrap(input.array / o)
        except ValueError:  # (shapes that do not broadcast: PyTorch's error; any other: numpy's)
            _refuse_shapes(input, other)
            raise
        finally:
            fp_restore(fp)
    if getattr(other, "is_sparse", False):
        return other.__rtruediv__(input)
    n = _half_number(input, other)
    if n is not None:
        return _half_by_number(HalfDivNumber, np.divide, input, n)
    a, b = float_operands(input, other)  # (`int8 / 1000` divides by 1000, not by 1000 wrapped to int8)
    out = Div.apply(a, b)
    if out.grad_fn is not None:
        out.grad_fn._keep_shapes(a.array.shape, b.array.shape)
    return out


class RoundedDiv(Function):
    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, a, b, mode):
        xp = array_module(a.array)
        x, y = a.array, b.array
        if x.dtype.kind in "iub":
            if not bool(y.all()):
                raise RuntimeError("ZeroDivisionError")
            if mode == "floor":
                return xp.floor_divide(x, y)
            q = xp.floor_divide(x, y)  # trunc rounds towards 0: one up where the signs differ and it is inexact
            return q + ((q < 0) & (q * y != x)).astype(q.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.floor_divide(x, y) if mode == "floor" else xp.trunc(x / y)

    @staticmethod
    def backward(ctx, g):  # a rounded quotient is flat: zero gradient almost everywhere
        a_shape, b_shape = ctx._shapes
        return (zeros_like_grad(g, a_shape) if ctx.needs_input_grad[0] else None,
                zeros_like_grad(g, b_shape) if ctx.needs_input_grad[1] else None, None)


def _rounded_div(input, other, mode, cls=RoundedDiv):
    if mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'")
    a, b = binary_operands(input, other)
    if a.array.dtype.kind in "bc":
        raise NotImplementedError(f"\"div_{mode}_cpu\" not implemented for '{a.dtype._legacy[:-6]}'")
    return _binary(cls, a, b, mode)


class FloorDivide(RoundedDiv):
    """floor_divide's node: PyTorch records it with no derivative (div(rounding_mode="floor") has one, all
    zeros): its result requires grad, printed grad_fn=<NotImplemented>, and a backward through it raises."""
    node_name = "NotImplemented"

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


def floor_divide(input, other):
    """input // other: the quotient rounded down (PyTorch's floor_divide)."""
    return _rounded_div(input, other, "floor", FloorDivide)


def rdiv(input, other):
    """other / input (for `2 / t`): reciprocal(input) * other, as PyTorch records it."""
    if isinstance(other, Tensor):
        return div(other, input)
    return mul(reciprocal(input), other)


def pow(input, exponent):
    """input ** exponent, for a tensor or scalar exponent (or a scalar base)."""
    if (exponent.__class__ is builtins.int or exponent.__class__ is builtins.float) and type(input) is Tensor \
            and input.array.dtype.kind == "f":  # `x ** 2`: a float tensor keeps its dtype, nothing to refuse
        return PowScalar.apply(input, exponent)
    if getattr(input, "is_sparse", False):  # a sparse COO tensor (minigrad/sparse.py) makes its own power
        return input.pow(exponent)
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor) and (exponent.array.dtype.kind == "f" or (
            exponent.array.dtype.kind == "c" and isinstance(input, (builtins.int, builtins.float, builtins.complex)))):
        return RPow.apply(input, exponent)
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        if not isinstance(exponent, (builtins.int, builtins.float, builtins.complex, np.number)):
            raise TypeError(f"pow(): unsupported exponent of type {type_name(exponent)}")
        if exponent.__class__ not in (builtins.int, builtins.float, builtins.bool, builtins.complex):
            # a numpy scalar (np.float64 is a float too) or another subclass: its Python number, which numpy, as
            # PyTorch, takes in the tensor's dtype (numpy would compute float32 ** np.float64 in float64)
            exponent = exponent.item() if isinstance(exponent, np.number) else (
                builtins.float if isinstance(exponent, builtins.float) else builtins.int)(exponent)
        dt = result_type(input, exponent)
        if dt == np.bool_ and exponent.__class__ is builtins.bool:  # b ** True is b, b ** False is all True
            return array_op("copy" if exponent else "ones_like", input)
        _check_pow(dt, exponent)
        return PowScalar.apply(cast(input, dt), exponent)
    a, b = binary_operands(input, exponent)
    _check_pow(a.array.dtype, None)
    own_a = input.array.dtype if isinstance(input, Tensor) and input.array.dtype != a.array.dtype else None
    own_b = exponent.array.dtype if isinstance(exponent, Tensor) and exponent.array.dtype != b.array.dtype else None
    out = PowTensor.apply(a, b, isinstance(exponent, Tensor) and exponent.array.dtype == np.bool_, (own_a, own_b))
    if out.grad_fn is not None:
        out.grad_fn._keep_shapes(a.array.shape, b.array.shape)
    return out


def _check_pow(dt, exponent):
    if dt == np.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if dt.kind in "iu" and exponent is not None and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def maximum(input, other):
    """Elementwise max of two tensors."""
    if input.array.dtype.kind == "c" or other.array.dtype.kind == "c":
        _refuse("maximum", input, other)
    return _binary(Maximum, input, other)


def minimum(input, other):
    """Elementwise min of two tensors."""
    if input.array.dtype.kind == "c" or other.array.dtype.kind == "c":
        _refuse("minimum", input, other)
    return _binary(Minimum, input, other)


# ---- unary ------------------------------------------------------------------------------
class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        return -a.array

    @staticmethod
    def backward(ctx, g):  # d(-a) = -da
        return -g

    @staticmethod
    def array_step(needs, a):
        return (lambda x: (-x, None)), (lambda saved, g: (-g,))


class Exp(Function):
    node_name = "ExpBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return array_module(a.array).exp(a.array)

    @staticmethod
    def backward(ctx, g):  # d(e^a) = e^a da
        if not state.grad_enabled:  # no graph of the backward wanted: the arrays' product (mul's own), no node
            return _array_grad(_exp_backward(g.array, ctx._result_array()))
        return g * ctx._saved_result

    @staticmethod
    def array_step(needs, a):
        return _result_step(array_module(a.array).exp, _exp_backward)


def _exp_backward(g, r):
    return g * r


def _result_step(fn, grad):
    """The array_step of a one-input op that saves its output: r = fn(x) forward, grad(g, r) backward."""
    def forward(x):
        r = fn(x)
        return r, r

    return forward, lambda r, g: (grad(g, r),)


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return array_module(a.array).log(a.array)

    @staticmethod
    def backward(ctx, g):  # d(log a) = da / a
        return g / ctx._saved_self

    @staticmethod
    def array_step(needs, a):
        xp = array_module(a.array)

        def forward(x):
            return xp.log(x), x

        return forward, lambda x, g: (g / x,)


class Sqrt(Function):
    node_name = "SqrtBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return array_module(a.array).sqrt(a.array)

    @staticmethod
    def backward(ctx, g):  # d(sqrt a) = da / (2 sqrt a)
        return g / (2.0 * ctx._saved_result)


class Rsqrt(Function):
    node_name = "RsqrtBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        x = a.array
        xp = array_module(x)
        if x.dtype == np.float16:
            return in_float32(lambda y: xp.reciprocal(xp.sqrt(y)), x)
        return xp.reciprocal(xp.sqrt(x))  # (1.0 / sqrt's bits, a microsecond sooner)

    @staticmethod
    def backward(ctx, g):  # d(a^-1/2) = -1/2 a^-3/2 da
        r = ctx._saved_result
        return g * (-0.5 * r * r * r)


class Tanh(Function):
    node_name = "TanhBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return array_module(a.array).tanh(a.array)

    @staticmethod
    def backward(ctx, g):  # d(tanh a) = (1 - tanh^2 a) da
        if not state.grad_enabled:  # no graph of the backward wanted: TanhBackward's array code, no node
            return _array_grad(_tanh_backward(g.array, ctx._result_array()))
        return TanhBackward.apply(g, ctx._saved_result)

    @staticmethod
    def array_step(needs, a):
        return _result_step(array_module(a.array).tanh, _tanh_backward)


def _tanh_backward(g, r):
    if r.dtype == np.float16:
        return in_float32(_tanh_backward, g, r)
    t = r * r
    if type(t) is np.ndarray and t.dtype == g.dtype and t.shape == g.shape:
        # the formula's steps into the fresh square (numpy's call per step costs more than 256 floats' work)
        np.subtract(1.0, t, out=t)
        return np.multiply(g, t, out=t)
    return g * (1.0 - t)


class TanhBackward(Function):
    """g (1 - r^2) for r = tanh(a), in one op (as PyTorch's tanh_backward): one node, not three."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, g, r):
        ctx.save(grad_output=g, output=r)
        return _tanh_backward(g.array, r.array)

    @staticmethod
    def backward(ctx, gg):  # d(g (1 - r^2)) = (1 - r^2) dg - 2 g r dr
        g, r = ctx._saved_grad_output, ctx._saved_output
        needs = ctx.needs_input_grad
        if not state.grad_enabled:  # no graph of this gradient wanted: arrays, no node
            return (_array_grad(_tanh_backward(gg.array, r.array)) if needs[0] else None,
                    _array_grad(gg.array * (-2.0 * r.array * g.array)) if needs[1] else None)
        # dg's term is this op again: one node, not the three of gg * (1 - r * r)
        return (TanhBackward.apply(gg, r) if needs[0] else None,
                gg * (-2.0 * r * g) if needs[1] else None)


def sigmoid_array(x):
    """1 / (1 + exp(-x)) of an array. With e = exp(-|x|) <= 1 nothing overflows, and for x < 0, e/(1+e)
    keeps full relative precision (1/(1+e^-x) overflows; 0.5*(tanh(x/2)+1) cancels to 0 for very negative x)."""
    if x.ndim == 0:  # (a ufunc gives a 0-d input back as a scalar, which the steps below cannot write into)
        return sigmoid_array(x.reshape(1)).reshape(())
    # in place in two buffers, with no scalar comparison: each pass of a small array costs a call
    xp = array_module(x)
    e = xp.abs(x)
    one = (x == e).astype(x.dtype)  # 1 where x >= 0 (NaN: 0, as x >= 0 is false)
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    r = e + 1.0
    xp.reciprocal(r, out=r)  # r = 1 / (1 + e): the result where x >= 0
    xp.maximum(e, one, out=e)  # 1 where x >= 0 (as e <= 1), else e
    return xp.multiply(r, e, out=r)  # e r = e / (1 + e) where x < 0


class Sigmoid(Function):
    node_name = "SigmoidBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        ctx.impl = backends.find("sigmoid", a.array)  # (a backend's loop takes float32; kept for backward)
        return _sigmoid(ctx.impl, a.array)

    @staticmethod
    def backward(ctx, g):  # d(s(a)) = s(a) (1 - s(a)) da
        if not state.grad_enabled:  # no graph of the backward wanted: the array code, no node
            return _array_grad(_sigmoid_grad(ctx.impl, g.array, ctx._result_array()))
        return SigmoidBackward.apply(g, ctx._saved_result)

    @staticmethod
    def array_step(needs, a):
        impl = backends.find("sigmoid", a.array)
        prepared = getattr(impl, "prepared_step", None)  # (the backend's kernels looked up once)
        steps = None if prepared is None else prepared(a.array)
        if steps is not None:
            return steps
        return _result_step(lambda x: _sigmoid(impl, x), lambda g, r: _sigmoid_grad(impl, g, r))


def _sigmoid(impl, x):  # through the backend `impl`, or numpy's passes
    if impl is not None:
        return impl.forward(x)
    return in_float32(sigmoid_array, x) if x.dtype == np.float16 else sigmoid_array(x)


def _sigmoid_grad(impl, g, r):
    return _sigmoid_backward(g, r) if impl is None else impl.backward(g, r)


def _sigmoid_backward(g, r):
    if r.dtype == np.float16:  # PyTorch's half kernel rounds in half, in this order: r (1 - r) first is an ulp off
        return g * (1.0 - r) * r
    t = 1.0 - r
    if type(t) is np.ndarray and t.dtype == g.dtype and t.shape == g.shape:  # (as _tanh_backward's)
        np.multiply(r, t, out=t)
        return np.multiply(g, t, out=t)
    return g * (r * t)


class SigmoidBackward(Function):
    """g r (1 - r) for r = sigmoid(a), in one op (as PyTorch's sigmoid_backward): one node, not three."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, g, r):
        ctx.save(grad_output=g, output=r)
        return _sigmoid_backward(g.array, r.array)

    @staticmethod
    def backward(ctx, gg):  # d(g r (1 - r)) = r (1 - r) dg + g (1 - 2 r) dr
        g, r = ctx._saved_grad_output, ctx._saved_output
        needs = ctx.needs_input_grad
        if not state.grad_enabled:  # no graph of this gradient wanted: arrays, no node
            return (_array_grad(_sigmoid_backward(gg.array, r.array)) if needs[0] else None,
                    _array_grad(gg.array * g.array * (1.0 - 2.0 * r.array)) if needs[1] else None)
        # dg's term is this op again: one node, not the three of gg * (r * (1 - r))
        return (SigmoidBackward.apply(gg, r) if needs[0] else None,
                gg * g * (1.0 - 2.0 * r) if needs[1] else None)


def relu_array(x):
    """max(x, 0) of an array (NaN and -0.0 kept: PyTorch's x < 0 ? 0 : x, which numpy's maximum gives with
    the 0 first, as it returns its second operand at a tie), the backend's one-pass loop where there is one
    (numpy's maximum checks for NaN as it goes)."""
    impl = backends.find("relu", x)
    return array_module(x).maximum(0, x) if impl is None else impl.forward(x)


def relu_into(x):
    """relu written over the float array x itself, one pass (an in-place relu with nothing to record);
    False, x untouched, where x is not a writeable float array."""
    if type(x) is not np.ndarray or x.dtype.kind != "f" or not x.flags.writeable:
        return False
    impl = backends.find("relu", x)
    if impl is not None and x.flags.c_contiguous:
        impl.forward_(x)
    else:
        np.maximum(0, x, out=x)
    return True


def relu_backward_array(g, r):
    """+0.0 where r <= 0, else g, for r = relu(x) (picked, not multiplied: a NaN or inf g where x <= 0 stays
    out; a NaN x passes g, as PyTorch's), the backend's loop where there is one."""
    impl = backends.find("relu", r)
    if impl is not None and g.dtype == r.dtype:
        return impl.backward(g, r)
    return array_module(r).where(r <= 0, r.dtype.type(0), g)


class Relu(Function):
    node_name = "ReluBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return relu_array(a.array)

    @staticmethod
    def backward(ctx, g):  # d(relu a) = [a > 0] da
        if not state.grad_enabled:  # no graph of the backward wanted
            return _array_grad(relu_backward_array(g.array, ctx._result_array()))
        return ThresholdBackward.apply(g, ctx._saved_result, 0.0)


class PiecewiseBackward(Function):
    """The gradient g m(x) of a piecewise-linear activation (m(x) piecewise constant), one node when
    create_graph records it, as PyTorch's threshold_backward and the like. It is linear in g, and its slope
    in x is 0: a zero gradient for x (not none: PyTorch's), so x stays in the graph of the gradient.
    A subclass gives node_name and `grad_array(g, x, *params)` on arrays."""

    @classmethod
    def forward(cls, ctx, g, x, *params):
        ctx.save(self=x)
        ctx.params = params
        return cls.grad_array(g.array, x.array, *params)

    @staticmethod
    def backward(ctx, gg):
        return (ctx._forward_cls.apply(gg, ctx._saved_self, *ctx.params), zeros_like_grad(gg)) + (None,) * len(
            ctx.params)


class ThresholdBackward(PiecewiseBackward):
    """g where x > threshold, else 0 (relu's with x its output and threshold 0); a NaN x passes g."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def grad_array(g, x, threshold):
        if threshold == 0:
            return relu_backward_array(g, x)
        return array_module(x).where(x <= threshold, x.dtype.type(0), g)


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return array_module(a.array).abs(a.array)

    @staticmethod
    def backward(ctx, g):  # d|a| = sign(a) da
        return g * sign(ctx._saved_self)


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return array_module(a.array).sin(a.array)

    @staticmethod
    def backward(ctx, g):  # d(sin a) = cos(a) da
        return g * cos(ctx._saved_self)


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return array_module(a.array).cos(a.array)

    @staticmethod
    def backward(ctx, g):  # d(cos a) = -sin(a) da
        return -g * sin(ctx._saved_self)


def clip_array(a, lo, hi, out=None):
    """PyTorch's clamp of an array: x < lo ? lo : x, x > hi ? hi : x, so a tie keeps x (-0.0 against a 0.0 bound)
    and NaN stays; numpy's maximum and minimum give their second operand at a tie: x goes second."""
    if hi is None:
        return array_module(a).maximum(lo, a, out=out)
    if lo is None:
        return array_module(a).minimum(hi, a, out=out)
    return a.clip(lo, hi, out=out)  # (the array's method: what numpy's and cupy's clip() call, less a wrapper)


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save(self=a)
        ctx.bounds = (lo, hi)
        return clip_array(a.array, lo, hi)

    @staticmethod
    def backward(ctx, g):  # gradient passes where lo <= a <= hi (never at a NaN: its comparisons are false)
        a = ctx._saved_self
        lo, hi = ctx.bounds  # (one at least is a number: clamp checks)
        if not g._requires_grad and g.array.dtype == a.array.dtype:  # nothing to record: the same steps on arrays
            x = a.array
            keep = x >= lo if lo is not None else None
            if hi is not None:
                if keep is None:
                    keep = x <= hi
                else:
                    keep &= x <= hi  # (into the first comparison's array: no third one)
            return Tensor._wrap(pick(keep, g.array)), None, None  # (not numpy's where: a branch per element on a random mask)
        mask = a >= lo if lo is not None else None
        if hi is not None:
            mask = a <= hi if mask is None else mask & (a <= hi)
        return where(mask, g, 0.0), None, None


def _unary(cls, opname):
    def op(input):
        if not isinstance(input, Tensor):
            return not_dense(opname, input)
        if input.array.dtype.kind != "f":
            from ..dtypes import default_float
            from .complex import unary

            if input.array.dtype.kind == "c":  # (its formula and kernels are real ones: numpy's complex ufunc)
                return unary(opname, input)
            input = input.to(default_float)
        return cls.apply(input)

    op.__name__ = opname
    op.__doc__ = f"Elementwise {opname}; a `{cls.node_name}` node records it."
    return op


exp = _unary(Exp, "exp")
reciprocal = _unary(Reciprocal, "reciprocal")
log = _unary(Log, "log")
sqrt = _unary(Sqrt, "sqrt")
rsqrt = _unary(Rsqrt, "rsqrt")
tanh = _unary(Tanh, "tanh")
sigmoid = _unary(Sigmoid, "sigmoid")
sin = _unary(Sin, "sin")
cos = _unary(Cos, "cos")


BOOL_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                 "use the `~` or `logical_not()` operator instead.")


def neg(input):
    """-input."""
    try:
        dtype = input.array.dtype
    except (AttributeError, NotImplementedError):  # (a sparse tensor's .array refuses)
        return not_dense("neg", input)
    if dtype.kind == "b":  # (not dtype == np.bool_: numpy makes a dtype of the type to compare)
        raise RuntimeError(BOOL_NEGATION)
    return Neg.apply(input)


def relu(input):
    """max(input, 0)."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("relu", input)
    if kind in "bc":
        _refuse("relu", input)
        raise RuntimeError("Boolean inputs not supported for relu")
    return Relu.apply(input)


def abs(input):
    """|input|."""
    try:
        dtype = input.array.dtype
    except (AttributeError, NotImplementedError):
        return not_dense("abs", input)
    if dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    if dtype.kind == "c":
        from .complex import abs as complex_abs

        return complex_abs(input)
    return Abs.apply(input)


class ClampTensor(Function):
    node_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save(self=a, min=lo, max=hi)
        xp = array_module(a.array)
        x = a.array
        # (NaN anywhere gives NaN, as PyTorch); a tie keeps the value clamped, as PyTorch's std::max(a, min)
        # and std::min(a, max) do: clamp(0.0, 0.0, -0.0) is 0.0, where numpy's minimum gives its second -0.0
        out = x if lo is None else xp.maximum(x, lo.array)
        if lo is not None and x.dtype.kind == "f":
            out = xp.where(out == x, x, out)
        if hi is None:
            return out
        low = out
        out = xp.minimum(low, hi.array)
        return xp.where(out == low, low, out) if x.dtype.kind == "f" else out

    @staticmethod
    def keep_state(node, inputs, outputs):  # the operands' shapes, to which backward sums the gradients
        node.shapes = tuple(None if b is None else b.array.shape for b in inputs)

    @staticmethod
    def backward(ctx, g):  # PyTorch's masks (clamp_backward_min_max): a tie goes to `input`, min > max to `max`
        a, lo, hi = ctx._saved_self, ctx._saved_min, ctx._saved_max
        need = ctx.needs_input_grad
        if lo is not None and hi is not None:  # PyTorch's masks combine in place into their first
            sa, sl, sh = a.array.shape, lo.array.shape, hi.array.shape
            for needed, first, second in ((need[0], broadcast_shapes(sa, sl), broadcast_shapes(sa, sh)),
                                          (need[1], broadcast_shapes(sa, sl), broadcast_shapes(sl, sh)),
                                          (need[2], broadcast_shapes(sa, sh), broadcast_shapes(sh, sl))):
                full = broadcast_shapes(first, second)
                if needed and full != first:
                    raise output_shape_error(first, full)
        zero = g.new_zeros(())
        ga = glo = ghi = None
        if need[0]:
            keep = a >= lo if lo is not None else None
            if hi is not None:
                keep = a <= hi if keep is None else keep & (a <= hi)
            ga = sum_to(where(keep, g, zero), ctx.shapes[0])
        if need[1]:
            pred = a < lo if hi is None else (a < lo) & (lo < hi)
            glo = sum_to(where(pred, g, zero), ctx.shapes[1])
        if need[2]:
            pred = a > hi if lo is None else (a > hi) | (hi < lo)
            ghi = sum_to(where(pred, g, zero), ctx.shapes[2])
        return ga, glo, ghi


_NOT_NUMBERS = (np.ndarray, list, tuple)  # operands PyTorch's parser reads as neither a Tensor nor a Number


# PyTorch names clamp's node by the op called (clamp, clamp_min, clamp_max) and by its bounds' kind
# (numbers, tensors); the work is the same
class ClampMin(Clamp):
    node_name = "ClampMinBackward0"


class ClampMax(Clamp):
    node_name = "ClampMaxBackward0"


class ClampMinTensor(ClampTensor):
    node_name = "ClampMinBackward1"


class ClampMaxTensor(ClampTensor):
    node_name = "ClampMaxBackward1"


def clamp(input, min=None, max=None, *, out=None):
    """input clipped to [min, max] (either may be None)."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py)
        if mixed_bounds(min, max):
            raise bounds_error("clamp", (input, min, max), out=out)
        return out_call(clamp, "clamp", (input, min, max), {}, out)
    if input.array.dtype.kind == "f" and type(min) in _FLOAT_BOUND and type(max) in _FLOAT_BOUND and (
            min is not None or max is not None):  # the usual: a floating tensor between numbers, nothing to promote
        return Clamp.apply(input, min, max)
    return _clamp(input, min, max, (Clamp, ClampTensor))


def mixed_bounds(min, max):
    """A tensor bound beside a number, which PyTorch's overloads (two tensors or two numbers) refuse; its argument
    parser reads a 0-dim tensor that needs no grad as a number, so that one is no mix."""
    if min is None or max is None or isinstance(min, Tensor) == isinstance(max, Tensor):
        return False
    t = min if isinstance(min, Tensor) else max
    return bool(t.array.ndim or t._requires_grad)


def bounds_error(name, args, method=False, out=None):
    """PyTorch's parser's refusal of clamp's bounds: `args` as passed (a method's without self)."""
    got = ", ".join(map(type_name, args)) + (", out=Tensor" if out is not None else "")
    if method:
        marked = ", ".join(f"!{type_name(a)}!" for a in args)
        lines = "".join(f" * ({kind} min = None, {kind} max = None)\n      didn't match because some of the arguments "
                        f"have invalid types: ({marked})\n" for kind in ("Tensor", "Number"))
    else:
        lines = (" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                 " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + lines)


def clamp_min(input, min):
    if input.array.dtype.kind == "f" and type(min) in _FLOAT_BOUND and min is not None:
        return ClampMin.apply(input, min, None)
    return _clamp(input, min, None, (ClampMin, ClampMinTensor))


def clamp_max(input, max):
    if input.array.dtype.kind == "f" and type(max) in _FLOAT_BOUND and max is not None:
        return ClampMax.apply(input, None, max)
    return _clamp(input, None, max, (ClampMax, ClampMaxTensor))


def _clamp(input, min, max, nodes):
    """clamp's checks and promotions; `nodes`: the op's node for number bounds, and for tensor bounds."""
    if input.array.dtype.kind == "c":
        _refuse("clamp", input)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not isinstance(min, _BOUNDS) or not isinstance(max, _BOUNDS):  # (a list, an array, a string)
        got = ", ".join(f"{k}={type_name(v)}" for k, v in (("min", min), ("max", max)) if v is not None)
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        "one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    if isinstance(min, Tensor) != isinstance(max, Tensor) and min is not None and max is not None:
        if mixed_bounds(min, max):
            raise bounds_error("clamp", (input, min, max))
        min, max = (b.item() if isinstance(b, Tensor) else b for b in (min, max))  # (a 0-dim one: a number)
    bounds = [b for b in (min, max) if b is not None]
    dt = result_type(input, *bounds)  # (all three at once: pairwise steps can promote differently)
    if isinstance(bounds[0], Tensor):  # PyTorch's error for shapes that do not broadcast, before numpy's and the dtype's
        shape = input.array.shape
        for b in bounds:
            shape = broadcast_shapes(shape, b.array.shape)
    if dt == np.bool_ and (len(bounds) == 2 or not isinstance(bounds[0], Tensor)):  # (bool clamp_min(t) works)
        kernel = "clamp" if len(bounds) == 2 else "clamp_min" if max is None else "clamp_max"
        kernel += "_scalar" if not isinstance(bounds[0], Tensor) else ""
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")
    if isinstance(bounds[0], Tensor):  # tensor bounds: elementwise, broadcasting
        out = nodes[1].apply(*(None if b is None else cast(b, dt) for b in (input, min, max)))
        if out.grad_fn is not None:
            ClampTensor.keep_state(out.grad_fn, (input, min, max), out)
            if nodes[1] is ClampTensor:  # (clamp's node: an edge for each bound, None for one not given)
                keep_absent_edges(out, (input, min, max), (1, 2))
        return out  # an integer tensor clamped to float bounds becomes float, as PyTorch
    if dt.kind in "iu":
        min, max = integer_bound(min, dt), integer_bound(max, dt)
    return nodes[0].apply(cast(input, dt), min, max)


def integer_bound(v, dt):
    """A Python int bound of an integer tensor's clamp as PyTorch converts it to the dtype: refused out of
    range, save that an unsigned dtype takes a negative one down to -max, wrapped (clamp(uint8, -1) is 255)."""
    if type(v) is not builtins.int:
        return v
    info = np.iinfo(dt)
    if info.min <= v <= info.max:
        return v
    if dt.kind == "u" and -info.max <= v < 0:
        return v % (info.max + 1)
    raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")


clip = clamp
_FLOAT_BOUND = (builtins.float, builtins.int, type(None))  # (bool is not int's type: it takes the promoting path)
_BOUNDS = (Tensor, numbers.Number, type(None))


class Sign(Function):
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, a):
        xp = array_module(a.array)
        out = xp.sign(a.array)
        # PyTorch's sign is (0 < a) - (a < 0): 0 at NaN, where numpy's is NaN (a sum of the +-1s finds one)
        if out.dtype.kind == "f" and math.isnan(out.sum()):
            return xp.where(out == out, out, out.dtype.type(0))
        return out

    @staticmethod
    def backward(ctx, g):  # d(sign a) = 0 almost everywhere
        return zeros_like_grad(g)


class SgnReal(Sign):  # torch.sgn of a real tensor: sign, under PyTorch's name for sgn's node
    node_name = "SgnBackward0"


def sign(input, node=Sign):
    """-1, 0 or 1 elementwise, 0 at NaN (a zero gradient, as PyTorch's SignBackward0)."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("sign", input)
    if kind in "bc":
        _refuse("sign", input)
        return array_op("copy", input)
    return node.apply(input)


def square(input):
    """input ** 2 (a PowBackward0 node, as in PyTorch)."""
    if not isinstance(input, Tensor):  # (pow would take a number, with pow's words for the rest)
        return not_dense("square", input)
    return pow(input, 2)


# ---- selection --------------------------------------------------------------------------
class Where(Function):
    keep_state = staticmethod(lambda node, inputs, outputs: keep_operand_shapes(node, inputs[1:], outputs))
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save(condition=cond)
        return array_module(a.array).where(cond.array, a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # the gradient goes to whichever input was picked
        cond = ctx._saved_condition
        zero = g.new_zeros(())
        a_shape, b_shape = ctx._shapes
        return (None,
                sum_to(where(cond, g, zero), a_shape) if ctx.needs_input_grad[1] else None,
                sum_to(where(cond, zero, g), b_shape) if ctx.needs_input_grad[2] else None)


def where(condition, input=None, other=None, *, out=None):
    """Pick `input` where `condition` holds, else `other` (scalars allowed); where(condition) alone
    is nonzero(condition, as_tuple=True)."""
    if out is not None:  # PyTorch's out= (minigrad/ops/out.py): its overload takes tensors only
        for k, (arg, v) in enumerate((("condition", condition), ("input", input), ("other", other))):
            if not isinstance(v, Tensor):
                raise TypeError(f"where(): argument '{arg}' (position {k + 1}) must be Tensor, not {type_name(v)}")
        return out_call(where, "where", (condition, input, other), {}, out)
    if input is None and other is None:  # nonzero(condition, as_tuple=True): one index tensor per dim
        recording.escape("where(condition) (nonzero), whose result's shape depends on the data,")
        data = condition.array if isinstance(condition, Tensor) else np.asarray(condition)
        xp = array_module(data)
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in xp.nonzero(xp.atleast_1d(data)))
    if input is None or other is None:  # (one of the two given: PyTorch's parser names what was)
        given = [type_name(condition)] + ([type_name(input)] if other is None else [f"other={type_name(other)}"])
    elif isinstance(condition, _NOT_NUMBERS) or isinstance(input, _NOT_NUMBERS) or isinstance(other, _NOT_NUMBERS):
        given = [type_name(v) for v in (condition, input, other)]
    else:
        given = None
    if given is not None:
        raise TypeError(f"where() received an invalid combination of arguments - got "
                        f"({', '.join(given)}), but expected one of:\n"
                        " * (Tensor condition)\n * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor condition, Number self, Tensor other)\n * (Tensor condition, Tensor input, Number other)\n"
                        " * (Tensor condition, Number self, Number other)\n")
    if not isinstance(condition, Tensor):
        condition = Tensor._wrap(np.asarray(condition))
    if condition.array.dtype != np.bool_:
        if condition.array.dtype != np.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{condition.dtype._legacy[:-6]}")
        condition = array_op(lambda c: c.astype(bool), condition)  # (an op: a captured call replays it on new data)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # where(c, 1.0, -1.0): two numbers
        from ..factory import tensor

        input = tensor(input, device=condition.device) if isinstance(input, (int, float, bool)) else input
    try:
        a, b = binary_operands(input, other)
        out = Where.apply(condition, a, b)
    except (ValueError, RuntimeError):  # shapes that do not broadcast: PyTorch's words (not numpy's), in its order
        shape = ()
        for t in (condition, input, other):
            shape = broadcast_shapes(shape, t.array.shape) if isinstance(t, Tensor) else shape
        raise
    if out.grad_fn is not None:
        Where.keep_state(out.grad_fn, (condition, a, b), out)
    return out


class MaskedFill(Function):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save(mask=mask)
        xp = array_module(a.array)
        v = value.array if isinstance(value, Tensor) else value
        return xp.where(mask.array, xp.asarray(v, dtype=a.array.dtype), a.array)

    @staticmethod
    def backward(ctx, g):  # filled positions pass nothing to `a`; a tensor `value` gets their sum
        mask = ctx._saved_mask
        zero = g.new_zeros(())
        ga = where(mask, zero, g) if ctx.needs_input_grad[0] else None
        gv = where(mask, g, zero).sum() if ctx.needs_input_grad[2] else None
        return ga, None, gv

    @staticmethod
    def array_step(needs, a, mask, value):
        if isinstance(value, Tensor) or mask.array.dtype != np.bool_:
            return None
        xp, dt = array_module(a.array), a.array.dtype

        def forward(x, m):
            return xp.where(m, xp.asarray(value, dtype=dt), x), m

        def backward(m, g):  # (where's result: the shape and dtype where(mask, zero, g) gives)
            return (xp.where(m, xp.zeros((), dtype=g.dtype), g) if needs[0] else None), None

        return forward, backward


class MaskedFillTensor(MaskedFill):
    node_name = "MaskedFillBackward1"


class IndexFill(MaskedFill):  # (index_fill is masked_fill on the mask of its indices)
    node_name = "IndexFillBackward0"


class IndexFillTensor(MaskedFill):
    node_name = "IndexFillBackward1"


class FillDiagonal(MaskedFill):
    """fill_diagonal_'s record: PyTorch fills a diagonal view, so its node is the view's write back."""
    node_name = "CopySlices"


def check_fill_mask(mask):
    """masked_fill's mask must be bool: PyTorch's error names the C++ type of any other."""
    if mask.array.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_name(mask.array.dtype)}")


def check_fill_value(value, dtype):
    """masked_fill's value is a number or a 0-d tensor (numpy would broadcast a 1-element one); a complex one fills
    a real tensor of `dtype` only as full's does (its imaginary part 0), else PyTorch's refusal."""
    if isinstance(value, Tensor) and value.array.ndim:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.array.ndim} dimension(s)."
        )
    complex_fill(value, dtype)


def complex_fill(value, dtype):
    """PyTorch's refusal of a complex number (or 0-d tensor) with an imaginary part written into a real `dtype`."""
    if isinstance(value, Tensor):
        value = value.array.item() if value.array.dtype.kind == "c" and not value.array.ndim else None
    if isinstance(value, (builtins.complex, np.complexfloating)):
        from ..factory import _complex_fill

        _complex_fill(value, dtype)


def masked_fill(input, mask, value, _nodes=(MaskedFill, MaskedFillTensor)):
    """`input` with `value` (a number or a 0-dim tensor) wherever the boolean `mask` (broadcastable) is True."""
    if not isinstance(mask, Tensor):
        mask = Tensor._wrap(np.asarray(mask))
    check_fill_mask(mask)
    ms, s = mask.array.shape, input.array.shape
    if ms != s and s[len(s) - len(ms):] != ms:  # (the usual masks checked first)
        shape = broadcast_shapes(ms, s)  # (PyTorch's error names the mask tensor a)
        if shape != s:  # a mask of more dimensions, or larger where input's size is 1: input broadcast to it, as in PyTorch
            input = input.expand(shape)
    check_fill_value(value, input.dtype)
    if isinstance(value, Tensor):
        if value.array.dtype != input.array.dtype and value.array.dtype.kind == "f":
            value = value.to(input.dtype)
        return _nodes[1].apply(input, mask, value)
    return _nodes[0].apply(input, mask, checked_scalar(value, input.array.dtype))


# ---- comparisons and logic (no gradient) -------------------------------------------------
def _compare(ufunc_name):
    ordering = ufunc_name in ("less", "less_equal", "greater", "greater_equal")

    def op(input, other):
        a, b = binary_operands(input, other)
        if ordering and a.array.dtype.kind == "c":  # (numpy orders complex numbers, PyTorch refuses)
            _refuse(ufunc_name, a)
        return array_op(ufunc_name, a, b)

    op.__name__ = ufunc_name
    op.__doc__ = f"Elementwise {ufunc_name} (a bool tensor, no gradient)."
    return op


eq = _compare("equal")
ne = _compare("not_equal")
lt = _compare("less")
le = _compare("less_equal")
gt = _compare("greater")
ge = _compare("greater_equal")
logical_and = _compare("logical_and")
logical_or = _compare("logical_or")
logical_xor = _compare("logical_xor")
bitwise_and = _compare("bitwise_and")
bitwise_or = _compare("bitwise_or")


def logical_not(input):
    return array_op("logical_not", input)


def isnan(input):
    if not isinstance(input, Tensor):
        return not_dense("isnan", input)
    return array_op("isnan", input)


def isinf(input):
    if not isinstance(input, Tensor):
        return not_dense("isinf", input)
    return array_op("isinf", input)


def isfinite(input):
    return array_op("isfinite", input)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    recording.escape("allclose (a Python bool of the data)")
    _check_same_dtype(input, other)
    xp = array_module(input.array)
    return bool(xp.allclose(input.array, other.array, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    """True if both have the same shape and elements."""
    recording.escape("equal (a Python bool of the data)")
    return input.array.shape == other.array.shape and bool((input.array == other.array).all())


_ = as_tensor_like, float_only  # re-exported helpers used by other op files

keeps_operand_shapes(Add, Div, Maximum, Minimum, Mul, PowTensor, RoundedDiv, Sub)  # (their callers keep the operands' shapes)
