"""What `minigrad.compile(module)` returns for an nn.Module: PyTorch's `OptimizedModule`.

A Module of its own that holds the compiled module as its child `_orig_mod`, so that, as PyTorch's:
it nests in a Sequential or a ModuleList (compiling each block of a model), `train()`, `to()` and
the like return the wrapper, and its `state_dict()` keys start with `_orig_mod.` (nanoGPT strips
that prefix when it loads a compiled model's checkpoint into a plain one). Its calls go through
`minigrad.compile` of `_orig_mod`'s calls; an attribute the wrapper does not have is `_orig_mod`'s, and
setting one sets `_orig_mod`'s (`compiled.scale = 2.0`, `compiled.head = nn.Linear(...)`: the model the
calls run changes, as PyTorch's wrapper does).
"""
from minigrad.compiler import CompiledFunction

from .module import Module


class OptimizedModule(Module):
    _OWN = frozenset(("_orig_mod", "_compiled", "forward", "training"))  # set on the wrapper itself

    def __init__(self, mod, fullgraph=False):
        super().__init__()
        self._orig_mod = mod
        # the guard walks mod's state: its train/eval, parameters and attributes
        self._compiled = CompiledFunction(mod.__call__, fullgraph, modules=(mod,))
        self._compiled.name = type(mod).__name__  # (its warnings name the module, not Module.__call__)

    def __getstate__(self):
        """A pickle (`torch.save(compiled_model)`) or a copy holds the module and the compile's settings, not
        its programs: the copy captures anew, for its own parameters (`_compiled` is made again on first use)."""
        state = dict(self.__dict__)
        c = state.pop("_compiled", None)
        if c is not None:
            state["_compiled_settings"] = (c.fullgraph, c.warn, c.cache_size_limit, c.name, c.eager)
        return state

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_compiled" and "_compiled_settings" in self.__dict__:  # (a loaded pickle, a copy)
                fullgraph, warn, limit, label, *eager = self.__dict__.pop("_compiled_settings")
                compiled = CompiledFunction(self._orig_mod.__call__, fullgraph, modules=(self._orig_mod,))
                compiled.warn, compiled.cache_size_limit, compiled.name = warn, limit, label
                compiled.eager = bool(eager and eager[0])  # (a pickle from before the backend was kept: False)
                object.__setattr__(self, "_compiled", compiled)
                return compiled
            if name == "_orig_mod":  # (not there yet: before __init__ set it)
                raise
            return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        d = self.__dict__
        if name in self._OWN or name in d or "_orig_mod" not in d or hasattr(type(self), name):
            super().__setattr__(name, value)
            if name == "training" and "_orig_mod" in d:  # (`compiled.training = False`: the module's flag too)
                self._orig_mod.training = value
        else:
            setattr(self._orig_mod, name, value)
