"""minigrad.nn's counterpart: neural-network building blocks (modules, functional ops, optimizers) on minigrad.

    import nn
    import nn.functional as F
    from nn.optim import AdamW

`nn.Module` and the layers mirror `torch.nn`; `nn.optim` mirrors `torch.optim`; `nn.save` /
`nn.load` write and read checkpoints as safetensors files (no pickle, so loading runs no code).
"""
from minigrad import _lazy

from . import functional, init, modules, optim, utils
from .module import Module
# the layers of a GPT or an MLP, and the others of their files; every other layer is imported at its first use
# (nn.Conv2d, `from nn import LSTM`: minigrad/_lazy.py), from the table in nn/modules/__init__.py
from .modules import (  # noqa: F401
    CELU, ELU, GELU, GLU, SELU, AlphaDropout, Bilinear, Container, CrossMapLRN2d, Dropout, Dropout1d, Dropout2d,
    Dropout3d, Embedding, EmbeddingBag, FeatureAlphaDropout, Flatten, GroupNorm, Hardshrink, Hardsigmoid, Hardswish,
    Hardtanh, Identity, LayerNorm, LeakyReLU, Linear, LocalResponseNorm, LogSigmoid, LogSoftmax, Mish, ModuleDict,
    ModuleList, MultiheadAttention, ParameterDict, ParameterList, PReLU, ReLU, ReLU6, RMSNorm, RReLU, Sequential,
    Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold, Unflatten,
)
from .parameter import Buffer, Parameter

__all__ = [
    "Module", "Parameter", "Linear", "Embedding", "LayerNorm", "Dropout", "GELU", "ReLU", "Tanh", "Identity",
    "Sequential", "ModuleList", "ModuleDict", "functional", "init", "optim", "utils", "save", "load",
    "CheckpointError",
]

# the layers beyond the GPT's: more activations, convolution, pooling, batch norm, the loss modules
__all__ += [
    "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus",
    "Softsign", "LogSigmoid", "Softmin", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "Flatten", "CrossEntropyLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "NLLLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
    "LSTMCell", "GRUCell",
]

# attention and the Transformer (torch.nn.modules.activation's MultiheadAttention, torch.nn.modules.transformer)
__all__ += [
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

# the modules of the functional ops in nn/_functional/composed*.py
__all__ += [
    "Sigmoid", "Softmax", "LogSoftmax", "Softmax2d", "GLU", "Hardshrink", "Softshrink", "Tanhshrink", "Threshold",
    "RReLU", "PReLU", "CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Unflatten", "MaxPool1d",
    "AvgPool1d", "AdaptiveAvgPool1d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm", "RMSNorm",
    "Bilinear", "HuberLoss", "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
    "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
]


__all__ += ["ParameterList", "ParameterDict"]

# transposed convolutions, adaptive max pooling and the Upsample modules
__all__ += [
    "ConvTranspose1d", "ConvTranspose2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d",
]

# the padding modules (F.pad with fixed amounts and mode) and the triplet loss of any distance
__all__ += [
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "TripletMarginWithDistanceLoss",
]

# bags of embeddings
__all__ += ["EmbeddingBag"]

# sliding blocks, LP pooling, local response normalization
__all__ += ["Fold", "Unfold", "LPPool1d", "LPPool2d", "LocalResponseNorm"]

# lazy modules: the input size read from the first input
from .parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402
__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyBatchNorm1d",
            "LazyBatchNorm2d", "UninitializedParameter", "UninitializedBuffer"]


# the 3-d family, max unpooling, the lazy instance norms, SyncBatchNorm and NLLLoss2d (NLLLoss's old name)
__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
            "BatchNorm3d", "LPPool3d", "LazyConv3d", "LazyConvTranspose3d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "NLLLoss2d",
            "SyncBatchNorm"]

__all__ += ["Buffer", "DataParallel"]

# sequence losses: CTC; the adaptive softmax of large vocabularies
__all__ += ["CTCLoss", "AdaptiveLogSoftmaxWithLoss", "MultiLabelMarginLoss"]

# PyTorch 2.13's: fractional max pooling, the legacy CrossMapLRN2d and Container, the fused linear + cross entropy
__all__ += ["Container", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LinearCrossEntropyLoss"]


# on first use: the layers beyond the ones above; nn.save, nn.load and CheckpointError (nn/serialization.py: safetensors
# and minigrad's checkpoint code, which a script that saves nothing never needs); nn.parallel and DataParallel, and
# the submodules PyTorch binds at import (attention, common_types)
__getattr__ = _lazy.attach(__name__, {
    **{name: ".modules" + where for name, where in modules.LAZY.items() if name in __all__},
    **_lazy.names_of({".serialization": ("save", "load", "CheckpointError"), ".parallel": ("DataParallel",),
                      None: ("parallel", "attention", "common_types")}),
})


def __dir__():
    return sorted(set(globals()) | set(__all__))
