"""Focused tests for what the scripts of test_dl_scripts21.py (and their neighbouring calls) found in minigrad."""
import numpy as np
import pytest

import minigrad


def _outcome(lib, fn):
    x = lib.tensor(np.random.default_rng(21).standard_normal((2, 3, 4)), requires_grad=True)
    try:
        y = fn(lib, x)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    y = y[0] if isinstance(y, tuple) else y
    return tuple(y.shape), type(y.grad_fn).__name__, y.detach().numpy().round(12).tolist()


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.sort(x),
    lambda lib, x: lib.sort(x, 1, True),
    lambda lib, x: lib.sort(x, stable=True),
    lambda lib, x: lib.sort(x, dim=0, stable=False),
    lambda lib, x: x.sort(descending=True, stable=True),
    lambda lib, x: x.sort(-1),
])
def test_sort_grad_fn_names_its_overload(torch, call):
    """A `stable` given, whatever its value, is PyTorch's sort.stable overload: SortBackward1, else SortBackward0."""
    assert _outcome(minigrad, call) == _outcome(torch, call)


@pytest.mark.parametrize("k", [1.5, True, 2.0, np.int64(2)])
@pytest.mark.parametrize("method", [False, True])
def test_topk_k_must_be_an_int(torch, k, method):
    def call(lib, x):
        return x.topk(k) if method else lib.topk(x, k)

    assert _outcome(minigrad, call) == _outcome(torch, call)


@pytest.mark.parametrize("shape,size", [((2, 6), 0), ((0, 2), 0), ((3,), -1), ((0, 2), 2)])
def test_split_size_zero(torch, shape, size):
    def pieces(lib):
        try:
            return [tuple(p.shape) for p in lib.split(lib.zeros(shape), size)]
        except RuntimeError as e:
            return str(e)

    assert pieces(minigrad) == pieces(torch)


@pytest.mark.parametrize("method", [False, True])
def test_cumsum_without_dim(torch, method):
    def call(lib, x):
        return x.cumsum() if method else lib.cumsum(x)

    assert _outcome(minigrad, call) == _outcome(torch, call)


@pytest.mark.parametrize("dim", [(0, 1, 2), [-1, 0, 1], (0, 1), 1, None])
def test_frobenius_norm_over_more_than_two_dims(torch, dim):
    """p='fro' is a matrix norm when dims are listed: more than two is PyTorch's error, not a vector norm."""
    def call(lib, x):
        return lib.norm(x, p="fro", dim=dim)

    ours, theirs = _outcome(minigrad, call), _outcome(torch, call)
    assert ours[0] == theirs[0] and len(ours) == len(theirs)
    if isinstance(ours[0], str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
