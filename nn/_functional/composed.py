"""The rest of torch.nn.functional's activations, distances and shape ops: compositions of minigrad's ops,
as PyTorch composes most of them, so autograd differentiates them (twice, too) with no node of their own;
glu and the shuffles, native ops in PyTorch, have their nodes (GluBackward0, PixelShuffleBackward0, ...).

    sigmoid, tanh, glu, threshold, hardshrink, softshrink, tanhshrink, prelu, rrelu, gumbel_softmax
    normalize, cosine_similarity, pairwise_distance, pdist, bilinear
    pixel_shuffle, pixel_unshuffle, channel_shuffle
    relu_, elu_, leaky_relu_, hardtanh_, selu_, celu_, threshold_, rrelu_   (the in-place forms)
"""
import numbers

from minigrad.autograd.composite import composite_node
from minigrad.autograd.function import Function
from minigrad.device import array_module
from minigrad.ops._util import broadcast_shapes
from minigrad.ops.elementwise import add_scalar
from minigrad.ops.scatter import make_inplace
from minigrad.tensor import Tensor

from . import activation, padding
from ._common import check_tensor


def _mg():  # minigrad's Tensor ops (imported late: nn imports minigrad, this keeps module loading flat)
    import minigrad

    return minigrad


# ---- activations --------------------------------------------------------------------------------------
def tanh(input):
    """tanh(x) (PyTorch keeps F.tanh as minigrad.tanh). Shape: (*) -> (*)."""
    return input.tanh()


def glu(input, dim=-1):
    """a sigmoid(b), a and b the two halves of `input` along `dim`. Shape: (*, 2n, *) -> (*, n, *)."""
    check_tensor(input, "input", "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size {n}")
    return Glu.apply(input, dim % input.ndim)


class Glu(Function):
    node_name = "GluBackward0"

    @staticmethod
    def forward(ctx, x, dim):  # a sigmoid(b)
        ctx.save(self=x)
        a, b = _halves(x.array, dim)
        ctx.dim, ctx.sigmoid_b = dim, _sigmoid(b)
        return a * ctx.sigmoid_b

    @staticmethod
    def backward(ctx, g):  # d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b))
        x, dim = ctx._saved_self, ctx.dim
        if _recording():
            a, b = x.chunk(2, dim)
            s = b.sigmoid()
            return _mg().cat([g * s, g * a * s * (1 - s)], dim), None
        a, s = _halves(x.array, dim)[0], ctx.sigmoid_b
        xp = array_module(a)
        grad = xp.empty(x.shape, dtype=g.array.dtype)
        ga, gb = _halves(grad, dim)
        xp.multiply(g.array, s, out=ga)
        xp.subtract(1, s, out=gb)
        gb *= a
        gb *= ga
        return Tensor._wrap(grad), None


def _halves(x, dim):
    n = x.shape[dim] // 2
    return x[(slice(None),) * dim + (slice(None, n),)], x[(slice(None),) * dim + (slice(n, None),)]


_sigmoid = activation._sigmoid_array
_recording = activation._recording


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value. Shape: (*) -> (*)."""
    if inplace:
        return threshold_(input, threshold, value)
    check_tensor(input, "input", "threshold")
    return activation.Threshold.apply(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0. Shape: (*) -> (*)."""
    check_tensor(input, "input", "hardshrink")
    activation._shrinkable(input, "hardshrink_cpu")
    return activation.Hardshrink.apply(input, lambd)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between. Shape: (*) -> (*)."""
    check_tensor(input, "input", "softshrink")
    if lambd < 0:
        import minigrad

        top = f"{minigrad.finfo(input.dtype).max:g}" if input.is_floating_point() else "inf"
        raise RuntimeError(f"lambda must be in range [0, {top}] for input dtype {input.dtype._legacy[:-6]}, but "
                           f"found {lambd:g}")
    activation._shrinkable(input, "softshrink_check")
    return activation.Softshrink.apply(input, lambd)


def tanhshrink(input):
    """x - tanh(x). Shape: (*) -> (*)."""
    return input - input.tanh()


def prelu(input, weight):
    """x where x > 0, else weight x: `weight` one slope (numel 1) or one per channel (dim 1 of input).
    Shapes: input (N, C, *), weight (1,) or (C,) -> like input; an input of fewer dims has one channel."""
    check_tensor(input, "input", "prelu")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and input.ndim == 0:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if input.ndim >= 2:  # (PyTorch's weight edge is this view of it, for one slope too)
        weight = weight.reshape((weight.numel(),) + (1,) * (input.ndim - 2))
    elif input.ndim == 0:  # (a scalar stays one)
        weight = weight.reshape(())
    return _prelu(input, weight)


@composite_node("PreluKernelBackward0", "zero")
def _prelu(input, weight):
    return _mg().where(input > 0, input, weight * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x for x >= 0, a x otherwise: a drawn from U(lower, upper) per element in training (from the default
    generator), (lower + upper) / 2 in eval. Shape: (*) -> (*)."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    check_tensor(input, "input", "rrelu")
    if not training:
        return _rrelu(input, (lower + upper) / 2)
    return _rrelu(input, _mg().empty_like(input).uniform_(lower, upper).array)


@composite_node("RreluWithNoiseBackward0", "zero")
def _rrelu(input, slope):
    """x for x > 0, slope x otherwise (0's gradient the slope's, as PyTorch's): `slope` a number, or an array of
    drawn ones (PyTorch's noise: no edge)."""
    return _mg().where(input > 0, input, input * (slope if isinstance(slope, float) else Tensor._wrap(slope)))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) along `dim`, g Gumbel(0, 1) noise from the default generator. hard: the
    one-hot of its argmax in the forward pass, the soft sample's gradient in the backward one (straight
    through). Shape: (*) -> (*)."""
    check_tensor(logits, "logits", "gumbel_softmax")
    gumbels = -_mg().empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = _mg().zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft


# ---- distances ----------------------------------------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim`. Shape: (*) -> (*)."""
    check_tensor(input, "input", "normalize")
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along `dim`, the inputs broadcast together.
    Shapes: x1, x2 broadcastable to (*, D, *) -> (*, *)."""
    check_tensor(x1, "x1", "cosine_similarity")
    check_tensor(x2, "x2", "cosine_similarity")
    x1, x2 = broadcast_pair(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def broadcast_pair(a, b):
    shape = broadcast_shapes(tuple(a.shape), tuple(b.shape))  # (PyTorch's text: the sizes of tensors a and b)
    # (a tensor already of the shape is itself, as PyTorch's expand_outplace leaves it: no ExpandBackward0)
    return (a if a.array.shape == shape else a.expand(shape)), (b if b.array.shape == shape else b.expand(shape))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim. Shapes: (N, D) or (D,), broadcastable -> (N,) or ()."""
    check_tensor(x1, "x1", "pairwise_distance")
    check_tensor(x2, "x2", "pairwise_distance")
    diff = x1 - x2
    return _norm(add_scalar(diff, eps) if diff.array.dtype.kind == "f" else diff + eps, p, keepdim)  # (AddBackward1)


@composite_node("NormBackward1")  # (PyTorch's pairwise_distance calls the norm op, not linalg.vector_norm)
def _norm(diff, p, keepdim):
    return diff.norm(p, -1, keepdim=keepdim)


def pdist(input, p=2.0):
    """||x_i - x_j||_p for every row pair i < j, in row-major order. Shape: (N, M) -> (N (N - 1) / 2,)."""
    check_tensor(input, "input", "pdist")
    return _pdist(input, p)


@composite_node("PdistBackward0", NotImplementedError("the derivative for '_pdist_backward' is not implemented."))
def _pdist(input, p):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = _mg().triu_indices(input.shape[0], input.shape[0], 1)
    return (input[i] - input[j]).norm(p, -1)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T A_k x2 + b_k. Shapes: input1 (*, H1), input2 (*, H2), weight (O, H1, H2), bias (O,) -> (*, O)."""
    check_tensor(input1, "input1", "bilinear")
    check_tensor(input2, "input2", "bilinear")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {a} and {b}")
    for i, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[i]:
            raise RuntimeError(f"bilinear(): input{i} size does not match weight size: got {x.shape[-1]} but expected "
                               f"{weight.shape[i]}")
    y = _mg().einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


# ---- shape ops ----------------------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): each r x r block of channels becomes a patch of pixels."""
    check_tensor(input, "input", "pixel_shuffle")
    if not isinstance(upscale_factor, numbers.Integral):
        raise TypeError(f"pixel_shuffle(): argument 'upscale_factor' (position 2) must be int, not {type(upscale_factor).__name__}")
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return PixelShuffle.apply(input, r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W): pixel_shuffle undone."""
    check_tensor(input, "input", "pixel_unshuffle")
    if not isinstance(downscale_factor, numbers.Integral):
        raise TypeError(f"pixel_unshuffle(): argument 'downscale_factor' (position 2) must be int, not {type(downscale_factor).__name__}")
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        which, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by downscale_factor, but input.size("
                           f"{-2 if which == 'height' else -1})={size} is not divisible by {r}")
    if input.numel() == 0:  # (PyTorch's empty result keeps the input's shape)
        return input.clone()
    return PixelUnshuffle.apply(input, r)


def channel_shuffle(input, groups):
    """(N, C, *) -> (N, C, *) with the channels of `groups` groups interleaved (C g-major becomes group-minor)."""
    check_tensor(input, "input", "channel_shuffle")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return ChannelShuffle.apply(input, groups)



native_channel_shuffle = channel_shuffle  # (PyTorch's kernel-level name for the same op)


@composite_node("ConvTbcBackward0")
def _conv_tbc(input, weight, bias, pad):
    # out[t] = bias + sum_k x_padded[t + k] @ weight[k]
    x = padding.pad(input, (0, 0, 0, 0, pad, pad)) if pad else input
    k, t = weight.shape[0], x.shape[0] - weight.shape[0] + 1
    out = bias
    for i in range(k):
        out = out + x[i:i + t] @ weight[i]
    return out


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over time of input (time, batch, in_channels) with weight (kernel width, in_channels,
    out_channels): out (time + 2 pad - kernel width + 1, batch, out_channels)."""
    check_tensor(input, "input", "conv_tbc")
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if t < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t}: [{t}, {input.shape[1]}, "
                           f"{weight.shape[2]}]")
    return _conv_tbc(input, weight, bias, pad)

# the shuffles move entries and nothing else: each one's gradient is the inverse shuffle of the incoming one
def _pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    n = len(lead)
    x = x.reshape(*lead, c // (r * r), r, r, h, w).transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    n = len(lead)
    x = x.reshape(*lead, c, h // r, r, w // r, r).transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle(x, groups):
    n, c, *rest = x.shape
    return x.reshape(n, groups, c // groups, *rest).swapaxes(1, 2).reshape(x.shape)


class PixelShuffle(Function):
    node_name = "PixelShuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _pixel_shuffle(x.array, r)

    @staticmethod
    def backward(ctx, g):
        return PixelUnshuffle.apply(g, ctx.r), None


class PixelUnshuffle(Function):
    node_name = "PixelUnshuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _pixel_unshuffle(x.array, r)

    @staticmethod
    def backward(ctx, g):
        return PixelShuffle.apply(g, ctx.r), None


class ChannelShuffle(Function):
    node_name = "ChannelShuffleBackward0"

    @staticmethod
    def forward(ctx, x, groups):
        ctx.groups = groups
        return _channel_shuffle(x.array, groups)

    @staticmethod
    def backward(ctx, g):  # (the inverse of shuffling g groups is shuffling C / g groups)
        return ChannelShuffle.apply(g, g.shape[1] // ctx.groups), None


# ---- in place: the op on a clone, written back (make_inplace: PyTorch's shape and dtype checks) -----------
relu_ = activation.relu_
elu_ = make_inplace(activation.elu_node_, "elu")
leaky_relu_ = activation.leaky_relu_
hardtanh_ = make_inplace(activation.hardtanh, "hardtanh")
selu_ = make_inplace(activation.selu_node_, "selu")
celu_ = make_inplace(activation.celu_node_, "celu")
threshold_ = make_inplace(threshold, "threshold")
rrelu_ = make_inplace(rrelu, "rrelu")
