"""Optimizers and learning-rate schedules, as `torch.optim`."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LBFGS", "lr_scheduler"]
