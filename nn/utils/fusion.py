"""Folding an eval-mode BatchNorm into the convolution or linear layer before it, as torch.nn.utils.fusion:
BN(conv(x)) = s * (W x + b - mean) + beta with s = gamma / sqrt(var + eps) is one layer of weight s W and bias
s (b - mean) + beta. Inference only: the running statistics are frozen into the weights."""
import copy

import minigrad

from ..parameter import Parameter


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` whose weight and bias also apply `bn` (both in eval mode). transpose: conv is a
    ConvTranspose*d (its output channels are the weight's dim 1)."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None, \
        "bn.running_mean and bn.running_var must not be None"
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def _bn_scale_shift(bias, mean, var, eps, gamma, beta, conv):
    """s = gamma / sqrt(var + eps) and the fused bias s (bias - mean) + beta (a missing bias, gamma, beta: 0, 1, 0),
    the bias in PyTorch's order of rounding: a convolution's ((bias - mean) / sqrt(var + eps)) gamma + beta, a
    linear layer's (bias - mean) s + beta."""
    bias = minigrad.zeros_like(mean) if bias is None else bias
    gamma = minigrad.ones_like(mean) if gamma is None else gamma
    beta = minigrad.zeros_like(mean) if beta is None else beta
    rstd = (var + eps).rsqrt()
    scale = gamma * rstd
    fused_bias = (bias - mean) * rstd * gamma + beta if conv else (bias - mean) * scale + beta
    return scale, fused_bias, bias


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) Parameters of the convolution that computes bn(conv(x)); conv_b, bn_w, bn_b may be None."""
    scale, fused_b, conv_b = _bn_scale_shift(conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, conv=True)
    shape = [1, -1] if transpose else [-1, 1]  # the output channels' dim of the weight
    shape += [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * scale.reshape(shape)).to(conv_w.dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b.to(conv_b.dtype), conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` whose weight and bias also apply `bn` (both in eval mode; bn of linear's out_features
    channels, or of one)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
        f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    assert bn.running_mean is not None and bn.running_var is not None, \
        "bn.running_mean and bn.running_var must not be None"
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) Parameters of the linear layer that computes bn(linear(x)); linear_b may be None."""
    scale, fused_b, linear_b = _bn_scale_shift(linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, conv=False)
    return Parameter(linear_w * scale.unsqueeze(-1), linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
