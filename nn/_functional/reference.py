"""The fused ops written from minigrad's primitive ops, differentiated by autograd: what to read.

Each function here is the definition of an op of nn.functional (and AdamW's update): the ops in this
package (one Function each, plain array code) and the backends (minigrad/backends) must agree with
it (tests/nn/test_three_layers.py). MINIGRAD_KERNELS=reference runs these instead of the ops.
"""
import math

import minigrad
from minigrad import Tensor
from minigrad.autograd.function import Function
from minigrad.device import array_module
from minigrad.ops.special_array import erf as _erf_array


class Erf(Function):
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save(self=x)
        return _erf_array(x.array)

    @staticmethod
    def backward(ctx, g):  # d erf(x) = 2/sqrt(pi) exp(-x^2) dx
        x = ctx._saved_self
        return g * (2.0 / math.sqrt(math.pi)) * minigrad.exp(-(x * x))


def erf(x):
    return Erf.apply(x)


def linear(input, weight, bias=None):
    out = input @ weight.t()
    return out if bias is None else out + bias


def embedding(input, weight, padding_idx=None, scale_grad_by_freq=False):
    a = input.array
    if a.size and (int(a.min()) < 0 or int(a.max()) >= weight.shape[0]):  # (indexing would wrap a negative id)
        raise IndexError("index out of range in self")
    out = weight[input]
    if padding_idx is not None:  # same values, but no gradient flows into the padding row
        keep = (input != padding_idx).unsqueeze(-1)
        out = minigrad.where(keep, out, out.detach())
    if scale_grad_by_freq:  # same values; each position's gradient / how often its id occurs (a row's mean)
        s = 1.0 / input.reshape(-1).bincount(minlength=weight.shape[0])[input].unsqueeze(-1).to(out.dtype)
        out = out.detach() + (out - out.detach()) * s
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dim=dims, keepdim=True)
    xc = input - mean
    var = (xc * xc).mean(dim=dims, keepdim=True)
    out = xc / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def gelu(input, approximate="none"):
    if approximate == "tanh":
        inner = (input + 0.044715 * input * input * input) * math.sqrt(2.0 / math.pi)
        return 0.5 * input * (1.0 + minigrad.tanh(inner))
    return 0.5 * input * (1.0 + erf(input * (1.0 / math.sqrt(2.0))))


def relu(input):
    return minigrad.relu(input)


def softmax(input, dim):
    e = (input - input.amax(dim=dim, keepdim=True).detach()).exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(input, dim):
    shifted = input - input.amax(dim=dim, keepdim=True).detach()
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def dropout(input, p=0.5, training=True):
    if not training or p == 0:
        return input
    xp = array_module(input.array)
    keep = minigrad.random.generator(xp).random(input.array.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * Tensor._wrap((keep * scale).astype(input.array.dtype))


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    if input.ndim == 1:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    C = input.shape[1]
    if input.ndim > 2:  # (N, C, d1...) -> (N*d1*..., C)
        perm = (0,) + tuple(range(2, input.ndim)) + (1,)
        input = input.permute(*perm).reshape(-1, C)
    out_shape = target.shape
    target = target.reshape(-1)
    logp = log_softmax(input, 1)
    valid = target != ignore_index
    safe = minigrad.where(valid, target, 0)
    picked = logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w_t = weight[safe] if weight is not None else None
    nll = -picked if w_t is None else -picked * w_t
    validf = valid.to(input.dtype)
    nll = nll * validf
    denom = validf.sum() if w_t is None else (w_t * validf).sum()
    if label_smoothing > 0:
        smooth = -(logp if weight is None else logp * weight).sum(dim=1) * validf
        nll = (1.0 - label_smoothing) * nll + (label_smoothing / C) * smooth
    if reduction == "none":
        return nll.reshape(out_shape)
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / denom


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    att = (query @ key.transpose(-2, -1)) * scale
    xp = array_module(query.array)
    if is_causal:
        keep = Tensor._wrap(xp.tril(xp.ones((L, S), dtype=bool)))
        att = att.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == minigrad.bool:
            att = att.masked_fill(~attn_mask, float("-inf"))
        else:
            att = att + attn_mask
    att = softmax(att, -1)
    att = dropout(att, dropout_p, True)
    return att @ value


def rnn_cell(mode, input, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One step of a recurrent layer -> (h, c) (c None but for LSTM). mode 'RNN_TANH' or 'RNN_RELU':
    h = act(x W_ih^T + b_ih + h W_hh^T + b_hh); 'LSTM', gates i, f, g, o (and h projected by w_hr when
    given); 'GRU', gates r, z, n, with r applied to W_hn h + b_hn."""
    gi, gh = linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, -1)
        c = minigrad.sigmoid(f) * cx + minigrad.sigmoid(i) * minigrad.tanh(g)
        h = minigrad.sigmoid(o) * minigrad.tanh(c)
        return (h if w_hr is None else linear(h, w_hr)), c
    if mode == "GRU":
        (i_r, i_z, i_n), (h_r, h_z, h_n) = gi.chunk(3, -1), gh.chunk(3, -1)
        r, z = minigrad.sigmoid(i_r + h_r), minigrad.sigmoid(i_z + h_z)
        n = minigrad.tanh(i_n + r * h_n)
        return (1 - z) * n + z * hx, None
    return (minigrad.tanh(gi + gh) if mode == "RNN_TANH" else minigrad.relu(gi + gh)), None


def rnn_layer(mode, input, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False):
    """One layer in one direction over input (T, B, I) from hx (B, Hr) and cx (B, H) (LSTM; else None)
    -> (output (T, B, Hr), the last h, the last c); reverse runs from t = T-1 down to 0."""
    T = input.shape[0]
    outs = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        hx, cx = rnn_cell(mode, input[t], hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr)
        outs[t] = hx
    return minigrad.stack(outs), hx, cx


def adam_update(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, decoupled, step,
                max_exp_avg_sq=None):
    """One Adam (decoupled=False) / AdamW step on the Tensors param, exp_avg m, exp_avg_sq v (and
    max_exp_avg_sq with amsgrad), written into them: nn/optim/adam.py's update, with minigrad's ops."""
    with minigrad.no_grad():
        g = grad
        if weight_decay and not decoupled:
            g = g + weight_decay * param  # Adam: an L2 penalty in the gradient
        p = param * (1.0 - lr * weight_decay) if decoupled else param  # AdamW: decoupled decay
        m = beta1 * exp_avg + (1.0 - beta1) * g
        v = beta2 * exp_avg_sq + (1.0 - beta2) * g * g
        exp_avg.copy_(m)
        exp_avg_sq.copy_(v)
        if max_exp_avg_sq is not None:
            v = minigrad.maximum(max_exp_avg_sq, v)
            max_exp_avg_sq.copy_(v)
        bc1, bc2 = 1.0 - beta1**step, 1.0 - beta2**step
        param.copy_(p - (lr / bc1) * m / ((v / bc2).sqrt() + eps))
