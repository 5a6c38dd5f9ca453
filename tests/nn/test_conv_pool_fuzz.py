"""Random geometries (sizes, kernels, strides, padding, dilation, groups, ceil_mode) for the convolutions and
pools against PyTorch: the same outcome (an error of the same type, or the same values and gradients).
A fixed slice of 60 examples each in CI; a longer one is one command (MINIGRAD_FUZZ_SEED=<n> picks another):

    MINIGRAD_NN_FUZZ_EXAMPLES=2000 PYTHONPATH=. python -m pytest tests/nn/test_conv_pool_fuzz.py
"""
import numpy as np
import pytest

import minigrad
import nn.functional as F
from tests.fuzz_settings import fuzz_settings

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
SETTINGS = fuzz_settings("MINIGRAD_NN_FUZZ_EXAMPLES", 60)


def outcome(fn, x, *params):
    """('error', type) or ('ok', output, gradients) of fn(x, *params).sum() with backward."""
    try:
        y = fn(x, *params)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return "error", type(e)
    if isinstance(y, tuple):
        y = y[0]
    (y * y).sum().backward()
    grads = [np.array(t.grad.numpy() if hasattr(t.grad, "numpy") else t.grad.array) for t in (x, *params)
             if hasattr(t, "grad") and t.grad is not None]
    return "ok", np.array(y.detach().numpy()), grads


def same(ours, theirs):
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        assert ours[1] is theirs[1]
        return
    assert ours[1].shape == theirs[1].shape
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-10)
    assert len(ours[2]) == len(theirs[2])
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def pair(v):
    return st.one_of(st.integers(*v), st.tuples(st.integers(*v), st.integers(*v)))


@SETTINGS
@hypothesis.given(n=st.integers(1, 2), g=st.integers(1, 2), cin=st.integers(1, 2), cout=st.integers(1, 2),
                  h=st.integers(1, 7), w=st.integers(1, 7), k=pair((1, 3)), stride=pair((1, 3)), padding=pair((0, 2)),
                  dilation=pair((1, 2)), seed=st.integers(0, 2**16))
def test_conv2d(torch, n, g, cin, cout, h, w, k, stride, padding, dilation, seed):
    rng = np.random.default_rng(seed)
    kk = (k, k) if isinstance(k, int) else k
    x, wt, b = rng.standard_normal((n, cin * g, h, w)), rng.standard_normal((cout * g, cin) + kk), rng.standard_normal(
        cout * g)
    ours = outcome(lambda x, wt, b: F.conv2d(x, wt, b, stride, padding, dilation, g),
                   *(minigrad.tensor(a, requires_grad=True) for a in (x, wt, b)))
    theirs = outcome(lambda x, wt, b: torch.nn.functional.conv2d(x, wt, b, stride, padding, dilation, g),
                     *(torch.tensor(a, requires_grad=True) for a in (x, wt, b)))
    same(ours, theirs)


@SETTINGS
@hypothesis.given(h=st.integers(1, 6), w=st.integers(1, 6), k=pair((1, 3)), stride=pair((1, 3)), padding=pair((0, 2)),
                  dilation=pair((1, 2)), output_padding=pair((0, 2)), seed=st.integers(0, 2**16))
def test_conv_transpose2d(torch, h, w, k, stride, padding, dilation, output_padding, seed):
    rng = np.random.default_rng(seed)
    kk = (k, k) if isinstance(k, int) else k
    x, wt, b = rng.standard_normal((2, 3, h, w)), rng.standard_normal((3, 2) + kk), rng.standard_normal(2)
    args = (stride, padding, output_padding, 1, dilation)
    ours = outcome(lambda x, wt, b: F.conv_transpose2d(x, wt, b, *args),
                   *(minigrad.tensor(a, requires_grad=True) for a in (x, wt, b)))
    theirs = outcome(lambda x, wt, b: torch.nn.functional.conv_transpose2d(x, wt, b, *args),
                     *(torch.tensor(a, requires_grad=True) for a in (x, wt, b)))
    same(ours, theirs)


@SETTINGS
@hypothesis.given(h=st.integers(1, 8), w=st.integers(1, 8), k=pair((1, 4)), stride=st.one_of(st.none(), pair((1, 3))),
                  padding=pair((0, 2)), dilation=pair((1, 2)), ceil_mode=st.booleans(), kind=st.sampled_from(
                      ["max", "avg", "avg_exclude"]), seed=st.integers(0, 2**16))
def test_pools(torch, h, w, k, stride, padding, dilation, ceil_mode, kind, seed):
    x = np.random.default_rng(seed).standard_normal((2, 2, h, w))

    def call(mod, x):
        if kind == "max":
            return mod.max_pool2d(x, k, stride, padding, dilation, ceil_mode, return_indices=True)
        return mod.avg_pool2d(x, k, stride, padding, ceil_mode, count_include_pad=kind == "avg")

    ours = outcome(lambda x: call(F, x), minigrad.tensor(x, requires_grad=True))
    # a window wholly in the padding (a dilated one, with ceil_mode) is -inf; PyTorch's backward then writes
    # outside the input and aborts the process: those are left out
    hypothesis.assume(ours[0] == "error" or np.isfinite(ours[1]).all())
    theirs = outcome(lambda x: call(torch.nn.functional, x), torch.tensor(x, requires_grad=True))
    same(ours, theirs)


@SETTINGS
@hypothesis.given(h=st.integers(1, 7), w=st.integers(1, 7), size=st.tuples(st.integers(1, 9), st.integers(1, 9)),
                  mode=st.sampled_from(["nearest", "bilinear", "bilinear_ac", "adaptive"]), seed=st.integers(0, 2**16))
def test_resizing(torch, h, w, size, mode, seed):
    x = np.random.default_rng(seed).standard_normal((1, 2, h, w))

    def call(mod, x):
        if mode == "adaptive":
            return mod.adaptive_avg_pool2d(x, size)
        return mod.interpolate(x, size=size, mode=mode[:8], align_corners=True if mode.endswith("_ac") else None)

    same(outcome(lambda x: call(F, x), minigrad.tensor(x, requires_grad=True)),
         outcome(lambda x: call(torch.nn.functional, x), torch.tensor(x, requires_grad=True)))
