"""Optimizers and learning-rate schedules, as `torch.optim`.

Optimizer, SGD, Adam and AdamW are imported with the package; the others, `lr_scheduler` and `swa_utils`
on first use (minigrad/_lazy.py): `nn.optim.RMSprop`, `from nn.optim import LBFGS` and
`import nn.optim.lr_scheduler` work as ever.
"""
from minigrad import _lazy

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "SparseAdam", "Adafactor", "Muon", "lr_scheduler",
           "swa_utils"]

__getattr__ = _lazy.attach(__name__, _lazy.names_of({
    "._adafactor": ("Adafactor",), "._muon": ("Muon",), ".adadelta": ("Adadelta",), ".adagrad": ("Adagrad",),
    ".adamax": ("Adamax",), ".asgd": ("ASGD",), ".lbfgs": ("LBFGS",), ".nadam": ("NAdam",), ".radam": ("RAdam",),
    ".rmsprop": ("RMSprop",), ".rprop": ("Rprop",), ".sparse_adam": ("SparseAdam",),
    None: ("lr_scheduler", "swa_utils"),
}))


def __dir__():
    return sorted(set(globals()) | set(__all__))
