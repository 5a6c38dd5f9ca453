"""PyTorch's module paths onto the project's packages: `minigrad.nn` is the top-level `nn`, `minigrad.optim`
is `nn.optim`, `minigrad.nn.modules.linear` is `nn.modules.linear`, and so on below them; a few paths whose names
live in a module of another name here (RENAMES: `minigrad.optim.adamw` is `nn.optim.adam`).

The engine sits below nn and must not import it, so nothing is bound at import time. A finder at the head
of `sys.meta_path` answers for the aliased names only: its loader imports the real module and hands back
that very object, which the import system then registers under the alias too (`sys.modules` holds one
module under two names, never a second copy). `minigrad.__getattr__` covers `minigrad.nn` after a bare
`import minigrad`. Every spelling works the same way:

    import minigrad.nn as nn                   from minigrad import nn
    import minigrad.nn.functional as F         from minigrad.nn import functional as F
    from minigrad.nn.modules.linear import Linear
    from minigrad.optim.lr_scheduler import StepLR
"""
import importlib
import importlib.util
import sys

# alias prefix -> the real package; the names below a prefix map one to one
PREFIXES = {"minigrad.nn": "nn", "minigrad.optim": "nn.optim"}
# PyTorch paths whose names live in another module here (torch/nn/modules/module.py is nn/module.py, torch.optim.adamw's
# AdamW is in nn/optim/adam.py): the alias is that module. (Not nn.utils.weight_norm and spectral_norm: importing the
# alias would bind the module over nn.utils' function of the same name.)
RENAMES = {
    "minigrad.nn.modules.module": "nn.module", "minigrad.nn.modules.channelshuffle": "nn.modules.pixelshuffle",
    "minigrad.nn.utils.clip_grad": "nn.utils", "minigrad.nn.utils.convert_parameters": "nn.utils",
    "minigrad.optim.adamw": "nn.optim.adam",
    "minigrad.autograd.profiler": "minigrad.profiler", "minigrad.autograd.profiler_util": "minigrad.profiler",
    "minigrad._dynamo.eval_frame": "nn.optimized_module",
}


def real_name(fullname):
    """The project's module behind an aliased name, or None for every other name."""
    if fullname in RENAMES:
        return RENAMES[fullname]
    for alias, real in PREFIXES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias):]
    return None


# The finder and loader are plain classes: the import system asks only for their methods, and
# importlib.abc's base classes would cost every `import minigrad` importlib.resources (~10 ms).
class AliasLoader:
    """Loads an alias by importing the real module and returning it as it is."""

    def __init__(self, real):
        self.real = real
        self.real_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.real)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system stamped the alias's spec on the module; it keeps its own (its name, its files)
        module.__spec__ = self.real_spec


class AliasFinder:
    """Finds the aliased names (first on sys.meta_path, so that `minigrad.nn.functional` is never found
    again as a file under nn's path and loaded a second time)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("minigrad."):
            return None
        real = real_name(fullname)
        if real is None or importlib.util.find_spec(real) is None:  # (then the error names the alias)
            return None
        return importlib.util.spec_from_loader(fullname, AliasLoader(real))


def install():
    """Put the finder first on sys.meta_path, once per process."""
    if not any(type(f).__name__ == "AliasFinder" and type(f).__module__ == __name__ for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
