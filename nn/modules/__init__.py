"""The layers, one file per idea."""
from .activation import GELU, ReLU, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .normalization import LayerNorm
from .sparse import Embedding, EmbeddingBag
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
from .activation import (  # noqa: E402
    GLU, Hardshrink, LogSoftmax, PReLU, RReLU, Sigmoid, Softmax, Softmax2d, Softshrink, Tanhshrink, Threshold,
)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: E402
from .flatten import Unflatten  # noqa: E402
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: E402
from .linear import Bilinear  # noqa: E402
from .loss import (  # noqa: E402
    CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, MarginRankingLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
)
from .fold import Fold, Unfold  # noqa: E402
from .normalization import GroupNorm, LocalResponseNorm, RMSNorm  # noqa: E402
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle  # noqa: E402
from .pooling import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d  # noqa: E402
from .conv import ConvTranspose1d, ConvTranspose2d  # noqa: E402
from .pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d, LPPool1d, LPPool2d  # noqa: E402
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402
from .padding import (  # noqa: E402
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from .loss import TripletMarginWithDistanceLoss  # noqa: E402
from .lazy import (  # noqa: E402
    LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyConvTranspose1d, LazyConvTranspose2d, LazyLinear,
    LazyModuleMixin,
)
from .batchnorm import BatchNorm3d, SyncBatchNorm  # noqa: E402
from .conv import Conv3d, ConvTranspose3d  # noqa: E402
from .lazy import (  # noqa: E402
    LazyBatchNorm3d, LazyConv3d, LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .loss import CTCLoss, MultiLabelMarginLoss, NLLLoss2d  # noqa: E402
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from .pooling import (  # noqa: E402
    AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, LPPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)
from .container import Container  # noqa: E402
from .loss import LinearCrossEntropyLoss  # noqa: E402
from .normalization import CrossMapLRN2d  # noqa: E402
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
