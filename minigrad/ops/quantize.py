"""Fake quantization, for quantization-aware training: values snapped to a quantized grid and back, with
PyTorch's straight-through gradient (passed where the rounded value falls inside [quant_min, quant_max])."""
import numpy as np

from ..autograd.function import Function
from ..device import array_module
from ..tensor import Tensor
from ._util import not_differentiable, type_name

_RANGE = "`quant_min` should be less than or         equal to `quant_max`."  # (PyTorch's text, its spaces kept)
_ZERO_POINT = "`zero_point` must be between `quant_min` and `quant_max`."


def _snap(x, scale, zero_point, quant_min, quant_max, rescale):
    """(fake-quantized x, mask of the values whose grid point lies in range), in PyTorch's arithmetic: the inverse
    scale in float32, the rounding half to even in x's dtype (float at least), the rescaling in `rescale` (float32
    per tensor, float64 per channel); an integer zero point is added after rounding, a floating one before."""
    xp = array_module(x)
    scale = scale.astype(np.float32)
    ct = np.promote_types(x.dtype, np.float32)
    scaled = x.astype(ct) * (np.float32(1) / scale).astype(ct)
    if zero_point.dtype.kind == "f":
        q = xp.rint(scaled + zero_point.astype(ct))
    else:
        q = xp.rint(scaled) + zero_point
    y = (xp.clip(q, quant_min, quant_max).astype(rescale) - zero_point.astype(rescale)) * scale.astype(rescale)
    return y.astype(x.dtype), (q >= quant_min) & (q <= quant_max)


def _fake_quantize_class(name, rescale):
    class FakeQuantize(Function):
        node_name = name

        @staticmethod
        def forward(ctx, x, scale, zero_point, quant_min, quant_max):
            y, mask = _snap(x.array, scale, zero_point, quant_min, quant_max, rescale)
            ctx.save(mask=mask)
            return y

        @staticmethod
        def backward(ctx, g):  # straight through: d fq(x) / dx = 1 inside the range, 0 where clamped
            return g * ctx._saved_mask, None, None, None, None

    FakeQuantize.__name__ = FakeQuantize.__qualname__ = name[:-len("Backward0")]
    return FakeQuantize


FakeQuantizePerTensor = _fake_quantize_class("FakeQuantizePerTensorAffineCachemaskBackward0", np.float32)
FakeQuantizePerTensorQparams = _fake_quantize_class("FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0", np.float32)
FakeQuantizePerChannel = _fake_quantize_class("FakeQuantizePerChannelAffineCachemaskBackward0", np.float64)


def _floating(input, kernel):
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale; scale and zero_point
    both tensors (one element each), or a float and an int."""
    if isinstance(scale, Tensor) and isinstance(zero_point, Tensor):
        return _per_tensor_qparams(input, scale, zero_point, quant_min, quant_max)
    integral = not (isinstance(zero_point, float) or isinstance(zero_point, Tensor) and zero_point.is_floating_point())
    if not (_one(scale) and _one(zero_point) and integral):
        got = ", ".join(type_name(a) for a in (input, scale, zero_point, quant_min, quant_max))
        raise TypeError(f"fake_quantize_per_tensor_affine() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n"
                        " * (Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max)\n"
                        " * (Tensor input, float scale, int zero_point, int quant_min, int quant_max)\n")
    scale, zero_point = float(scale), int(zero_point)
    if quant_min > quant_max:
        raise RuntimeError(_RANGE)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZERO_POINT)
    _floating(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    return FakeQuantizePerTensor.apply(input, np.float32(scale), np.int64(zero_point), quant_min, quant_max)


def _one(x):
    """Whether x passes as a Python number (a one-element tensor does)."""
    return x.numel() == 1 if isinstance(x, Tensor) else isinstance(x, (int, float, np.number))


def _per_tensor_qparams(input, scale, zero_point, quant_min, quant_max):
    fn = "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams"
    not_differentiable(scale, "scale", fn)
    not_differentiable(zero_point, "zero_point", fn)
    if quant_min > quant_max:
        raise RuntimeError(_RANGE)
    for t in (scale, zero_point):
        if t.numel() != 1:
            raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
    _floating(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    scale = np.float32(scale.item())
    zero_point = np.int64(int(zero_point.item()))  # (a floating zero point is truncated, as PyTorch's)
    return FakeQuantizePerTensorQparams.apply(input, scale, zero_point, quant_min, quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """fake_quantize_per_tensor_affine with a scale and a zero point per index along `axis` (1-D tensors: scale
    float32, zero_point int32, or floating, added before rounding then)."""
    def kind(t):
        return t.dtype._legacy[:-6]
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {kind(scale)}")
    if zero_point.dtype.name not in ("int32", "float32", "float16"):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {kind(zero_point)}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    if quant_min > quant_max:
        raise RuntimeError(_RANGE)
    if zero_point.dtype.name == "int32" and not (
            quant_min <= int(zero_point.min()) and int(zero_point.max()) <= quant_max):
        raise RuntimeError(_ZERO_POINT)
    if not 0 <= axis <= input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    not_differentiable(scale, "scale", "fake_quantize_per_channel_affine_cachemask")
    not_differentiable(zero_point, "zero_point", "fake_quantize_per_channel_affine_cachemask")
    _floating(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    along = [1] * input.dim()
    along[axis] = -1
    return FakeQuantizePerChannel.apply(input, scale.array.reshape(along), zero_point.array.reshape(along),
                                        quant_min, quant_max)
