"""`Parameter`: a tensor that a `Module` treats as one of its learnable weights; `Buffer`: one it treats
as state that is not learned (`self.pe = nn.Buffer(pe)`, PyTorch 2.5's spelling of register_buffer)."""
from minigrad import Tensor, strided
from minigrad.ops.conversion import laid_out
from minigrad.tensor import _requiring_grad


def _refuse_sparse(data, kind):
    if not isinstance(data, Tensor) and getattr(data, "layout", None) not in (None, strided):
        raise NotImplementedError(f"nn.{kind} of a {str(data.layout).split('.')[-1]} tensor: minigrad's parameters "
                                  "and buffers are dense tensors; call .to_dense() first")


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
        _refuse_sparse(data, "Parameter")
        if not isinstance(data, Tensor) and hasattr(data, "shape"):  # an array (a checkpoint's): kept as it is
            data = Tensor._wrap(data)
        if not isinstance(data, Tensor):  # a list or a number: PyTorch detaches what it is given
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
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
        # a copy of the array in its layout, as PyTorch's: never of the autograd graph, nor of .grad
        result = memo.get(id(self))
        if result is None:
            result = type(self)(laid_out(self.array, "preserve_format"), self.requires_grad)
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
        _refuse_sparse(data, "Buffer")
        if not isinstance(data, Tensor) and hasattr(data, "shape"):  # an array (a checkpoint's): kept as it is
            data = Tensor._wrap(data)
        if not isinstance(data, Tensor):  # a list or a number: PyTorch detaches what it is given
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        if isinstance(data, Tensor):
            super().__init__(data.array, _version_counter=data._version_counter)
            if data.requires_grad:
                _requiring_grad(self)
        else:
            super().__init__(data)
        self.persistent = persistent


_UNINITIALIZED = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                  "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                  "`forward` to initialize the parameters before accessing their attributes.")


def _refusing(name):
    def refuse(self, *args, **kwargs):
        raise ValueError(f"Attempted to use an uninitialized parameter in <method '{name}' of 'minigrad.Tensor' "
                         "objects>. This error happens when you are using a `LazyModule` or explicitly manipulating "
                         "`minigrad.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
                         "`forward` with a dummy batch to initialize the parameters before calling minigrad functions")

    return refuse


class _Uninitialized:
    """What a lazy module's parameters and buffers are before its first forward: no shape yet. `materialize`
    gives one its array in place, and it becomes what `cls_to_become` names (an optimizer made before the
    first forward holds the same object, and so steps the materialized parameter)."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        import minigrad

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.array = minigrad.empty(shape, device=device or self.device, dtype=dtype or self.dtype).array
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED)

    size, numel, dim = _refusing("size"), _refusing("numel"), _refusing("dim")
    ndim = property(_refusing("ndim"))

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A lazy module's parameter before its first forward (`nn.LazyLinear`, ...); a Parameter once materialized."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        import minigrad

        super().__init__(minigrad.empty(0, device=device, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo):
        result = memo.get(id(self))
        if result is None:
            result = memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return result


class UninitializedBuffer(_Uninitialized, Tensor):
    """A lazy module's buffer before its first forward (LazyBatchNorm's running statistics); a Tensor once
    materialized."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        import minigrad

        super().__init__(minigrad.empty(0, device=device, dtype=dtype))
        if requires_grad:
            self.requires_grad_(True)
