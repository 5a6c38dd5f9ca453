"""Helpers shared by the distributions (`torch.distributions.utils`'s names)."""
import numbers

import minigrad


def broadcast_all(*values):
    """Tensors of one broadcast shape from tensors and Python numbers (numbers take the tensors' dtype and device,
    or the default dtype when all are numbers)."""
    if not all(isinstance(v, (minigrad.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, minigrad.Tensor)), None)
    if like is None:
        return tuple(minigrad.tensor(float(v), dtype=minigrad.get_default_dtype()) for v in values)
    tensors = [v if isinstance(v, minigrad.Tensor) else minigrad.tensor(v, dtype=like.dtype, device=like.device)
               for v in values]
    return tuple(minigrad.broadcast_tensors(*tensors))


def clamp_probs(probs):
    """Probabilities kept inside [eps, 1 - eps], so that their logs stay finite."""
    eps = minigrad.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """sigmoid(logits) for a binary outcome, softmax(logits, -1) for a categorical one."""
    if is_binary:
        return minigrad.sigmoid(logits)
    return minigrad.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """log p - log(1 - p) for a binary outcome, log p for a categorical one (p clamped away from 0 and 1)."""
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


def _sum_rightmost(value, dims):
    """value summed over its `dims` rightmost dims (the joint log-density of independent coordinates), as
    PyTorch sums them: those dims flattened into one (a view), then one sum."""
    if dims == 0:
        return value
    return value.reshape(tuple(value.shape[:-dims]) + (-1,)).sum(-1)


def softplus(x):
    """log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|), max written (x + |x|) / 2 (gradient 1/2 at 0)."""
    return (x + x.abs()) * 0.5 + (-x.abs()).exp().log1p()


class lazy_property:
    """A property computed on first read and then kept on the instance (Categorical's probs from its logits, ...).
    It is computed with gradients on, so that the cached tensor stays connected to the parameters."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with minigrad.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.__name__] = value  # an instance attribute now hides this descriptor
        return value
