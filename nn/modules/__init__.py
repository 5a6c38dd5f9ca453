"""The layers, one file per idea.

The GPT's and an MLP's layers (and the rest of their files) are imported with the package; the other files
on first use of one of their names (minigrad/_lazy.py): `nn.modules.Conv2d` and `import nn.modules.conv` work as ever.
"""
from minigrad import _lazy

from .activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
    MultiheadAttention, PReLU, ReLU, ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus,
    Softshrink, Softsign, Tanh, Tanhshrink, Threshold,
)
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401

# the other files' names, each file imported at the first read of one of them
LAZY = _lazy.names_of({
    ".batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"),
    ".conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"),
    ".pooling": (
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
        "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
        "MaxUnpool3d"
    ),
    ".rnn": ("GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"),
    ".loss": (
        "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "CTCLoss", "GaussianNLLLoss",
        "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "LinearCrossEntropyLoss", "MarginRankingLoss",
        "MSELoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "NLLLoss2d",
        "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss"
    ),
    ".transformer": (
        "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
        "TransformerEncoderLayer"
    ),
    ".distance": ("CosineSimilarity", "PairwiseDistance"),
    ".instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"),
    ".fold": ("Fold", "Unfold"),
    ".pixelshuffle": ("ChannelShuffle", "PixelShuffle", "PixelUnshuffle"),
    ".upsampling": ("Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"),
    ".padding": (
        "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
        "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
        "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"
    ),
    ".lazy": (
        "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
        "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
        "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "LazyModuleMixin"
    ),
    ".adaptive": ("AdaptiveLogSoftmaxWithLoss",),
})
# and the files themselves, which PyTorch binds at import (`nn.modules.rnn.LSTM`, `nn.modules.conv`)
_FILES = sorted({where[1:] for where in LAZY.values()} | {"utils"})
__getattr__ = _lazy.attach(__name__, {**LAZY, **dict.fromkeys(_FILES)})

# `from nn.modules import *`: every layer, the deferred ones imported then (torch.nn.modules.__all__'s names: not
# the mixin or the quantization alias)
__all__ = sorted(({name for name, value in globals().items() if isinstance(value, type)} | set(LAZY))
                 - {"LazyModuleMixin", "NonDynamicallyQuantizableLinear"})


def __dir__():
    return sorted(set(globals()) | set(LAZY) | set(_FILES))
