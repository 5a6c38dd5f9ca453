"""`Module`: the base class of every layer and model, as `torch.nn.Module`.

A module owns three ordered name -> value tables, filled by plain attribute assignment:
`_parameters` (Parameters), `_buffers` (Tensors that are state but not learned, e.g. a causal
mask) and `_modules` (sub-modules). Everything else (walking the tree, moving it between
devices and dtypes, state dicts, repr) is built on walking those tables.
"""
import types
import warnings
import weakref
from collections import OrderedDict, namedtuple
from types import MappingProxyType

import minigrad
from minigrad import Tensor, dtypes
from minigrad import typename as _typename
from minigrad.tensor import _TO_OVERLOADS, dtype_argument, invalid_arguments, is_dtype_argument
from minigrad.autograd import recording
from minigrad.device import device as Device
from minigrad.device import array_module, module_for, to_device
from minigrad.ops.conversion import to_copy, warn_complex_to_real

from . import hooks
from .parameter import Buffer, Parameter
from .utils import _zero_grad


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict(strict=False)` returns: the keys it could not match."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY = "_extra_state"  # (a module's get_extra_state() in its state dict: '<prefix>_extra_state')


def _quoted(keys):
    return ", ".join(f'"{k}"' for k in keys)


def _check_member_name(kind, name):
    """Names of parameters, buffers and sub-modules are path components: non-empty strings without '.'."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))


# Counts changes to any module's attributes and member tables. minigrad.compile's guards reuse a
# module's walked state (train/eval, which parameters and buffers) while this count stands still,
# instead of walking every submodule at every compiled call.
module_changes = [0]
_UNSET = object()


_HOOK_TABLES = frozenset(("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                          "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                          "_forward_hooks_always_called"))


class _Members(OrderedDict):
    """One of a module's member tables, mirrored into the module's `__dict__`.

    The table is the truth (state_dict, parameters(), to() walk it); the mirror makes reading a member
    (`self.weight`) an ordinary attribute lookup. Without it each read first fails, raising an
    AttributeError inside Python, before `Module.__getattr__` finds the member in a table: a module call
    reads several. Every write to the table, by key or by method, writes the mirror too.
    """

    def __init__(self, owner, items=()):
        super().__init__()
        self._owner = weakref.ref(owner)  # (not the module itself: a cycle would wait for the garbage collector)
        for name, value in items:
            self[name] = value

    def _mirror(self):  # (every write to the table goes through here)
        module_changes[0] += 1
        owner = self._owner()
        return {} if owner is None else owner.__dict__

    def __setitem__(self, name, value):
        super().__setitem__(name, value)
        self._mirror()[name] = value

    def __delitem__(self, name):
        super().__delitem__(name)
        self._mirror().pop(name, None)

    def pop(self, name, *default):
        if name in self:
            self._mirror().pop(name, None)
        return super().pop(name, *default)

    def popitem(self, last=True):
        name, value = super().popitem(last)
        self._mirror().pop(name, None)
        return name, value

    def setdefault(self, name, default=None):
        if name not in self:
            self[name] = default
        return self[name]

    def update(self, *others, **named):
        for name, value in OrderedDict(*others, **named).items():
            self[name] = value

    def clear(self):
        mirror = self._mirror()
        for name in self:
            mirror.pop(name, None)
        super().clear()

    def copy(self):
        return OrderedDict(self)

    def __or__(self, other):
        return OrderedDict(self) | other

    def __ror__(self, other):
        return OrderedDict(other) | OrderedDict(self)

    def __ior__(self, other):
        self.update(other)
        return self

    def __reduce__(self):  # a copy or a pickle is a plain table: Module.__setstate__ ties it to its new owner
        return OrderedDict, (list(self.items()),)


def init_named(*classes, owner=None):
    """Python's argument errors name the class that defines the __init__ (`_ConvNd.__init__() got an unexpected
    keyword argument`); each of `classes` gets its inherited __init__ as its own, named for the class whose
    __init__ PyTorch's layer runs (the class itself, or `owner`), so the errors read as PyTorch's."""
    for cls in classes:
        f = cls.__init__
        own = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
        own.__kwdefaults__, own.__doc__ = f.__kwdefaults__, f.__doc__
        own.__qualname__ = f"{owner or cls.__name__}.__init__"
        cls.__init__ = own


def _convert_in_place(t, new, convert):
    """Module._apply's move of tensor `t` to its converted array `new` (and its gradient's)."""
    if new is not t.array:
        t.array = new
        t._bump_version()  # a graph recorded before the move must not backprop into the new array
    if t.grad is not None:
        t.grad.array = convert(t.grad.array)


class Module:
    """Base class for all neural-network modules; subclasses define `forward(*inputs)`.

    Assigning a Parameter, a Module or (through `register_buffer`) a Tensor to an attribute
    registers it, so `parameters()`, `state_dict()`, `to()` ... see it.
    """

    _changes = module_changes  # (read by minigrad.compile's guards, which do not import nn)

    def __init__(self):
        module_changes[0] += 1
        # object.__setattr__: our own __setattr__ consults these tables, which do not exist yet
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", _Members(self))
        object.__setattr__(self, "_buffers", _Members(self))
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", _Members(self))

    def __getstate__(self):
        # a module compiled in place (`model.compile()`) is copied and pickled without its programs, which read
        # this module's parameters: a copy compiles anew for its own (__setstate__); minigrad.load, which runs
        # no code of a module's, gives one that runs eagerly
        state = self.__dict__
        if "_compile_args" in state and "forward" in state:
            state = {k: v for k, v in state.items() if k != "forward"}
        return state

    def __setstate__(self, state):  # copy.deepcopy, pickle: the tables become this module's own again
        module_changes[0] += 1
        self.__dict__.update(state)
        for name in ("_parameters", "_buffers", "_modules"):
            table = state.get(name)
            if table is not None:
                object.__setattr__(self, name, _Members(self, table.items()))
        if "_compile_args" in state:
            args, kwargs = state["_compile_args"]
            self.compile(*args, **kwargs)

    # ---- forward ------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """The computation; subclasses define it. Call the module (`m(x)`), not `m.forward(x)`."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    _has_hooks = False  # (set on a module when a hook is registered: its calls go through nn/hooks.py)

    def __call__(self, *args, **kwargs):
        if self._has_hooks:
            return hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # ---- hooks (nn/hooks.py) ---------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """`hook(module, args)` (with_kwargs: `hook(module, args, kwargs)`) before each forward; it may
        return new args (or (args, kwargs)). Returns a handle whose `remove()` takes it out."""
        return hooks.add_hook(self, "_forward_pre_hooks", hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """`hook(module, args, output)` (with_kwargs: `hook(module, args, kwargs, output)`) after each
        forward; it may return a new output. always_call: also when forward raises (output None)."""
        return hooks.add_hook(self, "_forward_hooks", hook, prepend, with_kwargs=with_kwargs,
                              always_call=always_call)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """`hook(module, grad_output)` when the gradients of the module's outputs are known; it may return
        new ones."""
        return hooks.add_hook(self, "_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """`hook(module, grad_input, grad_output)` when the gradients of the module's tensor inputs are
        known (None for an input that needs none); it may return new grad_input."""
        hooks.choose_backward_hook_kind(self, full=True)
        return hooks.add_hook(self, "_backward_hooks", hook, prepend)

    def register_backward_hook(self, hook):
        """PyTorch's older name; its older semantics differ (here it runs as a full backward hook)."""
        hooks.choose_backward_hook_kind(self, full=False)
        return hooks.add_hook(self, "_backward_hooks", hook, False)

    # ---- registration -------------------------------------------------------------------
    def _require_init(self, what):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")

    def register_parameter(self, name, param):
        """Add a Parameter (or None, a declared-but-absent one such as a disabled bias) under `name`."""
        self._require_init("parameter")
        _check_member_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(minigrad.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a Tensor that is state but not a parameter (moved by `to()`; in `state_dict()` if persistent)."""
        self._require_init("buffer")
        _check_member_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (minigrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a sub-module (or None) under `name`."""
        if module is not None and not isinstance(module, Module):  # (PyTorch checks the module before its name,
            raise TypeError(f"{_typename(module)} is not a Module subclass")  # and the name's place before its form)
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        _check_member_name("module", name)
        self._modules[name] = module  # (before __init__, PyTorch's AttributeError: the table is not there)

    register_module = add_module

    def _forget(self, name, keep=None):
        """Remove `name` from every table but `keep`, the one it is registered in again: there a new value
        takes the old one's place, so that replacing a member keeps the order of state_dict() (as PyTorch)."""
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            if table is not keep:
                table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __setattr__(self, name, value):
        d = self.__dict__
        if d.get(name, _UNSET) is not value:  # (the same object again, `model.train()` at every step, changes nothing)
            module_changes[0] += 1
            if recording.hook.recorder is not None:  # inside a minigrad.compile capture: Python a replay skips
                recording.escape(f"setting {type(self).__name__}.{name} (self.{name} = ...)",
                                 "a replay would not set it again; return the value instead", every_call=True)
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if isinstance(value, Parameter):
            self._require_init("parameters")
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(minigrad.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            self._require_init("module")
            self._forget(name, keep=modules)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(minigrad.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer):  # (a name taken by another member or attribute is refused, as PyTorch's)
            self.register_buffer(name, value, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(minigrad.nn.Buffer, minigrad.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # only called when ordinary lookup fails: members are found in __dict__ (their mirror, _Members),
        # so this is a name that is none, or a member of a table a subclass put in place itself
        d = self.__dict__
        if "_parameters" in d:
            for table in (d["_parameters"], d["_buffers"], d["_modules"]):
                if name in table:
                    return table[name]
            if name in _HOOK_TABLES:  # a hook table no hook was registered in yet: empty, as PyTorch's
                table = OrderedDict()
                object.__setattr__(self, name, table)
                return table
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        module_changes[0] += 1
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):  # (without Sequential's '0', '1'...: not names an attribute can be written with)
        names = set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(name for name in names if not name[:1].isdigit())

    # ---- walking the tree ---------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every descendant, pre-order; a shared module once."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]  # (a stack, not a generator per level: parameters() walks it every step)
        while stack:
            name, m = stack.pop()
            if remove_duplicate:
                if id(m) in memo:
                    continue
                memo.add(id(m))
            yield name, m
            dot = name + "." if name else ""
            stack.extend([(dot + k, c) for k, c in reversed(m._modules.items()) if c is not None])

    def modules(self):
        """This module and every descendant, each once."""
        seen, stack = set(), [self]  # named_modules' walk, without making the names
        while stack:
            m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield m
            stack.extend([c for c in reversed(m._modules.values()) if c is not None])

    def named_children(self):
        """(name, module) for the direct sub-modules, each once."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct sub-modules, each once."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, table, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, tensor) from one table ("_parameters" or "_buffers") across the tree.

        With remove_duplicate a tensor shared by two modules (tied weights) is listed once, under
        the first name found."""
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, t in getattr(mod, table).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield mod_prefix + ("." if mod_prefix else "") + name, t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) pairs, e.g. ('0.weight', ...); tied parameters once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every Parameter of the tree, each once (the list an optimizer wants)."""
        return self._members("_parameters", recurse)

    def _members(self, table, recurse):
        """_named_members' tensors without their names (zero_grad and clipping walk them every step)."""
        seen = set()
        for mod in self.modules() if recurse else (self,):
            for t in getattr(mod, table).values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield t

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) pairs, persistent or not; a shared buffer once."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer of the tree, each once."""
        return self._members("_buffers", recurse)

    def get_submodule(self, target):
        """The module at dotted path `target` ('' is this module)."""
        mod = self
        for part in target.split(".") if target else []:
            if not hasattr(mod, part):
                raise AttributeError(f"{mod._get_name()} has no attribute `{part}`")
            mod = getattr(mod, part)
            if not isinstance(mod, Module):  # (a parameter, a None sub-module, a plain attribute)
                raise AttributeError(f"`{part}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Put `module` at dotted path `target`, replacing the module there; the parent must exist. With
        strict, only replace: the name must already be there."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _get_member(self, target, table, what):
        """The parameter or buffer at dotted path `target` (get_parameter, get_buffer)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        value = getattr(mod, name)
        found = isinstance(value, Parameter) if table == "_parameters" else name in mod._buffers
        if not found:
            raise AttributeError(f"`{name}` is not {what}")
        return value

    def get_parameter(self, target):
        """The Parameter at dotted path `target` ('0.weight'); an AttributeError names what is missing."""
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target):
        """The buffer at dotted path `target` ('bn.running_mean'); an AttributeError names what is missing."""
        return self._get_member(target, "_buffers", "a buffer")

    def apply(self, fn):
        """Call `fn(module)` on every sub-module (children first) and then on this one; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (Dropout drops) on this module and its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Evaluation mode: `train(False)`."""
        return self.train(False)

    def _optimized_module(self, fullgraph):
        """What `minigrad.compile(self)` returns: nn's OptimizedModule around this module (a Module, as
        PyTorch's), rather than the compiler's plain wrapper for module-like objects."""
        from .optimized_module import OptimizedModule

        return OptimizedModule(self, fullgraph)

    def compile(self, *args, **kwargs):
        """Compile this module's calls in place (PyTorch's `Module.compile`): `module(x)` then goes through
        `minigrad.compile` of its forward, given these arguments (minigrad.compile's, torch.compile's)."""
        bound = type(self).forward.__get__(self)
        object.__setattr__(self, "forward", minigrad.compile(bound, *args, **kwargs))
        object.__setattr__(self, "_compile_args", (args, kwargs))  # (a copy compiles its own: __setstate__)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on every parameter (e.g. False to freeze); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (default, frees memory) or to zeros."""
        _zero_grad(self.parameters(), set_to_none)

    # ---- devices and dtypes -------------------------------------------------------------
    def _apply(self, convert, recurse=True, recorded=True):
        """Replace the array of every parameter, buffer and gradient by `convert(array)`, in place (recurse:
        also the descendants').

        The Tensor objects stay the same, so an optimizer built before `to()` keeps working.
        Shared (tied) tensors are converted once. A buffer that requires grad is replaced instead, as
        PyTorch converts buffers outside no_grad: by the conversion's output (recorded: a ToCopyBackward0
        non-leaf under grad mode), or by a new leaf that does not require grad (recorded=False: to_empty's)."""
        seen, replaced = set(), {}  # ids of the tensors converted; id of a buffer replaced -> its replacement
        for module in self.modules() if recurse else (self,):  # (one walk: a big module's to() is mostly walking)
            for t in module._parameters.values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    new = convert(t.array)
                    if t.requires_grad and new.dtype.kind not in "fc":  # (PyTorch sets param.data: its check)
                        raise RuntimeError("data set to a tensor that requires gradients must be floating point or "
                                           "complex dtype")
                    _convert_in_place(t, new, convert)
            for name, b in module._buffers.items():
                if b is None or id(b) in seen:
                    if b is not None and id(b) in replaced:  # (a buffer shared with a module walked before)
                        module._buffers[name] = replaced[id(b)]
                    continue
                seen.add(id(b))
                new = convert(b.array)
                if b.requires_grad and new is not b.array:
                    r = replaced[id(b)] = to_copy(b, dtype=new.dtype, copy=True) if recorded else Tensor._wrap(new)
                    r.array = new  # (the conversion's own array: its device and layout)
                    module._buffers[name] = r
                else:
                    _convert_in_place(b, new, convert)
        return self

    def to(self, *args, **kwargs):
        """`to(device)`, `to(dtype)`, `to(device, dtype)` or `to(tensor)`, in place; returns self.

        Only floating-point parameters and buffers change dtype (integer buffers keep theirs)."""
        dev, dt = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None and not isinstance(fmt, minigrad.memory_format):
            raise TypeError(invalid_arguments("to", args, _TO_OVERLOADS, dict(memory_format=fmt)))
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        kinds = []
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
                kinds.append("tensor")
            elif isinstance(a, (Device, str)):
                dev = a  # ('meta', 'mps', ...: PyTorch's device names, refused below with what minigrad has)
                kinds.append("device")
            elif is_dtype_argument(a):
                dt = a
                kinds.append("dtype")
            else:
                raise TypeError(invalid_arguments("to", args, _TO_OVERLOADS))
        if kinds not in ([], ["tensor"], ["device"], ["dtype"], ["device", "dtype"]):  # (its overloads' orders)
            raise TypeError(invalid_arguments("to", args, _TO_OVERLOADS))
        dt = dtype_argument(dt, "to", args)
        if dt is not None and not dt.is_floating_point:
            if not dt.is_complex:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dt}")
            warnings.warn("Complex modules are a new feature under active development whose design may change, and some "
                          "modules might not work as expected when using complex tensors as parameters or buffers. Please "
                          "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a "
                          "complex module does not work as expected.", UserWarning, stacklevel=2)
        if dev is not None:
            module_for(dev)  # fail now, before anything moved, on a bad spec or "cuda" without cupy / a GPU

        def convert(a):
            if dt is not None and a.dtype.kind in "fc" and a.dtype != dt.np:
                if a.dtype.kind == "c" and not dt.is_complex:  # (the tensor cast's warning, not numpy's)
                    warn_complex_to_real()
                    a = a.real
                a = a.astype(dt.np)
            a = a if dev is None else to_device(a, dev)
            if fmt is not None and a.ndim in (4, 5):  # (as PyTorch: only the 4-d and 5-d tensors change layout)
                a = Tensor._wrap(a).to(memory_format=fmt).array
            return a

        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Give every parameter and buffer a new, uninitialized array of its shape and dtype on `device` (None:
        where it is), in place; returns self. PyTorch's way off the meta device; here it only allocates, and
        the values are whatever the memory held (load a state dict or initialize them next)."""
        if device is not None:
            module_for(device)  # (a bad spec fails before anything changed)

        def convert(a):
            new = array_module(a).empty_like(a)
            return new if device is None else to_device(new, device)

        return self._apply(convert, recurse, recorded=False)

    def type(self, dst_type):
        """Every parameter and buffer (integer ones too, unlike `to(dtype)`) converted to `dst_type`: a dtype,
        a legacy type (`minigrad.DoubleTensor`) or its name ('torch.DoubleTensor'), in place; returns self."""
        return self._apply(lambda a: Tensor._wrap(a).type(dst_type).array)

    def share_memory(self):
        """Move every parameter, its gradient if it has one, and every buffer to shared memory
        (`Tensor.share_memory_`), so that processes forked afterwards train this one model in place (Hogwild);
        returns self."""
        for t in list(self.parameters()) + list(self.buffers()):
            t.share_memory_()
            if t.grad is not None:  # (PyTorch's _apply reaches gradients too)
                t.grad.share_memory_()
        return self

    def cpu(self):
        """Move every parameter and buffer to the CPU, in place; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move every parameter and buffer to the GPU (cupy), in place; returns self."""
        return self.to("cuda" if device is None else Device(device) if isinstance(device, int) else device)

    def _to_floating(self, dt):
        # unlike to(dtype), leaves complex parameters and buffers alone (a rotary table stays complex)
        return self._apply(lambda a: a.astype(dt.np) if a.dtype.kind == "f" and a.dtype != dt.np else a)

    def double(self):
        """Real floating parameters and buffers to float64 (what gradcheck wants)."""
        return self._to_floating(dtypes.float64)

    def float(self):
        """Real floating parameters and buffers to float32."""
        return self._to_floating(dtypes.float32)

    def half(self):
        """Real floating parameters and buffers to float16."""
        return self._to_floating(dtypes.float16)

    def bfloat16(self):
        """Real floating parameters and buffers to bfloat16: refused with one line where there are any, as
        numpy has no bfloat16 arrays (the dtype's own refusal)."""
        return self._to_floating(dtypes.bfloat16)

    # ---- state dicts --------------------------------------------------------------------
    # A module's state-dict hooks live in tables of its own, made on first use (the empty class-level
    # tables below are read-only defaults). Every table maps a handle id to a hook (to (hook, with_module) for
    # the load pre-hooks: the public kind is given the module, PyTorch's private kind not).
    _state_dict_pre_hooks = _state_dict_hooks = MappingProxyType({})
    _load_state_dict_pre_hooks = _load_state_dict_post_hooks = MappingProxyType({})
    _version = 1  # (PyTorch's: the format of this class's state dict, recorded in the state dict's _metadata)

    def _add_state_hook(self, table_name, entry):
        table = self.__dict__.get(table_name)
        if table is None:
            table = OrderedDict()
            object.__setattr__(self, table_name, table)
        handle = hooks.RemovableHandle(table)
        table[handle.id] = entry
        return handle

    def register_state_dict_pre_hook(self, hook):
        """`hook(module, prefix, keep_vars)` before this module's `state_dict()` entries are made; returns a
        handle whose `remove()` takes it out."""
        return self._add_state_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata)` once this module's (and its descendants') entries
        are in `state_dict`; it may edit the dict in place and must return None. Returns a handle."""
        hook._from_public_api = True  # (as PyTorch marks it: its return value is an error, see state_dict)
        return self._add_state_hook("_state_dict_hooks", hook)

    def _register_state_dict_hook(self, hook):
        """PyTorch's older, private form of register_state_dict_post_hook: a hook that returns a dict replaces
        the state dict (when the module is the one state_dict() was called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return self._add_state_hook("_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`
        before this module's entries are matched in `load_state_dict()`: it may rename or convert entries of
        `state_dict` (the part under `prefix`, a copy of the caller's) and add to the three lists. Returns a
        handle."""
        return self._add_state_hook("_load_state_dict_pre_hooks", (hook, True))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """register_load_state_dict_pre_hook; without with_module the hook is not given the module."""
        return self._add_state_hook("_load_state_dict_pre_hooks", (hook, with_module))

    def register_load_state_dict_post_hook(self, hook):
        """`hook(module, incompatible_keys)` after `load_state_dict()` copied the values; it may edit
        `incompatible_keys.missing_keys` / `.unexpected_keys` in place (what strict then checks) and must
        return None. Returns a handle."""
        return self._add_state_hook("_load_state_dict_post_hooks", hook)

    def get_extra_state(self):
        """Override (with set_extra_state) to save state that is no tensor (a config, a step count) in the
        state dict, under '<prefix>_extra_state'; state_dict() asks only modules whose class overrides it."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        """Override to restore what get_extra_state() returned (load_state_dict() hands it over)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """name -> tensor for every parameter and persistent buffer, in registration order (plus
        '_extra_state' entries of modules that override get_extra_state), as PyTorch's.

        Tensors are detached but share memory with the model (copy them to snapshot). A tied
        parameter appears under each of its names, as in PyTorch. The state-dict hooks run per module:
        pre-hooks before its entries, post-hooks after its descendants'. The arguments given by position
        (destination, prefix, keep_vars) are taken with PyTorch's FutureWarning."""
        if args:
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 3 positional arguments ({len(args)} given)")
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/docs/"
                          "main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination, prefix, keep_vars = args + (destination, prefix, keep_vars)[len(args):]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # (PyTorch's: each module's local_metadata, by its prefix)
        return self._state_dict_tree(destination, prefix, keep_vars)

    def _state_dict_tree(self, destination, prefix, keep_vars):
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():
            if child is not None:
                child._state_dict_tree(destination, prefix + name + ".", keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                if getattr(hook, "_from_public_api", False):
                    raise RuntimeError("state_dict post-hook must return None")
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its descendants'): parameters, persistent buffers, extra state."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from `state_dict` into the parameters and persistent buffers, in place (and hand
        '_extra_state' entries to set_extra_state). Returns (missing_keys, unexpected_keys).

        Everything is checked before anything is copied: a size mismatch (always) or, with
        strict, a missing or unexpected key raises a RuntimeError listing every problem, and the
        model is left unchanged. The load pre-hooks run first, module by module, on a copy of
        `state_dict`; the post-hooks run after the copy (children's first) and may clear missing or
        unexpected keys, so with post-hooks in the tree a strict key error is raised after the copy.

        assign: rather than copy, make the state dict's tensors the module's (of their own dtype; a parameter's
        requires_grad kept), as PyTorch's, e.g. to fill a model made without its memory."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        missing, unexpected, errors, copies, extras, post = [], [], [], [], [], []

        def visit(module, local, prefix):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            for hook, with_module in list(module._load_state_dict_pre_hooks.values()):
                args = (local, prefix, local_metadata, True, missing, unexpected, errors)
                if with_module:
                    args = (module,) + args
                hook(*args)
            module._upgrade_state_dict(local, prefix, local_metadata.get("version"))
            module._match_state(local, prefix, missing, unexpected, errors, copies, extras)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    visit(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)
            if module._load_state_dict_post_hooks:
                post.append(module)

        def key_errors():
            if not strict:
                return []
            return ([f"Missing key(s) in state_dict: {_quoted(missing)}. "] if missing else []) + (
                [f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. "] if unexpected else [])

        visit(self, state_dict, "")
        if errors or (not post and key_errors()):
            self._load_error(key_errors() + errors)
        with minigrad.no_grad():
            for module, name, target, value in copies:
                if not assign:
                    target.copy_(value)
                    continue
                if isinstance(target, Parameter):
                    value = (value.requires_grad_(target.requires_grad) if isinstance(value, Parameter)
                             else Parameter(value, requires_grad=target.requires_grad))
                setattr(module, name, value)
        for module, state in extras:
            module.set_extra_state(state)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for module in post:
            for hook in list(module._load_state_dict_post_hooks.values()):
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")
        if key_errors():
            self._load_error(key_errors())
        return incompatible

    def _load_error(self, messages):
        raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(messages))

    def _upgrade_state_dict(self, local, prefix, version):
        """Bring `local` (this module's part of a state dict being loaded) up to this class's `_version`
        from `version`, the one it was saved with (None: a dict without PyTorch's _metadata); as
        PyTorch's `_load_from_state_dict` does for a layer whose entries changed."""

    def _match_state(self, local, prefix, missing, unexpected, errors, copies, extras):
        """Match this module's own entries against `local` (the part of the state dict under `prefix`): the
        (module, name, tensor, value) to copy go to `copies`, (module, state) to `extras`, the problems to the lists."""
        own = {name: p for name, p in self._parameters.items() if p is not None}
        own.update((name, b) for name, b in self._buffers.items()
                   if b is not None and name not in self._non_persistent_buffers_set)
        for name, target in own.items():
            key = prefix + name
            if key not in local:
                missing.append(key)
                continue
            value = local[key]
            if not isinstance(value, Tensor):
                if not (hasattr(value, "shape") and hasattr(value, "dtype")):  # numpy / cupy arrays are welcome
                    errors.append(f'While copying the parameter named "{key}", expected minigrad.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                    continue
                value = Tensor._wrap(value)
            if target.ndim == 0 and tuple(value.shape) == (1,):  # (PyTorch takes a 1-element vector for a scalar)
                value = value.reshape(())
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {minigrad.Size(value.shape)} "
                              f"from checkpoint, the shape in current model is {target.shape}.")
                continue
            copies.append((self, name, target, value))
        extra_key = prefix + _EXTRA_STATE_KEY
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in local:
                extras.append((self, local[extra_key]))
            else:
                missing.append(extra_key)
        elif extra_key in local:
            unexpected.append(extra_key)
        for key in local:
            if key.startswith(prefix) and key != extra_key:
                head, dot, _ = key[len(prefix):].partition(".")
                if (head not in self._modules) if dot else (head not in own):
                    unexpected.append(key)

    # ---- repr ---------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside the parentheses of this module's repr (its hyperparameters)."""
        return ""

    def _short_repr(self):
        """One line naming the module and its hyperparameters, for error messages."""
        return f"{self._get_name()}({self.extra_repr()})"

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_indent(repr(m), 2)}" for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            body = extra_lines[0] if len(extra_lines) == 1 and not child_lines else "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _indent(text, n):
    """Indent every line but the first by n spaces (nested reprs line up under their parent)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * n + line for line in rest])
