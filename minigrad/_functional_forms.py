"""PyTorch's top-level forms of nn.functional's ops whose torch.* signature differs from nn.functional's:
`train` required where F has `training=False`, `reduction` an int (0 none, 1 mean, 2 sum), other argument
orders (torch.embedding(weight, indices), torch.batch_norm(input, weight, bias, ...)). Each calls the
nn.functional op; nn is looked up at call time, as the engine sits below it. (The ops whose torch.* and
nn.functional signatures agree are nn.functional's own: `_FUNCTIONAL` in minigrad/__init__.py.)"""
import builtins
import importlib

import numpy as np

__all__ = [
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding",
    "rrelu", "adaptive_max_pool1d", "binary_cross_entropy_with_logits", "kl_div", "margin_ranking_loss",
    "cosine_embedding_loss", "hinge_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "ctc_loss",
    "constant_pad_nd", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn_tanh", "rnn_relu", "gru", "lstm",
    "max_pool1d_with_indices", "convolution", "native_layer_norm", "native_batch_norm", "native_group_norm",
    "native_dropout", "native_channel_shuffle", "embedding_bag", "embedding_renorm_", "grid_sampler", "grid_sampler_2d",
    "affine_grid_generator",
]


def _F():
    return importlib.import_module("minigrad.nn.functional")


def _in_place(input, result):
    """`input` given result's values (the `_` forms): one copy_, so the version counter and views see a write."""
    return input.copy_(result)


def dropout(input, p, train):
    """PyTorch's `torch.dropout(input, p, train)`: nn.functional.dropout with `train` required."""
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Dropout of whole (sample, channel) slices: one draw per entry of input's first two dims, whatever its rank."""
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = importlib.import_module("minigrad").empty(shape, dtype=input.dtype).bernoulli_(1.0 - p)
    return input * keep / (1.0 - p)


def feature_dropout_(input, p, train):
    return _in_place(input, feature_dropout(input, p, train)) if train else input


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """PyTorch's `torch.layer_norm`: nn.functional.layer_norm (cudnn_enable is accepted and changes nothing)."""
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """nn.functional.group_norm (cudnn_enabled is accepted and changes nothing)."""
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """nn.functional.batch_norm with every argument required, weight and bias before the running statistics."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """nn.functional.instance_norm with every argument required, weight and bias before the running statistics."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` at `indices` (the table first, unlike nn.functional.embedding). A padding_idx outside
    [0, num_embeddings) means no padding row: nn.functional.embedding has made a negative one positive by here."""
    padding = padding_idx if 0 <= padding_idx < weight.shape[0] else None
    return _F().embedding(indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """nn.functional.rrelu; in training the slopes come from `generator` (the default one when None)."""
    if not training or generator is None:
        return _F().rrelu(input, lower, upper, training)
    mg = importlib.import_module("minigrad")
    slopes = mg.empty_like(input).uniform_(lower, upper, generator=generator)
    return mg.where(input >= 0, input, input * slopes)


def adaptive_max_pool1d(input, output_size):
    """PyTorch's top-level form returns (values, indices), always."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def _reduction(name, reduction):
    """The int PyTorch's top-level losses take: 1 mean, 2 sum, any other none."""
    if not isinstance(reduction, builtins.int) or isinstance(reduction, builtins.bool):
        raise TypeError(f"{name}(): argument 'reduction' must be int, not {type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return _F().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction), pos_weight=pos_weight)


def kl_div(input, target, reduction=1, *, log_target=False):
    return _F().kl_div(input, target, reduction=_reduction("kl_div", reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction("margin_ranking_loss", reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction("cosine_embedding_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction("poisson_nll_loss", reduction))


def _prelu(self, weight):
    return _F().prelu(self, weight)


def _hardshrink(self, lambd=0.5):
    return _F().hardshrink(self, lambd)


METHODS = {"prelu": _prelu, "hardshrink": _hardshrink}  # Tensor's methods for nn.functional's ops


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """nn.functional.ctc_loss with the reduction as an int. Called without one, PyTorch 2.13's torch.ctc_loss
    returns the per-sample losses (not the mean its signature names), and so does this."""
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _reduction("ctc_loss", reduction), zero_infinity)


def constant_pad_nd(input, pad, value=0):
    """nn.functional.pad in mode 'constant' (pairs of amounts from the last dim backwards; negative ones crop)."""
    return _F().pad(input, pad, mode="constant", value=value)


def _rnn():
    return importlib.import_module("minigrad.nn._functional.rnn")


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn().rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn().rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn().lstm_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn().gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _rnn().rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _rnn().rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _rnn().gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _rnn().lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """nn.functional.max_pool1d returning (values, indices), always (an empty stride means the kernel size)."""
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's generic convolution: conv1d/2d/3d, or their transposes, by weight's rank."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got {weight.ndim}D weight")
    if transposed:
        return getattr(_F(), f"conv_transpose{n}d")(input, weight, bias, stride, padding, output_padding, groups,
                                                    dilation)
    return getattr(_F(), f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def _stats(x, dims, eps):
    """The mean and 1 / sqrt(biased variance + eps) of x over dims, kept as size-1 dims."""
    mean = x.mean(dims, keepdim=True)
    return mean, ((x - mean) ** 2).mean(dims, keepdim=True).add(eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm's output, the mean, the 1 / std), the statistics of shape input.shape[:-k] + (1,) * k."""
    mg = importlib.import_module("minigrad")
    dims = tuple(builtins.range(input.ndim - len(normalized_shape), input.ndim))
    with mg.no_grad():
        mean, rstd = _stats(input, dims, eps)
    return _F().layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm's output, the batch mean, its 1 / std): the statistics per channel, empty outside training."""
    mg = importlib.import_module("minigrad")
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, mg.empty(0, dtype=input.dtype), mg.empty(0, dtype=input.dtype)
    dims = (0,) + tuple(builtins.range(2, input.ndim))
    with mg.no_grad():
        mean, rstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm's output, the mean, the 1 / std), the statistics of shape (N, group)."""
    mean, rstd = _stats(input.reshape(N, group, -1), 2, eps)  # (differentiable, as PyTorch's: layer and batch
    # norm's statistics are not, so theirs are computed under no_grad)
    return _F().group_norm(input, group, weight, bias, eps), mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input, p, train):
    """(output, the bool mask of the kept entries); not training, the mask is all True."""
    mg = importlib.import_module("minigrad")
    if not train:
        return input.clone(), mg.ones(input.shape, dtype=mg.bool)
    mask = mg.empty(input.shape, dtype=input.dtype).bernoulli_(1.0 - p)
    return input * mask * (1.0 / (1.0 - p) if p < 1 else 0.0), mask.bool()


def native_channel_shuffle(input, groups):
    return _F().native_channel_shuffle(input, groups)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """nn.functional.embedding_bag with the table first and the mode an int (0 sum, 1 mean, 2 max), returning
    PyTorch's four tensors: the output, each index's bag (offset2bag), each bag's size and, for 'max', the
    ids of the rows the maxima came from (for 'sum' and 'mean' PyTorch's placeholders: zeros, the sizes)."""
    mg = importlib.import_module("minigrad")
    if not isinstance(mode, builtins.int) or mode not in (0, 1, 2):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")  # (nn.functional's text)
    out = _F().embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, ("sum", "mean", "max")[mode],
                             sparse, per_sample_weights, include_last_offset, padding_idx)
    ids, off = indices.detach().numpy().reshape(-1), offsets.detach().numpy().astype("int64")
    bags = builtins.len(off) - 1 if include_last_offset else builtins.len(off)
    bag = off.searchsorted(np.arange(builtins.len(ids)), side="right") - 1
    kept = ids != padding_idx if padding_idx is not None else ids == ids
    sizes = np.bincount(bag[kept], minlength=bags)[:bags]
    long = mg.int64
    if mode == 0:
        offset2bag = mg.tensor(bag if padding_idx is not None else bag[:0], dtype=long)
        # (PyTorch's placeholders: one per offset from its inference kernel, one per bag when weight's grad is taken)
        n = bags if weight.requires_grad and mg.is_grad_enabled() else builtins.len(off)
        return out, offset2bag, mg.zeros(n, dtype=long), mg.zeros(n, dtype=long)
    size = mg.tensor(sizes, dtype=long)
    if mode == 1:
        return out, mg.tensor(bag, dtype=long), size, size.clone()
    rows = weight.detach().numpy()
    arg = np.zeros((bags, rows.shape[1]), dtype=np.int64)
    for b in builtins.range(bags):
        members = ids[(bag == b) & kept]
        if builtins.len(members):
            arg[b] = members[rows[members].argmax(0)]
    return out, mg.tensor(bag, dtype=long), size, mg.tensor(arg, dtype=long)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """nn.functional.embedding's max_norm step on its own: the rows of `input` that `indices` picks scaled down in
    place to a norm_type-norm of at most max_norm."""
    mg = importlib.import_module("minigrad")
    if indices.dtype not in (mg.int64, mg.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for "
                           "embedding_renorm_)")
    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    if input.requires_grad and input.grad_fn is None and mg.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    ids = indices.detach().numpy()
    bad = ids[(ids < 0) | (ids >= input.shape[0])]
    if bad.size:
        raise IndexError(f"select(): index {int(bad[0])} out of range for tensor of size {list(input.shape)} at "
                         "dimension 0")
    return importlib.import_module("minigrad.nn._functional.linear").embedding_renorm_(input, indices, max_norm,
                                                                                     norm_type)


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """nn.functional.grid_sample with the modes as ints (0 bilinear, 1 nearest, 2 bicubic; 0 zeros, 1 border,
    2 reflection) and align_corners required."""
    if interpolation_mode not in builtins.range(3) or padding_mode not in builtins.range(3):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode and padding_mode in 0, 1, 2, but got "
                           f"{interpolation_mode} and {padding_mode}")
    return _F().grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDINGS[padding_mode],
                            align_corners)


grid_sampler_2d = grid_sampler  # (minigrad's grid_sample is the 2-D one)


def affine_grid_generator(theta, size, align_corners):
    """nn.functional.affine_grid with align_corners required."""
    if builtins.len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return _F().affine_grid(theta, size, align_corners)
