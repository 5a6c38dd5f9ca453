"""PyTorch's type aliases for annotations (`torch.types`): `Number`, `_size`, `Device`, `_TensorOrTensors`, ..."""
import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int, str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, Union

from .device import device as _device
from .dtypes import dtype as _dtype  # noqa: F401
from . import layout as _layout  # noqa: F401
from .tensor import Size, Tensor

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[_int], tuple[_int, ...]]
Number = Union[_int, _float, _bool]
_Number = (_int, _float, _bool)  # for isinstance
FileLike = Union[_str, os.PathLike[_str], IO[_bytes]]
Device = Union[_device, _str, _int, None]
