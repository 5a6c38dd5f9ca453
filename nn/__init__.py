"""minigrad.nn's counterpart: neural-network building blocks (modules, functional ops, optimizers) on minigrad.

    import nn
    import nn.functional as F
    from nn.optim import AdamW

`nn.Module` and the layers mirror `torch.nn`; `nn.optim` mirrors `torch.optim`; `nn.save` /
`nn.load` write and read checkpoints as safetensors files (no pickle, so loading runs no code).
"""
from . import functional, init, optim, utils
from .module import Module
from .modules import GELU, Dropout, Embedding, Identity, LayerNorm, Linear, ModuleDict, ModuleList, ReLU, Sequential, Tanh
from .parameter import Parameter
from .serialization import CheckpointError, load, save

__all__ = [
    "Module", "Parameter", "Linear", "Embedding", "LayerNorm", "Dropout", "GELU", "ReLU", "Tanh", "Identity",
    "Sequential", "ModuleList", "ModuleDict", "functional", "init", "optim", "utils", "save", "load",
    "CheckpointError",
]

from .modules import (  # noqa: E402
    CELU, ELU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU, Softmin, Softplus,
    Softsign,
)

__all__ += [
    "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus",
    "Softsign",
    "LogSigmoid", "Softmin",
]
from .modules import (  # noqa: E402
    AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, Conv2d, Flatten, MaxPool2d,
)

__all__ += ["Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "Flatten"]
from .modules import (  # noqa: E402
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
)

__all__ += ["CrossEntropyLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
            "KLDivLoss"]
