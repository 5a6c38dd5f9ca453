"""nn.functional's fractional max pooling, the 1-d *_with_indices names and F.grad, against torch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(0)

CASES = [  # (n, input shape, kernel, output_size)
    (2, (2, 3, 9, 11), (2, 3), (4, 5)),
    (2, (3, 8, 8), 3, 5),
    (3, (2, 2, 7, 8, 9), (2, 3, 2), (3, 4, 5)),
    (3, (2, 6, 6, 6), 2, 3),
]


@pytest.mark.parametrize("n, shape, kernel, out", CASES)
def test_fractional_max_pool_fixed_samples_match_torch(n, shape, kernel, out):
    x = rng.standard_normal(shape).astype(np.float32)
    batch = shape[0] if len(shape) == n + 2 else 1
    samples = rng.random((batch, shape[-n - 1], n)).astype(np.float32)
    xt, xm = torch.tensor(x, requires_grad=True), minigrad.tensor(x, requires_grad=True)
    vt, it = getattr(TF, f"fractional_max_pool{n}d")(xt, kernel, out, return_indices=True,
                                                      _random_samples=torch.tensor(samples))
    vm, im = getattr(F, f"fractional_max_pool{n}d")(xm, kernel, out, return_indices=True,
                                                     _random_samples=minigrad.tensor(samples))
    np.testing.assert_array_equal(vm.detach().numpy(), vt.detach().numpy())
    np.testing.assert_array_equal(im.numpy(), it.numpy())
    assert im.dtype == minigrad.int64
    vt.pow(2).sum().backward()
    vm.pow(2).sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    wt = getattr(TF, f"fractional_max_pool{n}d_with_indices")(xt, kernel, out, _random_samples=torch.tensor(samples))
    wm = getattr(F, f"fractional_max_pool{n}d_with_indices")(xm, kernel, out, _random_samples=minigrad.tensor(samples))
    np.testing.assert_array_equal(wm[1].numpy(), wt[1].numpy())


def test_fractional_max_pool2d_output_ratio_shape():
    x = rng.standard_normal((1, 2, 10, 12)).astype(np.float32)
    t = TF.fractional_max_pool2d(torch.tensor(x), 2, output_ratio=(0.5, 0.5))
    m = F.fractional_max_pool2d(minigrad.tensor(x), 2, output_ratio=(0.5, 0.5))
    assert tuple(m.shape) == tuple(t.shape)


def test_fractional_max_pool2d_random_windows():
    """Drawn windows: each output is the max of a kH x kW window of the input holding its index."""
    H, W, (kh, kw) = 9, 10, (2, 3)
    x = rng.standard_normal((2, 3, H, W)).astype(np.float32)
    v, idx = F.fractional_max_pool2d(minigrad.tensor(x), (kh, kw), (4, 4), return_indices=True)
    assert tuple(v.shape) == tuple(TF.fractional_max_pool2d(torch.tensor(x), (kh, kw), (4, 4)).shape)
    v, idx = v.numpy(), idx.numpy()
    for b, c, i, j in np.ndindex(v.shape):
        r, q = divmod(int(idx[b, c, i, j]), W)
        assert x[b, c, r, q] == v[b, c, i, j]
        assert any(x[b, c, r0:r0 + kh, c0:c0 + kw].max() == v[b, c, i, j]
                   for r0 in range(max(0, r - kh + 1), min(r, H - kh) + 1)
                   for c0 in range(max(0, q - kw + 1), min(q, W - kw) + 1))
    minigrad.manual_seed(3)
    a = F.fractional_max_pool2d(minigrad.tensor(x), 2, (4, 4))
    minigrad.manual_seed(3)
    b = F.fractional_max_pool2d(minigrad.tensor(x), 2, (4, 4))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("call", [
    lambda L, F_: F_.fractional_max_pool2d(L.ones(1, 2, 5, 5), 2),
    lambda L, F_: F_.fractional_max_pool2d(L.ones(1, 2, 5, 5), 3, (2, 4)),
    lambda L, F_: F_.fractional_max_pool2d(L.ones(5, 5), 3, 2),
    lambda L, F_: F_.fractional_max_pool2d(L.ones(1, 1, 2, 5, 5), 3, 2),
    lambda L, F_: F_.fractional_max_pool3d(L.ones(1, 2, 5, 5, 5), 3, (4, 2, 2)),
])
def test_fractional_max_pool_errors(call):
    with pytest.raises(Exception) as t:
        call(torch, TF)
    with pytest.raises(Exception) as m:
        call(minigrad, F)
    assert (type(m.value).__name__, str(m.value)) == (type(t.value).__name__, str(t.value))


def test_1d_with_indices_names():
    x = rng.standard_normal((2, 3, 11)).astype(np.float32)
    xt, xm = torch.tensor(x), minigrad.tensor(x)
    for t, m in zip(TF.max_pool1d_with_indices(xt, 3, 2, 1), F.max_pool1d_with_indices(xm, 3, 2, 1)):
        np.testing.assert_array_equal(m.numpy(), t.numpy())
    for t, m in zip(TF.adaptive_max_pool1d_with_indices(xt, 4), F.adaptive_max_pool1d_with_indices(xm, 4)):
        np.testing.assert_array_equal(m.numpy(), t.numpy())


def test_F_grad_is_the_nn_grad_module():
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    g = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    t = TF.grad.conv2d_input(x.shape, torch.tensor(w), torch.tensor(g))
    m = F.grad.conv2d_input(x.shape, minigrad.tensor(w), minigrad.tensor(g))
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)
