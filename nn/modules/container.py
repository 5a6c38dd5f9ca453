"""Containers: Sequential (a pipeline), ModuleList and ModuleDict (registered collections of modules),
ParameterList and ParameterDict (of parameters)."""
import operator
import warnings
from collections import OrderedDict
from collections.abc import Mapping

from minigrad import Tensor

from ..module import Module, _indent, _typename
from ..parameter import Parameter


class Sequential(Module):
    """Modules applied one after the other: Sequential(a, b)(x) = b(a(x)).

    Build it from modules (named '0', '1', ...) or from an OrderedDict of name -> module.
    Shape: whatever the first module takes -> whatever the last one returns.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self))]]):
            del self._modules[key]
        # renumber, so that indices and names keep agreeing (as PyTorch does)
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        """Add each of `sequential`'s modules at the end; returns self."""
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index, module):
        """Put `module` before position `index` (-len <= index <= len); returns self."""
        if not isinstance(module, Module):
            # (PyTorch prints the class as str() does; minigrad's Module lives in nn/module.py)
            raise AssertionError("module should be of type: <class 'minigrad.nn.modules.module.Module'>")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index, module)  # (a negative index counts from the end: before items[index], as PyTorch's)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def pop(self, key):
        """Remove the module (or slice of them) at `key` and return it."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other):
        return Sequential(*self, *_sequential_operand(other))

    def __iadd__(self, other):
        return self.extend(_sequential_operand(other))

    def __mul__(self, other):
        return Sequential(*(list(self) * _factor(self, other)))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        return self.extend(list(self) * (_factor(self, other) - 1))


def _sequential_operand(other):
    if not isinstance(other, Sequential):
        raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
    return other


def _factor(seq, other):
    if not isinstance(other, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(seq)} and {type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(seq)}")
    return other


def _index(idx, n):
    """A valid position in [0, n) for an int index (negative counts from the end), or IndexError."""
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class ModuleList(Module):
    """A list of modules, registered so the parent sees their parameters. Index it like a list."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        items = list(self._modules.values())
        del items[idx if isinstance(idx, slice) else _index(idx, len(self))]
        self._modules.clear()
        self.extend(items)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList([*self, *other])

    def pop(self, key):
        """Remove the module (or slice of them) at `key` and return it."""
        v = self[key]
        del self[key]
        return v

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Add each of `modules` at the end; returns self."""
        if not hasattr(modules, "__iter__"):  # nn.ModuleList(layer) for nn.ModuleList([layer])
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert `module` before position `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)

    def __repr__(self):
        # PyTorch's compact form: runs of identical entries print once, as "(0-11): 12 x Block(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_indent(f"({s}): {r}" if s == e else f"({s}-{e}): {e - s + 1} x {r}", 2) for s, e, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of name -> module, registered so the parent sees their parameters."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        """Remove `key` and return its module."""
        m = self[key]
        del self[key]
        return m

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        """Add (or replace) entries from a mapping or an iterable of (name, module) pairs."""
        if not hasattr(modules, "__iter__"):
            raise TypeError(f"ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(modules).__name__}")
        if hasattr(modules, "items"):
            for key, module in modules.items():
                self[key] = module
            return
        for i, pair in enumerate(modules):  # (PyTorch's words for an entry that is no (name, module) pair)
            if not hasattr(pair, "__iter__"):
                raise TypeError(f"ModuleDict update sequence element #{i} should be Iterable; is{type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{i} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


def _as_parameter(value):
    # PyTorch's containers wrap a plain tensor they are given as a Parameter (it is learned)
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(value, Parameter) else value


class ParameterList(Module):
    """A list of Parameters, registered so the parent sees them (named '0', '1', ...). Plain tensors
    put in it become Parameters, as in PyTorch."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._parameters.values())[idx])
        return self._parameters[str(_index(idx, len(self)))]

    def __setitem__(self, idx, param):
        self.register_parameter(str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        """Add `value` at the end; returns self."""
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        """Add each of `values` at the end; returns self."""
        if not hasattr(values, "__iter__") or isinstance(values, Tensor):  # (a tensor is never unpacked)
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({i}): " + _describe(p, p.dtype if isinstance(p, Tensor) else None)
                          for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of Parameters, registered under their keys. Plain tensors put in it become Parameters."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if _key(key) not in self._parameters:  # (PyTorch reads an entry as an attribute)
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(_key(key), _as_parameter(value))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        v = self[key]
        del self._parameters[key]
        return v

    def popitem(self):
        return self._parameters.popitem()

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        self._parameters.clear()

    def copy(self):
        return ParameterDict(OrderedDict(self.items()))  # (an OrderedDict keeps the order: a dict's is sorted)

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()  # (a dict on the left stays a dict, as in PyTorch)
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

    def update(self, parameters):
        """Add (key, value) pairs from a mapping or an iterable of pairs (a plain dict's in key order,
        as PyTorch adds them)."""
        if not hasattr(parameters, "__iter__"):
            raise TypeError(f"ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = parameters.items()
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = parameters
        for i, pair in enumerate(pairs):
            if not hasattr(pair, "__iter__"):
                raise TypeError(f"ParameterDict update sequence element #{i} should be Iterable; is{type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ParameterDict update sequence element #{i} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def extra_repr(self):
        return "\n".join(f"  ({k}): " + _describe(p, _typename(p)) for k, p in self.items())
        # (PyTorch's two reprs name the dtype in two ways)


def _key(key):
    if not isinstance(key, str):
        raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                        f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
    return key


def _describe(p, dtype_name):
    """`Parameter containing: [float32 of size 2x3]` (and ` (cuda:0)` off the CPU), or what else the entry is (None):
    how PyTorch's parameter containers describe an entry."""
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    size = "x".join(map(str, p.shape))
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{dtype_name} of size {size if p.device.type == 'cpu' else f'{size} ({p.device})'}]"


class Container(Module):
    """PyTorch's deprecated holder of named submodules, Container(name=module, ...): nn.Module does it all."""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
