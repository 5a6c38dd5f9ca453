"""Complex tensors' own ops: their parts (real, imag, view_as_real), their making (complex, polar,
view_as_complex), abs, angle and conj.

Gradients follow PyTorch's convention: for a real loss L of a complex z, z.grad is dL/d(re z) + i dL/d(im z)
(the conjugate Wirtinger derivative, times 2). A real input of an op with a complex output takes the real part
of what flows back to it.
"""
import math

import numpy as np

from ..autograd.function import Function, keeps_operand_shapes
from ..device import array_module
from ..dtypes import cpp_name, from_numpy_dtype, promote_types
from ..tensor import Tensor
from .shape import _share_version
from ._util import not_dense

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}
LN2, LN10 = math.log(2.0), math.log(10.0)


def complex_of(npd):
    """The complex dtype whose parts are of real dtype `npd` (float32 -> complex64)."""
    return _COMPLEX_OF[np.dtype(npd)]


def real_of(npd):
    """The real dtype of complex dtype `npd`'s parts (complex64 -> float32)."""
    return _REAL_OF[np.dtype(npd)]


def is_complex_array(a):
    return a.dtype.kind == "c"


class Conj(Function):
    node_name = "ConjBackward0"

    @staticmethod
    def forward(ctx, a):
        return array_module(a.array).conj(a.array)

    @staticmethod
    def backward(ctx, g):
        return conj(g)


class ConjPhysical(Conj):
    node_name = "ConjPhysicalBackward0"  # (PyTorch's name for the conjugate it copies; minigrad's conj copies too)

    @staticmethod
    def backward(ctx, g):
        return conj_physical(g)


class ViewAsReal(Function):
    node_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx, a):
        # a view of the same memory, the parts on a last axis of 2 (writes through it reach the complex tensor)
        x = a.array
        return array_module(x).lib.stride_tricks.as_strided(x.real, x.shape + (2,), x.strides + (x.real.itemsize,))

    @staticmethod
    def backward(ctx, g):
        return view_as_complex(g.contiguous())


class ViewAsComplex(Function):
    node_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a.array
        return (x[..., 0] + 1j * x[..., 1]).astype(complex_of(x.dtype))

    @staticmethod
    def backward(ctx, g):
        return view_as_real(g)


class Complex(Function):
    node_name = "ComplexBackward0"

    @staticmethod
    def forward(ctx, re, im):
        x, y = re.array, im.array
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), complex_of(x.dtype))
        out.real, out.imag = x, y
        return out

    @staticmethod
    def backward(ctx, g):
        from ._util import sum_to

        re_shape, im_shape = ctx._shapes
        return (sum_to(real(g), re_shape) if ctx.needs_input_grad[0] else None,
                sum_to(imag(g), im_shape) if ctx.needs_input_grad[1] else None)


class Polar(Function):
    node_name = "PolarBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, r, theta):
        ctx.save(abs=r, angle=theta)
        x, t = r.array, theta.array
        out = np.empty(np.broadcast_shapes(x.shape, t.shape), complex_of(x.dtype))
        out.real, out.imag = x * np.cos(t), x * np.sin(t)
        return out

    @staticmethod
    def backward(ctx, g):  # a real input x of z gets re(conj(g) dz/dx): dz/dr = e^(i theta), dz/dtheta = i z
        from ._util import sum_to

        r, theta, z = ctx.saved_tensors
        r_shape, t_shape = ctx._shapes
        gc = conj(g)
        return (sum_to(real(gc * polar(r.new_ones(()), theta)), r_shape) if ctx.needs_input_grad[0] else None,
                sum_to(real(gc * z * 1j), t_shape) if ctx.needs_input_grad[1] else None)


class ComplexAbs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return np.abs(a.array)

    @staticmethod
    def backward(ctx, g):  # d|z| flows back as g z/|z| (0 at z = 0, as PyTorch's sgn)
        return g * sgn(ctx._saved_self)


class ComplexAngle(Function):
    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        return np.angle(a.array).astype(real_of(a.array.dtype))

    @staticmethod
    def backward(ctx, g):  # theta = atan2(im, re): g (-im + i re) / |z|^2 = g i z / |z|^2
        z = ctx._saved_self
        a = z.abs()
        return g * (z * 1j) / (a * a)


class Sgn(Function):
    node_name = "SgnBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        x = a.array
        mag = np.abs(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):  # s = z/|z|: ds/dz = 1/(2|z|), ds/dz* = -s^2/(2|z|), so (g - conj(g) s^2) / (2|z|); 0 at z = 0
        z = ctx._saved_self
        mag = z.abs()
        s = sgn(z)
        at_zero = mag == 0  # (Tensor methods, not elementwise's functions: elementwise imports this file)
        return ((g - g.conj() * s * s) / (2.0 * mag.masked_fill(at_zero, 1.0))).masked_fill(at_zero, 0.0)


def _derivatives():
    """f'(z) of each holomorphic op minigrad computes on complex tensors, in Tensor ops (so twice differentiable;
    Tensor's methods, as elementwise imports this module)."""
    return {
        "exp": lambda z: z.exp(),
        "log": lambda z: z.reciprocal(),
        "sqrt": lambda z: z.sqrt().reciprocal() * 0.5,
        "rsqrt": lambda z: z.rsqrt() * z.reciprocal() * -0.5,
        "sin": lambda z: z.cos(),
        "cos": lambda z: -z.sin(),
        "tan": lambda z: 1.0 + z.tan() * z.tan(),
        "tanh": lambda z: 1.0 - z.tanh() * z.tanh(),
        "sigmoid": lambda z: z.sigmoid() * (1.0 - z.sigmoid()),
        "reciprocal": lambda z: -(z.reciprocal() * z.reciprocal()),
        "sinh": lambda z: z.cosh(),
        "cosh": lambda z: z.sinh(),
        # (acosh's as 1 / (sqrt(z - 1) sqrt(z + 1)), numpy's and PyTorch's branch: 1 / sqrt(z^2 - 1) has the
        # opposite sign where re z < 0)
        "asin": lambda z: (1.0 - z * z).rsqrt(),
        "acos": lambda z: -(1.0 - z * z).rsqrt(),
        "atan": lambda z: (1.0 + z * z).reciprocal(),
        "asinh": lambda z: (z * z + 1.0).rsqrt(),
        "acosh": lambda z: (z - 1.0).rsqrt() * (z + 1.0).rsqrt(),
        "atanh": lambda z: (1.0 - z * z).reciprocal(),
        "exp2": lambda z: z.exp2() * LN2,
        "expm1": lambda z: z.exp(),
        "log2": lambda z: (z * LN2).reciprocal(),
        "log10": lambda z: (z * LN10).reciprocal(),
        "log1p": lambda z: (z + 1.0).reciprocal(),
    }


def _holomorphic(name, node_name, array_fn):
    def forward(ctx, a):
        ctx.save(self=a)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return array_fn(a.array)

    def backward(ctx, g):  # for holomorphic f, PyTorch's convention gives g conj(f'(z))
        return g * conj(_derivatives()[name](ctx._saved_self))

    return type(name.capitalize(), (Function,), dict(node_name=node_name, forward=staticmethod(forward),
                                                     backward=staticmethod(backward)))


# numpy's complex ufuncs (never the numba kernels or the float formulas of the real ops' Functions)
_UNARY = {name: _holomorphic(name, node, fn) for name, node, fn in (
    ("exp", "ExpBackward0", np.exp), ("log", "LogBackward0", np.log), ("sqrt", "SqrtBackward0", np.sqrt),
    ("sin", "SinBackward0", np.sin), ("cos", "CosBackward0", np.cos), ("tanh", "TanhBackward0", np.tanh),
    ("reciprocal", "ReciprocalBackward0", np.reciprocal), ("rsqrt", "RsqrtBackward0", lambda x: 1 / np.sqrt(x)),
    ("tan", "TanBackward0", np.tan), ("sigmoid", "SigmoidBackward0", lambda x: 1 / (1 + np.exp(-x))),
    ("sinh", "SinhBackward0", np.sinh), ("cosh", "CoshBackward0", np.cosh),
    ("asin", "AsinBackward0", np.arcsin), ("acos", "AcosBackward0", np.arccos),
    ("atan", "AtanBackward0", np.arctan), ("asinh", "AsinhBackward0", np.arcsinh),
    ("acosh", "AcoshBackward0", np.arccosh), ("atanh", "AtanhBackward0", np.arctanh),
    ("exp2", "Exp2Backward0", np.exp2), ("expm1", "Expm1Backward0", np.expm1),
    ("log2", "Log2Backward0", np.log2), ("log10", "Log10Backward0", np.log10),
    ("log1p", "Log1PBackward0", np.log1p))}


def unary(name, input):
    """Elementwise op `name` of a complex tensor, or minigrad's 'not supported' line where it has none yet."""
    cls = _UNARY.get(name)
    if cls is None:
        if name in _NOT_FOR_COMPLEX:  # (an op PyTorch has no complex kernel for: its words)
            refuse(name, input)
        refuse_complex(name, input)
    return cls.apply(input)


def conj(input):
    """The complex conjugate (a copy: minigrad has no lazy conjugate bit, so is_conj() stays False); a real
    tensor is its own conjugate and comes back as it is, as in PyTorch."""
    if input.array.dtype.kind != "c":
        return input
    return Conj.apply(input)


def conj_physical(input):
    """conj, recorded as PyTorch's ConjPhysicalBackward0; a real tensor comes back as it is."""
    try:
        kind = input.array.dtype.kind
    except (AttributeError, NotImplementedError):
        return not_dense("conj_physical", input)
    if kind != "c":
        return input
    return ConjPhysical.apply(input)


def real(input):  # as PyTorch: a select of view_as_real, so recorded as SelectBackward0 over ViewAsRealBackward0
    return view_as_real(input)[..., 0] if input.array.dtype.kind == "c" else input


def imag(input):
    if input.array.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input)[..., 1]


def sgn(input):
    return Sgn.apply(input)


def view_as_real(input):
    if input.array.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _share_version(ViewAsReal.apply(input), input)


def view_as_complex(input):
    x = input.array
    if x.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_scalar_type(x.dtype)}")
    if x.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.strides[-1] != x.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    return ViewAsComplex.apply(input)


def _scalar_type(npd):
    return from_numpy_dtype(npd)._legacy[:-len("Tensor")]


def _check_parts(a, b):
    """complex's and polar's arguments: both float32 or both float64, PyTorch's texts."""
    for t in (a, b):
        if t.array.dtype.kind != "f" or t.array.dtype.itemsize < 4:
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{_scalar_type(a.array.dtype)} and {_scalar_type(b.array.dtype)}")
    if a.array.dtype != b.array.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_type(a.array.dtype)} but got scalar type "
                           f"{_scalar_type(b.array.dtype)} for second argument")


def complex(real, imag):
    """The complex tensor real + i imag (both float32 or both float64, as PyTorch asks)."""
    _check_parts(real, imag)
    return _with_shapes(Complex.apply(real, imag), real, imag)


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle)) (both float32 or both float64, as PyTorch asks)."""
    _check_parts(abs, angle)
    return _with_shapes(Polar.apply(abs, angle), abs, angle)


def _with_shapes(out, a, b):
    if out.grad_fn is not None:
        out.grad_fn._keep_shapes(a.array.shape, b.array.shape)
    return out


def abs(input):
    return ComplexAbs.apply(input)


def angle(input):
    return ComplexAngle.apply(input)


# PyTorch's errors for the ops it has no complex kernel for ({} is ComplexFloat or ComplexDouble): minigrad raises
# them too rather than let numpy order complex numbers lexicographically or cast the imaginary part away (the
# continuous samplers give the same texts for integer and bool tensors: refuse_non_float)
_NOT_FOR_COMPLEX = {
    "max_all": (NotImplementedError, '"max_all" not implemented for \'{}\''),
    "min_all": (NotImplementedError, '"min_all" not implemented for \'{}\''),
    "max": (RuntimeError, "max(): does not support complex input"),
    "min": (RuntimeError, "min(): does not support complex input"),
    "amax": (NotImplementedError, '"max_values_cpu" not implemented for \'{}\''),
    "amin": (NotImplementedError, '"min_values_cpu" not implemented for \'{}\''),
    "aminmax": (NotImplementedError, '"aminmax_cpu" not implemented for \'{}\''),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "fmax": (RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": (RuntimeError, "fmin not implemented for complex tensors."),
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "logit": (NotImplementedError, '"logit_cpu" not implemented for \'{}\''),
    "kthvalue": (NotImplementedError, '"kthvalue_cpu" not implemented for \'{}\''),
    "median": (NotImplementedError, '"median_cpu" not implemented for \'{}\''),
    "median_dim": (NotImplementedError, '"median_out" not implemented for \'{}\''),
    "mode": (NotImplementedError, '"mode_cpu" not implemented for \'{}\''),
    "cummax": (NotImplementedError, '"cummax_cpu" not implemented for \'{}\''),
    "cummin": (NotImplementedError, '"cummin_cpu" not implemented for \'{}\''),
    "unique": (NotImplementedError, '"unique" not implemented for \'{}\''),
    "nansum": (RuntimeError, "nansum on CPU does not support complex inputs"),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead."),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "deg2rad": (RuntimeError, "deg2rad is not supported for complex tensors."),
    "rad2deg": (RuntimeError, "rad2deg is not supported for complex tensors."),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "round": (NotImplementedError, '"round_vml_cpu" not implemented for \'{}\''),
    "round_decimals": (NotImplementedError, '"round_cpu" not implemented for \'{}\''),
    "erf": (NotImplementedError, '"erf_vml_cpu" not implemented for \'{}\''),
    "erfc": (NotImplementedError, '"erfc_vml_cpu" not implemented for \'{}\''),
    "erfinv": (NotImplementedError, '"erfinv_vml_cpu" not implemented for \'{}\''),
    "i0": (NotImplementedError, '"i0_vml_cpu" not implemented for \'{}\''),
    "lgamma": (NotImplementedError, '"lgamma_vml_cpu" not implemented for \'{}\''),
    "frac": (NotImplementedError, '"frac_cpu" not implemented for \'{}\''),
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "less": (NotImplementedError, '"lt_cpu" not implemented for \'{}\''),
    "less_equal": (NotImplementedError, '"le_cpu" not implemented for \'{}\''),
    "greater": (NotImplementedError, '"gt_cpu" not implemented for \'{}\''),
    "greater_equal": (NotImplementedError, '"ge_cpu" not implemented for \'{}\''),
    "copysign": (NotImplementedError, '"copysign_cpu" not implemented for \'{}\''),
    "atan2": (NotImplementedError, '"atan2_cpu" not implemented for \'{}\''),
    "fmod": (NotImplementedError, '"fmod_cpu" not implemented for \'{}\''),
    "remainder": (NotImplementedError, '"remainder_cpu" not implemented for \'{}\''),
    "floor_divide": (NotImplementedError, '"div_floor_cpu" not implemented for \'{}\''),
    "xlogy": (NotImplementedError, '"xlogy_cpu" not implemented for \'{}\''),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "abs_": (RuntimeError, "In-place abs is not supported for complex tensors."),
    "isin": (RuntimeError, "Unsupported input type encountered for isin(): {}"),
    "searchsorted": (NotImplementedError, '"searchsorted_out_cpu" not implemented for \'{}\''),
    "digamma": (NotImplementedError, '"digamma" not implemented for \'{}\''),
    "trigamma": (NotImplementedError, '"trigamma" not implemented for \'{}\''),
    "polygamma": (NotImplementedError, '"polygamma" not implemented for \'{}\''),
    "mvlgamma": (NotImplementedError, '"arange_cpu" not implemented for \'{}\''),
    "randint_like": (RuntimeError, "check_random_bounds handles only integral, floating-point and boolean types"),
    "bernoulli_": (NotImplementedError, '"bernoulli_scalar_cpu_" not implemented for \'{}\''),
    "bernoulli_tensor": (NotImplementedError, '"bernoulli_tensor_cpu_self_" not implemented for \'{}\''),
    "cauchy_": (RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                              "point but you specified {cpp}"),
    "exponential_": (RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be a "
                                   "floating point but you specified {}"),
    "log_normal_": (NotImplementedError, '"log_normal_cpu" not implemented for \'{}\''),
}


def refuse(name, *tensors):
    """Raise PyTorch's error of op `name` (a key of _NOT_FOR_COMPLEX) when one of `tensors` is complex; the
    callers test `dtype.kind == "c"` first, so real tensors pay one comparison."""
    for t in tensors:
        if isinstance(t, Tensor) and t.array.dtype.kind == "c":
            _refusal(name, t.array.dtype)


def refuse_non_float(name, t):
    """Raise PyTorch's error of op `name` (a key of _NOT_FOR_COMPLEX) unless tensor `t` is floating: the samplers
    of continuous distributions refuse integer and bool tensors with the text they give complex ones."""
    if t.array.dtype.kind != "f":
        _refusal(name, t.array.dtype)


def _refusal(name, npd):
    kind, text = _NOT_FOR_COMPLEX[name]
    raise kind(text.format(_scalar_type(npd), cpp=cpp_name(npd)))


def check_same_dtype(a, b, text="{} did not match {}"):
    """PyTorch's refusal of two tensors of different dtypes where an op takes one (allclose/isclose, cross)."""
    if isinstance(b, Tensor) and a.array.dtype != b.array.dtype:
        raise RuntimeError(text.format(_scalar_type(a.array.dtype), _scalar_type(b.array.dtype)))


def refuse_complex(name, *tensors):
    """One clear line where an op has no complex path in minigrad (nothing may reach a kernel or BLAS)."""
    for t in tensors:
        if isinstance(t, Tensor) and t.array.dtype.kind == "c":
            raise NotImplementedError(f"{name} of complex tensors is not supported by minigrad (phase 1 has "
                                      f"elementwise arithmetic, sums, views, abs/angle/conj and torch.fft)")


__all__ = ["conj", "real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "promote_types"]

keeps_operand_shapes(Complex, Polar)  # (their callers keep the operands' shapes)
