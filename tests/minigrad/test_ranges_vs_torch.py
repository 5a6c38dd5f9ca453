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
