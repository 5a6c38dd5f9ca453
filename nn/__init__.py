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
from .parameter import Buffer, Parameter

__all__ = [
    "Module", "Parameter", "Linear", "Embedding", "LayerNorm", "Dropout", "GELU", "ReLU", "Tanh", "Identity",
    "Sequential", "ModuleList", "ModuleDict", "functional", "init", "optim", "utils", "save", "load",
    "CheckpointError",
]

# the layers beyond the GPT's: more activations, convolution, pooling, batch norm, the loss modules
from .modules import (  # noqa: E402
    CELU, ELU, SELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss, Conv1d,
    Conv2d, CrossEntropyLoss, Flatten, Hardsigmoid, Hardswish, Hardtanh, KLDivLoss, L1Loss, LeakyReLU, LogSigmoid,
    MaxPool2d, Mish, MSELoss, NLLLoss, ReLU6, SiLU, SmoothL1Loss, Softmin, Softplus, Softsign,
)
from .modules import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += [
    "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus",
    "Softsign", "LogSigmoid", "Softmin", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "Flatten", "CrossEntropyLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "NLLLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
    "LSTMCell", "GRUCell",
]

# attention and the Transformer (torch.nn.modules.activation's MultiheadAttention, torch.nn.modules.transformer)
from .modules import (  # noqa: E402
    MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += [
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

# the modules of the functional ops in nn/_functional/composed*.py
from .modules import (  # noqa: E402
    GLU, AdaptiveAvgPool1d, AlphaDropout, AvgPool1d, Bilinear, ChannelShuffle, CosineEmbeddingLoss, CosineSimilarity,
    Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout, GaussianNLLLoss, GroupNorm, Hardshrink, HingeEmbeddingLoss,
    HuberLoss, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LogSoftmax, MarginRankingLoss, MaxPool1d,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PairwiseDistance, PixelShuffle, PixelUnshuffle, PoissonNLLLoss, PReLU,
    RMSNorm, RReLU, Sigmoid, Softmax, Softmax2d, SoftMarginLoss, Softshrink, Tanhshrink, Threshold, TripletMarginLoss,
    Unflatten,
)

__all__ += [
    "Sigmoid", "Softmax", "LogSoftmax", "Softmax2d", "GLU", "Hardshrink", "Softshrink", "Tanhshrink", "Threshold",
    "RReLU", "PReLU", "CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Unflatten", "MaxPool1d",
    "AvgPool1d", "AdaptiveAvgPool1d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm", "RMSNorm",
    "Bilinear", "HuberLoss", "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
    "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
]

from .modules import ParameterDict, ParameterList  # noqa: E402

__all__ += ["ParameterList", "ParameterDict"]

# transposed convolutions, adaptive max pooling and the Upsample modules
from .modules import (  # noqa: E402
    AdaptiveMaxPool1d, AdaptiveMaxPool2d, ConvTranspose1d, ConvTranspose2d, Upsample, UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ += [
    "ConvTranspose1d", "ConvTranspose2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d",
]

# the padding modules (F.pad with fixed amounts and mode) and the triplet loss of any distance
from .modules import (  # noqa: E402
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
    TripletMarginWithDistanceLoss, ZeroPad1d, ZeroPad2d, ZeroPad3d,
)

__all__ += [
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "TripletMarginWithDistanceLoss",
]

# bags of embeddings
from .modules import EmbeddingBag  # noqa: E402

__all__ += ["EmbeddingBag"]

# sliding blocks, LP pooling, local response normalization
from .modules import Fold, LocalResponseNorm, LPPool1d, LPPool2d, Unfold  # noqa: E402

__all__ += ["Fold", "Unfold", "LPPool1d", "LPPool2d", "LocalResponseNorm"]

# lazy modules: the input size read from the first input
from .modules import (  # noqa: E402
    LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyConvTranspose1d, LazyConvTranspose2d, LazyLinear,
)
from .parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402

__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyBatchNorm1d",
            "LazyBatchNorm2d", "UninitializedParameter", "UninitializedBuffer"]


# the 3-d family, max unpooling, the lazy instance norms, SyncBatchNorm and NLLLoss2d (NLLLoss's old name)
from .modules import (  # noqa: E402
    AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, BatchNorm3d, Conv3d, ConvTranspose3d, LazyBatchNorm3d, LazyConv3d,
    LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d, LPPool3d, MaxPool3d, MaxUnpool1d,
    MaxUnpool2d, MaxUnpool3d, NLLLoss2d, SyncBatchNorm,
)

__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
            "BatchNorm3d", "LPPool3d", "LazyConv3d", "LazyConvTranspose3d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "NLLLoss2d",
            "SyncBatchNorm"]

__all__ += ["Buffer", "DataParallel"]

# sequence losses: CTC; the adaptive softmax of large vocabularies
from .modules import AdaptiveLogSoftmaxWithLoss, CTCLoss, MultiLabelMarginLoss  # noqa: E402

__all__ += ["CTCLoss", "AdaptiveLogSoftmaxWithLoss", "MultiLabelMarginLoss"]

# PyTorch 2.13's: fractional max pooling, the legacy CrossMapLRN2d and Container, the fused linear + cross entropy
from .modules import (  # noqa: E402
    Container, CrossMapLRN2d, FractionalMaxPool2d, FractionalMaxPool3d, LinearCrossEntropyLoss,
)

__all__ += ["Container", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LinearCrossEntropyLoss"]


def __getattr__(name):
    # nn.save, nn.load and CheckpointError come from nn/serialization.py, imported on first use: it
    # brings safetensors and minigrad's checkpoint code, which a script that saves nothing never needs
    if name in ("save", "load", "CheckpointError"):
        from . import serialization

        return getattr(serialization, name)
    if name in ("parallel", "DataParallel"):  # (imported on first use, as PyTorch's torch.nn.parallel is there)
        import importlib

        parallel = importlib.import_module(".parallel", __name__)
        return parallel if name == "parallel" else parallel.DataParallel
    if name in ("attention", "common_types"):  # (submodules, bound on first use as PyTorch's are at import)
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
