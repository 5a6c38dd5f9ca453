"""torch.fake_quantize_per_tensor_affine and fake_quantize_per_channel_affine: values (PyTorch's float32 inverse
scale, rounding half to even), the straight-through gradient, grad_fn names and error texts, against PyTorch."""
import numpy as np
import pytest

import minigrad

DTYPES = [np.float64, np.float32, np.float16]


def outcome(lib, fn):
    """('error', type, first line) or ('ok', dtype, grad_fn name, values, the input's gradient)."""
    try:
        x, y = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return "error", type(e).__name__, str(e).split("\n")[0]
    if y.requires_grad:
        w = np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) % 5 - 2
        (y * lib.tensor(w).to(y.dtype)).sum().backward()
    name = None if y.grad_fn is None else type(y.grad_fn).__name__
    return ("ok", str(y.dtype).split(".")[-1], name, y.detach().float().numpy(),
            None if x.grad is None else x.grad.float().numpy())


def same(fn):
    torch = pytest.importorskip("torch")
    ours, theirs = outcome(minigrad, fn), outcome(torch, fn)
    assert ours[:3] == theirs[:3], (ours[:3], theirs[:3])
    for a, b in zip(ours[3:], theirs[3:]):
        np.testing.assert_array_equal(a, b)


def data(dtype, shape=(5, 7)):
    x = (np.random.default_rng(1).standard_normal(shape) * 3).astype(dtype)
    x.flat[:5] = [0.25, 0.75, -1.25, 2.5, 0.15]  # ties, and a value whose float32 product rounds across .5
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale, zero_point, quant_min, quant_max",
                         [(0.5, 1, -4, 4), (0.1, 0, -128, 127), (0.3, -2, -8, 7), (1 / 3, 0, 0, 255)])
@pytest.mark.parametrize("tensor_qparams", [False, True])
def test_per_tensor(dtype, scale, zero_point, quant_min, quant_max, tensor_qparams):
    def fn(lib):
        x = lib.tensor(data(dtype), requires_grad=True)
        s, z = (lib.tensor(scale), lib.tensor(zero_point, dtype=lib.int32)) if tensor_qparams else (scale, zero_point)
        return x, lib.fake_quantize_per_tensor_affine(x, s, z, quant_min, quant_max)
    same(fn)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zero_point", [np.array([0, 1, -3, 2, 5], np.int32),
                                        np.array([0.4, 1.5, -3.2, 2, 5], np.float32),
                                        np.array([0.4, 1.5, -3.2, 2, 9], np.float16)])
@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel(dtype, zero_point, axis):
    scale = np.array([0.1, 0.25, 1 / 3, 0.7, 0.05], np.float32)

    def fn(lib):
        x = data(dtype)
        x = lib.tensor(x if axis == 0 else x.T.copy(), requires_grad=True)
        return x, lib.fake_quantize_per_channel_affine(x, lib.tensor(scale), lib.tensor(zero_point), axis, -6, 6)
    same(fn)


def per_tensor(lib, scale=0.5, zero_point=1, lo=0, hi=7, dtype=np.float64, grad=False):
    x = lib.tensor(np.array([-1.0, 0.25, 0.5, 3.0], dtype), requires_grad=grad)
    return x, lib.fake_quantize_per_tensor_affine(x, scale(lib) if callable(scale) else scale,
                                                  zero_point(lib) if callable(zero_point) else zero_point, lo, hi)


def per_channel(lib, scale=(0.1, 0.2, 0.3), zero_point=(0, 1, -1), axis=0, lo=-128, hi=127, dtype=np.float64,
                scale_dtype=np.float32, zero_point_dtype=np.int32, scale_grad=False):
    x = lib.tensor((np.arange(12.0).reshape(3, 4) / 7).astype(dtype), requires_grad=dtype != np.int32)
    s = lib.tensor(np.array(scale, scale_dtype), requires_grad=scale_grad)
    return x, lib.fake_quantize_per_channel_affine(x, s, lib.tensor(np.array(zero_point, zero_point_dtype)), axis,
                                                   lo, hi)


@pytest.mark.parametrize("fn", [
    lambda L: per_tensor(L, lo=7, hi=0),
    lambda L: per_tensor(L, zero_point=9),
    lambda L: per_tensor(L, dtype=np.int32),
    lambda L: per_tensor(L, lambda L: L.tensor([0.5, 1.0]), lambda L: L.tensor([1, 1], dtype=L.int32)),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), lambda L: L.tensor(1, dtype=L.int32), lo=7, hi=0),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5, requires_grad=True), lambda L: L.tensor(1, dtype=L.int32)),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), lambda L: L.tensor(9, dtype=L.int32), grad=True),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), lambda L: L.tensor(1.7), grad=True),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), lambda L: L.tensor(1, dtype=L.int32), dtype=np.int32),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), 1, grad=True),  # (only two tensors pick the qparams form)
    lambda L: per_tensor(L, 0.5, lambda L: L.tensor(1), grad=True),
    lambda L: per_tensor(L, 0.5, lambda L: L.tensor(9)),
    lambda L: per_tensor(L, 0.5, lambda L: L.tensor(1.0)),
    lambda L: per_tensor(L, lambda L: L.tensor(0.5), 2.7),
    lambda L: per_tensor(L, 0.5, lambda L: L.tensor([1, 2])),
    lambda L: per_channel(L, lo=7, hi=0),
    lambda L: per_channel(L, axis=2),
    lambda L: per_channel(L, axis=1),
    lambda L: per_channel(L, scale=(0.1, 0.2)),
    lambda L: per_channel(L, zero_point=(0, 1)),
    lambda L: per_channel(L, zero_point=(0, 1, 200)),
    lambda L: per_channel(L, zero_point=(0, 1, 200), zero_point_dtype=np.float32),
    lambda L: per_channel(L, scale_dtype=np.float64),
    lambda L: per_channel(L, zero_point_dtype=np.int64),
    lambda L: per_channel(L, scale=[[0.1], [0.2], [0.3]]),
    lambda L: per_channel(L, scale=0.1),
    lambda L: per_channel(L, zero_point=[[0, 1, -1]]),
    lambda L: per_channel(L, dtype=np.int32),
    lambda L: per_channel(L, axis=-1, scale=(1, 1, 1, 1), zero_point=(0, 0, 0, 0)),
    lambda L: per_channel(L, scale_grad=True),
])
def test_refusals_and_edge_cases(fn):
    same(fn)


def test_double_backward_is_zero():
    torch = pytest.importorskip("torch")
    for lib in (torch, minigrad):
        x = lib.tensor([-1.0, 0.25, 0.5, 3.0], dtype=lib.float64, requires_grad=True)
        y = lib.fake_quantize_per_tensor_affine(x, 0.5, 1, 0, 7)
        g, = lib.autograd.grad((y * x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        if lib is torch:
            expected = (g.detach().numpy(), gg.numpy())
    np.testing.assert_array_equal(g.detach().numpy(), expected[0])
    np.testing.assert_array_equal(gg.numpy(), expected[1])
