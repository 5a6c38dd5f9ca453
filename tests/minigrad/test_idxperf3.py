"""Indexing by slices and id tensors (`x[:, cols]`, `x[rows, 1:5]`), `x[ids] = v` and index_put_ (values or ids
sharing self's memory refused), against PyTorch: values, dtypes, grad_fn names, gradients, errors."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2903)
X = rng.standard_normal((6, 5)).astype(np.float32)


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e)


def _index_cases(t):
    i64 = lambda v: t(np.array(v, dtype=np.int64))  # noqa: E731
    return {
        "cols": (slice(None), i64([4, 0, 0])),
        "rows_sliced": (slice(1, 5), i64([3, -1])),
        "ids_then_slice": (i64([5, 0, -6]), slice(1, 4)),
        "stepped": (slice(None, None, 2), i64([[1, 2], [0, 4]])),
        "pair": (i64([0, 5, 2]), i64([4, 4, 1])),
        "pair_broadcast": (i64([[0], [3]]), i64([1, 2, 3])),
        "int32": (slice(2, None), t(np.array([1, 3], dtype=np.int32))),
        "slice_past_end": (slice(4, 99), i64([0])),
        "empty_ids": (slice(None), i64(np.zeros(0, dtype=np.int64))),
        "bad_col": (slice(None), i64([5])),
        "bad_negative_row": (i64([-7]), slice(None)),
        "bad_second": (i64([0]), i64([1, 9])),
        "mismatch": (i64([0, 1]), i64([1, 2, 3])),
        "too_many": (slice(None), i64([0]), i64([0])),
        "zero_step": (slice(None, None, 0), i64([0])),
        "negative_step": (slice(None, None, -1), i64([0])),
    }


@pytest.mark.parametrize("case", list(_index_cases(lambda a: a)))
def test_slices_and_id_tensors_index_as_torch(case):
    def run(lib):
        x = lib.tensor(X)
        out = x[_index_cases(lib.tensor)[case]]
        return out.numpy().tolist(), str(out.dtype).split(".")[1], tuple(out.shape), out.is_contiguous()

    assert outcome(lambda: run(mg)) == outcome(lambda: run(torch))


@pytest.mark.parametrize("case", ["cols", "rows_sliced", "ids_then_slice", "stepped", "pair", "pair_broadcast"])
def test_slices_and_id_tensors_index_recorded_as_torch(case):
    g = None
    res = {}
    for lib in (mg, torch):
        x = lib.tensor(X, requires_grad=True)
        out = x[_index_cases(lib.tensor)[case]]
        if g is None:
            g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
        out.backward(lib.tensor(g))
        res[lib] = out.grad_fn.name(), out.detach().numpy(), x.grad.numpy()
    assert res[mg][0] == res[torch][0]
    np.testing.assert_array_equal(res[mg][1], res[torch][1])
    np.testing.assert_allclose(res[mg][2], res[torch][2], rtol=1e-6)


@pytest.mark.parametrize("case", ["rows", "broadcast", "int32", "repeated", "negative", "bad_id", "shape", "dtype",
                                  "leaf", "zero_dim_self", "nonleaf_recorded"])
def test_setitem_by_an_id_tensor_as_torch(case):
    def run(lib):
        t = lib.tensor
        x = t(X.copy(), requires_grad=case == "leaf")
        if case == "nonleaf_recorded":
            x = t(X.copy(), requires_grad=True) * 1
        ids, v = t([4, 1]), t(X[:2] + 3)
        if case == "broadcast":
            v = t(X[0] + 1)
        elif case == "int32":
            ids = t(np.array([2, 0], dtype=np.int32))
        elif case == "repeated":
            ids = t([3, 3])
        elif case == "negative":
            ids = t([-1, -6])
        elif case == "bad_id":
            ids = t([0, 6])
        elif case == "shape":
            v = t(X[:3])
        elif case == "dtype":
            v = t(X[:2].astype(np.float64))
        elif case == "zero_dim_self":
            x = t(1.0)
        before = x._version
        x[ids] = v
        name = x.grad_fn.name() if x.grad_fn is not None else None
        return x.detach().numpy().tolist(), x._version - before, name

    om, ot = outcome(lambda: run(mg)), outcome(lambda: run(torch))
    assert om == ot
