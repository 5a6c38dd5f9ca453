"""`Tensor`: an array plus what autograd needs to know about it.

A tensor wraps a numpy (or cupy) array, `.array`, and carries `requires_grad`, `.grad`,
`.grad_fn` (the backward node that made it, None for leaves) and a version counter shared with
its views, which in-place ops bump so that saved tensors can be checked. Ops live in
`minigrad/ops/`; they are attached to Tensor as methods at import time.
"""
import mmap
import operator
import warnings
from builtins import bool as builtins_bool
from builtins import float as builtins_float
from builtins import int as builtins_int
from builtins import max as builtins_max

import numpy as np

from . import dtypes
from ._warn_once import warn_once
from .autograd import function as _function
from .autograd import engine as _engine
from .autograd import forward_ad, grad_mode, recording
from .autograd.function import leaf_accumulator
from .autograd.grad_mode import state
from . import device as _device
from .device import device_of, to_device


_new_tensor = object.__new__


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    __module__ = "minigrad"  # type(t) prints <class 'minigrad.Tensor'>, as PyTorch's <class 'torch.Tensor'>

    __slots__ = (
        "array", "_requires_grad", "_grad", "grad_fn", "_output_nr", "_version_counter",
        "_grad_accumulator", "_hooks", "_post_accumulate_grad_hooks", "_retains_grad", "_base", "__weakref__",
        "_view_version",  # a view's: its base's version when its grad_fn was made (set with _base)
        "_inference",  # True on a tensor made under inference_mode (unset otherwise)
        "_multi_output",  # True on a piece of unbind/split recorded (and views of it), which refuse in-place ops
        "_no_grad_view",  # True on a view made under no_grad of a tensor that requires grad (PyTorch's refusal)
    )
    __array_priority__ = 1000  # numpy scalars defer to Tensor's reflected operators

    def __init__(self, *args, _version_counter=None, **kwargs):
        # PyTorch's legacy constructor, `torch.Tensor(...)`. minigrad's own tensors over the arrays it makes
        # come from `_wrap` and `_output`; a subclass's (Parameter's) over an existing tensor's array passes
        # that tensor's `_version_counter`, and keeps the array as it is.
        if _version_counter is not None:
            data = args[0]
        else:
            data = legacy_new(dtypes.default_float, args, kwargs, typed=False)
            if isinstance(data, Tensor):  # an alias: the same array, dtype and version, in the graph as as_subclass's
                alias = data.as_subclass(Tensor)
                for name in _ALIASED:
                    if hasattr(alias, name):
                        setattr(self, name, getattr(alias, name))
                return
        self.array = data
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._version_counter = _version_counter or [0]
        self._grad_accumulator = None
        self._hooks = None
        self._post_accumulate_grad_hooks = None
        self._retains_grad = False
        self._base = None
        self._requires_grad = False
        if grad_mode.inference_tensors_made and state.inference:  # (a module global first: a thread-local costs more)
            self._inference = True

    @staticmethod
    def _wrap(array, requires_grad=False, version_counter=None):
        """A leaf over an array minigrad made, kept as it is (its dtype, its memory), never converted as the public
        constructor converts. A numpy scalar (a full reduction's result) becomes a 0-d array: a scalar is
        read-only, and `total += loss` must work on it in place as on any tensor."""
        if type(array) is not np.ndarray and (isinstance(array, np.generic) or not hasattr(array, "shape")):
            array = np.asarray(array)
        t = _new_tensor(Tensor)  # (_output's slots, written out: a call less on a path every op's wrap takes)
        t.array = array
        t._grad = None
        t.grad_fn = None
        t._output_nr = 0
        t._version_counter = version_counter or [0]
        t._grad_accumulator = None
        t._hooks = None
        t._post_accumulate_grad_hooks = None
        t._retains_grad = False
        t._base = None
        t._requires_grad = False
        if grad_mode.inference_tensors_made and state.inference:
            t._inference = True
        return _requiring_grad(t) if requires_grad else t

    @staticmethod
    def _output(array, grad_fn, version_counter=None):
        """`Tensor(array)` for the new array an op made, the output of node `grad_fn` (None: nothing recorded),
        without __init__'s argument handling: a tensor per op, so it counts. Sets every slot __init__ sets
        (`version_counter`: a saved output's, shared with the output it stands for)."""
        t = _new_tensor(Tensor)
        t.array = array
        t._grad = None
        t.grad_fn = grad_fn
        t._output_nr = 0
        t._version_counter = version_counter or [0]
        t._grad_accumulator = None
        t._hooks = None
        t._post_accumulate_grad_hooks = None
        t._retains_grad = False
        t._base = None
        t._requires_grad = grad_fn is not None
        if grad_mode.inference_tensors_made and state.inference:
            t._inference = True
        return t

    def is_inference(self):
        """Whether this tensor was made under `inference_mode()` (an inference tensor), as PyTorch's."""
        return getattr(self, "_inference", False)

    def __getstate__(self):  # pickle and deepcopy: the tensor's own state, not its place in a graph
        return {name: getattr(self, name) for name in _PICKLED}

    def __deepcopy__(self, memo):
        if self.grad_fn is not None and self._requires_grad:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a minigrad.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        import copy

        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__setstate__({name: copy.deepcopy(value, memo) for name, value in self.__getstate__().items()})
        return new

    def __setstate__(self, state):
        self.grad_fn, self._grad_accumulator, self._base = None, None, None
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def data(self):
        """PyTorch's `.data`: a tensor sharing this one's memory, outside autograd (no grad, no graph,
        and a version counter of its own, so in-place changes through it go unchecked, as in PyTorch).
        The raw array is `.array`."""
        if recording.hook.recorder is not None:  # in a minigrad.compile capture: read at each replay
            return recording.hook.recorder.on_call(_data_of, self)
        return Tensor._wrap(self.array if _function.dual_apply is None else self.array.view())  # (as detach's)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type_name(value)}")
        if self._requires_grad and value.array.dtype.kind not in "fc":  # (a gradient could not have its dtype)
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        if recording.hook.recorder is not None:  # in a minigrad.compile capture: a step of the replay too
            recording.hook.recorder.on_call(_set_data, self, value)
            return
        self.array = value.array

    @property
    def grad(self):
        """The gradient backward accumulated into this leaf (None before any, or after zero_grad)."""
        if recording.hook.recorder is not None:  # in a minigrad.compile capture
            return recording.hook.recorder.on_grad_read(self, self._grad)
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:  # (a mistake PyTorch points
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)  # out: it stays None, unless one was assigned)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            _check_assigned_grad(self, value)
        if recording.hook.recorder is not None:  # `p.grad = None` in a captured step: a step of the replay too
            recording.hook.recorder.on_call(_set_grad, self, value)
            return
        self._grad = value

    # ---- what it is -------------------------------------------------------------------
    @property
    def shape(self):
        return _size_of(self.array.shape)

    def size(self, dim=None):
        """The shape, or its length along `dim`."""
        return _size_of(self.array.shape) if dim is None else self.array.shape[self._dim(dim)]

    @property
    def ndim(self):
        return self.array.ndim

    def dim(self):
        return self.array.ndim

    def numel(self):
        return int(self.array.size)

    def __len__(self):
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self.array.dtype)

    @property
    def device(self):
        return device_of(self.array)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    # What code written for PyTorch asks before it touches a tensor's memory (optimizers copied from its
    # source check is_sparse): minigrad's tensors are dense, strided, materialized and not quantized.
    is_sparse = is_sparse_csr = is_meta = is_quantized = is_mkldnn = is_nested = False
    _compressed = False  # (a sparse CSR/CSC matrix's mark: read where a dense tensor's is, with no missing lookup)
    is_xpu = is_mps = is_xla = is_mtia = is_maia = is_vulkan = is_ipu = False  # (devices minigrad has not)
    name = None  # (PyTorch's name of a tensor made by a TorchScript graph: never set here)

    def is_distributed(self):
        return False

    @property
    def volatile(self):
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value):
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      UserWarning, stacklevel=2)

    @property
    def grad_dtype(self):
        """The dtype a gradient of this tensor must have: its own (minigrad does not let them diverge)."""
        return self.dtype

    def to_dense(self, dtype=None, *, masked_grad=None):
        """A dense tensor is its own dense form (in dtype, when another is given)."""
        return self if dtype is None else self.to(dtype)

    def module_load(self, other, assign=False):
        """What nn.Module.load_state_dict swaps in for this parameter or buffer: other's values copied into
        self (or other itself, with assign=True), detached."""
        return other.detach() if assign else self.copy_(other).detach()

    @property
    def layout(self):
        from . import strided

        return strided

    def get_device(self):
        """The GPU's index, or -1 on the CPU (as PyTorch)."""
        return -1 if self.device.type == "cpu" else int(self.array.device.id)

    def is_floating_point(self):
        return self.array.dtype.kind == "f"

    @property
    def is_leaf(self):
        """A leaf was made by the user (or does not require grad), not by a recorded op."""
        return self.grad_fn is None

    @property
    def _version(self):
        if grad_mode.inference_tensors_made and self.is_inference():
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def _is_view(self):
        """Whether this tensor is a view of another's memory (its `_base`), as PyTorch's."""
        return self._base is not None

    @property
    def itemsize(self):
        return self.array.itemsize

    @property
    def nbytes(self):
        return int(self.array.nbytes)

    def element_size(self):
        return self.array.itemsize

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format_argument(self, "is_contiguous", memory_format, False):
            return channels_last_contiguous(self, memory_format)
        return bool(self.array.flags.c_contiguous)

    def stride(self, dim=None):
        a = self.array
        if a.size or any(a.strides):
            s = tuple(x // a.itemsize for x in a.strides)
            if 0 in s and 1 in a.shape:
                # numpy's new axis (None, unsqueeze, expand's new dims) has stride 0 where PyTorch's new dim of
                # size 1 steps over the dims after it (1 at the end); another size-1 dim has its stride in both
                s = list(s)
                for d in range(len(s) - 1, -1, -1):
                    if a.shape[d] == 1 and s[d] == 0:
                        s[d] = s[d + 1] * a.shape[d + 1] if d + 1 < len(s) else 1
                s = tuple(s)
        else:  # numpy makes an empty array with zero strides: PyTorch's of a contiguous tensor of its shape (a view
            # of it, a permute's say, keeps numpy's zeros, so PyTorch's own strides for it are lost)
            s, step = [], 1
            for n in reversed(a.shape):
                s.append(step)
                step *= max(n, 1)
            s = tuple(reversed(s))
        return s if dim is None else s[self._dim(dim)]

    def _dim(self, dim):
        """`dim` checked as size(dim) and stride(dim) check it (with their own text for a 0-d tensor)."""
        n = self.array.ndim
        if n == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -n <= dim < n:
            lo, hi = -builtins_max(n, 1), builtins_max(n, 1) - 1
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
        return dim

    def storage_offset(self):
        """Elements from the start of the memory this tensor views (0 for a tensor owning its memory)."""
        root = self.array
        while getattr(root, "base", None) is not None and hasattr(root.base, "__array_interface__"):
            root = root.base
        if root is self.array:
            return 0
        return (self.data_ptr() - root.__array_interface__["data"][0]) // self.array.itemsize

    def storage(self):
        """The memory this tensor views, typed as its elements (PyTorch's deprecated TypedStorage, with its warning)."""
        from . import storage

        if not storage.warned:  # (once a process, as PyTorch)
            storage.warned = True
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                          "storage class. This should only matter to you if you are using storages directly.  To "
                          "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                          UserWarning, stacklevel=2)
        return storage.typed_storage(self.array)

    def storage_type(self):
        """The legacy storage class of this tensor's dtype (minigrad.FloatStorage for float32)."""
        from .storage import storage_type

        return storage_type(self.dtype)

    def untyped_storage(self):
        """The memory this tensor views, as bytes."""
        from .storage import untyped_storage

        return untyped_storage(self.array)

    def apply_(self, callable):
        """Apply a Python function to every element, in place (CPU only; not on a tensor that requires grad)."""
        if self._requires_grad:
            raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
        if self.device.type != "cpu":
            raise TypeError("apply_ is only implemented on CPU tensors")
        # (Python on each value, written outside an op: inside a minigrad.compile capture, at the capture only)
        recording.escape("Tensor.apply_() (a Python function on each value)", "a replay would not run it again")
        flat = self.array.reshape(-1) if self.array.flags.c_contiguous else None
        if flat is None:
            for i in np.ndindex(self.array.shape):
                self.array[i] = callable(self.array[i].item())
        else:
            for i in range(flat.size):
                flat[i] = callable(flat[i].item())
        self._version_counter[0] += 1
        return self

    def data_ptr(self):
        """The address of the first element (numpy's, or cupy's device pointer)."""
        iface = getattr(self.array, "__array_interface__", None) or self.array.__cuda_array_interface__
        return iface["data"][0]

    def const_data_ptr(self):
        return self.data_ptr()

    def is_set_to(self, tensor):
        """Whether tensor views the very elements self does: the same memory, offset, sizes and strides."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type_name(tensor)}")
        a, b = self.array, tensor.array
        return (_memory_root(a) is _memory_root(b) and self.data_ptr() == tensor.data_ptr()
                and a.shape == b.shape and a.strides == b.strides)

    # ---- DLPack: zero-copy exchange with numpy, PyTorch, cupy, JAX, ... (minigrad.from_dlpack reads one in) ----
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        from .utils.dlpack import capsule

        return capsule(self.array, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    # ---- conversions ------------------------------------------------------------------
    def numpy(self, *, force=False):
        """The array as numpy (a view sharing memory, on the CPU). Refuses if it requires grad, unless `force`
        (PyTorch's `t.detach().cpu().numpy()`)."""
        recording.escape("Tensor.numpy()")
        if self._requires_grad and state.grad_enabled and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return to_device(self.array, "cpu")

    def item(self):
        """The value of a one-element tensor as a Python number."""
        recording.escape("Tensor.item() (or float/int/bool of a tensor)")
        if self.array.size != 1:
            raise RuntimeError(f"a Tensor with {self.array.size} elements cannot be converted to Scalar")
        return self.array.reshape(()).item()

    def tolist(self):
        recording.escape("Tensor.tolist()")
        return to_device(self.array, "cpu").tolist()

    def __float__(self):
        if self.array.size != 1:  # (PyTorch's error for float(t), where t.item() raises a RuntimeError)
            raise ValueError("only one element tensors can be converted to Python scalars")
        # (PyTorch's, once a process, and only with grad mode on: LBFGS's float(loss) inside its no_grad step
        # says nothing; item() and int() say nothing)
        if self._requires_grad and state.grad_enabled:
            warn_once("float of requires_grad", "Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.")
        return float(self._real_item("double"))

    def __int__(self):
        if self.array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self._real_item("int64_t"))

    def __complex__(self):
        if self.array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def _real_item(self, c_type):  # float(t) and int(t) of a complex tensor: PyTorch's refusal, C's type named
        if self.array.dtype.kind == "c":
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return self.item()

    def __bool__(self):
        if self.array.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if self.array.size == 0 else 'more than one value'} is ambiguous")
        return bool(self.item())

    def __pos__(self):  # (+t: t itself, as PyTorch's positive)
        return self

    def __index__(self):
        a = self.array
        if a.dtype.kind not in "iub" or a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        # item()'s work without its calls: `data[i:i + block_size]` reads two bounds this way a row
        if recording.recorders_made:
            recording.escape("Tensor.item() (or float/int/bool of a tensor)")
        return int(a.item())

    def __format__(self, format_spec):
        # PyTorch's rule: a 0-d Tensor (not a subclass such as Parameter) formats its number, so
        # f"{loss:.4f}" works; anything else follows object's (str() for "", a TypeError otherwise)
        if self.array.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __array__(self, dtype=None, copy=None):
        # numpy() (its refusal for a tensor requiring grad, its shared memory), copied only where numpy asks
        # for a copy (np.array(t)) or another dtype
        a = self.numpy()
        return a.astype(dtype if dtype is not None else a.dtype, copy=builtins_bool(copy))

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # numpy hands a ufunc's result on a Tensor back here: np.exp(t) is a tensor, as in PyTorch (which
        # gives a bool result as uint8, its tensors' old stand-in for bool)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return Tensor._wrap(np.asarray(array))

    def __hash__(self):
        return id(self)

    def __contains__(self, element):
        # PyTorch's `x in t`: does any element equal x (a number, or a tensor broadcast against t)
        if not isinstance(element, (Tensor, builtins_int, builtins_float, builtins_bool)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((self == element).any())

    @property
    def H(self):
        """The conjugate transpose of a matrix (the transpose of a real one)."""
        if self.array.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.array.ndim}-D tensor.")
        return (self if self.array.ndim == 0 else self.transpose(0, 1)).conj()

    @property
    def mH(self):
        """The conjugate transpose of the last two dims (mT of a real tensor)."""
        return self.mT.conj()

    def __iter__(self):
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        # as PyTorch: the views of one unbind (UnbindBackward0 their node), made at once, not one index a piece
        return iter(self.unbind(0))

    def __repr__(self):
        from . import _format

        recording.escape("printing a Tensor (repr/str)")
        a = to_device(self.array, "cpu")
        extra = []
        if self.device.type != "cpu":
            extra.append(f"device='{self.device}'")
        if (a.size == 0 and a.ndim != 1) or (a.size and not _format.EDGEITEMS):
            extra.append(f"size={tuple(a.shape)}")
        # PyTorch leaves out the default float dtype (float64 after set_default_dtype); the default complex
        # dtype, int64 and bool show only on an empty tensor, whose values cannot tell them
        shown_by_values = (dtypes.default_complex().np, np.int64, np.bool_) if a.size else ()
        if a.dtype != dtypes.default_float.np and a.dtype not in shown_by_values:
            extra.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extra.append("requires_grad=True")
        tangent = forward_ad.tangent_of(self)
        if tangent is not None:
            extra.append(f"tangent={tangent}")  # (PyTorch's: a 0-d tangent formats as its number)
        return _format.tensor_repr(a, extra)

    # ---- autograd ---------------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        """Mark a leaf as needing gradients (in place). Only floating tensors can."""
        if type(requires_grad) is not bool:  # (PyTorch's binding refuses 1, None, numpy.bool_ alike)
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, "
                            f"not {type_name(requires_grad)}")
        if requires_grad and self.grad_fn is not None:  # (a non-leaf requires grad already)
            return self
        return _change_requires_grad(self, requires_grad, "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad_checked(self, requires_grad):
        if type(requires_grad) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        _change_requires_grad(self, requires_grad,
                              "only Tensors of floating point and complex dtype can require gradients")

    def _del_requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")  # (PyTorch's setter, handed no value)

    # The flag lives in the `_requires_grad` slot, which the engine reads and writes directly (an op reads it
    # for every argument); `t.requires_grad = flag` goes through requires_grad_'s checks. (attrgetter: the
    # cheapest getter a property can have.)
    requires_grad = property(operator.attrgetter("_requires_grad"), _set_requires_grad_checked, _del_requires_grad,
                             doc="Whether gradients are computed for this tensor (settable on a leaf only).")

    def _edge(self):
        """The (node, output_nr) that gradients for this tensor flow into."""
        if self.grad_fn is not None:
            return (self.grad_fn, self._output_nr)
        if self._requires_grad:
            return (leaf_accumulator(self), 0)
        return (None, 0)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph's leaves, into their `.grad`."""
        # PyTorch hands a gradient that is not a Tensor to autograd.backward as a sequence of gradients
        grads = None if gradient is None else [gradient] if isinstance(gradient, Tensor) else tuple(gradient)
        if inputs is None:  # (engine.backward's common case, without its argument handling)
            _engine.run_backward([self], grads, retain_graph, create_graph)
        else:
            _engine.backward([self], grads, retain_graph, create_graph, inputs)

    def retain_grad(self):
        """Keep `.grad` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._register_tensor_hook(self._output_nr, _RetainGrad(self))

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """`hook(grad) -> grad or None` runs when this tensor's gradient is computed; it may replace it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        from .autograd.function import add_hook

        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """`hook(tensor)` runs after backward has added into this leaf's `.grad` (data-parallel
        training starts a gradient's allreduce there, while backward goes on with the rest)."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        from .autograd.function import add_hook

        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        return add_hook(self._post_accumulate_grad_hooks, hook)

    def detach(self):
        """A new leaf sharing this tensor's data (and version counter), outside the graph."""
        # (in a forward-AD level, an array of its own: tangents are keyed by array, and a detached tensor has none)
        a = self.array if _function.dual_apply is None else self.array.view()
        t = Tensor._wrap(a, version_counter=self._version_counter)
        if recording.hook.recorder is not None:  # in a minigrad.compile capture: an alias of this value's memory
            recording.hook.recorder.on_alias(t)
        return t

    def detach_(self):
        """Detach this tensor from the graph, in place, making it a leaf (a view cannot be, as in PyTorch)."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
                "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
                "detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def _bump_version(self):
        self._version_counter[0] += 1

    # ---- devices and types ------------------------------------------------------------
    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, memory_format=None):
        """`to(device)`, `to(dtype)` or both; returns self when nothing changes (unless copy).
        (`non_blocking`: a copy is made at once either way; `memory_format`: a copy laid out so unless the strides
        already suggest that format.)"""
        from .ops.conversion import to_copy

        flags, typed, placed = [], False, False  # (positional non_blocking and copy: after a dtype or a tensor)
        for a in args:
            if is_dtype_argument(a):
                dtype, typed = dtype_argument(a, "to"), True
            elif isinstance(a, Tensor):
                dtype, device, typed = a.dtype, a.device, True
            elif (a is None or isinstance(a, (str, _device.device))) and not typed and not placed:
                device, placed = a, True
            elif type(a) is int and not typed and not placed:  # (PyTorch's: the accelerator's index)
                device, placed = _device.device(a), True
            elif type(a) is bool and typed and len(flags) < 2:
                flags.append(a)
            else:
                raise TypeError(invalid_arguments("to", args, _TO_OVERLOADS))
        if len(flags) == 2:
            copy = flags[1]
        fmt = None
        if memory_format is not None:
            if not isinstance(memory_format, _memory_format_type()):
                raise TypeError(invalid_arguments("to", args, _TO_OVERLOADS, dict(memory_format=memory_format)))
            fmt = memory_format_argument(self, "to", memory_format) or _row_major_unless_contiguous(self, memory_format)
        if fmt is not None and fmt.name != "contiguous_format" and strides_like_format(self, fmt):
            fmt = None  # already laid out so: the cast alone (numpy's astype keeps the strides)
        return to_copy(self, dtype=dtype_argument(dtype, "to", args), device=device, copy=copy,
                       memory_format=None if fmt is None else fmt.name)

    def cpu(self, memory_format=None):
        return self.to("cpu") if memory_format is None else self._formatted(None, memory_format, "cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        out = self.to("cuda" if device is None else _device.device(device) if type(device) is int else device)
        return out if memory_format is None else out._formatted(None, memory_format, "cuda")

    def cfloat(self, memory_format=None):
        return self.to(dtypes.complex64) if memory_format is None else self._formatted(dtypes.complex64, memory_format, "cfloat")

    def cdouble(self, memory_format=None):
        return self.to(dtypes.complex128) if memory_format is None else self._formatted(dtypes.complex128, memory_format, "cdouble")

    def _cast(self, dtype):
        """`self.to(dtype)` for a real `dtype`. Already that dtype, the usual: self, as `to` returns. A real CPU
        tensor that nothing records (no gradient, no capture, no view of a base written since) is cast as
        ToCopy's forward casts it, without `to`'s argument handling (`acc.float().mean()` in a loop); one laid out
        otherwise (an expanded tensor) goes through `to`, whose copy keeps the layout as PyTorch's does."""
        a = self.array
        if a.dtype == dtype.np:
            return self
        if type(a) is np.ndarray and a.flags.c_contiguous and not self._requires_grad and a.dtype.kind != "c" \
                and (self._base is None or self._view_version == self._version_counter[0]) \
                and (not recording.recorders_made or recording.hook.recorder is None) and _function.dual_apply is None:
            if dtype.np.kind in "iu" and a.dtype.kind == "f":  # (out-of-range floats cast silently, as PyTorch's)
                from .ops.conversion import cast_array

                return Tensor._output(cast_array(a, dtype.np), None)
            return Tensor._output(a.astype(dtype.np), None)
        return self.to(dtype)

    def float(self, memory_format=None):
        return self._cast(dtypes.float32) if memory_format is None else self._formatted(dtypes.float32, memory_format, "float")

    def double(self, memory_format=None):
        return self._cast(dtypes.float64) if memory_format is None else self._formatted(dtypes.float64, memory_format, "double")

    def long(self, memory_format=None):
        return self._cast(dtypes.int64) if memory_format is None else self._formatted(dtypes.int64, memory_format, "long")

    def int(self, memory_format=None):
        return self._cast(dtypes.int32) if memory_format is None else self._formatted(dtypes.int32, memory_format, "int")

    def bool(self, memory_format=None):
        return self._cast(dtypes.bool_) if memory_format is None else self._formatted(dtypes.bool_, memory_format, "bool")

    def short(self, memory_format=None):
        return self.to(dtypes.int16) if memory_format is None else self._formatted(dtypes.int16, memory_format, "short")

    def char(self, memory_format=None):
        return self.to(dtypes.int8) if memory_format is None else self._formatted(dtypes.int8, memory_format, "char")

    def byte(self, memory_format=None):
        return self.to(dtypes.uint8) if memory_format is None else self._formatted(dtypes.uint8, memory_format, "byte")

    def half(self, memory_format=None):
        return self.to(dtypes.float16) if memory_format is None else self._formatted(dtypes.float16, memory_format, "half")

    def _formatted(self, dtype, memory_format, name):
        """A cast given `memory_format=`: channels_last gives a copy whose channel dimension is innermost in
        memory (PyTorch's strides), unless it is already so."""
        fmt = memory_format_argument(self, name, memory_format)
        if fmt is None or strides_like_format(self, fmt):
            return self if dtype is None else self.to(dtype)
        return self.to(dtype, memory_format=fmt)

    def bfloat16(self, memory_format=None):  # (minigrad has no bfloat16 arrays: the dtype's clear error)
        memory_format_argument(self, "bfloat16", memory_format)
        return self.to(dtypes.bfloat16)

    def chalf(self, memory_format=None):  # (as minigrad.complex32's refusal: numpy has no such arrays)
        memory_format_argument(self, "chalf", memory_format)
        raise TypeError("chalf: minigrad has no complex32 dtype (numpy has none): use cfloat() (complex64)")

    def conj_physical_(self):
        """conj_physical in place: a real tensor is its own conjugate and comes back untouched."""
        return self if self.array.dtype.kind != "c" else self.copy_(self.conj_physical())

    # a strided tensor's answers to the sparse layouts' accessors (minigrad/sparse.py's classes have their own)
    def sparse_dim(self):
        return 0

    def dense_dim(self):
        return self.array.ndim

    def _strided_refusal(name, layout):  # noqa: N805 (makes the methods below, at class creation)
        def refuse(self):
            raise RuntimeError(f"{name} expected sparse {layout} layout but got Strided")

        refuse.__name__ = refuse.__qualname__ = name
        return refuse

    indices = _strided_refusal("indices", "coordinate tensor")
    coalesce = _strided_refusal("coalesce", "coordinate tensor")
    is_coalesced = _strided_refusal("is_coalesced", "coordinate tensor")
    values = _strided_refusal("values", "tensor")
    crow_indices = _strided_refusal("crow_indices", "row compressed tensor")
    col_indices = _strided_refusal("col_indices", "row compressed tensor")
    ccol_indices = _strided_refusal("ccol_indices", "column compressed tensor")
    row_indices = _strided_refusal("row_indices", "column compressed tensor")
    del _strided_refusal

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """A COO sparse tensor of this one's nonzeros (of its rows over the first sparse_dim dims)."""
        from .sparse import to_sparse

        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def to_sparse_coo(self):
        return self.to_sparse()

    def to_sparse_csr(self, dense_dim=None):
        from .sparse import to_compressed

        return to_compressed(self, "sparse_csr", dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        from .sparse import to_compressed

        return to_compressed(self, "sparse_csc", dense_dim)

    def sparse_mask(self, mask):
        """This dense tensor at the elements of the sparse `mask`: a sparse tensor with mask's indices."""
        from .sparse import sparse_mask

        return sparse_mask(self, mask)

    def smm(self, mat2):
        from .sparse import smm

        return smm(self, mat2)

    def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
        from .sparse import sspaddmm

        return sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def dim_order(self, *, ambiguity_check=False):
        from .ops.shape import dim_order

        return dim_order(self, ambiguity_check)

    def type(self, dtype=None):
        """'minigrad.FloatTensor' (PyTorch's type string), or this tensor converted to `dtype`: a dtype, a
        legacy type (`minigrad.LongTensor`) or its name ('torch.LongTensor')."""
        if dtype is None:
            return f"minigrad.{self.dtype._legacy}"
        if isinstance(dtype, dtypes.dtype):
            return self.to(dtype)
        if isinstance(dtype, str):
            from .legacy_types import BY_NAME

            module, _, name = dtype.rpartition(".")
            legacy = BY_NAME.get(name) if module in ("torch", "minigrad") else None
        elif isinstance(dtype, type):  # (only a legacy class: `float` and `numpy.float64` are refused)
            legacy, name = dtype, dtype.__name__ if dtype.__module__ == "builtins" else f"{dtype.__module__}.{dtype.__name__}"
        else:
            raise TypeError("dtype must be a type, str, or dtype object")
        if not isinstance(getattr(legacy, "dtype", None), dtypes.dtype):
            raise ValueError(f"invalid type: '{dtype if isinstance(dtype, str) else name}'")
        return self.to(legacy.dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        """Zeros of `size`, in this tensor's dtype and device unless given (as the other new_* below)."""
        from .factory import zeros

        return self._new(zeros, "new_zeros", size, kw, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        from .factory import ones

        return self._new(ones, "new_ones", size, kw, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        from .factory import empty

        return self._new(empty, "new_empty", size, kw, dtype, device, requires_grad)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False, layout=None,
                          pin_memory=False):
        from .factory import empty_strided

        return empty_strided(size, stride, dtype=dtype_argument(dtype, "new_empty_strided") or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        from .factory import full

        out = full(size, fill_value, dtype=dtype_argument(dtype, "new_full") or self.dtype, device=device or self.device)
        return _requiring_grad(out) if requires_grad else out

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        from .factory import _COPY_CONSTRUCT, _copied

        if isinstance(data, Tensor):
            warnings.warn(_COPY_CONSTRUCT.replace("torch.tensor(", "tensor.new_tensor("), UserWarning, stacklevel=2)
        return _copied(data, dtype_argument(dtype, "new_tensor") or self.dtype, device or self.device, requires_grad)

    def new(self, *args, **kwargs):
        """PyTorch's legacy constructor on a tensor, in its dtype and on its device: `x.new(2, 3)` or
        `x.new(size)` a tensor of that size (zeros here, uninitialised in PyTorch), `x.new([1, 2])` one of the
        data, `x.new()` an empty one; `x.new(other)` a tensor on other's memory (of this tensor's dtype)."""
        data = legacy_new(self.dtype, args, kwargs, self.device, method=True)
        if isinstance(data, Tensor):
            return data.detach()
        return Tensor._wrap(to_device(data, kwargs.get("device") or self.device))

    def bernoulli(self, p=None, *, generator=None):
        """1 with probability self (or p) element by element, else 0, in self's dtype (`minigrad.bernoulli`)."""
        from .factory import bernoulli

        return bernoulli(self, p, generator=generator)

    def is_pinned(self, device=None):
        """False: minigrad never allocates page-locked host memory."""
        return False

    def pin_memory(self, device=None):
        """PyTorch's copy into page-locked memory, for faster copies to a GPU: without one, its error; with one,
        the tensor itself (cupy copies from ordinary host memory)."""
        from .device import cuda_is_available

        if not cuda_is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def share_memory_(self):
        """Move this tensor's data into memory shared with the processes this one forks from now on (as
        PyTorch moves a storage to shared memory: Hogwild training, where worker processes update one model
        in place). The data is an anonymous shared mapping: a process started by fork sees and writes the
        same numbers; one started by spawn gets a copy. A GPU tensor is left as it is. Returns self."""
        if self.is_shared() or self.is_cuda:
            return self
        a = self.array
        memory = mmap.mmap(-1, builtins_max(a.nbytes, 1))  # (anonymous: MAP_SHARED, inherited across fork)
        shared = np.frombuffer(memory, dtype=a.dtype, count=a.size).reshape(a.shape)
        shared[...] = a
        self.array = shared
        return self

    def is_shared(self):
        """Whether share_memory_() moved this tensor's data (or the tensor it views) to shared memory."""
        base = self.array
        while isinstance(base, np.ndarray):
            base = base.base
        return isinstance(getattr(base, "obj", None), mmap.mmap)  # (numpy holds the mapping through a memoryview)

    def _new(self, make, name, size, kw, dtype, device, requires_grad):
        from .factory import _size
        from .ops._util import sizes_or_keyword

        size = _size(sizes_or_keyword(name, size, kw, "size"), name)  # (errors naming new_zeros, ...)
        out = make(size, dtype=dtype_argument(dtype, name) or self.dtype, device=device or self.device)
        return _requiring_grad(out) if requires_grad else out


def _memory_root(a):
    """The array owning the memory `a` views (a itself when it owns it)."""
    while getattr(a, "base", None) is not None and hasattr(a.base, "__array_interface__"):
        a = a.base
    return a


def type_name(x):
    """x's type named as PyTorch's messages name it: "int", "numpy.float64", "Tensor", "torch.device"."""
    kind = type(x)
    if isinstance(x, Tensor):
        return kind.__name__
    if kind.__module__.startswith("minigrad"):
        return getattr(kind, "_torch_type_name", f"torch.{kind.__name__}")
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def int_argument(x, name, argument):
    """x as PyTorch's argument parser takes an int: a Python or numpy integer, or an integer tensor of one
    element (not a bool, not a float)."""
    try:
        if not isinstance(x, builtins_bool):
            return operator.index(x)
    except TypeError:
        pass
    raise TypeError(f"{name}(): argument {argument} must be int, not {type_name(x)}")


_TO_OVERLOADS = (
    "torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None",
    "torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None",
    "Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None",
)


_PYTHON_DTYPES = {builtins_float: dtypes.float64, builtins_int: dtypes.int64, builtins_bool: dtypes.bool_,
                  complex: dtypes.complex128}  # (Python's float is a double, whatever the default dtype)


def dtype_argument(d, fn, args=None, arg="dtype", position=None, required=False):
    """A user's dtype argument, as PyTorch's argument parser reads it: None, a minigrad dtype, or Python's float,
    int, bool or complex; anything else (a numpy dtype, a name such as 'float32') PyTorch's TypeError naming
    `fn`. `args`: the call's positional arguments, for a function PyTorch refuses with its overload text;
    `position`: the argument's, where it is positional; `required`: None refused too.
    (Library code holding numpy dtypes converts them with dtypes.get_dtype: users' arguments come here.)"""
    if d.__class__ is dtypes.dtype or (d is None and not required):  # (the usual: an identity test or two)
        return d
    if isinstance(d, dtypes.dtype):  # (bfloat16: named, refused when an array is made of it)
        return d
    if d.__class__ is type and d in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[d]
    if args is None:
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{fn}(): argument '{arg}'{where} must be torch.dtype, not {type_name(d)}")
    got = ", ".join([*map(type_name, args), f"{arg}={type_name(d)}"]) + ("" if args else ", ")
    raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    f" * (..., *, torch.dtype {arg} = None, ...)\n")


def is_dtype_argument(a):
    """Whether positional argument `a` is a dtype to PyTorch's parser (`x.to(float)`, `x.view(minigrad.int32)`)."""
    return isinstance(a, dtypes.dtype) or (a.__class__ is type and a in _PYTHON_DTYPES)


_FACTORY_KEYWORDS = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                     "None, bool pin_memory = False, bool requires_grad = False")
RAND_OVERLOADS = (f"tuple of ints size, *, torch.Generator generator, {_FACTORY_KEYWORDS}",  # (rand's and randn's:
                  f"tuple of ints size, *, {_FACTORY_KEYWORDS}")                           # with, without a generator)


def size_type_error(name, given, i, bad, argument="size"):
    """PyTorch's argument parser's text for a size entry that is not an int (`zeros(n / 2)`): entry `i` of
    the positional arguments `given`; `argument`: the op's name for its sizes (reshape's 'shape')."""
    kind = type(bad).__name__ if type(bad).__module__ == "builtins" else \
        "Tensor" if isinstance(bad, Tensor) else f"{type(bad).__module__}.{type(bad).__name__}"
    sequence = len(given) == 1 and isinstance(given[0], (tuple, list))
    if len(given) == 1 and not sequence:
        return f"{name}(): argument '{argument}' (position 1) must be tuple of ints, not {kind}"
    if i > 0:
        return f"{name}(): argument '{argument}' failed to unpack the object at pos {i + 1} with error \"type must be " \
               f"tuple of ints,but got {kind}\""
    if sequence:
        return f"{name}(): argument '{argument}' (position 1) must be tuple of ints, but found element of type {kind} " \
               "at pos 0"
    if name in ("rand", "randn"):
        return invalid_arguments(name, given, RAND_OVERLOADS)
    return f"{name}() takes 1 positional argument but {len(given)} were given"


def invalid_arguments(fn, args, overloads, kwargs=None):
    """PyTorch's argument parser's text for positional `args` (and keyword `kwargs`) that fit none of fn's
    `overloads` (its signatures, as it prints them)."""
    got = ", ".join([*map(type_name, args), *(f"{k}={type_name(v)}" for k, v in (kwargs or {}).items())])
    if kwargs and not args:
        got += ", "  # (the parser's spelling when only keywords came)
    return (f"{fn}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
            + "".join(f" * ({o})\n" for o in overloads))


def _check_assigned_grad(t, value):
    """PyTorch's checks of `t.grad = value`: a Tensor, of t's dtype, then of t's size."""
    sparse = getattr(value, "is_sparse", False)  # (Embedding(sparse=True)'s gradient, assigned back)
    if not isinstance(value, Tensor) and not sparse:
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
    dtype = (value._values() if sparse else value).array.dtype
    if dtype != t.array.dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{dtypes.cpp_name(dtype)}' to a tensor "
                           f"with grad_dtype '{t.dtype._legacy[:-6]}'. The gradient must match the tensor's grad_dtype "
                           "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
                           "specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                           "dtypes of a tensor and its gradient may break downstream systems that assume they match.")
    if tuple(value.shape) != t.array.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                           f"'{list(t.shape)}'. Please ensure that the gradient and the tensor are the same size")


# Bound by minigrad.legacy_types, which imports this module: PyTorch's legacy constructors' argument rules
# (`torch.Tensor(2, 3)`, `torch.Tensor([1, 2])`, `x.new(...)`), apart from the tensor itself
legacy_new = None


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's `torch.Size([2, 3])`, of ints only, and a Size again
    after `+`, `*` and slicing (`x.shape[:-1] + (n,)`)."""

    __module__ = "minigrad"  # (PyTorch's torch.Size)

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:  # (the usual: plain ints, taken as they are)
            if type(s) is not builtins_int:
                break
        else:
            return tuple.__new__(cls, sizes)
        out = []
        for i, s in enumerate(sizes):
            try:
                out.append(operator.index(s))  # (an integer 0-d tensor, a numpy integer, a bool)
            except TypeError:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')") from None
        return tuple.__new__(cls, out)

    def __getitem__(self, i):
        out = tuple.__getitem__(self, i)
        return Size(out) if type(i) is slice else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):  # (`(n,) + x.shape`: Python asks the subclass on the right first)
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __repr__(self):
        return f"minigrad.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def _requiring_grad(t):
    """`t.requires_grad_()` for a new tensor made with `requires_grad=True` (a factory's, a Parameter's), whose
    refusal of an integer tensor PyTorch words apart from requires_grad_'s."""
    if t.array.dtype.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return t.requires_grad_(True)


def _change_requires_grad(t, flag, dtype_message):
    """Set leaf `t`'s requires_grad to `flag` after PyTorch's checks, in its order (`requires_grad_` and the
    `requires_grad` setter word an integer tensor's refusal apart)."""
    if t.grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables." + ("" if flag else
                           " If you want to use a computed variable in a subgraph that doesn't require "
                           "differentiation use var_no_grad = var.detach()."))
    if flag and t.array.dtype.kind not in "fc":
        raise RuntimeError(dtype_message)
    if flag and t.is_inference() and not state.inference:  # no graph could record its use
        raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    if recording.hook.recorder is not None:  # in a minigrad.compile capture: a step on that call's value
        return recording.hook.recorder.on_requires_grad(t, flag)
    t._requires_grad = flag
    return t


def _size_of(shape):
    """An array's shape as a Size (its ints need no checking: each `.shape` costs what a tuple would)."""
    return tuple.__new__(Size, shape)


class _RetainGrad:
    """The hook behind `retain_grad()`: stores the gradient on the non-leaf tensor."""

    def __init__(self, t):
        import weakref

        self.ref = weakref.ref(t)

    def __call__(self, grad):
        t = self.ref()
        if t is not None:
            if t.grad is None:
                # a copy, as PyTorch's retain_grad makes: the gradient the engine hands on may be a view
                # of other gradients (a split's pieces side by side) or be adopted by a leaf
                t.grad = Tensor._wrap(grad.array.copy()) if not grad._requires_grad else grad
            else:
                t.grad = t.grad + grad


# function.py cannot import this module (this module imports it): hand it the class instead
_function.Tensor = Tensor


def _data_of(t):  # (what minigrad.compile replays for `t.data`)
    return t.data


def _set_data(t, value):  # (... for `t.data = value`)
    t.data = value


def _set_grad(t, value):  # (... and for `t.grad = value`)
    t.grad = value


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _set_requires_grad(t, flag):  # (... and for `t.requires_grad_()` on a value of the call)
    t._requires_grad = flag
    return t


def _grad_of(t):  # (... and for reading `t.grad` that the call did not make: the one there at each replay)
    return t._grad


_ALIASED = [name for name in Tensor.__slots__ if name != "__weakref__"]
_PICKLED = ("array", "requires_grad", "_grad", "_output_nr", "_version_counter", "_hooks",
            "_post_accumulate_grad_hooks", "_retains_grad")  # (not the grad accumulator: a weak reference)


_NO_PINNED_MEMORY = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
                     "available on this system.")


def placement_argument(name, layout, pin_memory, kernel=None):
    """A factory's `layout=` and `pin_memory=` as PyTorch checks them: memory here is dense (strided) and
    never pinned (no accelerator to pin it for). True where a sparse layout asks for a tensor the factory
    builds (kernel None: zeros, empty); else False, or PyTorch's refusal naming `kernel`, the op its
    sparse backend lacks ("full": the fill factories' own text)."""
    from . import layout as layout_type, sparse_coo, strided

    if pin_memory is not None and type(pin_memory) is not builtins_bool:
        raise TypeError(f"{name}(): argument 'pin_memory' must be bool, not {type_name(pin_memory)}")
    if pin_memory:
        raise RuntimeError(_NO_PINNED_MEMORY)
    if layout is None or layout is strided:
        return False
    if not isinstance(layout, layout_type):
        raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not {type_name(layout)}")
    if kernel is None:
        return True
    if kernel == "full":
        raise RuntimeError("full(...) is not implemented for sparse layout")
    if layout is sparse_coo:
        raise NotImplementedError(
            f"Could not run 'aten::{kernel}' with arguments from the 'SparseCPU' backend. This could be because the "
            "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
            "(if using custom build).")
    raise NotImplementedError(f"{name}(): layout={layout!r} is not supported by minigrad (strided or sparse_coo only)")


def memory_format_argument(t, name, memory_format, check_rank=True):
    """A `memory_format=` argument: None for preserve_format and contiguous_format (the callers that tell them
    apart check); channels_last(_3d) asks for the channel dimension innermost, refused (PyTorch's text) unless
    the rank is 4 (5)."""
    from . import channels_last, contiguous_format, memory_format as format_type, preserve_format

    if memory_format is None or memory_format is preserve_format or memory_format is contiguous_format:
        return None
    if not isinstance(memory_format, format_type):
        raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not {type_name(memory_format)}")
    rank = 4 if memory_format is channels_last else 5
    if check_rank and t.array.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    return memory_format


def _memory_format_type():
    from . import memory_format

    return memory_format


def _row_major_unless_contiguous(t, memory_format):
    """to(memory_format=contiguous_format) copies a tensor that is not row-major; preserve_format keeps it."""
    from . import contiguous_format

    return memory_format if memory_format is contiguous_format and not t.array.flags.c_contiguous else None


def strides_like_format(t, memory_format):
    """Whether `to(memory_format=)` leaves `t` as it is (PyTorch's suggest_memory_format)."""
    from .ops.conversion import strides_like

    return strides_like(tuple(t.shape), t.stride(), memory_format.name)


def channels_last_contiguous(t, memory_format):
    """PyTorch's is_contiguous(memory_format=channels_last(_3d)): the one test ops/shape.py has for dim_order."""
    from .ops.shape import is_contiguous_as

    return is_contiguous_as(tuple(t.shape), t.stride(), memory_format.name)
