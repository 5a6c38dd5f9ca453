"""The rest of torch.nn.functional's losses, each a composition of minigrad's ops (as PyTorch composes
them), differentiated by autograd:

    soft_margin_loss, margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss, poisson_nll_loss, gaussian_nll_loss,
    multilabel_soft_margin_loss, multi_margin_loss

Every one takes `reduction` ('mean', 'sum', 'none') and (but triplet_margin_with_distance_loss, as in
PyTorch) the deprecated size_average / reduce.
"""
import math

from minigrad.autograd.composite import composite_node
from minigrad.autograd.recording import escape
from minigrad.ops._util import not_differentiable
from minigrad.ops.elementwise import add_scalar

from ._common import check_tensor
from .composed import pairwise_distance
from .loss import _float_pair, _legacy_reduction, _mg, _reduce


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + e^(-y x)) (y = +-1), averaged over every element. Shapes: (*), (*) -> () or (*)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)  # (PyTorch's Python checks it first)
    target = _float_pair(input, target, "soft_margin_loss")  # (PyTorch computes it in the input's dtype)
    not_differentiable(target, "target", "soft_margin_loss")  # (PyTorch's derivative formula has no target term)
    return _reduce(_mg().logaddexp(-input * target, input.new_zeros(())), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -y (x1 - x2) + margin): y = 1 asks x1 to rank above x2, y = -1 below. Shapes: (N,) or () each."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    gap = -target * (input1 - input2)
    gap = add_scalar(gap, margin) if gap.array.dtype.kind == "f" else gap + margin  # (PyTorch's AddBackward1)
    return _reduce(gap.clamp_min(0.0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (x a distance, y = +-1). Shapes: (*), (*) -> () or (*)."""
    check_tensor(input, "input", "hinge_embedding_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    mg = _mg()
    hinge = mg.where(target != 1, (margin - input).clamp_min(0.0), 0.0)
    return _reduce(hinge + mg.where(target != -1, input, 0.0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1; cos over dim 1 (dim 0 for 1-d
    inputs), each squared norm with 1e-12 added. Shapes: (N, D), (N, D), (N,) or (D,), (D,), () -> () or (N,)."""
    check_tensor(input1, "input1", "cosine_embedding_loss", 1)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    # PyTorch's checks: the target's dims fix the inputs' (a (N, 1) target would broadcast to (N, N)); the
    # inputs then broadcast with each other
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise RuntimeError(f"{target.ndim}D target tensor expects {target.ndim + 1}D input tensors, but found inputs "
                           f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.ndim - 1
    eps = 1e-12
    cos = (input1 * input2).sum(dim) / (((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)).sqrt()
    mg = _mg()
    terms = mg.where(target == 1, 1.0 - cos, 0.0) + mg.where(target == -1, (cos - margin).clamp_min(0.0), 0.0)
    return _reduce(terms, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d = pairwise_distance(p, eps); swap: d(a, n) is min(d(a, n),
    d(p, n)). Shapes: (N, D) or (D,) each -> () or (N,)."""
    check_tensor(anchor, "anchor", "triplet_margin_loss", 1)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:  # (PyTorch's check, as triplet_margin_with_distance_loss's)
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _mg().minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    gap = add_scalar(d_pos, margin) if d_pos.array.dtype.kind == "f" else margin + d_pos  # (PyTorch's AddBackward1)
    return _reduce((gap - d_neg).clamp_min(0.0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with any distance: `distance_function(x1, x2)` (a callable giving one
    non-negative distance per pair; pairwise_distance by default). swap: d(a, n) is min(d(a, n), d(p, n)).
    Shapes: anchor, positive, negative (N, *) or (*) each, all of the same rank -> () or (N,)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = _mg().minimum(d_neg, distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of target ~ Poisson(rate): e^x - y x with log_input (x = log rate), else
    x - y log(x + eps); full adds Stirling's y log y - y + log(2 pi y) / 2 where y > 1. Shapes: (*), (*)."""
    check_tensor(input, "input", "poisson_nll_loss")
    check_tensor(target, "target", "poisson_nll_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    mg = _mg()
    terms = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        y = mg.where(target > 1, target, 1.0)  # (where y <= 1 the term is 0; 1 keeps the log finite)
        stirling = y * y.log() - y + 0.5 * (2 * math.pi * y).log()
        terms = terms + mg.where(target > 1, stirling, 0.0)
    return _reduce(terms, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full); the clamp
    passes no gradient, as PyTorch's. var: input's shape, or it without its last dim, or it with one dim of
    size 1 (one variance shared along it), or a float. Shapes: (N, *), (N, *), var -> () or (N, *)."""
    mg = _mg()
    if not isinstance(var, mg.Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full(tuple(input.shape), float(var))
    else:
        escape("gaussian_nll_loss's check of var's values")  # (a replay would skip it)
        if bool((var < 0).any()):
            raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    with mg.no_grad():
        floor = var.clamp_min(eps) - var  # the clamp's shift, added outside the graph
    var = var + floor
    terms = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        terms = terms + 0.5 * math.log(2 * math.pi)
    return _reduce(terms, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), averaged over the C labels of each sample.
    Shapes: input (N, C) or (C,), target the same (0/1), weight (C,) -> () or (N,)."""
    reduction = _legacy_reduction(size_average, reduce, reduction, invalid="{} is not valid")
    from .activation import logsigmoid

    terms = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        terms = terms * weight
    per_sample = terms.sum(-1) / input.shape[-1]
    return _reduce(per_sample, reduction)


@composite_node("MultiMarginLossBackward0", RuntimeError("derivative for aten::multi_margin_loss_backward is not "
                                                          "implemented"), "NotImplemented")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """sum over classes i != y of max(0, margin - x[y] + x[i])^p / C (times weight[y]), per sample.
    Shapes: input (N, C) or (C,), target (N,) or () int64 in [0, C) -> () or (N,)."""
    check_tensor(input, "input", "multi_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if isinstance(target, _mg().Tensor) and target.dtype != _mg().int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy[:-6]}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    y = target.reshape(-1, 1)
    C = x.shape[1]
    if y.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.shape[0] != C:
        raise RuntimeError(f"inconsistent weight size, expected {C} but got {list(weight.shape)}")
    escape("multi_margin_loss's check of the target's range")  # (a replay would skip it)
    if y.numel() and not bool(((y >= 0) & (y < C)).all()):
        raise RuntimeError("target out of range")
    mg = _mg()
    hinge = (margin - x.gather(1, y) + x).clamp_min(0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        not_differentiable(weight, "weight", "multi_margin_loss")  # (its gradient would be composed here)
        hinge = hinge * weight[y]
    not_target = mg.arange(C, device=x.device).reshape(1, C) != y
    per_sample = mg.where(not_target, hinge, 0.0).sum(1) / C
    return _reduce(per_sample if input.ndim == 2 else per_sample.reshape(()), reduction)
