"""PyTorch's top-level forms of nn.functional's ops whose torch.* signature differs from nn.functional's:
`train` required where F has `training=False`, `reduction` an int (0 none, 1 mean, 2 sum), other argument
orders (torch.embedding(weight, indices), torch.batch_norm(input, weight, bias, ...)). Each calls the
nn.functional op; nn is looked up at call time, as the engine sits below it. (The ops whose torch.* and
nn.functional signatures agree are nn.functional's own: `_FUNCTIONAL` in minigrad/__init__.py.)"""
import builtins
import importlib

__all__ = [
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding",
    "rrelu", "adaptive_max_pool1d", "binary_cross_entropy_with_logits", "kl_div", "margin_ranking_loss",
    "cosine_embedding_loss", "hinge_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "ctc_loss",
    "constant_pad_nd",
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
