"""embedding_bag: sums, means or maxima of bags of embedding rows, without the (bags, entries, dim) tensor of rows.

One node, EmbeddingBagBackward0 (PyTorch's), for the gradients of weight and per_sample_weights: the rows of
all entries are looked up once ((entries, dim)); 'sum' and 'mean' add each kept entry's row into its bag's (an
entry of padding_idx is left out); 'max' lays the kept entries' rows out as (bags, longest bag, dim), the holes
-inf, and sends each maximum's gradient to its entry's row.
The bag layout (which entry goes to which bag) is an op of input and offsets (see _bag_of); 'max' reads it on
the host to lay the rows out.
"""
import functools
import warnings

import numpy as np

import minigrad
from minigrad.autograd import recording
from minigrad.autograd.function import keep_absent_edges
from minigrad.dtypes import type_text
from minigrad.ops.array_op import array_op

from ._common import Function, check_tensor, once_differentiable, second_order, wrap, xp_of
from .linear import embedding_renorm_, scatter_add_rows, sparse_rows_grad

_MODES = ("sum", "mean", "max")


def _host(t):
    return np.asarray(t.detach().cpu().numpy())


def _check_int(t, arg):
    if t.array.dtype.type not in (np.int64, np.int32):  # (PyTorch's two index types)
        raise RuntimeError(f"Expected tensor for argument {arg} to have one of the following scalar types: "
                           f"Long, Int; but got {type_text(t.dtype)} instead (while checking arguments for embedding_bag)")


def _starts(off, n_entries, include_last_offset):
    """Each bag's start from a 1-D int64 offsets array (a bag ends where the next starts, the last at the
    input's end: with include_last_offset=True, offsets[-1] only bounds, as PyTorch's CPU kernels read it);
    PyTorch's errors for bad offsets."""
    if off.size and int(off[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(off[0])}")
    if off.size and int(off[-1]) > n_entries:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_entries} but got offsets[-1] "
                           f"of {int(off[-1])}")
    if off.size > 1 and bool((off[1:] < off[:-1]).any()):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    return off[:-1] if include_last_offset else off


def _bag_of(n, padding_idx, include_last_offset, fast_path, ids, offsets=None, bag_len=None):
    """Each entry's bag, as an int64 array of the entries' count: B (one past the last bag) for an entry
    left out (of padding_idx, or of no bag at all), so that a sum into B + 1 rows drops it. `fast_path`: the
    call is one PyTorch's CPU sends to its own kernel, whose out-of-range text differs.

    A function of the call's arrays, run as an op (array_op): a minigrad.compile replay works the layout
    out again from each call's ids and offsets, and checks them, instead of freezing the captured one."""
    xp = xp_of(ids)
    ids = ids.reshape(-1)
    E = ids.size
    bad = xp.flatnonzero((ids < 0) | (ids >= n))
    if bad.size:
        i = int(bad[0])
        if fast_path:
            raise RuntimeError(f"Index {i} of input takes value {int(ids[i])} which is not in the valid range [0, {n})")
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {int(ids[i])}")
    entries = xp.arange(E, dtype=np.int64)
    if offsets is None:  # (B, N) input: fixed-length bags
        bag_of = entries // bag_len
        B = E // bag_len if bag_len else 0
    else:
        starts = _starts(offsets.astype(np.int64), E, include_last_offset)
        B = starts.size
        # (bags are contiguous and in order: an entry's bag is the last one starting at or before it)
        bag_of = xp.searchsorted(starts, entries, side="right").astype(np.int64) - 1 if B else entries * 0
    if padding_idx is not None:
        bag_of[ids == padding_idx] = B
    return bag_of


def _counts(B, dtype, bag_of):
    """The number of entries kept in each bag, at least 1 (what 'mean' divides by), as a (B, 1) array."""
    xp = xp_of(bag_of)
    return xp.maximum(xp.bincount(bag_of, minlength=B + 1)[:B], 1).astype(dtype)[:, None]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Per bag of ids, the sum, mean or max of their rows of `weight`.

    Shapes: input (B, N) (B bags of N ids; offsets None) or (E,) with offsets (B,) the bags' starts (B + 1 with
    include_last_offset=True: the last one is the end); weight (num_embeddings, D) -> output (B, D).
    per_sample_weights (input's shape) scales each entry's row, with mode='sum' only. Entries equal to
    padding_idx are left out of their bag (and of the count 'mean' divides by); an empty bag gives zeros.
    max_norm renormalises the looked-up rows in place first (as F.embedding); scale_grad_by_freq divides
    each row's gradient by its id's count in input ('sum' and 'mean'). sparse=True ('sum' and 'mean'): weight's
    gradient is a sparse COO tensor of one row per entry (padding_idx's left out), uncoalesced, as PyTorch's.
    """
    check_tensor(input, "input", "embedding_bag")
    check_tensor(weight, "weight", "embedding_bag")
    if weight.dtype == minigrad.int64 and input.dtype.is_floating_point:  # the old order, still taken as PyTorch
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        input, weight = weight, input
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
        if offsets.dtype != input.dtype:  # (PyTorch casts both to their common type, then checks the ids' type)
            common = minigrad.promote_types(input.dtype, offsets.dtype)
            input, offsets = input.to(common), offsets.to(common)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    _check_int(input, "#1 'indices'")
    if not weight.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got {type_text(weight.dtype)} instead (while checking "
                           "arguments for embedding_bag)")
    n, dim = weight.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= n
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if per_sample_weights is not None and per_sample_weights.array.dtype != weight.array.dtype:  # (not promoted)
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           f"'per_sample_weights'; but type minigrad.{weight.dtype._legacy} does not equal "
                           f"minigrad.{per_sample_weights.dtype._legacy} (while checking arguments for embedding_bag)")
    # (PyTorch's CPU kernel for 'sum' and 'mean' of reduced or single floats without padding_idx)
    fast_path = mode != "max" and padding_idx is None and weight.dtype in (minigrad.float32, minigrad.float16)
    if input.ndim == 2:
        B = input.shape[0]
        layout = functools.partial(_bag_of, n, padding_idx, include_last_offset, fast_path, bag_len=input.shape[1])
        bag_of = array_op(layout, input)
    else:
        _check_int(offsets, "#2 'offsets'")
        B = max(offsets.shape[0] - 1, 0) if include_last_offset else offsets.shape[0]
        bag_of = array_op(functools.partial(_bag_of, n, padding_idx, include_last_offset, fast_path), input,
                          offsets)
    if max_norm is not None:
        with minigrad.no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)

    if mode == "max" and input.ndim == 2:  # (B, L) as the input: each entry in its place, left-out ones holes
        bag_of = array_op(functools.partial(_grid_layout, B, input.shape[1]), bag_of)
    elif mode == "max":  # (B, L) positions into the rows, L the longest bag: a shape taken from the data
        recording.escape("embedding_bag(mode='max'), whose layout's shape depends on the data,")
        bag_of = minigrad.tensor(_max_layout(_host(bag_of), B), device=weight.device)
    args = (input.reshape(-1), weight, bag_of, per_sample_weights, B, mode, padding_idx, scale_grad_by_freq, sparse)
    return keep_absent_edges(EmbeddingBag.apply(*args), args, (3,))


def _grid_layout(B, L, bag_of):
    """A 2-d input's (B, L) positions for 'max': entry b L + l at [b, l], E (the hole) where it is left out; a shape
    the input fixes (at least one column), so a compiled step replays it. Holes between kept entries take no
    maximum, as _max_layout's at the end."""
    xp = xp_of(bag_of)
    E = bag_of.size
    pos = xp.where(bag_of < B, xp.arange(E), E).reshape(B, L)
    return pos if L else xp.full((B, 1), E, dtype=pos.dtype)


def _max_layout(bag_of, B):
    """(B, L) positions of each bag's kept entries, L the longest bag's count (at least 1), E in the holes."""
    E = bag_of.size
    kept = np.flatnonzero(bag_of < B)
    counts = np.bincount(bag_of[kept], minlength=B)
    pos = np.full((B, max(int(counts.max()) if B else 0, 1)), E, dtype=np.int64)
    kb = bag_of[kept]
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]) if B else np.zeros(0, dtype=np.int64)
    pos[kb, np.arange(kept.size) - first[kb]] = kept
    return pos


class EmbeddingBag(Function):
    """One node, PyTorch's, for the gradients of weight and per_sample_weights. bag_of: each entry's bag (B for
    one left out) for 'sum' and 'mean'; for 'max' the (B, L) layout of _max_layout."""
    node_name = "EmbeddingBagBackward0"

    @staticmethod
    def forward(ctx, ids, weight, bag_of, psw, B, mode, padding_idx, scale_grad_by_freq, sparse):
        w, bag = weight.array, bag_of.array
        xp = xp_of(w)
        rows = xp.take(w, ids.array, axis=0)  # (E, D); the ids were checked with the layout
        if psw is not None:
            rows = rows * psw.array.reshape(-1, 1)
        ctx.mode, ctx.n, ctx.padding_idx, ctx.freq, ctx.sparse = mode, w.shape[0], padding_idx, scale_grad_by_freq, sparse
        ctx.psw_shape = None if psw is None else psw.array.shape
        ctx.save(ids=ids, bag_of=bag_of, weight=weight if psw is not None and ctx.needs_input_grad[3] else None,
                 per_sample_weights=psw)
        if mode == "max":  # out[b, d] = max over bag b of rows[., d] (an empty bag: 0); its gradient to the maximum's row
            vals = xp.concatenate([rows, xp.full((1, w.shape[1]), -xp.inf, dtype=rows.dtype)])[bag]  # (B, L, D)
            arg = vals.argmax(1)[:, None]
            ctx.argmax = xp.take_along_axis(xp.broadcast_to(bag[:, :, None], vals.shape), arg, 1)[:, 0]  # (B, D)
            out = xp.take_along_axis(vals, arg, 1)[:, 0]
            out[ctx.argmax == rows.shape[0]] = 0
            return out
        out = scatter_add_rows(bag, rows, B + 1)[:B]  # out[b] = sum of bag b's rows (row B takes those left out)
        ctx.counts = _counts(B, out.dtype, bag) if mode == "mean" else None
        return out / ctx.counts if mode == "mean" else out  # mean: the sum / the bag's kept count

    @staticmethod
    def double_backward(ctx, g):
        # create_graph=True: the gradients' values are the array backward's (none is a function of weight), hung
        # from PyTorch's node, which has no derivative of its own
        grads = list(EmbeddingBag.backward.fn(ctx, g))
        gp = grads[3]
        grads = [r if r is None or getattr(r, "is_sparse", False) else BagGradient.apply(g, r) for r in grads]
        if gp is not None:  # per_sample_weights': a function of weight, which PyTorch refuses to differentiate
            grads[3] = second_order(ctx, gp, RuntimeError("derivative for aten::_embedding_bag_per_sample_weights_backward "
                                                          "is not implemented"), ctx._saved_weight,
                                    *[g] if g.requires_grad else [], name="NotImplemented")
        return tuple(grads)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        ids, bag, psw = ctx._saved_ids.array, ctx._saved_bag_of.array, ctx._saved_per_sample_weights
        g = g.array
        xp = xp_of(g)
        n, D = ctx.n, g.shape[1]
        if ctx.mode == "max":  # gW[ids[argmax[b, d]], d] += g[b, d]
            hit = ctx.argmax < ids.size
            flat = ids[ctx.argmax[hit]] * D + xp.nonzero(hit)[1]
            gw = xp.bincount(flat, weights=g[hit], minlength=n * D).astype(g.dtype).reshape(n, D)
            return None, wrap(gw), None, None, None, None, None, None, None
        if ctx.counts is not None:
            g = g / ctx.counts
        g_rows = xp.concatenate([g, xp.zeros((1, D), dtype=g.dtype)])[bag]  # each entry's bag's gradient; 0 left out
        gp = None
        if ctx.needs_input_grad[3]:  # d/dpsw[i] = <g_rows[i], W[ids[i]]>
            w = ctx._saved_weight.array
            gp = wrap((g_rows * xp.take(w, ids, axis=0)).sum(1).reshape(ctx.psw_shape))
        gw = None
        if ctx.needs_input_grad[1]:
            if psw is not None:
                g_rows = g_rows * psw.array.reshape(-1, 1)
            if ctx.sparse:
                if ctx.freq:  # (PyTorch refuses it at the backward, not the call)
                    raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
                gw = sparse_rows_grad(ids, g_rows, n, ctx.padding_idx)
            else:
                if ctx.freq:  # each row's gradient a mean over its id's occurrences in input
                    g_rows = g_rows / xp.bincount(ids, minlength=n)[ids, None].astype(g.dtype)
                gw = wrap(scatter_add_rows(ids, g_rows, n))
        return None, gw, None, gp, None, None, None, None, None


class BagGradient(Function):
    """An embedding_bag gradient made under create_graph: its value, with an edge to the incoming gradient and,
    as PyTorch's, no derivative."""
    node_name = "EmbeddingBagBackwardBackward0"

    @staticmethod
    def forward(ctx, g, grad):
        return grad.array

    @staticmethod
    def backward(ctx, gg):
        raise NotImplementedError("the derivative for '_embedding_bag_backward' is not implemented.")
