"""The layers, one file per idea."""
from .activation import GELU, ReLU, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .normalization import LayerNorm
from .sparse import Embedding
from .activation import (  # noqa: E402
    CELU, ELU, SELU, Hardsigmoid, Hardswish, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU, Softmin, Softplus, Softsign,
)
