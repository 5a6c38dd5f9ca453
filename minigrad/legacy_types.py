"""PyTorch's legacy tensor types, `torch.FloatTensor` and its kin: constructors of one dtype
(`torch.LongTensor([1, 2])`, `torch.FloatTensor(2, 3)`), and checks and conversions by type
(`isinstance(t, torch.FloatTensor)`, `t.type(torch.LongTensor)`). Every tensor is a `Tensor`; these
name a (dtype, CPU) pair, as PyTorch's do.
"""
import numpy as np

from . import dtypes
from .tensor import Tensor, legacy_array


class LegacyTensorType(type):
    """The class of `FloatTensor` and its kin: calling one makes a Tensor of its dtype, and a tensor is
    an instance of it when it has that dtype on the CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.array.dtype == cls.dtype.np and obj.device.type == "cpu"

    def __call__(cls, *args, device=None):
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device} was passed")
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(cls.dtype)
        if len(args) == 1 and isinstance(args[0], np.ndarray):  # `torch.FloatTensor(state)`: converted
            return Tensor._wrap(args[0].astype(cls.dtype.np, copy=False))  # (shared when of its dtype, as PyTorch)
        return Tensor._wrap(legacy_array(cls.dtype, args))

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy(dtype):
    return LegacyTensorType(dtype._legacy, (), {"dtype": dtype, "__doc__": f"Tensors of {dtype.name} on the CPU."})


FloatTensor, DoubleTensor, HalfTensor = _legacy(dtypes.float32), _legacy(dtypes.float64), _legacy(dtypes.float16)
LongTensor, IntTensor, ShortTensor = _legacy(dtypes.int64), _legacy(dtypes.int32), _legacy(dtypes.int16)
CharTensor, ByteTensor, BoolTensor = _legacy(dtypes.int8), _legacy(dtypes.uint8), _legacy(dtypes.bool_)
BY_NAME = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                   CharTensor, ByteTensor, BoolTensor)}
