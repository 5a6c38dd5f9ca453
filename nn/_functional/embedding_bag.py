"""embedding_bag: sums, means or maxima of bags of embedding rows, without the (bags, entries, dim) tensor of rows.

Composed of differentiable minigrad ops, so autograd gives the gradients of weight and per_sample_weights:
the rows of all entries are looked up once (the fused embedding op, (entries, dim)); 'sum' and 'mean'
add each kept entry's row into its bag's with index_add (an entry of padding_idx is left out); 'max' lays
the kept entries' rows out as (bags, longest bag, dim), the holes -inf, and takes amax over the bag
(gradient to the maximum; duplicates of a row in a bag share it, which sums to the same row gradient).
The bag layout (which entry goes to which bag) is worked out on the host from input and offsets.
"""
import numpy as np

import minigrad
from minigrad import backends

from . import reference as _ref
from ._common import check_tensor
from .linear import embedding as _embedding
from .linear import embedding_renorm_, grad_scaled_by_freq

_MODES = ("sum", "mean", "max")


def _host(t):
    return np.asarray(t.detach().cpu().numpy())


def _check_int(t, arg):
    if t.array.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument {arg} to have one of the following scalar types: "
                           f"Long, Int; but got minigrad.{t.dtype._legacy} instead (while checking arguments for "
                           "embedding_bag)")  # (the legacy type name, minigrad.FloatTensor, as PyTorch's text)


def _bags(offsets, n_entries, include_last_offset):
    """(starts, ends) of each bag, host int64 arrays, from a 1-D offsets; PyTorch's errors for bad offsets."""
    off = _host(offsets).astype(np.int64)
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if off.size and off[-1] > n_entries:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_entries} but got offsets[-1] "
                           f"of {off[-1]}")
    if np.any(np.diff(off) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:
        return off[:-1], off[1:]
    return off, np.append(off[1:], n_entries)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Per bag of ids, the sum, mean or max of their rows of `weight`.

    Shapes: input (B, N) (B bags of N ids; offsets None) or (E,) with offsets (B,) the bags' starts (B + 1 with
    include_last_offset=True: the last one is the end); weight (num_embeddings, D) -> output (B, D).
    per_sample_weights (input's shape) scales each entry's row, with mode='sum' only. Entries equal to
    padding_idx are left out of their bag (and of the count 'mean' divides by); an empty bag gives zeros.
    max_norm renormalises the looked-up rows in place first (as F.embedding); scale_grad_by_freq divides
    each row's gradient by its id's count in input ('sum' and 'mean'). sparse=True raises NotImplementedError.
    """
    check_tensor(input, "input", "embedding_bag")
    check_tensor(weight, "weight", "embedding_bag")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        check_tensor(offsets, "offsets", "embedding_bag")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not supported in minigrad; "
                                  "use sparse=False (dense gradients)")
    _check_int(input, "#1 'indices'")
    n, dim = weight.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= n
    ids = _host(input).reshape(-1).astype(np.int64)
    bad = np.flatnonzero((ids < 0) | (ids >= n))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {ids[bad[0]]} which is not in the valid range "
                           f"[0, {n})")
    if max_norm is not None:
        with minigrad.no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if per_sample_weights is not None and per_sample_weights.array.dtype != weight.array.dtype:  # (not promoted)
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           f"'per_sample_weights'; but type minigrad.{weight.dtype._legacy} does not equal "
                           f"minigrad.{per_sample_weights.dtype._legacy} (while checking arguments for embedding_bag)")

    E = ids.size
    if input.ndim == 2:
        B, N = input.shape
        starts = np.arange(B, dtype=np.int64) * N
        ends = starts + N
    else:
        _check_int(offsets, "#2 'offsets'")
        starts, ends = _bags(offsets, E, include_last_offset)
        B = starts.size
    # entry e's bag (-1 for entries after the last bag's end, or of padding_idx: left out)
    # (bags are contiguous and in order: an entry's bag is the last one starting at or before it)
    bag_of = np.searchsorted(starts, np.arange(E), side="right").astype(np.int64) - 1
    if B:
        bag_of[np.arange(E) >= ends[-1]] = -1
    if padding_idx is not None:
        bag_of[ids == padding_idx] = -1
    kept = np.flatnonzero(bag_of >= 0)
    counts = np.bincount(bag_of[kept], minlength=B)

    flat = input.reshape(-1)
    rows = backends.pick(_embedding, _ref.embedding)(flat, weight, None)  # (E, D)
    if scale_grad_by_freq and rows.requires_grad:
        rows = grad_scaled_by_freq(rows, flat, n)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    dev = weight.device
    if mode in ("sum", "mean"):
        # (every entry kept, the usual bags: the rows as they are, no copy of them picked out)
        kept_rows = rows if kept.size == E else rows[minigrad.tensor(kept, device=dev)]
        out = minigrad.zeros(B, dim, dtype=rows.dtype, device=dev).index_add(
            0, minigrad.tensor(bag_of[kept], device=dev), kept_rows)
        if mode == "mean":
            div = np.maximum(counts, 1).astype(out.array.dtype)[:, None]
            out = out / minigrad.tensor(div, device=dev)
        return out
    # max: (B, L) positions into rows + one -inf row at E for the holes
    L = max(int(counts.max()) if B else 0, 1)
    pos = np.full((B, L), E, dtype=np.int64)
    kb = bag_of[kept]
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]) if B else np.zeros(0, dtype=np.int64)
    pos[kb, np.arange(kept.size) - first[kb]] = kept
    hole = minigrad.full((1, dim), float("-inf"), dtype=rows.dtype, device=dev)
    out = minigrad.cat([rows, hole])[minigrad.tensor(pos, device=dev)].amax(1)
    return out.masked_fill(minigrad.tensor((counts == 0)[:, None], device=dev), 0.0)
