"""What users see printed, against PyTorch character for character ("torch" read as "minigrad"): modules,
tensors under each print option, optimizers, distributions, dtypes' limits. Each case is an expression over
a library bound to the name `torch`, evaluated once with PyTorch and once with minigrad."""
import re
from collections import OrderedDict

import pytest

import minigrad

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def shown(code, lib):
    """repr of the last line's value after running the lines before it (or the error's type and text)."""
    ns = {"torch": lib, "nn": lib.nn, "OrderedDict": OrderedDict}
    *body, last = code.split("\n")
    try:
        exec("\n".join(body), ns)
        value = eval(last, ns)
    except Exception as e:  # noqa: BLE001 - the error's type and text are what is compared
        return f"{type(e).__name__}: {e}"
    finally:
        lib.set_printoptions(profile="default", sci_mode=None)
    return _ADDRESS.sub(" at 0x", value if isinstance(value, str) else repr(value))


def check(torch, code):
    # (PyTorch's classes written in C, torch._C.Generator, are minigrad's at its top: minigrad.Generator)
    assert shown(code, minigrad) == shown(code, torch).replace("torch._C.", "torch.").replace("torch.", "minigrad.")


# ---- modules ----------------------------------------------------------------------------------------------
_REQUIRED = {  # the positional arguments of each module class that needs some
    "AdaptiveAvgPool1d": "3", "AdaptiveAvgPool2d": "(3, 4)", "AdaptiveAvgPool3d": "2", "AdaptiveMaxPool1d": "3",
    "AdaptiveMaxPool2d": "(3, None)", "AdaptiveMaxPool3d": "2", "AdaptiveLogSoftmaxWithLoss": "8, 10, [4, 8]",
    "AvgPool1d": "3", "AvgPool2d": "3", "AvgPool3d": "3", "BatchNorm1d": "4", "BatchNorm2d": "4", "BatchNorm3d": "4",
    "Bilinear": "2, 3, 4", "ChannelShuffle": "2", "CircularPad1d": "1", "CircularPad2d": "1", "CircularPad3d": "1",
    "ConstantPad1d": "1, 0.5", "ConstantPad2d": "(1, 2, 3, 4), 0.0", "ConstantPad3d": "1, 2", "Conv1d": "2, 4, 3",
    "Conv2d": "2, 4, 3", "Conv3d": "2, 4, 3", "ConvTranspose1d": "2, 4, 3", "ConvTranspose2d": "2, 4, 3",
    "ConvTranspose3d": "2, 4, 3", "DataParallel": "nn.Linear(2, 3)", "Embedding": "10, 3", "EmbeddingBag": "10, 3",
    "Fold": "(4, 5), 2", "GroupNorm": "2, 4", "GRU": "3, 5", "GRUCell": "3, 5", "InstanceNorm1d": "4",
    "InstanceNorm2d": "4", "InstanceNorm3d": "4", "LayerNorm": "4", "LazyConv1d": "4, 3", "LazyConv2d": "4, 3",
    "LazyConv3d": "4, 3", "LazyConvTranspose1d": "4, 3", "LazyConvTranspose2d": "4, 3", "LazyConvTranspose3d": "4, 3",
    "LazyLinear": "5", "Linear": "3, 4", "LocalResponseNorm": "2", "LPPool1d": "2, 3", "LPPool2d": "2, 3",
    "LPPool3d": "2, 3", "LSTM": "3, 5", "LSTMCell": "3, 5", "MaxPool1d": "3", "MaxPool2d": "3", "MaxPool3d": "3",
    "MaxUnpool1d": "2", "MaxUnpool2d": "2", "MaxUnpool3d": "2", "MultiheadAttention": "8, 2", "PixelShuffle": "2",
    "PixelUnshuffle": "2", "ReflectionPad1d": "1", "ReflectionPad2d": "1", "ReflectionPad3d": "1",
    "ReplicationPad1d": "1", "ReplicationPad2d": "1", "ReplicationPad3d": "1", "RMSNorm": "4", "RNN": "3, 5",
    "RNNBase": "'LSTM', 3, 5", "RNNCell": "3, 5", "SyncBatchNorm": "4", "Threshold": "0.1, 20",
    "Transformer": "d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16",
    "TransformerDecoder": "nn.TransformerDecoderLayer(8, 2, 16), 2", "TransformerDecoderLayer": "8, 2, 16",
    "TransformerEncoder": "nn.TransformerEncoderLayer(8, 2, 16), 2", "TransformerEncoderLayer": "8, 2, 16",
    "Unflatten": "1, (2, 3)", "Unfold": "2", "Upsample": "scale_factor=2", "UpsamplingBilinear2d": "scale_factor=2",
    "UpsamplingNearest2d": "size=4", "ZeroPad1d": "1", "ZeroPad2d": "1", "ZeroPad3d": "1",
}
_NO_DEFAULT_REPR = {"Module", "RNNCellBase"}  # abstract


def _module_classes():
    import inspect

    return sorted(n for n in dir(minigrad.nn) if n not in _NO_DEFAULT_REPR and inspect.isclass(getattr(minigrad.nn, n))
                  and issubclass(getattr(minigrad.nn, n), minigrad.nn.Module))


MODULES = [f"nn.{name}({_REQUIRED.get(name, '')})" for name in _module_classes()] + [
    "nn.Linear(3, 4, bias=False)", "nn.Bilinear(2, 3, 4, bias=False)",
    "nn.Conv2d(2, 4, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 3), groups=2, bias=False, "
    "padding_mode='reflect')",
    "nn.Conv1d(2, 4, 3, padding='same', padding_mode='circular')", "nn.Conv2d(2, 4, 3, padding='valid')",
    "nn.Conv3d(2, 4, (1, 2, 3), stride=2, padding=(0, 1, 0))",
    "nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2)",
    "nn.BatchNorm1d(4, affine=False)", "nn.BatchNorm2d(4, track_running_stats=False)",
    "nn.BatchNorm2d(4, eps=0.001, momentum=None)", "nn.BatchNorm1d(4, eps=1e-3, momentum=0.01)",
    "nn.InstanceNorm2d(4, affine=True, track_running_stats=True)", "nn.LayerNorm((3, 4), eps=1e-6, "
    "elementwise_affine=False)", "nn.LayerNorm(4, bias=False)", "nn.GroupNorm(2, 4, affine=False, eps=1e-3)",
    "nn.RMSNorm(4, eps=1e-6)", "nn.RMSNorm([3, 4], elementwise_affine=False)",
    "nn.RNN(3, 5, num_layers=2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.1, bidirectional=True)",
    "nn.LSTM(3, 5, 2, batch_first=True, bidirectional=True, proj_size=2)", "nn.GRU(3, 5, num_layers=3, dropout=0.5)",
    "nn.RNNCell(3, 5, bias=False, nonlinearity='relu')", "nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0)",
    "nn.Embedding(10, 3, max_norm=2, norm_type=1.0, scale_grad_by_freq=True, sparse=True)",
    "nn.EmbeddingBag(10, 3, max_norm=1.0, mode='max', include_last_offset=True)", "nn.Dropout(p=0.5, inplace=False)",
    "nn.Dropout(0.1, inplace=True)", "nn.AlphaDropout(0.3, True)", "nn.ReLU(inplace=True)",
    "nn.LeakyReLU(0.2, inplace=True)", "nn.ELU(alpha=0.5, inplace=True)", "nn.Softmax(dim=1)",
    "nn.GELU(approximate='tanh')", "nn.Hardtanh(-2, 2)", "nn.Hardswish(True)", "nn.Hardsigmoid(inplace=True)",
    "nn.SiLU(inplace=True)", "nn.Softplus(beta=2, threshold=10)", "nn.Softshrink(lambd=1)",
    "nn.Threshold(0.1, 20, inplace=True)", "nn.RReLU(0.1, 0.3, inplace=True)", "nn.PReLU(num_parameters=3, init=0.1)",
    "nn.PairwiseDistance(p=1.0, eps=1e-5, keepdim=True)", "nn.Flatten(0, -1)",
    "nn.Unflatten('features', (('C', 2), ('H', 3)))", "nn.Unflatten(1, 6)", "nn.Unflatten(1, [2, 3.0])",
    "nn.MaxPool2d(3, stride=2, padding=1, dilation=2, return_indices=True, ceil_mode=True)",
    "nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=2)",
    "nn.LPPool2d(2.0, (2, 3), stride=1, ceil_mode=True)", "nn.MaxUnpool2d((2, 2), stride=(2, 1), padding=0)",
    "nn.Upsample(size=(4, 5), mode='bilinear', align_corners=True)",
    "nn.Upsample(scale_factor=(2, 3), mode='bicubic', align_corners=False)",
    "nn.MultiheadAttention(8, 2, dropout=0.1, bias=False, add_bias_kv=True, add_zero_attn=True, kdim=4, vdim=6)",
    "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='gelu', batch_first=True, norm_first=True)",
    "nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)", "nn.KLDivLoss(reduction='batchmean')",
    "nn.HuberLoss(delta=0.5)", "nn.CTCLoss(blank=1, zero_infinity=True)", "nn.ZeroPad2d((1, 2, 3, 4))",
    "nn.Fold(output_size=(4, 5), kernel_size=(2, 2), dilation=2, padding=1, stride=2)",
    "nn.LocalResponseNorm(3, alpha=1e-3, beta=0.5, k=2.0)", "nn.Identity(54, unused_argument1=0.1)",
    "nn.Sequential(OrderedDict([('fc1', nn.Linear(2, 3)), ('act', nn.ReLU()), "
    "('out', nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))]))",
    "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])", "nn.ModuleList()",
    "nn.Sequential(*[nn.ReLU() for _ in range(4)], nn.Linear(1, 1), nn.Linear(1, 1))",
    "nn.ModuleDict({'b': nn.Linear(2, 2), 'a': nn.Linear(2, 2), 'c': nn.ReLU()})",
    "nn.ModuleList([nn.Sequential(nn.Linear(2, 2), nn.ReLU()) for _ in range(2)])",
    "nn.ParameterList([nn.Parameter(torch.zeros(2, dtype=torch.float64)), torch.zeros(1)])",
    "nn.ParameterDict({'w': nn.Parameter(torch.zeros(2, 3)), 'b': torch.zeros(3, dtype=torch.int32)})",
    "list(nn.ParameterDict({'w': nn.Parameter(torch.zeros(2)), 'b': nn.Parameter(torch.zeros(3))}).keys())",
    "list(nn.ParameterDict(OrderedDict(w=nn.Parameter(torch.zeros(2)), b=nn.Parameter(torch.zeros(3)))).keys())",
    "list(nn.ParameterDict([('w', nn.Parameter(torch.zeros(2))), ('b', nn.Parameter(torch.zeros(3)))]).keys())",
    "class M(nn.Module):\n def __init__(s):\n  super().__init__(); s.fc = nn.Linear(2, 2); s.b = nn.ModuleList([nn.ReLU()])"
    "\n def extra_repr(s): return 'x=1\\ny=2'\nM()",
]


@pytest.mark.parametrize("code", MODULES)
def test_a_module_prints_as_pytorchs(torch, code):
    check(torch, code)


# ---- tensors ----------------------------------------------------------------------------------------------
_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
           "complex128"]
TENSORS = [c.replace("DT", d) for d in _DTYPES for c in [
    "torch.tensor([0, 1, 2], dtype=torch.DT)", "torch.tensor(1, dtype=torch.DT)", "torch.zeros(0, 3, dtype=torch.DT)",
    "torch.zeros(0, dtype=torch.DT)", "torch.arange(2000).reshape(40, 50).to(torch.DT)",
    "str(torch.tensor([[1, 0], [0, 1]], dtype=torch.DT))"]] + [
    "torch.tensor(-0.0)", "torch.tensor([0.0, -0.0])", "torch.tensor([1., 2.])", "torch.tensor([1e-8, 1.0])",
    "torch.tensor([1e8, 1.0])", "torch.tensor([1.0, 1000.0])", "torch.tensor([1.0, 1001.0])",
    "torch.tensor([float('nan'), 1.0])", "torch.tensor([float('inf'), -float('inf'), 1.5])",
    "torch.tensor([1e20, -1e-20, 0.])", "torch.tensor([[1.5, -2.25], [1000.125, 3.]])",
    "torch.tensor([1., 2.], requires_grad=True)", "torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True) + 1",
    "torch.tensor([1., 2.], requires_grad=True).sum()", "torch.zeros(0, 3, requires_grad=True) * 2",
    "x = torch.tensor([1., 2.], requires_grad=True)\n(x * x).sum().backward()\nx.grad",
    "torch.nn.Parameter(torch.tensor([1., 2.]))", "torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))",
    "torch.arange(1001.)", "torch.arange(3000.).reshape(1000, 3)", "torch.arange(4000).reshape(10, 20, 20)",
    "torch.arange(1010.).reshape(2, 5, 101) / 3", "torch.arange(30.) * 1e6", "torch.linspace(0, 1e-6, 25)",
    "torch.tensor([1+2j, 3-4j])", "torch.tensor([1e-8+1j, 1e8j])", "torch.arange(30.).reshape(3, 10) * (1+1j)",
    "torch.arange(40.).reshape(4, 10) * (1-1j) / 3", "torch.tensor([True, False] * 600)",
    "torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([3., 4.]), (2, 2))",
    "torch.zeros(2, 3).shape", "str(torch.zeros(2, 3).size())", "torch.float64", "str(torch.float32)",
    "torch.zeros(1).device", "str(torch.device('cpu', 0))", "type(torch.zeros(2))",
    "torch.max(torch.tensor([[1., 5.], [3., 2.]]), 1)", "torch.sort(torch.tensor([3, 1, 2]))",
    "torch.contiguous_format", "torch.preserve_format", "torch.channels_last", "torch.strided",
    "type(torch.Generator())", "torch.Generator()",
    # a suffix goes on the last line where PyTorch's fits there (its name measured as PyTorch's)
    "torch.tensor([-295955.0, -150125.0, -247551.0, -594206.0, -329287.0], dtype=torch.float64)",
    "torch.tensor([[0.6499, -0.2163, 1.6035, 1.5625, -0.0432]], dtype=torch.float16)",
    "torch.arange(28., dtype=torch.float64).reshape(2, 14) / 3 + torch.zeros(1, requires_grad=True, dtype=torch.float64)",
]
_SPARSE = "torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), {}, (2, 2))"
TENSORS += [_SPARSE.format(v) for v in [
    "torch.tensor([3, 4])", "torch.tensor([True, False])", "torch.tensor([3, 4], dtype=torch.int32)",
    "torch.tensor([3., 4.], dtype=torch.float64)"]] + [
    _SPARSE.format("torch.tensor([3., 4.], requires_grad=True)") + " * 2",
    _SPARSE.format("torch.tensor([3., 4.], dtype=torch.float64, requires_grad=True)") + " * 2"]
TENSORS += [f"torch.{k}(torch.{d})" for k in ("finfo", "iinfo") for d in _DTYPES]

_OPTIONS = ["precision=2", "threshold=5, edgeitems=1", "edgeitems=0", "edgeitems=0, threshold=1", "linewidth=40",
            "linewidth=120", "sci_mode=True", "sci_mode=False", "profile='full'", "profile='short'"]
_VALUES = ["torch.arange(30.) / 7", "torch.tensor([1e-8, 1.0, 123.5])", "torch.arange(24).reshape(2, 3, 4)",
           "torch.arange(2000.).reshape(40, 50)", "torch.tensor([1+2j, 0.5-1e-3j])", "torch.tensor([1., 2.])",
           "torch.arange(30.).reshape(3, 10) * (1+1j) - 0.5j"]
TENSORS += [f"torch.set_printoptions({o})\nrepr({v})" for o in _OPTIONS for v in _VALUES]


@pytest.mark.parametrize("code", TENSORS)
def test_a_tensor_prints_as_pytorchs(torch, code):
    check(torch, code)


def test_the_default_complex_dtype_follows_the_default_dtype(torch):
    for lib in (minigrad, torch):
        lib.set_default_dtype(lib.float64)
    try:
        for code in ["torch.zeros(1, dtype=torch.complex128)", "torch.zeros(0, dtype=torch.complex128)",
                     "torch.zeros(1, dtype=torch.complex64)", "torch.tensor([1.5], dtype=torch.float32)"]:
            check(torch, code)
    finally:
        for lib in (minigrad, torch):
            lib.set_default_dtype(lib.float32)


# ---- optimizers, distributions ----------------------------------------------------------------------------
_OPTIMIZERS = {"SGD": "lr=0.1", "Adam": "", "AdamW": "", "RMSprop": "", "Adagrad": "", "Adadelta": "", "Adamax": "",
               "ASGD": "", "NAdam": "", "RAdam": "", "Rprop": "", "LBFGS": "", "SparseAdam": ""}
_W = "w = nn.Parameter(torch.zeros(2, 2))\n"
OPTIMIZERS = [_W + c.format(o=o, a=a) for o, a in _OPTIMIZERS.items() for c in [
    "torch.optim.{o}([w], {a})", "list(torch.optim.{o}([w], {a}).defaults.items())",
    "list(torch.optim.{o}([w], {a}).state_dict()['param_groups'][0].items())"]] + [
    _W + "torch.optim.Adam([w], lr=1e-3, betas=(0.8, 0.9), amsgrad=True, weight_decay=0.01, maximize=True)",
    _W + "v = nn.Parameter(torch.zeros(3))\n"
         "torch.optim.AdamW([{'params': [w]}, {'params': [v], 'lr': 0.1, 'weight_decay': 0.0}], lr=3e-4)",
]
_D = "D = torch.distributions\n"
DISTRIBUTIONS = [_D + c for c in [
    "D.Normal(torch.zeros(2), torch.ones(2))", "D.Normal(0., 1.)", "D.Bernoulli(logits=torch.tensor([0.3]))",
    "D.Categorical(logits=torch.zeros(2, 3))", "D.Uniform(0., 1.)", "D.Beta(torch.tensor([2.]), torch.tensor([3.]))",
    "D.Binomial(10, torch.tensor([0.5]))", "D.MultivariateNormal(torch.zeros(2), scale_tril=torch.eye(2))",
    "D.Independent(D.Normal(torch.zeros(3, 2), 1.), 1)", "D.Dirichlet(torch.ones(3))",
    "D.MixtureSameFamily(D.Categorical(torch.ones(2)), D.Normal(torch.zeros(2), torch.ones(2)))",
    "D.TransformedDistribution(D.Normal(0., 1.), [D.transforms.ExpTransform()])",
    "D.transforms.AffineTransform(0., 2.)", "D.constraints.interval(0., 1.)", "D.Normal(0., 1.).batch_shape",
]]


@pytest.mark.parametrize("code", OPTIMIZERS + DISTRIBUTIONS)
def test_optimizers_and_distributions_print_as_pytorchs(torch, code):
    check(torch, code)
