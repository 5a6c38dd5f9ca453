"""PyTorch's legacy tensor types, `torch.FloatTensor` and its kin: constructors of one dtype
(`torch.LongTensor([1, 2])`, `torch.FloatTensor(2, 3)`), and checks and conversions by type
(`isinstance(t, torch.FloatTensor)`, `t.type(torch.LongTensor)`). Every tensor is a `Tensor`; these
name a (dtype, CPU) pair, as PyTorch's do.
"""

from . import dtypes
from .tensor import Tensor, legacy_new


class LegacyTensorType(type):
    """The class of `FloatTensor` and its kin: calling one makes a Tensor of its dtype, and a tensor is
    an instance of it when it has that dtype on the CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.array.dtype == cls.dtype.np and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        data = legacy_new(cls.dtype, args, kwargs)
        return data if isinstance(data, Tensor) else Tensor._wrap(data)  # (`torch.FloatTensor(t)`: t itself)

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy(dtype):
    return LegacyTensorType(dtype._legacy, (), {"dtype": dtype, "__doc__": f"Tensors of {dtype.name} on the CPU."})


FloatTensor, DoubleTensor, HalfTensor = _legacy(dtypes.float32), _legacy(dtypes.float64), _legacy(dtypes.float16)
LongTensor, IntTensor, ShortTensor = _legacy(dtypes.int64), _legacy(dtypes.int32), _legacy(dtypes.int16)
CharTensor, ByteTensor, BoolTensor = _legacy(dtypes.int8), _legacy(dtypes.uint8), _legacy(dtypes.bool_)
BY_NAME = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                   CharTensor, ByteTensor, BoolTensor)}
