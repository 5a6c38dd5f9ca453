"""minigrad.nn.grad (a convolution's input and weight gradients) against torch.nn.grad."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _case(rng, n):
    groups = int(rng.choice([1, 2]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    kernel = tuple(int(k) for k in rng.integers(1, 4, n))
    stride = tuple(int(s) for s in rng.integers(1, 3, n))
    padding = tuple(int(p) for p in rng.integers(0, 2, n))
    dilation = tuple(int(d) for d in rng.integers(1, 3, n))
    spatial = tuple(int(d * (k - 1) + 1 + rng.integers(0, 5)) for k, d in zip(kernel, dilation))
    x = rng.standard_normal((int(rng.integers(1, 3)), cin) + spatial)
    w = rng.standard_normal((cout, cin // groups) + kernel)
    return x, w, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_matches_torch_on_random_convolutions(n, seed):
    import minigrad.nn.grad as mg_grad

    rng = np.random.default_rng(100 * n + seed)
    x, w, kw = _case(rng, n)
    conv = getattr(torch.nn.functional, f"conv{n}d")
    gy = rng.standard_normal(tuple(conv(torch.from_numpy(x), torch.from_numpy(w), **kw).shape))
    tx, tw, tgy = (torch.from_numpy(a) for a in (x, w, gy))
    mx, mw, mgy = (minigrad.tensor(a) for a in (x, w, gy))
    expected_x = getattr(torch.nn.grad, f"conv{n}d_input")(tx.shape, tw, tgy, **kw)
    expected_w = getattr(torch.nn.grad, f"conv{n}d_weight")(tx, tw.shape, tgy, **kw)
    got_x = getattr(mg_grad, f"conv{n}d_input")(mx.shape, mw, mgy, **kw)
    got_w = getattr(mg_grad, f"conv{n}d_weight")(mx, mw.shape, mgy, **kw)
    np.testing.assert_allclose(got_x.numpy(), expected_x.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_w.numpy(), expected_w.numpy(), rtol=1e-10, atol=1e-10)


def test_int_arguments_and_double_backward_match_torch():
    rng = np.random.default_rng(0)
    x, w, gy = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 3)), rng.standard_normal((2, 6, 5, 4))
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    results = []
    for lib in (torch, minigrad):
        tx, tw, tgy = (lib.tensor(a, requires_grad=True) for a in (x, w, gy))
        gx = lib.nn.grad.conv2d_input(tx.shape, tw, tgy, **kw)
        gw = lib.nn.grad.conv2d_weight(tx, tw.shape, tgy, **kw)
        (gx.sum() + (gw * gw).sum()).backward()  # differentiable again, in all three
        results.append([t.detach().numpy() for t in (gx, gw, tx.grad, tw.grad, tgy.grad)])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_float32_dtype_and_module_path():
    from minigrad.nn.grad import conv1d_input

    w, gy = minigrad.randn(3, 2, 3), minigrad.randn(1, 3, 4)
    gx = conv1d_input((1, 2, 6), w, gy)
    expected = torch.nn.grad.conv1d_input((1, 2, 6), torch.from_numpy(w.numpy()), torch.from_numpy(gy.numpy()))
    assert gx.dtype == minigrad.float32 and tuple(gx.shape) == (1, 2, 6)
    np.testing.assert_allclose(gx.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_bad_shapes_are_one_clear_line():
    import minigrad.nn.grad as mg_grad

    w, gy = minigrad.randn(4, 3, 3, 3), minigrad.randn(2, 4, 5, 5)
    with pytest.raises(RuntimeError, match=r"Expected 4-dimensional input for 4-dimensional weight \[4, 3, 3, 3\], "
                                           r"but got 3-dimensional input of size \[3, 7, 7\] instead"):
        mg_grad.conv2d_input((3, 7, 7), w, gy)
    with pytest.raises(RuntimeError, match=r"expected grad_output of size \[2, 4, 5, 5\].*but got \[2, 3, 5, 5\]"):
        mg_grad.conv2d_input((2, 3, 7, 7), w, gy[:, :3])
    with pytest.raises(TypeError, match=r"conv2d_weight\(\): argument 'input'.* must be Tensor, not list"):
        mg_grad.conv2d_weight([1.0], (4, 3, 3, 3), gy)
