"""Focused tests for what the scripts of test_dl_scripts25.py (small models as learners write them) found in
minigrad: torch.linalg.lstsq on a vector b and on a rank-deficient float32 A, numpy scalars as pinv's tolerances,
and embedding_bag's ids and offsets of different dtypes."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def _outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return "error", type(e).__name__, str(e).split("\n")[0].replace("minigrad.", "torch.")
    return "ok", [(str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().numpy()) for t in
                  (out if isinstance(out, tuple) else (out,))]


def _same(ours, theirs, rtol=1e-10):
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        assert ours == theirs
        return
    assert [o[:2] for o in ours[1]] == [t[:2] for t in theirs[1]]
    for o, t in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(o[2], t[2], rtol=rtol, atol=1e-6 if rtol > 1e-9 else 1e-12)


def _data(*shape, dtype=np.float64):
    return (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) ** 1.3 % 5).astype(dtype)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("a, b", [((5, 3), (5,)), ((2, 5, 3), (2, 5))])
def test_lstsq_of_a_vector_b_keeps_the_residuals_column(torch, driver, a, b):
    """A (batch of) vector(s) b: the solution drops the column, the residuals keep it, (..., 1), as PyTorch's; they
    lost it."""
    A, B = _data(*a), _data(*b) + 1
    ours = _outcome(lambda: tuple(minigrad.linalg.lstsq(minigrad.tensor(A), minigrad.tensor(B), driver=driver)))
    theirs = _outcome(lambda: tuple(torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)))
    _same(ours, theirs)


@pytest.mark.parametrize("b", [(5,), (5, 1)])
def test_lstsq_of_a_rank_deficient_float32_matrix(torch, b):
    """A rank-deficient float32 A (a column of ones, repeated): the minimum-norm solution, where minigrad raised
    pinv's TypeError for its own float32 tolerance."""
    A, B = np.ones((5, 3), np.float32), _data(*b, dtype=np.float32)
    ours = _outcome(lambda: tuple(minigrad.linalg.lstsq(minigrad.tensor(A), minigrad.tensor(B))))
    theirs = _outcome(lambda: tuple(torch.linalg.lstsq(torch.tensor(A), torch.tensor(B))))
    _same(ours, theirs, rtol=1e-5)


@pytest.mark.parametrize("a, b", [((2, 5, 3), (5,)), ((5, 3), (2, 5, 1)), ((5, 3), (4,)), ((5, 3), (4, 1))])
def test_lstsq_shape_errors_as_pytorch(torch, a, b):
    """b of too few or too many dimensions, or of the wrong length: PyTorch's texts, not an IndexError or a text
    naming the other size."""
    A, B = _data(*a), _data(*b)
    ours = _outcome(lambda: minigrad.linalg.lstsq(minigrad.tensor(A), minigrad.tensor(B)))
    theirs = _outcome(lambda: torch.linalg.lstsq(torch.tensor(A), torch.tensor(B)))
    assert ours[0] == "error"
    _same(ours, theirs)


@pytest.mark.parametrize("kw", [dict(rtol=np.float32(0.1)), dict(atol=np.float32(0.6)), dict(rtol=np.int64(0)),
                                dict(atol=np.float64(0.6))])
def test_pinv_takes_numpy_scalar_tolerances(torch, kw):
    """numpy scalars (np.float32 from finfo(...).eps, np.int64) are numbers to PyTorch's argument parser."""
    A = np.array([[1.0, 0.0], [0.0, 0.5]])
    ours = _outcome(lambda: minigrad.linalg.pinv(minigrad.tensor(A), **kw))
    theirs = _outcome(lambda: torch.linalg.pinv(torch.tensor(A), **kw))
    _same(ours, theirs)


@pytest.mark.parametrize("ids, offs", [("int64", "bool"), ("int32", "bool"), ("bool", "int64"), ("bool", "int32"),
                                       ("int64", "float64"), ("int32", "float64"), ("float32", "float64"),
                                       ("bool", "float64"), ("bool", "bool"), ("int32", "int64")])
def test_embedding_bag_casts_ids_and_offsets_to_their_common_type(torch, ids, offs):
    """Ids and offsets of two dtypes are both cast to their common type before the ids' type is checked: bool
    offsets (or ids) with integer ones work, float offsets are refused naming the ids and the promoted type."""
    weight = np.arange(6.0).reshape(3, 2)

    def call(lib, funcs):
        x = lib.tensor([1, 0, 1]).to(getattr(lib, ids))
        o = lib.tensor([0, 1]).to(getattr(lib, offs))
        return funcs.embedding_bag(x, lib.tensor(weight), o)

    _same(_outcome(lambda: call(minigrad, F)), _outcome(lambda: call(torch, torch.nn.functional)))
