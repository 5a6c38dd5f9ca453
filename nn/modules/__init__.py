"""The layers, one file per idea."""
from .activation import GELU, ReLU, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .normalization import LayerNorm
from .sparse import Embedding
from .activation import (  # noqa: E402
    CELU, ELU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU, Softmin, Softplus,
    Softsign,
)
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: E402
from .conv import Conv1d, Conv2d  # noqa: E402
from .flatten import Flatten  # noqa: E402
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: E402
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402
from .loss import (  # noqa: E402
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
)
from .activation import MultiheadAttention  # noqa: E402
from .linear import NonDynamicallyQuantizableLinear  # noqa: E402
from .transformer import (  # noqa: E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
