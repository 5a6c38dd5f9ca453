"""Guards: what a captured program assumed about its call, as one hashable key.

A program is only valid for calls like the one it was captured from: the same tensor shapes,
dtypes, devices and requires_grad, inputs aliasing each other in the same way, the same Python
numbers (they are baked into the steps), the same grad mode, the same train/eval mode of every
module, the same parameter and buffer objects. `call_key` writes all of that down; a call whose
key is not in the cache is captured anew (or runs eagerly), never replayed on a wrong program.

The key is a tuple of (label, value) pairs, so that a miss can say in one line what changed.
"""
import dis
import functools
import itertools
import types
from collections import deque

import numpy as np

from ..autograd.grad_mode import state
from ..backends import get_kernels
from ..device import device
from ..tensor import Tensor
from ..typeinfo import get_default_dtype

_SCALARS = (bool, int, float, complex, str, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


class Unsupported(Exception):
    """The call cannot be compiled at all (the reason is one line)."""


def flatten(obj, leaves):
    """The leaves of a structure of lists, tuples and dicts (what tensors a call was given)."""
    if isinstance(obj, (list, tuple)):
        for x in obj:
            if isinstance(x, _CONTAINERS):
                flatten(x, leaves)
            else:  # (a leaf without a call: this runs for every argument of every compiled call)
                leaves.append(x)
    elif isinstance(obj, dict):
        for k in obj:
            flatten(obj[k], leaves)
    else:
        leaves.append(obj)
    return leaves


_CONTAINERS = (list, tuple, dict)


def _has_container(values):
    for v in values:  # (a loop, not any() of a generator: this runs at every compiled call)
        if isinstance(v, _CONTAINERS):
            return True
    return False


def is_live(obj):
    """An argument a program reads at each replay, like a tensor, rather than the object the capture
    saw: an object with a `compile_guard()` method, which returns what a program may assume about it
    (the rest is read by ops at run time). A KV cache is one: each call passes the cache it extends,
    and the program, which appends through ops, must extend that one."""
    return not isinstance(obj, type) and callable(getattr(obj, "compile_guard", None))


def is_module(obj):
    """A module, told apart by duck typing (minigrad does not import nn)."""
    return hasattr(obj, "named_modules") and hasattr(obj, "training") and hasattr(obj, "parameters")


_walked = {}  # id(module) -> (nn's change count when walked, the state then, the objects it names by id)


def _module_state(m):
    """(state, held, settings): what a captured program assumes about a module: train/eval of each submodule,
    which parameter and buffer objects it holds (a replaced parameter is a different program), the
    value of each Python number, string or flag kept on a submodule (a changed `dropout.p` is another
    program) and which object each plain tensor or array attribute is; `held`, the attribute objects
    the state names by id (a program keeps them, so that no other object takes their ids); `settings`,
    where the values of a module's settings objects are read at each call (`_settings`). nn counts
    every change to any module (`_changes`): while the count stands still, the last walk holds (a
    settings object's values change without it: they are read anew)."""
    changes = getattr(m, "_changes", None)
    if changes is None:
        state, held, settings = _walk(m)
        return state, held, settings
    walked = _walked.get(id(m))
    if walked is not None and walked[0] == changes[0]:
        return walked[1], walked[2], walked[3]
    if len(_walked) > 1024:  # (the ids of modules long gone)
        _walked.clear()
    state, held, settings = _walk(m)
    state = _State(state)
    _walked[id(m)] = (changes[0], state, held, settings)
    return state, held, settings


class _State(tuple):
    """A module's walked state, hashed once: a call's key holds the same one while nothing changes, and a
    tuple of every submodule's paths and values rehashed at each call cost a generated token ~6 us."""

    def __new__(cls, state):
        self = super().__new__(cls, state)
        self._hash = tuple.__hash__(self)
        return self

    def __hash__(self):
        return self._hash


def _walk(m):
    """The state `_module_state` describes, read from PyTorch's tables (`_modules`, `_parameters`,
    `_buffers`) in one walk, and each module's Python numbers, strings and flags (`self.p`, `self.scale`,
    `self.eps`: a forward that reads one bakes its value into the program, as it does an argument's) and
    which tensor or array each plain tensor or array attribute is (`self.mask = ...`: the program reads
    the one it captured). -> (state, held): the state's last part is (module paths, ((module's position,
    attribute, type, value or object id), ...)); held, the objects named by id."""
    if not hasattr(m, "_modules"):
        return (tuple(sub.training for sub in m.modules()), tuple(id(p) for p in m.parameters()),
                tuple(id(b) for b in m.buffers()), ((), ())), (), ()
    training, params, bufs, paths, values, held, settings = [], [], [], [], [], [], []
    seen, stack = set(), [("", m)]
    while stack:
        path, mod = stack.pop()
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        i = len(paths)
        paths.append(path)
        training.append(mod.training)
        params.extend(map(id, mod._parameters.values()))
        bufs.extend(map(id, mod._buffers.values()))
        for attr, v in vars(mod).items():  # (members are mirrored here too: parameters, buffers, submodules)
            kind = type(v)
            if kind in _SCALAR_TYPES or kind is tuple and all(isinstance(x, _SCALARS) for x in v):
                values.append((i, attr, kind, v))
            elif isinstance(v, Tensor):
                if attr not in mod._parameters and attr not in mod._buffers:
                    values.append((i, attr, Tensor, id(v)))
                    held.append(v)
            elif kind is np.ndarray:  # (a forward that makes a tensor of it freezes the one it saw)
                values.append((i, attr, Tensor, id(v)))
                held.append(v)
            elif isinstance(v, _SCALARS):  # (a numpy float, an IntEnum)
                values.append((i, attr, kind, v))
            elif attr in _HOOK_TABLES:  # (the hooks a capture ran are in its program: which ones, by handle id)
                values.append((i, attr, "hooks", tuple(v)))
            elif (kind is dict or kind is list or _is_settings(v)) and attr[:1] != "_":  # (not nn's own tables)
                settings.append(_Settings(v, None, f"{path}.{attr}" if path else attr))
        stack.extend((f"{path}.{k}" if path else k, sub) for k, sub in reversed(mod._modules.items())
                     if sub is not None)
    if settings:  # the names any module's class uses (a parent may read `self.block.config.scale`)
        names = frozenset().union(*(_class_names(type(sub)) for sub in m.modules()))
        for entry in settings:
            entry.names = names
    return (tuple(training), tuple(params), tuple(bufs), (tuple(paths), tuple(values))), tuple(held), tuple(settings)


# a module's hook tables (PyTorch's names): handle id -> hook; a hook added or removed is another program
_HOOK_TABLES = frozenset(("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks"))


class _Settings:
    """A module's settings object (`self.config`, `self.cfg`) and the names of its entries the module's
    class's code uses, found again when entries are added or removed (a dict or an object changes
    without nn seeing it); or a list kept on a module (`self.w = [1.0, 2.0]`), its items by position."""

    __slots__ = ("obj", "names", "label", "size", "keys", "labels", "last")

    def __init__(self, obj, names, label):
        self.obj, self.names, self.label, self.size = obj, names, label, -1
        self.last = None  # (values, types, the key's part) when every value was a plain number, string or flag

    def entries(self):
        if type(self.obj) is list:  # (a list of numbers on a module, `self.widths`: its first items, by position)
            d = dict(enumerate(self.obj[:_CONTAINER_ITEMS]))
            if len(d) != self.size:
                self.keys, self.size = tuple(d), len(d)
                self.labels = tuple(f"{self.label}[{k}]" for k in self.keys)
            return d
        d = self.obj if type(self.obj) is dict else self.obj.__dict__
        if len(d) != self.size:
            self.keys = tuple(k for k in d if type(k) is str and k in self.names)
            self.labels = tuple(f"{self.label}.{k}" for k in self.keys)
            self.size = len(d)
        return d


def _is_settings(v):
    """A plain object of settings on a module (a config dataclass, a SimpleNamespace, argparse's
    Namespace, a class of hyperparameters): attributes, no call, not a tensor, module or array."""
    return (hasattr(v, "__dict__") and not callable(v) and not isinstance(v, (Tensor, np.ndarray, types.ModuleType))
            and not is_module(v) and not is_live(v))


_class_names_cache = {}


def _class_names(cls):
    """The attribute names and string constants the code of a module's class (and its bases') uses:
    the settings a forward may read (`self.config.block_size`, `self.cfg["scale"]`)."""
    names = _class_names_cache.get(cls)
    if names is None:
        found = set()
        for klass in cls.__mro__[:-1]:  # (not object's)
            for name, member in vars(klass).items():
                if name in _BUILD_ONLY:
                    continue
                parts = (member.fget, member.fset) if isinstance(member, property) else (member,)
                for fn in parts:
                    fn = getattr(fn, "__func__", fn)
                    while fn is not None:  # (a decorated method's own code too: @no_grad() def forward)
                        code = getattr(fn, "__code__", None)
                        if code is not None:
                            found.update(_names_and_strings(code))
                        fn = getattr(fn, "__wrapped__", None)
        names = _class_names_cache[cls] = frozenset(found)
    return names


_BUILD_ONLY = frozenset(("__init__", "reset_parameters", "_init_weights", "extra_repr", "__repr__", "__setstate__"))


def _names_and_strings(code):
    yield from code.co_names
    for const in code.co_consts:
        if type(const) is str:
            yield const
        elif isinstance(const, types.CodeType):
            yield from _names_and_strings(const)


def _settings(settings, objects):
    """What a module's settings objects hold now, under the names its class's code uses: numbers, strings
    and flags by type and value (a forward that reads one bakes it into the program, as an argument's),
    tensors by identity (kept in `objects`, so that no other tensor takes the id), the rest not at all."""
    out = []
    for entry in settings:
        objects.append(entry.obj)
        d = entry.entries()
        last = entry.last
        if last is not None:  # the usual: a config that does not change, read in two C loops (a token's guard)
            raw = tuple(map(d.get, entry.keys))
            if raw == last[0] and tuple(map(type, raw)) == last[1]:
                out.append(last[2])
                continue
        values = []
        for k in entry.keys:
            v = d.get(k, _MISSING)
            if type(v) in _SCALAR_TYPES or isinstance(v, _SCALARS):
                values.append(v)
            elif isinstance(v, Tensor):
                values.append(("tensor", id(v)))
                objects.append(v)
            elif type(v) in (list, tuple) and len(v) <= _CONTAINER_ITEMS and all(type(x) in _SCALAR_TYPES for x in v):
                values.append(tuple(v))  # (a list of sizes, `config.dims[0]`)
            else:
                values.append("(removed)" if v is _MISSING else None)
        part = _State((entry.labels, tuple(values), tuple(map(type, values))))  # (2, 2.0 and True differ)
        entry.last = (part[1], part[2], part) if all(t in _SCALAR_TYPES for t in part[2]) else None
        out.append(part)
    return tuple(out)


_labels_of_class = {}  # module class -> its key labels (made once: a guard runs at every call)


def _module_labels(m):
    """(the label of a module's state in a key, that of its settings)."""
    labels = _labels_of_class.get(type(m))
    if labels is None:
        name = type(m).__name__
        labels = _labels_of_class[type(m)] = (f"module {name}", f"settings of {name}")
    return labels


def _tensor_guard(t, alias):
    """A tensor argument's part of the key; `alias`: the position of the first argument sharing its memory."""
    a = t.array
    # with whether it is contiguous (the call's Python may branch on it, `if not x.is_contiguous()`, or view
    # it: `x.view(-1)` of a transposed tensor is an error eagerly, a reordering replayed) and whether hooks
    # wait for its gradient (`x.register_hook(...)` before the call: a capture with one runs eagerly)
    return (a.shape, a.dtype.str, _device_names.get(type(a)) or _device_name(t), t._requires_grad,
            a.flags.c_contiguous, bool(t._hooks or t._post_accumulate_grad_hooks), alias)


_device_names = {}  # array type -> its device's name, when every array of the type is on one device (numpy's)


def _device_name(t):
    name = str(t.device)
    if type(t.array) is np.ndarray:
        _device_names[np.ndarray] = name
    return name


def _scalar_or_none(v):
    if isinstance(v, _SCALARS):
        return (type(v).__name__, v)
    if isinstance(v, tuple) and all(isinstance(x, _SCALARS) for x in v):
        return ("tuple", v)
    # objects that are values, made anew by each call (`f(x, torch.device("cpu"), slice(0, 2))`, a numpy
    # scalar `np.float32(0.5)`): by value
    if isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return (type(v).__name__, v.item())
    if isinstance(v, device):
        return ("device", v)
    if type(v) is slice and all(isinstance(x, _SCALARS) for x in (v.start, v.stop, v.step)):
        return ("slice", (v.start, v.stop, v.step))
    return None


def call_key(fn, args, kwargs, extra_modules=(), targets=None):
    """(key, objects, inputs): the guard key of calling `fn(*args, **kwargs)`, the objects the key
    names by id (a program keeps them alive, so no other object can later take the same id), and
    what a program takes from the call (its tensors and live objects, in order). `targets`:
    `code_targets(fn)`, where the caller keeps them."""
    modes = (state.grad_enabled, state.inference, get_default_dtype(), get_kernels())
    key = _modes_key.get(modes)
    if key is None:
        key = _modes_key[modes] = [("grad mode", modes[0]), ("inference mode", modes[1]),
                                   ("default dtype", str(modes[2])), ("kernels", modes[3])]
    key = key[:]
    objects = []
    modules = list(extra_modules)
    # which leaf is which: f(a=x, b=y) and f(b=y, a=x) flatten to the same shapes in another order
    if _has_container(args) or kwargs and _has_container(kwargs.values()):
        key.append(("the arguments' structure", _structure((args, kwargs))))
        leaves = flatten((args, kwargs), [])
    elif kwargs:  # (leaves only, so the keywords' order is the structure)
        key.append(("the arguments' structure", tuple(kwargs)))
        leaves = (*args, *kwargs.values())
    else:  # (the usual: the positional arguments are the leaves)
        leaves = args
    arrays = {}  # id of an input's memory -> its position, for aliasing inputs
    inputs = []
    for i, v in enumerate(leaves):
        label = _ARGUMENT[i] if i < len(_ARGUMENT) else f"argument {i}"
        if isinstance(v, Tensor):
            a = v.array
            base = a.base
            alias = arrays.setdefault(id(a if base is None else base), i)
            key.append((label, _tensor_guard(v, alias)))
            inputs.append(v)
            continue
        sc = _scalar_or_none(v)  # (before is_live: a number has no compile_guard to look up)
        if sc is not None:
            key.append((label, sc))
        elif isinstance(v, np.ndarray) or hasattr(v, "__cuda_array_interface__"):
            raise Unsupported(f"argument {i} is an array: pass a Tensor (minigrad.tensor(x)), so that its data is an "
                              "input of the compiled program rather than a constant")
        elif is_live(v):
            key.append((label, ("live", type(v).__name__, v.compile_guard())))
            inputs.append(v)
        else:
            key.append((label, ("object", type(v).__name__, id(v))))
            objects.append(v)
            if is_module(v):
                modules.append(v)
    # what the function reads besides its arguments: closure cells and the globals it names (of each
    # function a call runs first: through a partial, a decorator's wrapper, a callable object's __call__)
    for target, owner in targets if targets is not None else code_targets(fn):
        global_labels, names, cell_labels = _code_labels(target.__code__)
        if owner is not None:
            if is_module(owner):
                modules.append(owner)
            else:  # a method of a plain object: what it reads from self
                _free_value(key, objects, modules, "self", owner, names)
        if target.__closure__:
            for label, cell in zip(cell_labels, target.__closure__):
                try:
                    v = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                _free_value(key, objects, modules, label, v, names)
        if target.__defaults__ or target.__kwdefaults__:  # (read when the call leaves them out: `def f(x, log=[])`)
            for name, v in defaults(target):
                _free_value(key, objects, modules, f"the default of {name!r}", v, names)
        g = target.__globals__
        for name, label in global_labels:
            v = g.get(name, _MISSING)
            if v is not _MISSING:
                _free_value(key, objects, modules, label, v, names)
    seen = set()
    for m in modules:
        if id(m) not in seen:
            seen.add(id(m))
            walked, held, settings = _module_state(m)
            labels = _module_labels(m)
            key.append((labels[0], walked))
            if settings:
                key.append((labels[1], _settings(settings, objects)))
            objects.extend(held)
            objects.append(m)
    return tuple(key), objects, inputs


def defaults(fn):
    """(parameter name, default value) of each of the function's defaults, keyword-only ones too."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    out = list(zip(positional[len(positional) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
    return out + list((fn.__kwdefaults__ or {}).items())


def code_targets(fn):
    """[(function, its `self` or None)] for each Python function a call of `fn` enters with its own closure
    and globals: `fn` (a method's function), and through `functools.partial`, a decorator's wrapper
    (`__wrapped__`: `@no_grad()`, `functools.wraps`) and a callable object's `__call__`. (A compiled
    function finds them once: a guard runs at every call.)"""
    out, seen = [], set()
    while fn is not None and id(fn) not in seen and len(out) < 8:
        seen.add(id(fn))
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        target, owner = getattr(fn, "__func__", fn), getattr(fn, "__self__", None)
        if getattr(target, "__code__", None) is None and not isinstance(fn, type):
            # (a callable object: its class's __call__, on it)
            call = next((vars(k)["__call__"] for k in type(fn).__mro__ if "__call__" in vars(k)), None)
            if getattr(call, "__code__", None) is not None:
                target, owner = call, fn
        if getattr(target, "__code__", None) is not None:
            out.append((target, owner))
        fn = getattr(fn, "__wrapped__", None)
    return out


def _structure(obj):
    """The containers `flatten` walks, without their leaves: each list's and tuple's type and length, each
    dict's keys in order (a program takes its inputs in the order flatten gives them)."""
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(_structure(x) for x in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _structure(v)) for k, v in obj.items()))
    return None


_ARGUMENT = [f"argument {i}" for i in range(32)]  # (labels made once: a key is built at every call)
_modes_key = {}  # (grad mode, inference mode, default dtype, kernels) -> the key's first entries
_MISSING = object()
_labels = {}  # code object -> _code_labels'


def _code_labels(code):
    """((name, label) for each global the code reads, the names it uses, the label of each closure
    variable), its nested functions', comprehensions' and lambdas' included. The globals are the names
    it loads as globals, not `co_names` as a whole, which also holds attribute names (`.loss`, `.step`):
    a script's loop variable of such a name, rebound every iteration, would be guarded for nothing."""
    labels = _labels.get(code)
    if labels is None:
        if len(_labels) > 4096:
            _labels.clear()
        names = dict.fromkeys(_globals_read(code))
        labels = _labels[code] = (tuple((name, f"global {name!r}") for name in names), frozenset(_names_used(code)),
                                  tuple(f"closure variable {name!r}" for name in code.co_freevars))
    return labels


def _names_used(code):
    """Every name the code and its nested code use (globals and attributes: `co_names`)."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names_used(const)


def _globals_read(code):
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            yield ins.argval
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _globals_read(const)


_stores = {}  # code object -> (the globals it assigns, the closure variables it assigns)


def rebound_names(targets):
    """[(label, namespace, name, value now)] for each global (`global best; best = loss`) and closure
    variable (`nonlocal h; h = ...`) the function's code assigns: taken before and after a capture
    (`rebound`), as a replay would not assign them again."""
    out = []
    for target, _ in targets:
        code = target.__code__
        stores = _stores.get(code)
        if stores is None:
            found = [ins for ins in dis.get_instructions(code)
                     if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF")]
            stores = _stores[code] = (
                tuple(dict.fromkeys(i.argval for i in found if i.opname.endswith("GLOBAL"))),
                tuple(dict.fromkeys(i.argval for i in found if i.opname.endswith("DEREF") and i.argval in code.co_freevars)))
        globals_stored, cells_stored = stores
        for name in globals_stored:
            out.append((f"global {name!r}", target.__globals__, name, target.__globals__.get(name, _MISSING)))
        if cells_stored and target.__closure__:
            cells = dict(zip(code.co_freevars, target.__closure__))
            for name in cells_stored:
                out.append((f"closure variable {name!r}", cells[name], name, _cell_value(cells[name])))
    return out


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return _MISSING


def rebound(before):
    """The label of the first name of `rebound_names(...)` bound to another object now, or None."""
    for label, where, name, v in before:
        now = where.get(name, _MISSING) if isinstance(where, dict) else _cell_value(where)
        if now is not v:
            return label
    return None


def _free_value(key, objects, modules, label, v, names=()):
    """A value the function reads from outside: numbers are baked into the program (guarded by
    value), tensors by identity (the program reads the tensor it captured: a name bound to another
    one is another program), modules by their state. Anything else (a function, an optimizer, a
    config object, a list) by identity too: the program calls the functions and methods it captured
    (`opt.step` of the optimizer it saw, the loss function it ran), so a name bound to another object
    is another program. Of a list, tuple or dict, its items (`_items`); of a plain object (the `self` of
    a method, a config), the attributes the function's code names (`names`: `self.model`, `cfg.scale`)
    as the above."""
    kind = type(v)
    if kind in _SCALAR_TYPES:  # (the common kinds first, by exact type: a guard runs at every call)
        key.append((label, (kind.__name__, v)))
        return
    if kind in _OPAQUE_TYPES:  # a function, a class, a Python module, a partial: by identity
        key.append((label, ("object", kind.__name__, id(v))))
        objects.append(v)
        # a script's class of settings (`class cfg: scale = 1.0`): the attributes the code names (a library's
        # class, `Tensor` in `isinstance(x, Tensor)`, holds no settings)
        if kind is type and names and (v.__module__ or "").partition(".")[0] not in _LIBRARIES:
            d = v.__dict__
            for name in names:
                if name in d and name[:1] != "_":
                    _free_value(key, objects, modules, f"{label}.{name}", d[name])
        return
    if isinstance(v, Tensor):
        key.append((label, ("tensor", id(v))))
        objects.append(v)
        return
    sc = _scalar_or_none(v)
    if sc is not None:
        key.append((label, sc))
        return
    if is_module(v):
        modules.append(v)
        return
    key.append((label, ("object", type(v).__name__, id(v))))
    objects.append(v)
    if isinstance(v, _READ_CONTAINERS):  # (their subclasses too: an optimizer's `state`, a namedtuple, a deque)
        key.append((f"{label}'s items", _items(v, objects, modules, 2)))
    elif names and not isinstance(v, _NOT_PLAIN):
        d = getattr(v, "__dict__", None)
        if d:
            for name in _plain_names(kind, names):
                if name in d:
                    _free_value(key, objects, modules, f"{label}.{name}", d[name])


_plain_names_of = {}  # (class, names) -> _plain_names'


def _plain_names(cls, names):
    """The attributes guarded on a plain object: those the function's code names, and, of a script's own class
    (none of the library's among its bases), those its methods named there read (`opt.step()` of an optimizer
    written from scratch reads `self.lr`: a replay would run the step's ops with the lr it captured; an
    nn.optim.Optimizer's step is a call of its own, which reads the live lr). One level deep."""
    out = _plain_names_of.get((cls, names))
    if out is None:
        out = set(names)
        if all((k.__module__ or "").partition(".")[0] not in _LIBRARIES for k in cls.__mro__[:-1]):
            for name in names:
                fn = next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), None)
                if isinstance(fn, types.FunctionType):
                    out.update(_names_used(fn.__code__))
        if len(_plain_names_of) > 4096:
            _plain_names_of.clear()
        out = _plain_names_of[(cls, names)] = frozenset(out)
    return out


def _items(v, objects, modules, depth):
    """What a program assumes about the items of a list, tuple or dict the function reads (`state["h"]`,
    `params[0]`): which tensor each is (a replay reads the tensor it captured: a hidden state carried
    from call to call in a dict is another tensor each call, so another program), the state of each
    module (guarded with the modules), the same of nested containers down to `depth`, and each number,
    string or flag by type and value (a forward that reads `cfg["scale"]` bakes it into the program, as
    an argument's; a function that changes one itself, a counter, runs eagerly: `container_states`)."""
    out = [(_LENGTH, "value", "int", len(v))]  # (`history[-5:]` past the first items: its length says it grew)
    for k, x in itertools.islice(v.items() if isinstance(v, dict) else enumerate(v), _CONTAINER_ITEMS):
        if isinstance(k, Tensor):  # (a key that is a tensor, the parameter of an optimizer's state: by identity)
            k = ("tensor", id(k))
        if type(x) in _SCALAR_TYPES:
            out.append((k, "value", type(x).__name__, x))  # (2, 2.0 and True differ)
        elif isinstance(x, Tensor):
            out.append((k, id(x)))
            objects.append(x)
        elif is_module(x):
            modules.append(x)
        elif isinstance(x, _READ_CONTAINERS) and depth > 1:
            objects.append(x)
            out.append((k, id(x), _items(x, objects, modules, depth - 1)))
    return tuple(out)


_READ_CONTAINERS = (list, tuple, dict, deque)  # (and their subclasses) the containers whose items are guarded
_CHANGING = (list, dict, deque)  # those whose changes during a capture are looked for (container_states)
_CONTAINER_ITEMS = 64  # the items of a list, tuple or dict looked at (a guard runs at every call)
_LENGTH = "len()"  # (`_items`' entry for the container's length)
_LIBRARIES = frozenset(("minigrad", "nn", "gpt", "builtins", "numpy", "collections", "typing"))


def container_states(objects):
    """The lists and dicts a call reads, as they are: those among `objects` (its closure's, its globals',
    `self`'s, a module's settings) and those kept as the modules' attributes (`self.maps = []`), each with
    a label or None, its length, and the numbers, strings and flags among its first items by value, the
    other items by identity. Taken before and after a capture: a call that changes them (a step counter
    `n[0] += 1` read by `if n[0] % 4 == 0`, a log appended to, a hidden state kept in `state["h"]`) did what
    a replay would not redo, so that later calls would replay the capture's decision and skip the change."""
    out, seen = [], set()
    for o in objects:  # (the modules' first: their attributes' labels say where a change was)
        if is_module(o) and hasattr(o, "_modules"):
            for path, sub in o.named_modules():
                for attr, v in vars(sub).items():
                    if isinstance(v, _CHANGING) and attr[:1] != "_" and id(v) not in seen:
                        seen.add(id(v))
                        where = f"{path}.{attr}" if path else attr
                        out.append(_container_state(v, f"{type(o).__name__}.{where}"))
    for o in objects:
        if isinstance(o, _CHANGING) and id(o) not in seen:
            seen.add(id(o))
            out.append(_container_state(o, None))
    return out


def _container_state(o, label):
    items = tuple(itertools.islice(o.items() if isinstance(o, dict) else enumerate(o), _CONTAINER_ITEMS))
    seen = tuple((k, x if type(x) in _SCALAR_TYPES else ("object", id(x))) for k, x in items)
    return o, label, len(o), seen, items  # (the items held, so that no new object takes an id)


def argument_containers(args, kwargs):
    """`container_states` of the lists and dicts among a call's arguments (nested ones too), labelled by
    argument. Their structure is guarded, not what the call does to them: a function that appends to a
    list it is given, or fills a dict (`out["loss"] = loss`), gives the caller what a replay would not."""
    out = []

    def walk(v, label):
        if isinstance(v, (list, tuple, dict)):
            if isinstance(v, _CHANGING):
                out.append(_container_state(v, label))
            for x in (v.values() if isinstance(v, dict) else v):
                walk(x, f"an item of {label}")

    for i, v in enumerate(args):
        walk(v, f"argument {i}")
    for k, v in kwargs.items():
        walk(v, f"argument {k!r}")
    return out


def changed_container(before, grown=False):
    """(the first list or dict of `container_states(...)` whose length or items differ now, its label),
    or None. A dict may gain keys: a cache filled on first use (`masks[T] = ...`) is another program's
    guard at the next call (its items are guarded), not a change a replay would miss; `grown`: a dict
    that gained keys counts too (an argument's: the next call passes a new one)."""
    for o, label, n, seen, _ in before:
        _, _, n_now, seen_now, _ = _container_state(o, label)
        if isinstance(o, dict) and not grown:
            now = dict(seen_now)
            if len(now) < len(seen) or any(now.get(k, _MISSING) != v for k, v in seen):
                return o, label
        elif (n_now, seen_now) != (n, seen):
            return o, label
    return None


_NOT_PLAIN = (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType,
              functools.partial)
_OPAQUE_TYPES = frozenset(_NOT_PLAIN)  # (_free_value's test by exact type: by identity, nothing in them guarded)


def explain(new, old):
    """One line: the first thing that differs between a call's key and a cached program's."""
    old_map = dict(old)
    for label, value in new:
        if label not in old_map:
            return f"{label} is new"
        if old_map[label] != value:
            if label.startswith("module"):
                return f"{label}: {_module_change(old_map[label], value)}"
            if type(value) is tuple and value[:1] == ("tensor",):
                return f"{label} is another tensor"
            if type(value) is tuple and value[:1] == ("object",):
                return f"{label} is another {value[1]}"
            if label == "the arguments' structure":
                return "the arguments' structure changed (the keywords' order, a dict's keys, a list's length)"
            if label.endswith("'s items"):
                return _items_change(label[:-8], old_map[label], value)
            if label.startswith("settings of "):
                was = {name: (v, t) for labels, values, types_ in old_map[label]
                       for name, v, t in zip(labels, values, types_)}
                for labels, values, types_ in value:
                    for name, v, t in zip(labels, values, types_):
                        if was.get(name, (_MISSING, None)) != (v, t):
                            before = was.get(name, ("(new)",))[0]
                            if type(v) is tuple and v[:1] == ("tensor",):
                                return f"setting {name!r} is another tensor"
                            return f"setting {name!r} changed: {before!r} -> {v!r}"
            return f"{label} changed: {_show(label, old_map[label])} -> {_show(label, value)}"
    return "the call differs from the captured one"


def _items_change(label, old, new):
    """What differs between two `_items` of a list or dict, in words."""
    was = {entry[0]: entry for entry in old}
    for entry in new:
        before = was.get(entry[0])
        if before == entry:
            continue
        if len(entry) == 4 and entry[1] == "value":
            shown = repr(before[3]) if before is not None and len(before) == 4 else "(new)"
            what = "its length" if entry[0] is _LENGTH else f"item {entry[0]!r}"
            return f"{label}: {what} changed: {shown} -> {entry[3]!r}"
        if len(entry) == 3 and before is not None and len(before) == 3 and before[1] == entry[1]:
            return _items_change(f"{label}[{entry[0]!r}]", before[2], entry[2])  # (the same list or dict, within)
    return f"{label} holds other tensors"


def _module_change(old, new):
    """What differs between two `_module_state`s, in words."""
    (old_training, old_params, old_bufs, old_values), (training, params, bufs, values) = old, new
    if old_training != training:
        return f"training flags changed: {old_training} -> {training}"
    if old_params != params:
        return "a parameter was replaced, added or removed"
    if old_bufs != bufs:
        return "a buffer was replaced, added or removed"
    (old_paths, old_values), (paths, values) = old_values, values
    before = {(old_paths[i], attr): (kind, v) for i, attr, kind, v in old_values}
    for i, attr, kind, v in values:
        name = f"{paths[i]}.{attr}" if paths[i] else attr
        was = before.get((paths[i], attr))
        if kind == "hooks" and was != (kind, v):
            return f"a hook was registered or removed ({name!r})"
        if was is None:
            return f"attribute {name!r} is new"
        if was != (kind, v):
            if kind is Tensor or was[0] is Tensor:
                return f"attribute {name!r} is another object"
            return f"attribute {name!r} changed: {was[1]!r} -> {v!r}"
    return "an attribute was removed"


def _show(label, v):
    if label.startswith("argument") and isinstance(v, tuple) and len(v) == 7:
        shape, dtype, device, rg, contiguous, hooked, alias = v
        same = "" if alias == int(label.split()[1]) else f", the same memory as argument {alias}"
        layout = ("" if contiguous else ", not contiguous") + (", with hooks" if hooked else "")
        return (f"Tensor(shape={list(shape)}, dtype={np.dtype(dtype).name}, device={device}, requires_grad={rg}"
                f"{layout}{same})")
    return repr(v[1] if isinstance(v, tuple) and len(v) == 2 else v)
