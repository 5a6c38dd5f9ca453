"""`minigrad.utils.dlpack`: tensors shared with other array libraries through DLPack, as `torch.utils.dlpack`.

    t = minigrad.from_dlpack(np_array)       # or a PyTorch tensor, a cupy array, ...: the same memory
    a = np.from_dlpack(t)                    # and back: writes through either show in the other

A CPU producer's memory is read in through numpy, a CUDA one's through cupy; both keep the producer alive for
as long as the tensor lives.
"""
import numpy as np

from ..tensor import Tensor, type_name

__all__ = ["from_dlpack", "to_dlpack"]

_CUDA = 2  # DLPack's device type kDLCUDA (kDLCPU is 1)
_CONSUMED = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so "
             "you might have already constructed a tensor from it once.")


class _Capsule:
    """A bare DLPack capsule (to_dlpack's) in the form from_dlpack functions take: it only ever held CPU memory
    here, as minigrad exports a cupy tensor's through __dlpack__ itself."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor over the memory of `ext_tensor` (anything with __dlpack__, or a capsule from to_dlpack),
    without a copy unless copy=True."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(_CONSUMED)  # (PyTorch takes anything else for a capsule, and says so)
        ext_tensor = _Capsule(ext_tensor)
    if ext_tensor.__dlpack_device__()[0] == _CUDA:
        from ..device import _import_cupy

        array = _import_cupy().from_dlpack(ext_tensor)
        if copy:
            array = array.copy()
    else:
        import numpy as np

        try:
            array = np.from_dlpack(ext_tensor, copy=copy)
        except ValueError as e:
            if "PyCapsule" in str(e):  # (numpy renames a capsule it has consumed)
                raise RuntimeError(_CONSUMED) from None
            raise
    out = Tensor._wrap(array)
    return out if device is None else out.to(device)


def to_dlpack(tensor):
    """A DLPack capsule of tensor's memory (for consumers taking capsules; most take the tensor itself). It is
    exported whether or not tensor requires grad, as PyTorch's."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not {type_name(tensor)}")
    # (a CPU array's capsule is DLPack 1.0's, which says whether it may be written: numpy, minigrad.from_dlpack
    # among its consumers, takes the older kind as read-only)
    versioned = (1, 0) if isinstance(tensor.array, np.ndarray) else None
    return capsule(tensor.array, None, versioned, None, None)


def capsule(a, stream, max_version, dl_device, copy):
    """a's DLPack capsule, sharing its memory where the consumer can take it as it is."""
    if isinstance(a, np.ndarray):
        if stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
        # a negative stride (a numpy flip) is valid DLPack that PyTorch cannot take, and a read-only array (an
        # expand) only a consumer of DLPack 1.0 can be told about: those export a copy unless copy=False
        if copy is None and (any(st < 0 for st in a.strides) or (not a.flags.writeable and max_version is None)):
            a = a.copy()
        kwargs = {}
    else:
        kwargs = {"stream": stream}
    for key, value in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy)):
        if value is not None:
            kwargs[key] = value
    return a.__dlpack__(**kwargs)
