"""multi_head_attention_forward: nn.MultiheadAttention's computation, as torch.nn.functional's.

A composite of the fused ops (linear, scaled_dot_product_attention, softmax, dropout, pad): the
engine differentiates it, so it has no backward of its own. Sequence-first layout throughout:
query (L, N, E), key and value (S, N, Ek / Ev), or unbatched (L, E) and (S, E).

The heads are split as views: a projection (T, N, E) becomes (N, H, T, E / H) by an unflatten and
a permute, no copy. With need_weights=False the attention is one scaled_dot_product_attention call
(its fused node reads those strided views in place); with need_weights=True the probabilities are
made explicitly, as PyTorch does, since they are returned: softmax(q k^T / sqrt(d) + mask) v.

Masks: bool ones mean True = masked out (the opposite of scaled_dot_product_attention's); they
become float masks of 0 and -inf. A float mask is added to the scores, so it may carry a gradient.
"""
import math
import warnings

import minigrad
from minigrad import Tensor
from minigrad.dtypes import cpp_name

from .. import functional as F  # the public ops, which honour MINIGRAD_KERNELS=reference (bound by call time)

_NEG_INF = float("-inf")


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A float mask to add to the scores: a bool one (True = masked out) as 0 / -inf in target_type."""
    if mask is None:
        return None
    if mask.dtype != minigrad.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.is_floating_point():
        return mask
    return minigrad.zeros_like(mask, dtype=target_type).masked_fill_(mask, _NEG_INF)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) inputs, False for unbatched (2-D) ones; PyTorch's AssertionErrors otherwise."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by one (3E, E) weight (q's rows first). Self-attention (q is k is v) is one
    linear, encoder-decoder attention (k is v) two; the pieces are views of the joint output."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            return F.linear(q, w, b).chunk(3, dim=-1)
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        return (F.linear(q, w_q, b_q),) + F.linear(k, w_kv, b_kv).chunk(2, dim=-1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by their own weights (E, E), (E, kdim), (E, vdim) (kdim or vdim unlike E)."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for what, w, want in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {what} weights shape of {want}, but got {w.shape}")
    for what, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and tuple(bias.shape) != (Eq,):
            raise AssertionError(f"expecting {what} bias shape of {(Eq,)}, but got {bias.shape}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _split_heads(x, num_heads):
    """(T, N, E) -> (N, H, T, E / H), a view."""
    return x.unflatten(-1, (num_heads, x.shape[-1] // num_heads)).permute(1, 2, 0, 3)


def _static(t, name, bsz, num_heads, head_dim):
    """A caller's own keys or values, (N H, S, E / H) -> (N, H, S, E / H)."""
    if t.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t.reshape(bsz, num_heads, t.shape[1], head_dim)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention: out_proj(concat_h softmax(q_h k_h^T / sqrt(E/H) + mask) v_h), q = x W_q^T + b_q, ...

    Shapes: query (L, N, E), key (S, N, kdim), value (S, N, vdim) (or unbatched (L, E), (S, kdim),
    (S, vdim)); key_padding_mask (N, S) (or (S,)); attn_mask (L, S) or (N num_heads, L, S); bool masks
    mean True = may not attend, float ones are added to the scores. Returns (attn_output (L, N, E),
    attn_weights (N, L, S) averaged over the heads, (N, num_heads, L, S) with average_attn_weights=False,
    or None when need_weights is False). bias_k, bias_v (1, 1, E) append a key and a value;
    add_zero_attn appends a zero key and value; static_k, static_v (N num_heads, S, E / num_heads)
    replace the projected keys and values. is_causal is a hint that attn_mask is the causal mask.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # one sequence: a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint alone: scaled_dot_product_attention masks the future itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer the causal one
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:  # -> (1, 1, L, S) or (N, H, L, S), to broadcast against the scores
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.reshape(1, 1, tgt_len, src_len)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
            attn_mask = attn_mask.reshape(bsz, num_heads, tgt_len, src_len)
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:  # one more key and value, the same in every sequence
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = minigrad.cat([k, bias_k.repeat(1, bsz, 1)])
        v = minigrad.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    for t in (k if static_k is None else q, v if static_v is None else q):
        if t.shape[1] != bsz:  # (PyTorch's view of the projection into bsz * num_heads heads)
            raise RuntimeError(f"shape '[{t.shape[0]}, {bsz * num_heads}, {head_dim}]' is invalid for input of size "
                               f"{t.numel()}")
    q = _split_heads(q, num_heads)
    k = _split_heads(k, num_heads) if static_k is None else _static(static_k, "static_k", bsz, num_heads, head_dim)
    v = _split_heads(v, num_heads) if static_v is None else _static(static_v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:  # one more key and value, of zeros
        zeros = minigrad.zeros(bsz, num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = minigrad.cat([k, zeros], dim=2), minigrad.cat([v, zeros.to(v.dtype)], dim=2)
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
    src_len = k.shape[2]

    if key_padding_mask is not None:  # (N, S) -> (N, 1, 1, S), merged into the attention mask
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        if attn_mask is not None and attn_mask.dtype != q.dtype:  # (PyTorch's baddbmm of the mask and q @ k^T)
            raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(attn_mask.array.dtype)}, batch1: "
                               f"{cpp_name(q.array.dtype)}, batch2: {cpp_name(k.array.dtype)}")
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)  # (N, H, L, S)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, dropout_p)
        out = weights @ v
    else:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = F.linear(out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim), out_proj_weight, out_proj_bias)
    if not need_weights:
        return (out if is_batched else out.squeeze(1)), None
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    return out, weights
