"""`Parameter`: a tensor that a `Module` treats as one of its learnable weights; `Buffer`: one it treats
as state that is not learned (`self.pe = nn.Buffer(pe)`, PyTorch 2.5's spelling of register_buffer)."""
from minigrad import Tensor
from minigrad.tensor import _requiring_grad


class Parameter(Tensor):
    """A leaf tensor that requires grad and that a Module registers when assigned to one of its attributes.

    `Parameter(t)` shares `t`'s array (no copy), as `torch.nn.Parameter` shares storage.
    Shapes: any; `data` (*) -> a Parameter of shape (*).
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            import numpy as np

            data = np.empty((0,), dtype=np.float32)
        if isinstance(data, Tensor):
            # the same array and version counter: in-place edits through either are seen by both
            super().__init__(data.array, _version_counter=data._version_counter)
        else:
            super().__init__(data)
        if requires_grad:
            _requiring_grad(self)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        # a copy of the array, never of the autograd graph or of .grad's identity (PyTorch copies .grad too)
        result = memo.get(id(self))
        if result is None:
            result = type(self)(self.array.copy(), self.requires_grad)
            if self.grad is not None:
                result.grad = Tensor(self.grad.array.copy())
            memo[id(self)] = result
        return result


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned to one of its attributes (as
    `register_buffer(name, t, persistent)`). `Buffer(t)` shares `t`'s array, as Parameter does."""

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            import numpy as np

            data = np.empty((0,), dtype=np.float32)
        if isinstance(data, Tensor):
            super().__init__(data.array, _version_counter=data._version_counter)
            if data.requires_grad:
                _requiring_grad(self)
        else:
            super().__init__(data)
        self.persistent = persistent
