"""max_pool2d, avg_pool2d, adaptive_avg_pool2d, interpolate and pad (and their modules) against PyTorch:
values, indices, gradients, node names, finite differences (twice for the linear maps) and bad input."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(11)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def vs_torch(torch, name, x, dtype, *args, node=True, **kw):
    """F.<name>(x, *args, **kw) against PyTorch's: output(s), node name and the input gradient."""
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = getattr(F, name)(ours, *args, **kw), getattr(torch.nn.functional, name)(theirs, *args, **kw)
    if isinstance(ty, tuple):  # (values, indices)
        assert y[1].dtype == minigrad.int64
        np.testing.assert_array_equal(y[1].array, ty[1].numpy())
        y, ty = y[0], ty[0]
    assert y.shape == tuple(ty.shape) and y.dtype == ours.dtype
    if node:
        assert y.grad_fn.name() == ty.grad_fn.name()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    g = arr(*y.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    assert ours.grad.dtype == ours.dtype
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **tol)


MAX = [
    ((2, 3, 7, 6), (2,), {}),
    ((2, 3, 7, 6), (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "return_indices": True}),
    ((3, 9, 8), ((3, 2),), {"stride": (2, 3), "padding": (1, 1), "dilation": (2, 1), "ceil_mode": True,
                            "return_indices": True}),
    ((1, 2, 5, 5), (2,), {"stride": 1, "return_indices": True}),
    ((1, 1, 4, 4), (4,), {}),
]


@pytest.mark.parametrize("shape,args,kw", MAX)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_vs_torch(torch, shape, args, kw, dtype):
    vs_torch(torch, "max_pool2d", arr(*shape, dtype=dtype), dtype, *args, **kw)


def test_max_pool2d_nan_wins_and_ties_go_to_the_first(torch):
    x = np.array([[[[1.0, np.nan], [3.0, 2.0]], [[5.0, 5.0], [5.0, 1.0]]]])
    y, i = F.max_pool2d(minigrad.tensor(x), 2, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(y.array, ty.numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())


AVG = [
    ((2, 3, 7, 6), (2,), {}),
    ((2, 3, 7, 6), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 3, 7, 6), (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((3, 7, 6), ((3, 2),), {"stride": (2, 1), "padding": (1, 1), "divisor_override": 5}),
]


@pytest.mark.parametrize("shape,args,kw", AVG)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool2d_vs_torch(torch, shape, args, kw, dtype):
    vs_torch(torch, "avg_pool2d", arr(*shape, dtype=dtype), dtype, *args, **kw)


@pytest.mark.parametrize("shape,size", [((2, 3, 7, 6), (3, 4)), ((3, 7, 6), (None, 10)), ((2, 2, 5, 5), 5),
                                        ((1, 2, 9, 4), (2, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_avg_pool2d_vs_torch(torch, shape, size, dtype):
    vs_torch(torch, "adaptive_avg_pool2d", arr(*shape, dtype=dtype), dtype, size)


def test_adaptive_avg_pool2d_to_one_is_the_mean(torch):
    x = arr(2, 3, 5, 4)  # PyTorch takes a mean there (another node name): the values must agree
    vs_torch(torch, "adaptive_avg_pool2d", x, np.float64, 1, node=False)


INTERP = [
    ((2, 3, 5, 4), {"scale_factor": 2}), ((2, 3, 5, 4), {"size": (7, 3)}), ((2, 3, 5, 4), {"scale_factor": (1.7, 0.6)}),
    ((2, 3, 5, 4), {"size": (7, 9), "mode": "bilinear"}),
    ((2, 3, 5, 4), {"size": (7, 9), "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "bilinear"}),
    ((2, 3, 5, 4), {"scale_factor": 3, "mode": "bilinear", "align_corners": False}),
    ((2, 3, 5), {"scale_factor": 2.5, "mode": "linear"}), ((2, 3, 5), {"size": 1, "mode": "linear",
                                                                        "align_corners": True}),
    ((2, 3, 5), {"scale_factor": 2.5, "recompute_scale_factor": True}), ((1, 1, 6, 6), {"size": 3}),
    ((2, 3, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "nearest-exact"}), ((2, 3, 7), {"size": 4, "mode": "nearest-exact"}),
    ((1, 2, 6, 6), {"size": 4, "mode": "nearest-exact"}), ((2, 2, 3, 4, 5), {"scale_factor": 1.5}),
    ((2, 2, 3, 4, 5), {"size": (5, 2, 7), "mode": "nearest-exact"}),
    ((2, 2, 3, 4, 5), {"scale_factor": (2, 0.5, 1.3), "mode": "trilinear"}),
    ((2, 2, 3, 4, 5), {"size": (4, 4, 4), "mode": "trilinear", "align_corners": True}),
]


@pytest.mark.parametrize("shape,kw", INTERP)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_vs_torch(torch, shape, kw, dtype):
    vs_torch(torch, "interpolate", arr(*shape, dtype=dtype), dtype, **kw)


PADS = [
    ((2, 3, 4, 5), (1, 2), {}), ((2, 3, 4, 5), (1, -2, 3, 0, -1, 1), {"value": 3.5}),
    ((2, 3, 4, 5), (1, 2, 3, 1), {"mode": "reflect"}), ((3, 4, 5), (4, 4, 3, 1), {"mode": "reflect"}),
    ((4, 5), (4, -1), {"mode": "reflect"}), ((2, 3, 4, 5), (1, 2, 3, 1), {"mode": "replicate"}),
    ((2, 2, 3, 4, 5), (1, 2, 3, 1, 2, 2), {"mode": "replicate"}), ((2, 3, 5), (3, 0), {"mode": "replicate"}),
]


@pytest.mark.parametrize("shape,pad,kw", PADS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pad_vs_torch(torch, shape, pad, kw, dtype):
    vs_torch(torch, "pad", arr(*shape, dtype=dtype), dtype, pad, **kw)


@pytest.mark.parametrize("shape,pad", [((2, 3, 4, 5), (5, 2, 3, 4)), ((2, 3, 4, 5), (-1, 2, 3, 0)),
                                       ((1, 2, 5), (2, -1)), ((1, 2, 5), (-1, -1))])
def test_circular_pad_vs_torch(torch, shape, pad):
    # PyTorch records circular padding as copies into slices (no node of its own): values and gradients only
    vs_torch(torch, "pad", arr(*shape), np.float64, pad, mode="circular", node=False)


def test_constant_pad_keeps_integers(torch):
    x = [[1, 2]]
    assert F.pad(minigrad.tensor(x), (1, 1), value=2.7).tolist() == torch.nn.functional.pad(
        torch.tensor(x), (1, 1), value=2.7).tolist()


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
    lambda x: F.interpolate(x, size=(3, 7)),
    lambda x: F.pad(x, (1, 2, -1, 1), value=0.5),
    lambda x: F.pad(x, (2, 1, 1, 3), mode="reflect"),
    lambda x: F.pad(x, (2, 1, 1, 3), mode="circular"),
])
def test_gradcheck(fn):
    x = minigrad.tensor(arr(1, 2, 5, 4), requires_grad=True)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True) ** 2,
    lambda x: F.max_pool2d(x[0], 2, dilation=(1, 2)) ** 2,
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False) ** 2,
    lambda x: F.avg_pool2d(x[0], 2) ** 2,
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)) ** 2,
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear") ** 2,
    lambda x: F.pad(x, (1, 2, -1, 1)) ** 2,
    lambda x: F.pad(x, (2, 1, 1, 3), mode="replicate") ** 2,
])
def test_gradgradcheck(fn):
    x = minigrad.tensor(arr(1, 2, 4, 4), requires_grad=True)
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name,args", [("max_pool2d", (3, 2, 1)), ("avg_pool2d", (3, 2, 1)),
                                       ("interpolate", (None, 1.5, "bilinear"))])
def test_second_derivative_vs_torch(torch, name, args):
    x = arr(2, 2, 5, 5)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = minigrad.autograd.grad((getattr(F, name)(ours, *args) ** 3).sum(), ours, create_graph=True)
    (g ** 2).sum().backward()
    (tg,) = torch.autograd.grad((getattr(torch.nn.functional, name)(theirs, *args) ** 3).sum(), theirs,
                                create_graph=True)
    (tg ** 2).sum().backward()
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda t, m: m.max_pool2d(t.randn(1, 4, 5, 5), 3, padding=2),
    lambda t, m: m.max_pool2d(t.randn(4, 5), 3),
    lambda t, m: m.max_pool2d(t.randn(1, 4, 5, 5), 6),
    lambda t, m: m.avg_pool2d(t.randn(1, 4, 5, 5), 3, padding=2),
    lambda t, m: m.adaptive_avg_pool2d(t.randn(4, 5), 2),
    lambda t, m: m.adaptive_avg_pool2d(t.randn(1, 4, 5, 5), (2, 2, 2)),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5), size=(3, 3), scale_factor=2),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5)),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5), size=3, mode="foo"),
    lambda t, m: m.interpolate(t.randn(4, 5, 5), size=3, mode="bilinear"),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5), size=3, mode="trilinear"),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5), size=3, mode="nearest-exact", align_corners=False),
    lambda t, m: m.interpolate(t.randn(1, 4, 5, 5), size=3, align_corners=True),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (1, 1, 1)),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (3, 3), mode="reflect"),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (1, 1), mode="foo"),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (1,) * 10),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (5, 1, 0, 0), mode="reflect"),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (6, 1, 0, 0), mode="circular"),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (1, 1), mode="reflect", value=1.0),
    lambda t, m: m.pad(t.randn(5), (1, 1), mode="reflect"),
    lambda t, m: m.pad(t.randn(1, 4, 5, 5), (1.5, 1)),
])
def test_errors_match_torch_types(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F)
    assert len(str(ours.value)) > 20


@pytest.mark.parametrize("cls,args,kw", [
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}), ("MaxPool2d", (2,), {}),
    ("AvgPool2d", (3,), {"stride": 1, "padding": 1}), ("AvgPool2d", (2,), {"count_include_pad": False}),
    ("AdaptiveAvgPool2d", ((2, 3),), {}),
])
def test_modules_match_torch(torch, cls, args, kw):
    m, tm = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    x = arr(2, 3, 7, 6, dtype=np.float32)
    np.testing.assert_allclose(m(minigrad.tensor(x)).array, tm(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
    assert repr(m) == repr(tm)


def test_maxpool_module_return_indices_and_flatten(torch):
    x = arr(2, 3, 4, 4, dtype=np.float32)
    y, i = nn.MaxPool2d(2, return_indices=True)(minigrad.tensor(x))
    ty, ti = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(i.array, ti.numpy())
    f, tf = nn.Flatten(), torch.nn.Flatten()
    assert f(y).shape == tuple(tf(ty).shape) == (2, 12)
    assert repr(f) == repr(tf)
    assert nn.Flatten(0, 1)(y).shape == tuple(torch.nn.Flatten(0, 1)(ty).shape)


@pytest.mark.parametrize("shape,k,pad,ceil", [((2, 3, 8, 8), 2, 0, False), ((2, 3, 9, 7), 3, 1, True),
                                             ((3, 7, 6), 2, 1, False), ((1, 2, 10, 10), 4, 0, True)])
def test_avg_pool2d_tiling_backward_matches_the_overlapping_path_and_torch(torch, shape, k, pad, ceil):
    # stride == kernel takes the tiling backward (one broadcast write per tile, no col2im): against PyTorch,
    # and against the forward through the adjoint identity <avg(x), g> = <x, gx>
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(tuple(torch.nn.functional.avg_pool2d(torch.tensor(x), k, ceil_mode=ceil,
                                                                 padding=pad).shape))
    ours = minigrad.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    F.avg_pool2d(ours, k, padding=pad, ceil_mode=ceil).backward(minigrad.tensor(g))
    torch.nn.functional.avg_pool2d(theirs, k, padding=pad, ceil_mode=ceil).backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
    y = F.avg_pool2d(minigrad.tensor(x), k, padding=pad, ceil_mode=ceil).numpy()
    assert np.isclose((y * g).sum(), (x * ours.grad.numpy()).sum(), rtol=1e-12)


# ---- adaptive max pooling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape,size", [
    ("adaptive_max_pool2d", (2, 3, 7, 6), (3, 4)),
    ("adaptive_max_pool2d", (3, 5, 5), 2),  # unbatched
    ("adaptive_max_pool2d", (1, 2, 5, 7), (2, None)),
    ("adaptive_max_pool2d", (1, 2, 4, 4), (5, 6)),  # larger than the input: windows overlap
    ("adaptive_max_pool1d", (2, 3, 10), 4),
    ("adaptive_max_pool1d", (3, 7), (3,)),
])
@pytest.mark.parametrize("return_indices", [False, True])
def test_adaptive_max_pool_vs_torch(torch, name, shape, size, return_indices):
    vs_torch(torch, name, arr(*shape), np.float64, size, node=False, return_indices=return_indices)


def test_adaptive_max_pool_nan_wins(torch):
    x = arr(1, 1, 4, 4)
    x[0, 0, 1, 2] = np.nan
    y, i = F.adaptive_max_pool2d(minigrad.tensor(x), 2, return_indices=True)
    ty, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(i.array, ti.numpy())
    np.testing.assert_array_equal(np.isnan(y.array), np.isnan(ty.numpy()))


def test_adaptive_max_pool_gradcheck():
    x = minigrad.tensor(arr(1, 2, 5, 6), requires_grad=True)
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, (2, 3)), (x,))
    assert gradgradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 4)), (x,))
    assert gradcheck(lambda x: F.adaptive_max_pool1d(x, 3), (minigrad.tensor(arr(2, 2, 7), requires_grad=True),))


def test_adaptive_max_pool_modules_vs_torch(torch):
    for args in [((2, None),), (3, True)]:
        for n in (1, 2):
            ours, theirs = getattr(nn, f"AdaptiveMaxPool{n}d")(*args), getattr(torch.nn, f"AdaptiveMaxPool{n}d")(*args)
            assert repr(ours) == repr(theirs)
    x = arr(2, 3, 9)
    y, i = nn.AdaptiveMaxPool1d(4, return_indices=True)(minigrad.tensor(x))
    ty, ti = torch.nn.AdaptiveMaxPool1d(4, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(y.array, ty.numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())


@pytest.mark.parametrize("call", [
    lambda t, m: m.adaptive_max_pool2d(t.randn(2, 3), 2),
    lambda t, m: m.adaptive_max_pool1d(t.randn(2), 2),
    lambda t, m: m.adaptive_max_pool1d(t.randn(2, 3, 4), (2, 3)),
])
def test_adaptive_max_pool_errors_vs_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F)
    assert str(ours.value) == str(theirs.value)
