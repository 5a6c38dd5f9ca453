"""Functional neural-network ops, as `torch.nn.functional` (use as `import nn.functional as F`).

Every function takes and returns minigrad Tensors and has PyTorch's signature. The heavy ones
(linear, layer_norm, gelu, softmax, log_softmax, cross_entropy, scaled_dot_product_attention,
embedding, dropout) are each one backward node with a hand-written backward on raw arrays that
saves only what it needs; `nn/_functional/` holds them, one file per idea. Each is also written
from minigrad's primitive ops in nn/_functional/reference.py (read that first): with
MINIGRAD_KERNELS=reference (or `minigrad.set_kernels("reference")`) these functions call it.
"""
from minigrad import backends, is_grad_enabled
from minigrad.tensor import Tensor

from ._functional import reference as _ref
from ._functional.activation import gelu as _gelu
from ._functional.activation import log_softmax as _log_softmax
from ._functional.activation import relu as _relu
from ._functional.activation import softmax as _softmax
from ._functional.attention import scaled_dot_product_attention as _sdpa
from ._functional.block_step import block_step as _block_step  # noqa: F401 (gpt's generation: inference only)
from ._functional.dropout import dropout as _dropout
from ._functional.dropout import written
from ._functional._common import check_tensor
from ._functional.embedding_bag import embedding_bag
from ._functional.linear import embedding as _embedding
from ._functional.linear import embedding_renorm_ as _embedding_renorm_
from ._functional.linear import linear as _linear
from ._functional.linear import sparse_embedding as _sparse_embedding
from ._functional.loss import _legacy_reduction
from ._functional.loss import cross_entropy as _cross_entropy
from ._functional.loss import mse_loss as _mse_loss
from ._functional.normalization import layer_norm as _layer_norm

__all__ = [
    "linear", "embedding", "embedding_bag", "layer_norm", "gelu", "relu", "softmax", "log_softmax", "dropout",
    "cross_entropy", "linear_cross_entropy", "mse_loss", "scaled_dot_product_attention",
]


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias.

    Shapes: input (*, in_features), weight (out_features, in_features), bias (out_features,)
    or None -> output (*, out_features). One `AddmmBackward0` node (`MmBackward0` without bias):
    one GEMM each way on input viewed as (N, in_features), W.T read in place; saves input and weight.
    """
    return backends.pick(_linear, _ref.linear)(input, weight, bias)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer ids in `input`.

    Shapes: input (*) int64 ids in [0, num_embeddings), weight (num_embeddings, embedding_dim)
    -> output (*, embedding_dim). The row `padding_idx` (if given) gets no gradient. max_norm: first
    each looked-up row whose norm_type-norm exceeds it is scaled down to it, in place in `weight`
    (outside autograd), as PyTorch. scale_grad_by_freq: each row's gradient is divided by how often
    its id occurs in `input`. sparse=True: weight's gradient is a sparse COO tensor of one row per id
    looked up (the padding row's left out), uncoalesced, as PyTorch's. One `EmbeddingBackward0` node
    saving the ids; its dense backward sums repeated ids without np.add.at.
    """
    if max_norm is not None:
        check_tensor(input, "input", "embedding")
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if weight.array.dtype.kind == "c" and weight.requires_grad and is_grad_enabled():  # (PyTorch's refusal)
        raise RuntimeError("embedding does not support automatic differentiation for outputs with complex dtype.")
    if sparse:  # (scale_grad_by_freq with it: PyTorch's error at the backward)
        return _sparse_embedding(input, weight, padding_idx, scale_grad_by_freq)
    return backends.pick(_embedding, _ref.embedding)(input, weight, padding_idx, scale_grad_by_freq)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalisation over the last len(normalized_shape) dims: (x - mean) / sqrt(var + eps) * weight + bias.

    Shapes: input (*, *normalized_shape), weight and bias normalized_shape (or None) -> output like input.
    The variance is the biased one (divided by the number of normalised elements). One
    `NativeLayerNormBackward0` node saving the input, its mean and 1/std per row, and the weight
    (the GPU kernel keeps x_hat instead of the input and mean).
    """
    return backends.pick(_layer_norm, _ref.layer_norm)(input, normalized_shape, weight, bias, eps)


def gelu(input, approximate="none"):
    """GELU(x) = x * Phi(x), Phi the standard normal CDF: 0.5 x (1 + erf(x / sqrt 2)).

    approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Shape: (*) -> (*).
    One `GeluBackward0` node saving its input.
    """
    return backends.pick(_gelu, _ref.gelu)(input, approximate)


def relu(input, inplace=False):
    """max(x, 0) elementwise. Shape: (*) -> (*). One `ReluBackward0` node saving its output
    (inplace=True: written into input, which is returned, as PyTorch's)."""
    if inplace:
        return _relu(input, inplace=True)
    return backends.pick(_relu, _ref.relu)(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along `dim` (computed in `dtype` if given). Shape: (*) -> (*).

    One `SoftmaxBackward0` node saving its output.
    """
    return _softmax(input, dim, _stacklevel, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along `dim` (computed in `dtype` if given). Shape: (*) -> (*).

    One `LogSoftmaxBackward0` node saving its output.
    """
    return _log_softmax(input, dim, _stacklevel, dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only).

    Shape: (*) -> (*). With p=0 or training=False, returns `input` itself. The mask comes from
    minigrad's default generator, so `minigrad.manual_seed` makes it reproducible (p is applied
    to 1/65536). One `NativeDropoutBackward0` node saving only the boolean mask.
    """
    out = backends.pick(_dropout, _ref.dropout)(input, p, training)
    return out if out is input else written(input, out, inplace)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits and class-index targets: -log softmax(input)[target].

    Shapes: input (N, C) or (N, C, d1, ..., dK) or (C,); target (N) or (N, d1, ..., dK) or () with
    int64 ids in [0, C) or equal to `ignore_index`; weight (C,) or None. Output: a scalar for
    reduction 'mean' (weighted mean over non-ignored targets) or 'sum', else the target's shape.
    label_smoothing mixes in the uniform distribution: (1 - ls) * nll + ls * mean_c(-log p_c).
    A target outside [0, C) (other than ignore_index) raises IndexError naming it and C. One
    `NllLossBackward0` node (log_softmax and nll_loss in one) saving one (N, C) array (no copy of the logits).

    A float target of input's shape holds class probabilities instead: -sum_c w_c target_c log p_c per
    sample, 'mean' dividing by the number of samples; composed of recorded ops (the target gets a
    gradient too), the same under every kernel setting.
    """
    if size_average is not None or reduce is not None:  # PyTorch's deprecated arguments
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if isinstance(target, Tensor) and isinstance(input, Tensor) and target.array.dtype.kind == "f" \
            and tuple(target.shape) == tuple(input.shape):
        # class probabilities: already plain recorded ops, and the reference below takes class ids only
        return _cross_entropy(input, target, weight, ignore_index=ignore_index, reduction=reduction,
                              label_smoothing=label_smoothing)
    return backends.pick(_cross_entropy, _ref.cross_entropy)(input, target, weight, ignore_index=ignore_index,
                                                             reduction=reduction, label_smoothing=label_smoothing)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), as PyTorch's reference path.

    Shapes: input (in_features,) or (N, in_features); linear_weight (C, in_features) or (C, d1, ..., dK,
    in_features) for a K-dimensional loss (batched input only), whose logits are (N, C, d1, ..., dK);
    target class ids, or probabilities of the logits' shape (then ignore_index must be None). ignore_index
    None is -100. `options` picks PyTorch's chunked path (LinearCrossEntropyOptions), which minigrad has not.
    """
    if options is not None:
        raise NotImplementedError("linear_cross_entropy: options (PyTorch's chunked path) is not supported in "
                                  "minigrad; pass options=None")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        linear_weight = linear_weight.reshape(-1, in_features)
        linear_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: (input - target)^2, averaged ('mean'), summed ('sum') or not ('none').

    Shapes: input (*), target (*) the same -> scalar, or (*) for 'none'. With `weight`
    (broadcastable to input), each squared error is multiplied by it and 'mean' divides by the
    sum of the (broadcast) weights, as PyTorch. One `MseLossBackward0` node (without weight).
    """
    return _mse_loss(input, target, size_average, reduce, reduction, weight)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, scale = 1/sqrt(E) by default.

    Shapes: query (*, L, E), key (*, S, E), value (*, S, Ev) -> output (*, L, Ev).
    attn_mask broadcastable to (*, L, S): bool (True = may attend, as PyTorch) or float (added to
    the scores). is_causal masks key j > query i (top-left aligned). dropout_p drops attention
    probabilities (pass 0.0 in eval). enable_gqa lets Hq query heads share Hk key/value heads
    (Hq a multiple of Hk). A fully masked row gives zeros (as PyTorch). One
    `ScaledDotProductAttentionBackward0` node saving q, k, v (no copies) and the probabilities.
    """
    if enable_gqa:  # (the reference has no grouped heads)
        return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa=True)
    return backends.pick(_sdpa, _ref.scaled_dot_product_attention)(query, key, value, attn_mask, dropout_p, is_causal,
                                                                   scale)


# ---- activations, losses, convolutions, pooling, padding and batch norm beyond the GPT's needs ---------------
# (each documented where it is defined; `help(F.silu)` shows it)
from ._functional.activation import (  # noqa: E402
    celu, elu, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish, relu6, selu, sigmoid, silu, softmin,
    softplus, softsign,
)
from ._functional.conv import (  # noqa: E402
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
)
from ._functional.loss import (  # noqa: E402
    binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, kl_div, l1_loss, nll_loss, one_hot,
    smooth_l1_loss,
)
from ._functional.multi_head_attention import _canonical_mask, _none_or_dtype  # noqa: E402, F401 (the modules')
from ._functional.multi_head_attention import multi_head_attention_forward  # noqa: E402
from ._functional.normalization import batch_norm  # noqa: E402
from ._functional.padding import pad  # noqa: E402
from ._functional.pooling import (  # noqa: E402
    adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool2d, interpolate, max_pool2d,
)

__all__ += [
    "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6", "hardswish", "hardsigmoid", "softplus",
    "softsign", "logsigmoid", "softmin", "conv1d", "conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "interpolate", "pad", "batch_norm", "l1_loss", "smooth_l1_loss", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "one_hot", "multi_head_attention_forward",
]

# ---- the rest of PyTorch's names that compose the ops above (nn/_functional/composed*.py) -----------------
from ._functional.composed import (  # noqa: E402
    bilinear, celu_, channel_shuffle, conv_tbc, cosine_similarity, elu_, glu, gumbel_softmax, hardshrink, hardtanh_,
    leaky_relu_, native_channel_shuffle, normalize, pairwise_distance, pdist, pixel_shuffle, pixel_unshuffle, prelu, relu_, rrelu, rrelu_,
    selu_, softshrink, tanh, tanhshrink, threshold, threshold_,
)
from ._functional.composed_layers import (  # noqa: E402
    adaptive_avg_pool1d, adaptive_max_pool1d, alpha_dropout, avg_pool1d, dropout1d, dropout2d, dropout3d,
    feature_alpha_dropout, group_norm, instance_norm, local_response_norm, lp_pool1d, lp_pool2d, max_pool1d, rms_norm,
    upsample, upsample_bilinear, upsample_nearest,
)
from ._functional.fold import fold, unfold  # noqa: E402
from ._functional.composed_losses import (  # noqa: E402
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss,
    multi_margin_loss, multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._functional.ctc_loss import ctc_loss  # noqa: E402
from ._functional.loss import multilabel_margin_loss  # noqa: E402

__all__ += [
    "sigmoid", "tanh", "glu", "threshold", "hardshrink", "softshrink", "tanhshrink", "prelu", "rrelu",
    "gumbel_softmax", "normalize", "cosine_similarity", "pairwise_distance", "pdist", "bilinear", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "conv_tbc", "relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_",
    "rrelu_", "group_norm", "instance_norm", "rms_norm", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "upsample", "upsample_nearest",
    "upsample_bilinear", "huber_loss", "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "ctc_loss",
    "multilabel_margin_loss",
]

# added later: the transposed 1-d convolution and adaptive max pooling; fold and unfold, LP pooling, local_response_norm
__all__ += ["conv_transpose1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "fold", "unfold", "lp_pool1d", "lp_pool2d",
            "local_response_norm"]

# spatial transformers: affine_grid and grid_sample (2-D), composed of recorded ops (nn/_functional/grid_sample.py)
from ._functional.grid_sample import affine_grid, grid_sample  # noqa: E402

__all__ += ["affine_grid", "grid_sample"]

# the 3-d convolutions and pools, the *_with_indices names and max unpooling
from ._functional.composed_layers import lp_pool3d, max_unpool1d, max_unpool2d, max_unpool3d  # noqa: E402
from ._functional.pooling import (  # noqa: E402
    adaptive_avg_pool3d, adaptive_max_pool2d_with_indices, adaptive_max_pool3d, adaptive_max_pool3d_with_indices,
    avg_pool3d, max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices,
)

__all__ += ["conv3d", "conv_transpose3d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]

# fractional max pooling, and the 1-d *_with_indices names
from ._functional.composed_layers import adaptive_max_pool1d_with_indices, max_pool1d_with_indices  # noqa: E402
from ._functional.fractional_pool import (  # noqa: E402
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d, fractional_max_pool3d_with_indices,
)

__all__ += ["max_pool1d_with_indices", "adaptive_max_pool1d_with_indices", "fractional_max_pool2d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

from . import grad  # noqa: E402,F401 (F.grad is the module nn.grad, as torch.nn.functional.grad is torch.nn.grad)
