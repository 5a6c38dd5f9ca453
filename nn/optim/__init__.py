"""Optimizers and learning-rate schedules, as `torch.optim`."""
from . import lr_scheduler
from ._adafactor import Adafactor
from ._muon import Muon
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from . import swa_utils  # (after the optimizers: it builds on lr_scheduler and nn.Module)

Adafactor.__module__ = Muon.__module__ = __name__  # (PyTorch's: their modules are private)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "SparseAdam", "Adafactor", "Muon", "lr_scheduler",
           "swa_utils"]
