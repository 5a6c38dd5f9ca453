"""torch.nn.attention.flex_attention as a reference: the scores q k^T * scale, each changed by `score_mod(score, b,
h, q_idx, kv_idx)` and masked where `block_mask`'s mask_mod is False, then softmax and @ v, all as minigrad ops
(gradients through autograd). The mods get index tensors shaped to broadcast against the scores (B, H, L, S):
b (B,1,1,1), h (1,H,1,1), q_idx (1,1,L,1), kv_idx (1,1,1,S), so one call computes every score (PyTorch vmaps the
same functions over scalars). No score_mod and no lse: scaled_dot_product_attention with the mask as a bool
attn_mask; otherwise the same steps as recorded ops. Rows with every key masked out give zeros (lse -inf)."""
import math
import warnings

import numpy as np

import minigrad
from minigrad.tensor import Tensor

from .._functional.attention import scaled_dot_product_attention

_DEFAULT_SPARSE_BLOCK_SIZE = 128


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=minigrad.bool)


def or_masks(*mask_mods):
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=minigrad.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods):
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=minigrad.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _indices(B, H, L, S):
    """b, h, q_idx, kv_idx: int64 aranges shaped to broadcast to (B, H, L, S)."""
    return (minigrad.arange(B).view(B, 1, 1, 1), minigrad.arange(H).view(1, H, 1, 1),
            minigrad.arange(L).view(1, 1, L, 1), minigrad.arange(S).view(1, 1, 1, S))


def _is_score_mod(fn):
    """A score_mod takes (score, b, h, q_idx, kv_idx), a mask_mod (b, h, q_idx, kv_idx) (PyTorch tells them so)."""
    import inspect

    params = [p for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty]
    return len(params) == 5


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The bool mask (B, H, Q_LEN, KV_LEN) of a mask_mod, or of a score_mod: True where its score is not -inf."""
    B, H = B or 1, H or 1
    b, h, m, n = _indices(B, H, Q_LEN, KV_LEN)
    if _is_score_mod(mod_fn):
        return ~minigrad.isneginf(mod_fn(minigrad.zeros(B, H, Q_LEN, KV_LEN), b, h, m, n))
    return mod_fn(b, h, m, n).expand(B, H, Q_LEN, KV_LEN)


def _ordered(blocks):
    """(num_blocks (..., R), indices (..., R, C)): each row's count of blocks set, their columns first (ascending)."""
    order = np.argsort(~blocks, axis=-1, kind="stable").astype(np.int32)
    return Tensor._wrap(blocks.sum(-1, dtype=np.int32)), Tensor._wrap(order)


class BlockMask:
    """A mask in blocks of BLOCK_SIZE: a block is skipped (every entry masked), full (none masked) or partial
    (mask_mod decides each entry). kv_* list each query block's key blocks, q_* each key block's query blocks."""

    def __init__(self, partial, full, mask_mod, seq_lengths, BLOCK_SIZE):
        self.kv_num_blocks, self.kv_indices = _ordered(partial)
        self.full_kv_num_blocks, self.full_kv_indices = _ordered(full)
        self.q_num_blocks, self.q_indices = _ordered(partial.swapaxes(-1, -2))
        self.full_q_num_blocks, self.full_q_indices = _ordered(full.swapaxes(-1, -2))
        self.mask_mod, self.seq_lengths, self.BLOCK_SIZE = mask_mod, tuple(seq_lengths), tuple(BLOCK_SIZE)
        self._partial, self._full = partial, full

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self):
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return math.prod(self.shape)

    def sparsity(self):
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed = int(self._partial.sum() + self._full.sum()) * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed / self.numel())

    def to_dense(self):
        """(B, H, query blocks, key blocks) int32: 1 where a block is computed (partial or full)."""
        return Tensor._wrap((self._partial | self._full).astype(np.int32))

    def _dense_mask(self, B, H):
        """The bool mask (B, H, L, S): mask_mod's value in partial blocks, True in full ones, False elsewhere."""
        (L, S), (bq, bk) = self.seq_lengths, self.BLOCK_SIZE

        def expand(blocks):
            return np.broadcast_to(blocks.repeat(bq, -2).repeat(bk, -1)[..., :L, :S], (B, H, L, S))

        mask = self.mask_mod(*_indices(B, H, L, S)).array
        return Tensor._wrap((expand(self._partial) & mask) | expand(self._full))

    def __repr__(self):
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        fields = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                  "q_indices", "full_q_num_blocks", "full_q_indices"]
        lines = [f"    {f}={getattr(self, f).shape}," for f in fields]
        return "\n".join(["BlockMask(", *lines, f"    BLOCK_SIZE={self.BLOCK_SIZE},", f"    shape={self.shape},",
                          f"    sparsity={self.sparsity():.2f}%,", f"    mask_mod={name}", ")"])


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False):
    """The BlockMask of mask_mod over (B, H, Q_LEN, KV_LEN) (B, H None: 1, broadcast over the batch, heads)."""
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    bq, bk = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN).array
    # padded with False to whole blocks, then (B, H, query blocks, key blocks, bq, bk)
    Lp, Sp = -(-Q_LEN // bq) * bq, -(-KV_LEN // bk) * bk
    mask = np.pad(mask, ((0, 0), (0, 0), (0, Lp - Q_LEN), (0, Sp - KV_LEN)))
    blocks = mask.reshape(mask.shape[:2] + (Lp // bq, bq, Sp // bk, bk)).swapaxes(3, 4)
    full = blocks.all(axis=(-2, -1))
    return BlockMask(blocks.any(axis=(-2, -1)) & ~full, full, mask_mod, (Q_LEN, KV_LEN), (bq, bk))


def _check(query, key, value, block_mask, enable_gqa):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    Hq, Hkv = query.size(-3), key.size(-3)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={Hq} and "
                         f"Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and Hq % Hkv:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} and "
                         f"Hkv={Hkv}.")
    if query.size(0) != key.size(0):
        raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but got "
                         f"block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
    if block_mask is not None:
        (bl, bs), L, S = block_mask.shape[-2:], query.size(-2), key.size(-2)
        if L > bl or S > bs:
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a smaller length than you're using it "
                             "for, you likely need to create a new block mask.")
        if L < bl or S < bs:
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a larger length than you're using it "
                             "for, you can either 1. create a new block mask with the correct length, or 2. 'adjust' "
                             "the existing block mask to the correct length by calling block_mask._adjust(q_len, "
                             "kv_len). This essentially 'crops' the block mask to the upper left corner, which does "
                             "not work for all mask_mods!")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None):
    """softmax(score_mod(q k^T * scale) masked by block_mask) @ v -> out (B, Hq, L, Ev), and the log-sum-exp
    of each row's scores (B, Hq, L) with return_lse. kernel_options: accepted, nothing to tune here."""
    _check(query, key, value, block_mask, enable_gqa)
    if return_lse:
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning, stacklevel=2)
    B, Hq, L, E = query.shape
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    mask = None if block_mask is None else block_mask._dense_mask(B, Hq)
    if score_mod is None and not return_lse:
        return scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=scale, enable_gqa=enable_gqa)
    if Hq != key.size(-3):  # grouped-query: each key/value head serves Hq / Hkv query heads in a row
        key, value = key.repeat_interleave(Hq // key.size(-3), -3), value.repeat_interleave(Hq // key.size(-3), -3)
    scores = (query @ key.transpose(-2, -1)) * scale
    if score_mod is not None:
        scores = score_mod(scores, *_indices(B, Hq, L, key.size(-2))).expand(scores.shape)
    if mask is not None:
        # a row with no key left: its scores 0 (softmax finite, gradients zero), its weights 0 and lse -inf after
        alive = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~alive, 0.0)
    probs = scores.softmax(-1)
    lse = scores.logsumexp(-1) if return_lse else None
    if mask is not None:
        probs = probs.masked_fill(~alive, 0.0)
        lse = None if lse is None else lse.masked_fill(~alive[..., 0], float("-inf"))
    out = probs @ value
    return (out, lse) if return_lse else out


__all__ = ["BlockMask", "create_block_mask", "create_mask", "flex_attention", "and_masks", "or_masks", "noop_mask"]
