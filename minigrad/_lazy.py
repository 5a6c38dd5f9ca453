"""Names a package binds on first use: the one way minigrad and nn defer the import of what a script may never use.

A package lists, for each such name, the submodule that defines it (`None`: the name is that submodule itself),
and sets `__getattr__ = lazy.attach(__name__, NAMES)`. The first read of a name (`nn.Conv2d`, `from nn import
Conv2d`, `F.conv2d`) imports its submodule and binds the name in the package, so later reads are plain attribute
reads. `import nn.modules.conv` works as for any submodule. What a training step needs stays imported eagerly:
the rest (convolutions, recurrent layers, the other optimizers, the compiler, ...) costs a script nothing until
it is used (docs/performance.md, "The first step's imports").
"""
import importlib
import sys


def attach(package, names, fallback=None):
    """A module `__getattr__` for the package named `package`: `names` maps a name to the submodule defining it,
    relative to the package ('.modules.conv'), or to None where the name is the submodule '.name'; any other
    name goes to `fallback(name)` where given, else is an AttributeError."""

    def __getattr__(name):
        if name in names:
            where = names[name]
            module = importlib.import_module(where or f".{name}", package)
            value = module if where is None else getattr(module, name)
            setattr(sys.modules[package], name, value)
            return value
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def names_of(table):
    """{name: submodule} from {submodule: (name, ...)}, the form a package writes its table in."""
    return {name: where for where, names in table.items() for name in names}
