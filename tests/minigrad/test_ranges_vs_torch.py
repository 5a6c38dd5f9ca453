"""linspace, logspace and histogram's edges against PyTorch's CPU kernels, bit for bit: linspace steps from
both ends toward the middle, each value one fused multiply-add (so values differ from numpy's linspace in the
last place), and grids, bins and interpolation built on it (affine_grid, histogram) inherit those bits."""
import numpy as np
import pytest

import minigrad

ENDS = [(-1, 1), (0, 1), (-3.14159, 3.14159), (0, 10), (2, -5), (1e-3, 7.5), (3, 3)]
STEPS = list(range(0, 70)) + [224, 1000, 2000, 4097]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_linspace_bit_for_bit(torch, dtype):
    mismatched = []
    for start, end in ENDS:
        for steps in STEPS:
            ours = minigrad.linspace(start, end, steps, dtype=getattr(minigrad, dtype)).numpy()
            theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
            if ours.shape != theirs.shape or (ours != theirs).any():
                mismatched.append((start, end, steps))
    assert not mismatched


def test_linspace_of_0d_tensors_and_requires_grad():
    t = minigrad.linspace(minigrad.tensor(0.0), minigrad.tensor(1.0), 5, requires_grad=True)
    assert t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0] and t.requires_grad and t.is_leaf


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_logspace_as_torch(torch, dtype):
    # integer and half-integer ends (the common case); float32 with other ends may differ in the last place
    mismatched = []
    for start, end in [(-1, 1), (0, 1), (-3, 3), (0, 10), (2, -5), (-2.5, 2.5)] + (
            [(1e-3, 7.5)] if dtype in ("float64", "int64", "int32") else []):
        for base in (10.0, 2.0):
            for steps in range(0, 40):
                ours = minigrad.logspace(start, end, steps, base=base, dtype=getattr(minigrad, dtype)).numpy()
                theirs = torch.logspace(start, end, steps, base=base, dtype=getattr(torch, dtype)).numpy()
                if ours.shape != theirs.shape or (ours != theirs).any():
                    mismatched.append((start, end, base, steps))
    assert not mismatched


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_edges_and_counts_bit_for_bit(torch, dtype):
    x = np.random.default_rng(0).standard_normal(5000).astype(dtype)
    for bins in (3, 7, 10, 13, 33, 100, 1000):
        hist, edges = minigrad.histogram(minigrad.tensor(x), bins=bins)
        hist_t, edges_t = torch.histogram(torch.tensor(x), bins=bins)
        np.testing.assert_array_equal(edges.numpy(), edges_t.numpy())
        np.testing.assert_array_equal(hist.numpy(), hist_t.numpy())
        np.testing.assert_array_equal(minigrad.histc(minigrad.tensor(x), bins=bins).numpy(),
                                      torch.histc(torch.tensor(x), bins=bins).numpy())


# ---- window functions (torch.hann_window, ...): the math in double, so within a rounding of PyTorch's ----------
WINDOWS = [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5,)), ("hamming_window", (0.6, 0.3)),
           ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()), ("kaiser_window", (5.0,)),
           ("kaiser_window", (0.5,))]


@pytest.mark.parametrize("name, extra", WINDOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", None])
def test_windows_as_torch(torch, name, extra, dtype):
    kw = {} if dtype is None else {"dtype": getattr(minigrad, dtype)}
    kw_t = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    # (PyTorch rounds each step of a half window to half, minigrad only the result: a few of its ulps apart)
    tol = {"float64": 1e-12, "float32": 1e-6, "float16": 2.5e-3, None: 1e-6}[dtype]
    for length in list(range(0, 12)) + [64, 257]:
        for periodic in (True, False):
            ours = getattr(minigrad, name)(length, periodic, *extra, **kw)
            theirs = getattr(torch, name)(length, periodic, *extra, **kw_t)
            assert ours.dtype.itemsize == theirs.dtype.itemsize and str(ours.dtype)[9:] == str(theirs.dtype)[6:]
            assert tuple(ours.shape) == tuple(theirs.shape) and not ours.requires_grad
            np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=tol, atol=tol,
                                       err_msg=f"{name}({length}, {periodic})")
    np.testing.assert_allclose(getattr(minigrad, name)(10, **kw).float().numpy(),  # periodic=True by default
                               getattr(torch, name)(10, **kw_t).float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_leaf_and_errors_as_torch(torch, name):
    w = getattr(minigrad, name)(5, requires_grad=True, device="cpu")
    assert w.requires_grad and w.is_leaf and w.dtype == minigrad.float32
    for args, kw in [((-1,), {}), ((4,), {"dtype": "int64"}), ((4.0,), {}), ((4,), {"dtype": "int32"})]:
        with pytest.raises(Exception) as t:
            getattr(torch, name)(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        with pytest.raises(type(t.value)) as e:
            getattr(minigrad, name)(*args, **{k: getattr(minigrad, v) for k, v in kw.items()})
        assert str(e.value) == str(t.value)


def test_window_of_the_default_dtype(torch):
    minigrad.set_default_dtype(minigrad.float64)
    try:
        assert minigrad.hann_window(3).dtype == minigrad.float64
    finally:
        minigrad.set_default_dtype(minigrad.float32)
