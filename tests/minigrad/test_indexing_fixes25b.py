"""Index ops at their edges, against PyTorch: ids out of range (each kernel's own words), empty selves and
sources, 0-d indices, repeated ids (the differences tests/minigrad/test_indexing_fuzz.py found)."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def outcome(L, fn):
    """('ok', value, grad_fn name, gradients of self and source) or (exception name, message)."""
    x0 = L.tensor(np.arange(1.0, 1.0 + fn.numel).reshape(fn.shape), dtype=L.float64, requires_grad=True)
    src = L.tensor(np.arange(10.0, 10.0 + fn.src_numel).reshape(fn.src_shape), dtype=L.float64, requires_grad=True)
    try:
        out = fn(L, x0.clone(), src)
        name = type(out.grad_fn).__name__ if out.grad_fn is not None else None
        (out * L.arange(out.numel(), dtype=L.float64).reshape(out.shape)).sum().backward()
        return "ok", out.detach().numpy().tolist(), name, [None if t.grad is None else t.grad.numpy().tolist()
                                                           for t in (x0, src)]
    except (IndexError, RuntimeError) as e:
        return type(e).__name__, str(e).split("\n")[0]


def case(shape, src_shape, fn):
    fn.shape, fn.numel = shape, int(np.prod(shape))
    fn.src_shape, fn.src_numel = src_shape, int(np.prod(src_shape))
    return fn


def ids(L, values, dtype="int64"):
    return L.tensor(values, dtype=getattr(L, dtype))


CASES = {
    # index_add_ into an empty matrix: IndexAddBackward0, and the source's (empty) gradient
    "add_empty_self": case((0, 2), (0, 0), lambda L, x, s: x.index_add_(1, ids(L, []), s, alpha=-0.5)),
    # nothing added to an empty matrix, no id read; the backward's index_select refuses it
    "add_empty_self_bad_id": case((2, 0), (1, 0), lambda L, x, s: x.index_add_(0, ids(L, [5]), s)),
    # an id out of range: a middle dim, an alpha but 1 or int32 ids in "index out of range in self"
    "add_middle_dim": case((1, 2, 3), (1, 2, 3), lambda L, x, s: x.index_add_(1, ids(L, [0, 5]), s[:, :2])),
    "add_alpha": case((2, 3), (2, 3), lambda L, x, s: x.index_add_(1, ids(L, [-3, 2, 0]), s, alpha=2)),
    "add_int32": case((2, 3), (2, 3), lambda L, x, s: x.index_add_(0, ids(L, [0, 5], "int32"), s)),
    "add_last_dim": case((2, 3), (2, 2), lambda L, x, s: x.index_add_(1, ids(L, [0, 7]), s)),
    # index_copy_: ids read only while copying (none into an empty source), the source's empty gradient
    "copy_empty_source": case((1, 0), (0, 0), lambda L, x, s: x.index_copy_(0, ids(L, []), s)),
    "copy_0d_index_empty_self": case((0, 0), (1, 0), lambda L, x, s: x.detach().index_copy_(0, ids(L, 0), s.detach())),
    "copy_0d_index_empty_self_grad": case((0, 0), (1, 0), lambda L, x, s: x.index_copy_(0, ids(L, 0), s)),
    "copy_bad_ids_empty_source": case((1, 0, 3), (2, 0, 3), lambda L, x, s: x.index_copy_(0, ids(L, [1, 3]), s)),
    "copy_repeated_id": case((3,), (2,), lambda L, x, s: x.index_copy_(0, ids(L, [0, 0]), s)),  # the last stays
    # index_select: dim 1 of a matrix and an empty matrix have their kernel's words, int32 ids too
    "select_dim1_int32": case((3, 1, 1), (1,), lambda L, x, s: x.index_select(1, ids(L, [-2, 0], "int32"))),
    "select_dim0_negative": case((1,), (1,), lambda L, x, s: x.index_select(0, ids(L, [0, -1, 0]))),
    "select_empty_self": case((1, 0, 1), (1,), lambda L, x, s: x.index_select(0, ids(L, [0, -2, 3]))),
    # index_fill_: no id read where a slice is empty; the first bad id named; the index's dtype before the dim
    "fill_empty_slices": case((2, 0, 0), (1,), lambda L, x, s: x.index_fill_(0, ids(L, [-2, 4]), -2.0)),
    "fill_first_bad_id": case((1, 3), (1,), lambda L, x, s: x.index_fill_(1, ids(L, [-4, -4, 3]), -2.0)),
    "fill_dtype_first": case((), (1,), lambda L, x, s: x.index_fill_(1, ids(L, [-1], "int32"), -2.0)),
    # index_reduce_: without include_self, index_fill's words first; an empty dim of a matrix, select's
    "reduce_0d_bad_id": case((), (), lambda L, x, s: x.index_reduce_(0, ids(L, 1), s, "prod", include_self=False)),
    "reduce_0d_negative": case((), (), lambda L, x, s: x.index_reduce_(0, ids(L, -2), s, "mean", include_self=False)),
    "reduce_negative_id": case((3,), (1,), lambda L, x, s: x.index_reduce_(0, ids(L, [-1]), s, "amax",
                                                                          include_self=False)),
    "reduce_include_self": case((2, 3), (1, 3), lambda L, x, s: x.index_reduce_(0, ids(L, [5]), s, "prod")),
    "reduce_empty_dim": case((2, 0), (2, 1), lambda L, x, s: x.index_reduce_(1, ids(L, [0]), s, "amin")),
    # put_ into an empty tensor
    "put_empty_self": case((0, 1, 3), (1,), lambda L, x, s: x.put_(ids(L, [-1]), s)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_index_op_edge_matches_torch(name):
    got, want = outcome(mg, CASES[name]), outcome(torch, CASES[name])
    assert got == want

