"""Evaluation metrics written as PyTorch users write them in plain torch (no metric library), run on minigrad
(`import minigrad as torch`) and on PyTorch from the same numpy predictions and targets: every value, dtype and
shape the same, and the same refusals. Several seeds, with ties, empty classes, one-class targets and NaN scores.
Where ties leave PyTorch's order unspecified (an unstable sort, topk) the scripts sort stably or read only
tie-free quantities, as a script that must be reproducible does."""
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

# (0/0 in a metric: numpy's RuntimeWarning, which the package's own filter hides outside pytest)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _leaves(item)]
    return [out]


def _same(script, *args):
    """script(torch-like module, *args) on minigrad and on PyTorch: the same outputs, or the same error."""
    try:
        theirs = _leaves(script(torch, *args))
    except Exception as e:  # noqa: BLE001 (the reference's refusal is what minigrad must say)
        with pytest.raises(type(e)) as ours:
            script(mg, *args)
        assert str(ours.value) == str(e)
        return
    ours = _leaves(script(mg, *args))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if not isinstance(b, torch.Tensor):
            assert type(a) is type(b), i
            # (a .item() of a float32 reduction: the last bit follows the summation order)
            assert a == pytest.approx(b, rel=1e-6, nan_ok=True), i
            continue
        assert isinstance(a, mg.Tensor), i
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1], i
        assert tuple(a.shape) == tuple(b.shape), i
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=str(i))


# ---- focused: what these scripts found ----------------------------------------------------------------------

@pytest.mark.parametrize("accumulate", [True, False])
@pytest.mark.parametrize("dst, src", [("long", "float32"), ("float32", "float64"), ("float32", "long")])
def test_index_put_refuses_values_of_another_dtype(accumulate, dst, src):
    # (a float count added into a long confusion matrix: PyTorch refuses, it does not cast)
    def script(t):
        cm = t.zeros(3, 3, dtype=getattr(t, dst))
        idx = (t.tensor([0, 1, 1]), t.tensor([2, 1, 1]))
        return [cm.index_put_(idx, t.ones(3, dtype=getattr(t, src)), accumulate=accumulate),
                cm.index_put(idx, t.tensor(2, dtype=getattr(t, src)), accumulate)]

    _same(script)


def test_as_strided_scatter_casts_src_to_the_inputs_dtype():
    _same(lambda t: t.as_strided_scatter(t.zeros(6), t.arange(1, 4, dtype=t.float64), (3,), (2,), 1))


def test_bucketize_takes_one_dimensional_boundaries_only():
    _same(lambda t: t.bucketize(t.tensor([0.5, 1.5]), t.tensor([[0.0, 1.0]])))
    _same(lambda t: t.bucketize(t.tensor(0.5), t.tensor(1.0)))
    _same(lambda t: t.bucketize(t.tensor([[0.5, 1.5]]), t.tensor([0.0, 1.0]), right=True))


@pytest.mark.parametrize("op", ["cov", "corrcoef"])
def test_cov_and_corrcoef_refuse_more_than_two_dimensions(op):
    _same(lambda t: getattr(t, op)(t.ones(2, 2, 3)))
    _same(lambda t: getattr(t, op)(t.arange(12.0).reshape(3, 4) ** 2))


def test_diff_of_a_zero_dimensional_tensor_is_refused():
    _same(lambda t: t.diff(t.tensor(1.0)))
    _same(lambda t: t.diff(t.tensor(3), n=2))


def test_linspace_negative_steps_says_pytorchs_words():
    _same(lambda t: t.linspace(0, 1, -2))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_unique_consecutive_along_a_dim_compares_whole_slices(dim):
    a = np.random.default_rng(0).integers(0, 2, (5, 3, 2))
    a[1] = a[0]
    a[:, 2] = a[:, 1]
    a[..., 1] = a[..., 0]

    def script(t):
        x = t.from_numpy(a)
        return [x.unique_consecutive(dim=dim), t.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)]

    _same(script)


def test_unique_consecutive_along_a_dim_of_empty_or_zero_dim_tensors():
    _same(lambda t: t.unique_consecutive(t.zeros(0, 2), return_inverse=True, return_counts=True, dim=0))
    _same(lambda t: t.unique_consecutive(t.zeros(2, 0), dim=0))
    _same(lambda t: t.unique_consecutive(t.tensor(3), return_counts=True, dim=0))
    _same(lambda t: t.unique_consecutive(t.tensor([[1, 1], [1, 1]]), dim=2))
