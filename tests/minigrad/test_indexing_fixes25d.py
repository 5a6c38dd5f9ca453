"""index_put / index_put_ without accumulate and `x[idx] = v`, against PyTorch: the order of the checks (too
many indices, an indexed dim of size 0, the value's shape, its dtype, then the ids), a single mask with a
one-element value (PyTorch's masked_fill_), and the leading dims of 1 that `x[idx] = v` drops but index_put_
does not."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (IndexError, RuntimeError, TypeError) as e:
        return None, (type(e).__name__, str(e).split("\n")[0].replace("torch.", "minigrad."))


def index(L, ids):
    return tuple(L.tensor(np.array(i, dtype=bool if np.asarray(i).dtype == bool else np.int64)) for i in ids)


def write(L, op, shape, ids, values_shape, values_dtype="float64", backward=True):
    """The write on a clone of a leaf, then (backward) a weighted sum's gradients of the leaf and the value."""
    x0 = L.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
    v = L.tensor(np.arange(100.0, 100.0 + np.prod(values_shape)).reshape(values_shape),
                 dtype=getattr(L, values_dtype), requires_grad=True)
    x = x0.clone()
    ix = index(L, ids)
    if op == "index_put_":
        out = x.index_put_(ix, v)
    elif op == "index_put":
        out = x.index_put(ix, v)
    else:
        x[ix if len(ix) > 1 else ix[0]] = v
        out = x
    if not backward:
        return out.detach().numpy(), type(out.grad_fn).__name__.split("::")[-1]
    (out * L.tensor(np.arange(2.0, 2.0 + out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return (out.detach().numpy(), type(out.grad_fn).__name__.split("::")[-1], x0.grad.numpy(),
            v.grad.numpy(), str(v.grad.dtype).split(".")[-1])


def compare(*case, backward=True):
    got, g_err = outcome(lambda: write(mg, *case, backward=backward))
    want, w_err = outcome(lambda: write(torch, *case, backward=backward))
    assert g_err == w_err
    if w_err is None and not backward:
        assert got[1] == want[1]
        np.testing.assert_array_equal(got[0], want[0])
    elif w_err is None:
        assert got[1] == want[1] and got[4] == want[4]
        for g, w in zip((got[0],) + got[2:4], (want[0],) + want[2:4]):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    return g_err


@pytest.mark.parametrize("op", ["index_put_", "index_put"])
@pytest.mark.parametrize("case", [
    ((2, 3), [[0, 1]], (1, 1, 3)),  # no leading dims of 1 beyond the indexed shape
    ((2, 3), [[0, 1]], (1, 2, 3)),
    ((2, 3), [[0, 1]], (1, 1, 1)),
    ((2, 3), [[True, False]], (1, 1, 3)),
    ((2, 3), [[5]], (4,)),  # the values' shape before the ids
    ((2, 3), [[0], [9]], (2,)),
    ((0, 3), [[0]], (4,)),  # an indexed dim of size 0: its own words first
    ((2, 3), [[True, False, True, True]], (1,)),  # the mask's shape first
    ((2, 3), [[0, 1], [0, 1], [0]], ()),  # too many indices
])
def test_index_put_refuses_in_pytorch_order(case, op):
    assert compare(op, *case) is not None
    assert compare(op, *case, "float32") is not None  # (the same error: the shapes come before the dtypes)


@pytest.mark.parametrize("op", ["index_put_", "index_put", "setitem"])
@pytest.mark.parametrize("case", [
    ((2, 3), [[True, False]], (1,)),
    ((2, 3), [[[True, False, True], [False, True, False]]], (1, 1)),  # a single mask and a one-element value:
    ((2, 3), [[[True, False, True], [False, True, False]]], (1, 1, 1)),  # filled, whatever its shape
    ((3,), [[False, False, False]], (1, 1)),
])
def test_a_single_mask_with_one_value_is_filled(case, op):
    # (forward only: PyTorch's IndexPutBackward0 fails to sum the value's gradient to a shape of two dims or more)
    assert compare(op, *case, backward=len(case[2]) == 1) is None
    assert compare(op, *case, "float32", backward=False) is None  # (masked_fill_ casts the value)


@pytest.mark.parametrize("case", [
    ((2, 3), [[[True, False, True], [False, True, False]]], (1, 3)),  # `x[idx] = v` drops the value's leading 1s
    ((2, 3), [[[True, False, True], [False, True, False]]], (1, 1, 3)),
    ((3,), [[True, False, True]], (1, 2)),
    ((2, 3), [[0, 1], [1, 2]], (1, 1, 2)),
])
def test_setitem_drops_the_values_leading_ones(case):
    assert compare("setitem", *case) is None


@pytest.mark.parametrize("case", [
    ((3,), [[True, False, True]], (2, 1)),  # a mask and a value of two dims: PyTorch's words, not numpy's
    ((2, 3), [[[True, False, True], [False, True, False]]], (2, 3)),
    ((2, 3), [[[True, False, True], [False, True, False]]], (1, 3), "float32"),  # the shape fits: then the dtype
    ((2, 3), [[5]], (2,)),  # the value's shape (named without its leading 1s) before the ids
    ((2, 3), [[5]], (1, 2, 3)),
    ((2, 3), [[0], [9]], (1, 1, 3)),
    ((3,), [[0, 1]], (1, 3)),
])
def test_setitem_refuses_in_pytorch_order(case):
    assert compare("setitem", *case) is not None


def test_setitem_of_a_zero_dim_tensor_with_a_mask_of_true():
    results = []
    for L in (mg, torch):
        x = L.tensor(1.0, dtype=L.float64)
        x[L.tensor(True)] = L.tensor([[5.0]], dtype=L.float64)
        results.append(x.item())
    assert results[0] == results[1] == 5.0
