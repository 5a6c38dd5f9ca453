"""Parametrizations, as `torch.nn.utils.parametrize`: a parameter (or buffer) computed from others.

    register_parametrization(linear, "weight", Symmetric())   # linear.weight is now Symmetric()(original)

moves the tensor to `module.parametrizations.weight.original` (a ParametrizationList holding the
parametrization modules) and makes `module.weight` a property that computes them on every read, with
recorded ops, so gradients reach `original`. The module's class becomes a subclass made for it,
`Parametrized<Class>` (the property lives on the class), as in PyTorch, so state dict keys, reprs and the
class name are PyTorch's. A parametrization's `right_inverse(value)` (optional) gives the original from a
value: at registration, from the current tensor, and when `module.weight = value` is assigned; it may
return a sequence of tensors, kept as original0, original1, ... (as weight_norm's g and v).

`cached()` computes each parametrized tensor once inside the `with` block (for a forward that reads it
many times, e.g. a recurrent weight).
"""
import collections.abc
import contextlib
import copy

import minigrad
from minigrad import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}  # (id(module), tensor name) -> the tensor computed inside cached()


@contextlib.contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed at its first read and reused after."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest, src):
    """PyTorch's `dest.set_(src)`: dest (the same Tensor object, so an optimizer holding it still does) takes
    src's array."""
    dest.array = src.array
    dest._bump_version()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to `original` (or original0, original1, ... when
    the first one's right_inverse returns several tensors); calling it gives the parametrized tensor.

    Unless `unsafe`, the result must keep the tensor's shape and dtype (checked at construction)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with minigrad.no_grad():  # the originals from the current value, through each right_inverse from the last
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != original.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new.device != original.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the device.\n"
                                 f"original.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with minigrad.no_grad():
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(t).__name__}.")
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                t.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", t)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Set the originals so that the parametrization gives `value` (every parametrization needs a
        right_inverse): what `module.weight = value` does."""
        with minigrad.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, t in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(t, Tensor):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got element {i} of type "
                                     f"{type(t).__name__}.")
                if t.dtype != original_i.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {t.dtype} while "
                                     f"`original{i}` has dtype {original_i.dtype}")
                _set(original_i, t)

    def forward(self):
        modules = iter(self)
        if self.is_tensor:
            x = next(modules)(self.original)
        else:
            x = next(modules)(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules:
            x = module(x)
        return x


def _deepcopy_module(self, memo):
    """copy.deepcopy of a parametrized module (its class refuses to be pickled, and deepcopy would ask it)."""
    replica = memo.get(id(self))
    if replica is None:
        replica = type(self).__new__(type(self))
        memo[id(self)] = replica
        replica.__setstate__(copy.deepcopy(self.__dict__, memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module):
    """Give `module` a class of its own, `Parametrized<Class>`, to hold the properties."""
    cls = type(module)
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_module
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    """`module.<tensor_name>`: reading computes the parametrization (once per cached() block), assigning
    goes through its right_inverse."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        if _cache.get(key) is None:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def _check_same(what, y, z, tensor_name, unsafe_note):
    """The shape and dtype checks of registering a parametrization on top of others."""
    if z.dtype != y.dtype:
        raise ValueError(f"{what} dtype of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n{unsafe_note}.dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError(f"{what} shape of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n{unsafe_note}.shape: {z.shape}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make `module.<tensor_name>` (a parameter or buffer, or an already parametrized tensor, whose
    parametrizations then get one more at the end) the output of `parametrization` (a Module) applied
    to an original tensor; returns the module. unsafe: allow a change of shape or dtype."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            _check_same("Registering a parametrization may not change the", y, x, tensor_name,
                        f"parametrization(module.{tensor_name})")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                         f"{type(z).__name__}")
                    _check_same("The tensor returned by parametrization.right_inverse must have the same", y, z,
                                tensor_name, "returned")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether `module` has a parametrization (on `tensor_name`, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization on `tensor_name`: it becomes a plain parameter (or buffer) again,
    holding its current parametrized value (leave_parametrized) or the original. The last one removed
    gives the module its class back. Returns the module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with minigrad.no_grad():
                _set(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before parametrizations were registered (its own class when it has none)."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Give `to_module` the parametrizations of `from_module` (all of them, or the one on `tensor_name`): the
    same parametrization modules over the same original tensors (shared, not copied), so that both compute
    the same tensor. One that `to_module` lacks is first made a parameter of from_module's value. Returns
    to_module; a from_module without parametrizations leaves it as it was."""
    if not is_parametrized(from_module):
        return to_module
    for name in list(from_module.parametrizations) if tensor_name is None else [tensor_name]:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        originals = ["original"] if hasattr(source, "original") else []
        while hasattr(source, f"original{len(originals)}"):
            originals.append(f"original{len(originals)}")
        for original in originals:
            setattr(target, original, getattr(source, original))
    return to_module
