"""max_pool2d, avg_pool2d, adaptive_avg_pool2d, interpolate and pad (and their modules) against PyTorch:
values, indices, gradients, node names, finite differences (twice for the linear maps) and bad input; and
the max_pool2d and avg_pool CPU kernels (minigrad/backends/cpu/max_pool.py, avg_pool.py) against the op's
numpy path and PyTorch."""
import contextlib

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck


def raises_as_torch(torch, call):
    """`call(lib, lib.nn.functional)` raises on minigrad what it raises on PyTorch: its type and text."""
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F)
    assert str(ours.value) == str(theirs.value)


RNG = np.random.default_rng(11)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def vs_torch(torch, name, x, dtype, *args, node=True, atol32=1e-6, **kw):
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
    tol = dict(rtol=1e-5, atol=atol32) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_avg_pool1d_to_one_of_a_permuted_input_vs_torch(torch, dtype):
    # a text CNN's global average pooling, nn.AdaptiveAvgPool1d(1), of a (N, L, C) array seen as (N, C, L)
    x = arr(4, 94, 8, dtype=dtype)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = nn.AdaptiveAvgPool1d(1)(ours.permute(0, 2, 1)), torch.nn.AdaptiveAvgPool1d(1)(theirs.permute(0, 2, 1))
    g = arr(*ty.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    assert y.shape == tuple(ty.shape) and y.dtype == ours.dtype and ours.grad.dtype == ours.dtype
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **tol)


def test_adaptive_avg_pool2d_keeping_the_size_is_a_result_of_its_own(torch):
    # every axis keeps its size (each map the identity): the result is a copy, as PyTorch's, not the input
    a = arr(2, 3, 4, 5)
    x = minigrad.tensor(a)
    y = F.adaptive_avg_pool2d(x, (4, 5))
    np.testing.assert_array_equal(y.array, torch.nn.functional.adaptive_avg_pool2d(torch.tensor(a), (4, 5)).numpy())
    y.add_(1.0)
    np.testing.assert_array_equal(x.array, a)


@pytest.mark.parametrize("name, shape, size", [("adaptive_avg_pool2d", (2, 3, 5, 4), 1),
                                               ("adaptive_avg_pool2d", (3, 8, 8), (1, 1)),
                                               ("adaptive_avg_pool2d", (2, 3, 5, 1), (1, None)),
                                               ("adaptive_avg_pool3d", (2, 3, 2, 5, 4), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_avg_pool_to_one_is_pytorchs_mean(torch, name, shape, size, dtype):
    # PyTorch takes the mean over the window there: its node MeanBackward1, and its values
    vs_torch(torch, name, arr(*shape, dtype=dtype), dtype, size)


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


# super-resolution scripts: bicubic upscales, antialiased downscales to make the low-resolution inputs, area pooling
RESAMPLE = [
    ((2, 3, 5, 4), {"scale_factor": 2, "mode": "bicubic", "align_corners": False}),
    ((2, 3, 5, 4), {"scale_factor": 2, "mode": "bicubic", "align_corners": True}),
    ((2, 3, 5, 4), {"size": (3, 9), "mode": "bicubic"}), ((1, 2, 6, 7), {"scale_factor": (1.7, 0.6), "mode": "bicubic"}),
    ((1, 2, 1, 4), {"size": (3, 1), "mode": "bicubic", "align_corners": True}),
    ((2, 3, 8, 8), {"scale_factor": 0.5, "mode": "bilinear", "antialias": True}),
    ((2, 3, 8, 8), {"size": (5, 3), "mode": "bicubic", "antialias": True}),
    ((2, 3, 8, 8), {"scale_factor": 0.5, "mode": "bicubic", "antialias": True, "align_corners": True}),
    ((1, 2, 9, 7), {"size": (3, 2), "mode": "bilinear", "antialias": True, "align_corners": True}),
    ((1, 2, 5, 4), {"scale_factor": 1.5, "mode": "bicubic", "antialias": True}),
    ((1, 2, 5, 4), {"size": (7, 9), "mode": "bilinear", "antialias": True}),
    ((2, 3, 7, 6), {"size": (3, 4), "mode": "area"}), ((2, 3, 4, 5), {"scale_factor": 2, "mode": "area"}),
    ((2, 3, 7), {"size": 3, "mode": "area"}), ((1, 2, 3, 4, 5), {"scale_factor": 0.5, "mode": "area"}),
]


@pytest.mark.parametrize("shape,kw", RESAMPLE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_bicubic_antialias_and_area_vs_torch(torch, shape, kw, dtype):
    # they raised NotImplementedError ("mode 'bicubic' is not supported", "antialias=True is not supported");
    # area of a 1-D signal is PyTorch's adaptive_avg_pool1d: its node is not the 2-D pool's. PyTorch rounds the
    # cubic weights to float32 (its float32 gradients stray ~3e-6 from float64's, ours ~6e-7): atol 1e-5 there
    vs_torch(torch, "interpolate", arr(*shape, dtype=dtype), dtype, node=len(shape) != 3, atol32=1e-5, **kw)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4, 4), scale_factor=2, antialias=True),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4), scale_factor=2, mode="linear", antialias=True),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4, 4), scale_factor=2, mode="area", align_corners=False)])
def test_interpolate_antialias_and_area_refusals_are_pytorchs(torch, call):
    with pytest.raises(ValueError) as want:
        call(torch)
    with pytest.raises(ValueError) as got:
        call(minigrad)
    assert str(got.value) == str(want.value)



@pytest.mark.parametrize("ndim,mode", [(2, "nearest"), (6, "nearest"), (2, "linear"), (6, "bilinear"),
                                       (2, "nearest-exact"), (4, "linear"), (3, "bilinear"), (4, "trilinear"),
                                       (3, "bicubic"), (5, "bicubic")])
def test_interpolate_wrong_ndim_error_like_torch(torch, ndim, mode):
    """nn.Upsample on a batch of flat rows: PyTorch's words (its "Input Error" for a rank no mode takes)."""
    def error(L, Fn):
        with pytest.raises(NotImplementedError) as info:
            Fn.interpolate(L.ones(*(2,) * ndim), scale_factor=2, mode=mode)
        return str(info.value)

    assert error(minigrad, F) == error(torch, torch.nn.functional)

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


@pytest.mark.parametrize("mode, pads", [("reflect", (4, 4, 4, 4)), ("replicate", (6, 3, 0, 5))])
def test_pad_backward_adds_in_output_order_as_numpys_add_at(mode, pads):
    # the gradient of a reflect or replicate pad: each output's gradient added to its source pixel in output order
    # (circular padding is PyTorch's chain of slice copies, whose bits tests/nn/test_gaps31_vs_torch.py compares)
    # (bits of an unbuffered np.add.at along each padded axis in turn, as the forward picks: H, then W)
    from nn._functional.padding import _picks

    x = minigrad.tensor(arr(6, 3, 5, 7, dtype=np.float32), requires_grad=True)
    y = F.pad(x, pads, mode=mode)
    g = (arr(*y.shape) * np.logspace(-4, 4, y.shape[-1])).astype(np.float32)  # (magnitudes where order counts)
    y.backward(minigrad.tensor(g))
    want = g
    for ax, (lo, hi) in ((2, pads[2:]), (3, pads[:2])):
        src = _picks(x.shape[ax], lo, hi, mode).src
        acc = np.zeros((x.shape[ax],) + np.moveaxis(want, ax, 0).shape[1:], dtype=np.float32)
        np.add.at(acc, src, np.moveaxis(want, ax, 0))
        want = np.moveaxis(acc, 0, ax)
    np.testing.assert_array_equal(x.grad.array.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("shape,pad", [((2, 3, 4, 5), (5, 2, 3, 4)), ((2, 3, 4, 5), (-1, 2, 3, 0)),
                                       ((1, 2, 5), (2, -1)), ((1, 2, 5), (-1, -1))])
def test_circular_pad_vs_torch(torch, shape, pad):
    # (both record copies into slices: CopySlices, which PyTorch's name() writes in its C++ namespace)
    vs_torch(torch, "pad", arr(*shape), np.float64, pad, mode="circular", node=False)


def test_constant_pad_keeps_integers(torch):
    x = [[1, 2]]
    assert F.pad(minigrad.tensor(x), (1, 1), value=2.7).tolist() == torch.nn.functional.pad(
        torch.tensor(x), (1, 1), value=2.7).tolist()



@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_keeps_inf_and_nan_where_they_are(torch, mode):
    """A picked inf or NaN lands only where it is picked, in the values and in the gradient (a product by the
    0/1 pick matrix made 0 * inf = NaN across every row it met)."""
    x = np.array([[[1.0, np.inf, 3.0, 4.0], [5.0, 6.0, np.nan, 8.0]]], dtype=np.float32)
    g = np.arange(56, dtype=np.float32).reshape(1, 2, 4, 7)
    g[0, 0, 2, 3] = np.inf
    ours = minigrad.tensor(x[:, :, None].repeat(3, 2), requires_grad=True)
    theirs = torch.tensor(x[:, :, None].repeat(3, 2), requires_grad=True)
    yo, yt = F.pad(ours, (2, 1, 1, 0), mode=mode), torch.nn.functional.pad(theirs, (2, 1, 1, 0), mode=mode)
    np.testing.assert_array_equal(yo.detach().numpy(), yt.detach().numpy())
    yo.backward(minigrad.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())

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
    raises_as_torch(torch, call)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("call", [
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 7),  # a text CNN's `max_pool1d(conv, conv.shape[2])` on a short text
    lambda t, m, x: m.max_pool1d(x(3, 6), 3, dilation=3),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 2, padding=2),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 3, padding=-1),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6, 1), 2),
    lambda t, m, x: m.max_pool1d(x(6), 2),
    lambda t, m, x: m.max_pool1d(x(2, 3, 0), 1),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 0),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 2, stride=0),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), 2, dilation=0),
    lambda t, m, x: m.max_pool1d(x(2, 3, 6), (2, 2)),
    lambda t, m, x: t.nn.MaxPool1d(7)(x(2, 3, 6)),
])
def test_max_pool1d_errors_vs_torch(torch, call, requires_grad):
    # (max_pool1d without indices checks its arguments itself, with texts of its own; they were max_pool2d's)
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional, lambda *s: torch.randn(*s, requires_grad=requires_grad))
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F, lambda *s: minigrad.randn(*s, requires_grad=requires_grad))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("return_indices", [False, True])
@pytest.mark.parametrize("size", [lambda L: np.int64(2), lambda L: L.tensor(2), lambda L: 2.5])
@pytest.mark.parametrize("call", [
    lambda F, nn, x, k, r: F.max_pool1d(x, k, return_indices=r),  # (a size computed with numpy: `np.int64`)
    lambda F, nn, x, k, r: F.max_pool1d(x, 3, k, return_indices=r),
    lambda F, nn, x, k, r: F.max_pool1d(x, 4, 1, 1, k, return_indices=r),
    lambda F, nn, x, k, r: nn.MaxPool1d(k, return_indices=r)(x),
])
def test_max_pool1d_sizes_of_other_types_as_torch(torch, call, size, return_indices):
    # an integer of numpy or a 0-d tensor is a size, as in PyTorch (minigrad raised 'object is not iterable'); a
    # float is PyTorch's TypeError naming the argument (minigrad's was 'float' object is not iterable)
    seen = []
    for L, Fn, Nn in ((torch, torch.nn.functional, torch.nn), (minigrad, F, nn)):
        x = L.tensor(np.arange(24.0).reshape(2, 2, 6))
        try:
            out = call(Fn, Nn, x, size(L), return_indices)
            seen.append([o.tolist() for o in (out if return_indices else (out,))])
        except TypeError as e:
            seen.append(str(e))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool2d(x, 2),
    lambda F, x: F.avg_pool2d(x, 2),
    lambda F, x: F.max_pool2d(x, 2, return_indices=True)[0],
    lambda F, x: F.max_pool1d(x[:, :, 0], 2),
    lambda F, x: F.max_pool1d(x[:, :, 0], 2, return_indices=True)[0],
])
def test_pooling_a_batch_of_none_as_torch(torch, call):
    # PyTorch's pools take an empty batch (its checks allow a 0 dim batch size): an empty result and gradient;
    # minigrad refused it as an empty input, and its numpy max and the kernel's backward failed on no elements
    shapes = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        x = L.zeros(0, 3, 4, 4, requires_grad=True)
        y = call(Fn, x)
        y.sum().backward()
        shapes.append((tuple(y.shape), tuple(x.grad.shape)))
    assert shapes[1] == shapes[0]



@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool3d(x, 2),
    lambda F, x: F.max_pool3d(x, 2, return_indices=True)[1].float(),
    lambda F, x: F.avg_pool3d(x, 2),
    lambda F, x: F.adaptive_max_pool2d(x[:, :, 0], 2),
    lambda F, x: F.adaptive_max_pool2d(x[:, 0], (2, 1), return_indices=True)[0],
    lambda F, x: F.adaptive_max_pool3d(x, 2),
    lambda F, x: F.adaptive_max_pool3d(x[:, 0], (1, 2, 3), return_indices=True)[1].float(),
    lambda F, x: F.adaptive_avg_pool2d(x[:, 0, 0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x, 2),
    lambda F, x: F.adaptive_avg_pool3d(x[:, 0], 0),
    lambda F, x: F.adaptive_avg_pool2d(x.sum() + x.new_ones(3, 4, 4), (0, 2)),
    lambda F, x: F.adaptive_max_pool3d(x.sum() + x.new_ones(2, 4, 4, 4), 0),
    lambda F, x: F.adaptive_max_pool2d(x[:, 0, 0], 0),
])
def test_3d_and_adaptive_pools_of_a_batch_of_none_as_torch(torch, call):
    # an empty batch (batched or not) pools to an empty result as in PyTorch, and an adaptive output size of 0
    # is allowed; minigrad refused the 3-d pools' empty batch, failed reshaping adaptive_max_pool's, and
    # refused adaptive_avg_pool's output size 0
    seen = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        x = L.zeros(0, 3, 4, 4, 4, requires_grad=True)
        y = call(Fn, x)
        seen.append((tuple(y.shape), y.dtype == L.float32, y.detach().numpy().tolist()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("module", [
    lambda nn: nn.MaxPool3d(2), lambda nn: nn.AvgPool3d(2), lambda nn: nn.AdaptiveMaxPool2d(2),
    lambda nn: nn.AdaptiveAvgPool2d(2), lambda nn: nn.AdaptiveMaxPool3d(2), lambda nn: nn.AdaptiveAvgPool3d(2),
])
@pytest.mark.parametrize("shape", [(0, 3, 4, 4, 4), (0, 4, 4, 4), (2, 4, 4, 4)])
def test_3d_and_adaptive_pool_modules_batched_unbatched_and_empty_as_torch(torch, module, shape):
    x = arr(*shape)
    seen = []
    for L, Nn in ((torch, torch.nn), (minigrad, nn)):
        t = L.tensor(x[:, 0] if "2d" in type(module(Nn)).__name__ and len(shape) == 5 else x, requires_grad=True)
        try:
            y = module(Nn)(t)
        except RuntimeError as e:
            seen.append(str(e))
            continue
        y.sum().backward()
        seen.append((tuple(y.shape), np.round(y.detach().numpy(), 10).tolist(), t.grad.numpy().tolist()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("call", [
    lambda t, F: F.max_pool3d(t.zeros(2, 0, 4, 4), 2),
    lambda t, F: F.max_pool3d(t.zeros(0, 4, 4, 4), 2),
    lambda t, F: F.max_pool3d(t.zeros(2, 3, 4, 4, 0), 2),
    lambda t, F: F.avg_pool3d(t.zeros(0, 0, 4, 4, 4), 2),
    lambda t, F: F.avg_pool3d(t.zeros(3, 4, 4, 0), 2),
    lambda t, F: F.max_pool3d(t.zeros(0, 2, 1, 4, 4), 2),
    lambda t, F: F.avg_pool3d(t.zeros(0, 2, 1, 4, 4), 2),
    lambda t, F: F.max_pool3d(t.zeros(0, 2, 4, 4, 4), 0),
    lambda t, F: F.avg_pool3d(t.zeros(2, 2, 4, 4), 0),
    lambda t, F: F.max_pool3d(t.zeros(2, 0, 4, 4, 4), 2, padding=2),
    lambda t, F: F.adaptive_avg_pool2d(t.zeros(2, 0, 4), 2),
    lambda t, F: F.adaptive_avg_pool2d(t.zeros(2, 0, 4), -1),
    lambda t, F: F.adaptive_avg_pool2d(t.zeros(0, 4, 0), 2),
    lambda t, F: F.adaptive_avg_pool3d(t.zeros(0, 0, 4, 4, 4), 2),
    lambda t, F: F.adaptive_avg_pool3d(t.zeros(2, 4, 4, 0), 2),
    lambda t, F: F.adaptive_max_pool2d(t.zeros(0, 0, 3, 4), 2),
    lambda t, F: F.adaptive_max_pool2d(t.zeros(2, 0, 4), -1),
    lambda t, F: F.adaptive_max_pool2d(t.zeros(2, 4, 4), -1),
    lambda t, F: F.adaptive_max_pool3d(t.zeros(0, 4, 4, 4, 0), 2),
    lambda t, F: F.adaptive_max_pool3d(t.zeros(2, 4, 0, 4), 2),
])
def test_3d_and_adaptive_pools_refuse_empty_non_batch_dims_as_torch(torch, call):
    raises_as_torch(torch, call)

@pytest.mark.parametrize("call", [
    lambda t, F: F.max_pool2d(t.zeros(2, 0, 4, 4), 2),
    lambda t, F: F.avg_pool2d(t.zeros(3, 0, 4), 2),
    lambda t, F: F.max_pool1d(t.ones(1, 2, 6, dtype=t.int64), 2),
    lambda t, F: F.max_pool1d(t.ones(1, 2, 6, dtype=t.uint8), 2),
    lambda t, F: F.max_pool1d(t.ones(1, 2, 6, dtype=t.bool), 2),
    lambda t, F: F.max_pool1d(t.ones(1, 2, 6, dtype=t.bool), 2, return_indices=True),
    lambda t, F: F.max_pool2d(t.ones(1, 2, 4, 4, dtype=t.bool), 2),
    lambda t, F: F.max_pool3d(t.ones(1, 2, 4, 4, 4, dtype=t.bool), 2),
])
def test_pooling_refusals_of_empty_planes_and_integer_1d_max_as_torch(torch, call):
    raises_as_torch(torch, call)



@pytest.mark.parametrize("call", [
    lambda F, x: F.avg_pool1d(x, 2.5),
    lambda F, x: F.avg_pool1d(x, 2, 1.5),
    lambda F, x: F.avg_pool1d(x, None),
    lambda F, x: F.avg_pool1d(x, np.int64(2)),
    lambda F, x: F.max_pool1d(x, None),
    lambda F, x: F.max_pool1d(x, 2, 1, None),
    lambda F, x: F.max_pool1d(x, 2, 1, 0, None),
    lambda F, x: F.max_pool2d(x[None], None),
    lambda F, x: F.max_pool2d(x[None], 2, 1, None),
    lambda F, x: F.avg_pool2d(x[None], None),
])
def test_pool_size_of_a_float_or_none_is_torchs_type_error(torch, call):
    # avg_pool1d's sizes skipped the int check (a float was "'float' object is not iterable" or "has no len()"),
    # and a None kernel_size, padding or dilation passed it (numpy's "'NoneType' object is not iterable"):
    # only stride may be None
    seen = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        x = L.tensor(np.arange(24.0).reshape(2, 2, 6))
        try:
            seen.append(call(Fn, x).tolist())
        except TypeError as e:
            seen.append(str(e))
    assert seen[1] == seen[0]

# ---- max_pool2d's CPU kernel (minigrad/backends/cpu/max_pool.py) against the op's numpy path and PyTorch ------------
@pytest.fixture(params=["kernel", "numpy"])
def max_pool_path(request, monkeypatch):
    """Runs a test on the backend's compiled max_pool2d and again on the op's numpy code (the kernel's
    `supports` declining); yields the path's name and the list the kernel's forward calls append to."""
    from minigrad import backends
    from minigrad.backends.cpu import max_pool, team

    if request.param == "kernel":
        if not team.available() or backends.get_kernels() != "fast":
            pytest.skip("the compiled kernels do not run here (no numba, or MINIGRAD_KERNELS is not 'fast')")
    else:
        monkeypatch.setattr(max_pool, "supports", lambda *args: False)
    calls, forward = [], max_pool.forward
    monkeypatch.setattr(max_pool, "forward", lambda *args: calls.append(args[0].shape) or forward(*args))
    return request.param, calls


def max_pool_run(module, x, g, **kw):
    """(values, indices, input gradient) of module's max_pool2d on x, the output gradient g; module is nn.functional
    or torch.nn.functional (x may be unbatched)."""
    if module is F:
        t = minigrad.tensor(x, requires_grad=True)
        y, i = F.max_pool2d(t, return_indices=True, **kw)
        y.backward(minigrad.tensor(g))
        return y.array, i.array, t.grad.array
    import torch

    t = torch.tensor(x, requires_grad=True)
    y, i = module.max_pool2d(t, return_indices=True, **kw)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), i.numpy(), t.grad.numpy()


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(f"i{a.itemsize}"), b.view(f"i{b.itemsize}"))


MAX_KERNEL = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((4, 8, 28, 28), dict(kernel_size=2, stride=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=1)),  # overlapping windows: an input can be the max of several
    ((2, 4, 20, 21), dict(kernel_size=3, stride=1, padding=1)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 2, 11, 10), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 3), ceil_mode=True)),
    ((2, 2, 12, 13), dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1))),
    ((3, 9, 8), dict(kernel_size=2, stride=1, padding=1)),  # unbatched
    ((2, 3, 1, 17), dict(kernel_size=(1, 4), stride=(1, 3), padding=(0, 2), ceil_mode=True)),  # max_pool1d's shape
    # long windows, few a row (read by the kernel's stretches): a whole row (a text CNN's max_pool1d(c, c.size(2))),
    # the whole plane, whole rows with a row of padding, two or three long windows (padding, ceil_mode), dilation
    ((2, 3, 1, 94), dict(kernel_size=(1, 94))),
    ((2, 3, 12, 12), dict(kernel_size=(12, 12))),
    ((2, 3, 7, 40), dict(kernel_size=(3, 40), stride=(2, 1), padding=(1, 0), ceil_mode=True)),
    ((2, 3, 5, 50), dict(kernel_size=(2, 20), stride=(2, 20), padding=(1, 10), ceil_mode=True)),
    ((2, 3, 4, 61), dict(kernel_size=(2, 30), stride=(3, 31))),
    ((2, 3, 1, 60), dict(kernel_size=(1, 20), stride=(1, 17), dilation=(1, 2))),
    # short windows, many a row (the kernel's passes over a row's windows, unit stride or strided): max_pool1d's
    ((2, 3, 1, 94), dict(kernel_size=(1, 3), stride=(1, 2))),
    ((2, 3, 1, 94), dict(kernel_size=(1, 2))),
    ((2, 3, 1, 94), dict(kernel_size=(1, 3), stride=1, padding=(0, 1))),
    ((2, 3, 1, 95), dict(kernel_size=(1, 4), stride=(1, 3), padding=(0, 2), dilation=(1, 2), ceil_mode=True)),
    ((2, 3, 30, 31), dict(kernel_size=3, stride=2, padding=1)),  # a ResNet stem's (rows' maxima, then windows')
]


def _overlap(kw):
    k, s, d = (kw.get(name, default) for name, default in (("kernel_size", None), ("stride", None), ("dilation", 1)))
    k, d = (k, k) if isinstance(k, int) else k, (d, d) if isinstance(d, int) else d
    s = k if s is None else (s, s) if isinstance(s, int) else s
    return any(st < di * (kk - 1) + 1 for kk, st, di in zip(k, s, d))


@pytest.mark.parametrize("shape,kw", MAX_KERNEL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("data", ["normal", "ties"])
def test_max_pool2d_kernel_vs_numpy_path_and_torch(torch, monkeypatch, shape, kw, dtype, data):
    from minigrad import backends
    from minigrad.backends.cpu import max_pool, team

    if not team.available() or backends.get_kernels() != "fast":
        pytest.skip("the compiled kernels do not run here (no numba, or MINIGRAD_KERNELS is not 'fast')")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    if data == "ties":  # a few values only: most windows have their max more than once (the first one wins)
        x = np.round(x)
    x = x.astype(dtype)
    out_shape = tuple(torch.nn.functional.max_pool2d(torch.tensor(x), **kw).shape)
    g = rng.standard_normal(out_shape).astype(dtype)
    theirs = max_pool_run(torch.nn.functional, x, g, **kw)
    kernel = max_pool_run(F, x, g, **kw)
    monkeypatch.setattr(max_pool, "supports", lambda *args: False)
    plain = max_pool_run(F, x, g, **kw)
    for ours in (kernel, plain):
        same_bits(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])
        assert ours[2].dtype == dtype
    same_bits(kernel[2], theirs[2])  # (where windows overlap, a sum of gradients: added in PyTorch's order)
    if _overlap(kw):  # the numpy path adds them kernel offset by offset
        tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(plain[2], theirs[2], **tol)
    else:
        same_bits(plain[2], theirs[2])


def test_max_pool2d_kernel_is_what_runs(max_pool_path):
    path, calls = max_pool_path
    x = minigrad.tensor(arr(2, 3, 8, 8, dtype=np.float32), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    F.max_pool1d(minigrad.tensor(arr(2, 3, 10)), 3)  # (N, C, L) as (N, C, 1, L): the same op
    F.max_pool2d(minigrad.tensor(np.arange(64).reshape(1, 1, 8, 8)), 2)  # integers: the numpy path only
    assert calls == ([(2, 3, 8, 8), (2, 3, 1, 10)] if path == "kernel" else [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_nan_inf_and_signed_zeros_vs_torch(torch, max_pool_path, dtype):
    # PyTorch's loop: an element replaces the max where it is greater or NaN, so the value is NaN and the index
    # the window's LAST NaN; -inf windows point at their first element inside the input (never at padding);
    # -0 and 0 tie (the first wins)
    x = arr(2, 3, 9, 10, dtype=dtype)
    x[0, 0, :4, :4] = np.nan
    x[0, 0, 1, 1] = -np.nan  # (a NaN with its sign bit set: x86's 0 / 0)
    x[0, 1, 2, ::3] = np.nan
    x[0, 1, 2, 1] = np.inf
    x[0, 2, :5, 3:] = np.inf
    x[1, 0] = -np.inf
    x[1, 1, :, :3] = -np.inf
    x[1, 2, :4, :4] = 0.0
    x[1, 2, 0, ::2] = -0.0
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=(3, 2), stride=2,
                                                                                 padding=1, dilation=(1, 2),
                                                                                 ceil_mode=True)):
        g = arr(*torch.nn.functional.max_pool2d(torch.tensor(x), **kw).shape, dtype=dtype)
        ours, theirs = max_pool_run(F, x, g, **kw), max_pool_run(torch.nn.functional, x, g, **kw)
        same_bits(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6, atol=1e-6)
    assert len(max_pool_path[1]) == (3 if max_pool_path[0] == "kernel" else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool1d_short_windows_nan_inf_ties_vs_torch(torch, max_pool_path, dtype):
    # many short windows a row (the kernel's passes over the row's windows, with selects): still the scan's choice
    x = np.round(arr(3, 4, 50, dtype=dtype))
    x[0, 0, [3, 4, 10, 20, 21, 22]] = np.nan
    x[0, 0, 11] = -np.nan
    x[0, 1, 5:30] = -np.inf
    x[0, 2, ::2] = 0.0
    x[0, 2, 1::2] = -0.0
    x[1, 3] = np.nan
    x[2, 1, ::3] = np.inf
    for kw in (dict(kernel_size=3, stride=2), dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
               dict(kernel_size=4, stride=3, padding=2, dilation=2, ceil_mode=True)):
        ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        (y, i), (ty, ti) = F.max_pool1d(ours, return_indices=True, **kw), \
            torch.nn.functional.max_pool1d(theirs, return_indices=True, **kw)
        g = arr(*ty.shape, dtype=dtype)
        y.backward(minigrad.tensor(g)), ty.backward(torch.tensor(g))
        same_bits(y.detach().numpy(), ty.detach().numpy())
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        if max_pool_path[0] == "kernel":  # (overlapping windows: summed in PyTorch's order)
            same_bits(ours.grad.numpy(), theirs.grad.numpy())
        else:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert len(max_pool_path[1]) == (4 if max_pool_path[0] == "kernel" else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_over_long_windows_nan_inf_ties_vs_torch(torch, max_pool_path, dtype):
    # windows of a whole row or plane (the kernel finds their max in vectorized passes, not by the scan): still
    # PyTorch's scan's choice, the last NaN (of either sign), else the first max; -0 ties 0; a -inf row: its first
    x = np.round(arr(3, 4, 3, 40, dtype=dtype))  # (few values: ties in every row)
    x[0, 0, 1, [3, 17, 30]] = np.nan
    x[0, 0, 2, 5] = -np.nan  # (the plane's last NaN, its sign bit set)
    x[0, 1, 0, 39] = np.nan
    x[0, 2, 1, :] = -np.inf
    x[0, 3] = -np.inf
    x[1, 0, :, :] = 0.0
    x[1, 0, :, 1::3] = -0.0
    x[1, 1, 2, [7, 22]] = np.inf
    x[2, 0, :, :] = np.nan
    for kw in (dict(kernel_size=(1, 40)), dict(kernel_size=(3, 40)), dict(kernel_size=(2, 40), stride=1, padding=(1, 0)),
               dict(kernel_size=(1, 20), stride=(1, 20)), dict(kernel_size=(3, 16), stride=(3, 12))):
        g = arr(*torch.nn.functional.max_pool2d(torch.tensor(x), **kw).shape, dtype=dtype)
        ours, theirs = max_pool_run(F, x, g, **kw), max_pool_run(torch.nn.functional, x, g, **kw)
        same_bits(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6, atol=1e-6)
    assert len(max_pool_path[1]) == (5 if max_pool_path[0] == "kernel" else 0)


@pytest.mark.parametrize("unbatched", [False, True])
def test_max_pool1d_over_the_whole_length_of_a_permuted_conv_output_vs_torch(torch, max_pool_path, unbatched):
    # a text CNN's global max pooling: F.max_pool1d(c, c.size(2)) of a (N, L, C) array seen as (N, C, L)
    x = np.round(arr(4, 94, 8, dtype=np.float32) * 2)
    x[1, [10, 50], 3] = np.nan
    x[2, :, 5] = -np.inf
    ours, theirs = minigrad.tensor(x).permute(0, 2, 1), torch.tensor(x).permute(0, 2, 1)
    if unbatched:
        ours, theirs = ours[1], theirs[1]
    ours.requires_grad_(), theirs.requires_grad_()
    y, i = F.max_pool1d(ours, ours.size(-1), return_indices=True)
    ty, ti = torch.nn.functional.max_pool1d(theirs, theirs.size(-1), return_indices=True)
    same_bits(y.array, ty.detach().numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())
    (y * y.shape[-2]).sum().backward()
    (ty * ty.shape[-2]).sum().backward()
    same_bits(ours.grad.array, theirs.grad.numpy())
    same_bits(F.max_pool1d(ours, ours.size(-1)).array, y.array)
    assert len(max_pool_path[1]) == (2 if max_pool_path[0] == "kernel" else 0)


def test_max_pool2d_window_outside_the_input_vs_torch(torch, max_pool_path):
    # dilation 3 over a 2-row input with padding 1: the first window's rows are -1 and 2, none inside. PyTorch's
    # value is -inf and its index points past the window's start (row 2); its backward adds there, into the next
    # plane: ours adds nothing
    x = arr(1, 2, 2, 5)
    kw = dict(kernel_size=2, stride=2, padding=1, dilation=3)
    ours = minigrad.tensor(x, requires_grad=True)
    y, i = F.max_pool2d(ours, return_indices=True, **kw)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(y.array, ty.numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())
    y.sum().backward()
    assert not ours.grad.array.any()


def test_max_pool2d_integers_vs_torch(torch):
    # the numpy path (the kernel takes floats): the padding's value is the dtype's least, never chosen
    x = np.random.default_rng(2).integers(-3, 3, size=(2, 3, 7, 6))
    x[0, 0, :3, :3] = np.iinfo(np.int64).min
    for kw in (dict(kernel_size=2, padding=1), dict(kernel_size=3, stride=1, padding=1)):
        y, i = F.max_pool2d(minigrad.tensor(x), return_indices=True, **kw)
        ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(y.array, ty.numpy())
        np.testing.assert_array_equal(i.array, ti.numpy())


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 1), dilation=(2, 1),
                                     ceil_mode=True)])
def test_max_pool2d_double_backward_vs_torch(torch, max_pool_path, kw):
    # create_graph: the kernel's forward, then the recorded MaxPoolScatter (the kernel's indices as window offsets)
    x = arr(2, 3, 8, 7)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = minigrad.autograd.grad((F.max_pool2d(ours, **kw) ** 3).sum(), ours, create_graph=True)
    (g ** 2).sum().backward()
    (tg,) = torch.autograd.grad((torch.nn.functional.max_pool2d(theirs, **kw) ** 3).sum(), theirs, create_graph=True)
    (tg ** 2).sum().backward()
    np.testing.assert_allclose(g.array, tg.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert gradgradcheck(lambda t: F.max_pool2d(t, **kw) ** 2, (minigrad.tensor(arr(1, 2, 6, 5), requires_grad=True),))
    assert len(max_pool_path[1]) > 0 if max_pool_path[0] == "kernel" else not max_pool_path[1]


def test_max_pool2d_kernel_same_bits_on_one_thread_and_on_the_team(monkeypatch):
    # planes are independent: shared over the team (above TEAM_MIN_ELEMENTS) each is computed as on one thread
    from minigrad import backends
    from minigrad.backends.cpu import max_pool, team

    if backends.get_kernels() != "fast":
        pytest.skip("MINIGRAD_KERNELS is not 'fast': no kernel")
    if not team.has_team():
        pytest.skip("numba's OpenMP / TBB threading layer does not load here: the kernels run as plain loops")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)  # 131072 elements
    x[0, 0, :5, :5] = np.nan
    g = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    runs = []
    for threads in ("1", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        runs.append(max_pool_run(F, x, g, kernel_size=3, stride=1, padding=1))
    assert max_pool._forward_team._team_compiled is not None and max_pool._backward_team._team_compiled is not None
    for a, b in zip(*runs):
        same_bits(a, b)


def test_returned_indices_edited_in_place_leave_the_gradient_alone():
    x = minigrad.tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    idx.zero_()  # the caller's copy
    y.sum().backward()
    want = np.zeros((4, 4))
    want[1::2, 1::2] = 1.0  # each 2x2 window's max is its bottom-right element
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], want)


def test_adaptive_max_pool_picks_pytorchs_nan(torch):
    a = np.array([[[[np.nan, 1.0, np.nan, 2.0], [0, 0, np.nan, 0]]]], dtype=np.float32)
    for size in ((1, 1), (1, 2), (2, 2)):
        y, i = F.adaptive_max_pool2d(minigrad.tensor(a), size, return_indices=True)
        ty, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(a), size, return_indices=True)
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("size", [1, 2])
def test_adaptive_max_pool1d_of_a_permuted_input_with_nans_ties_and_infs_vs_torch(torch, size):
    # nn.AdaptiveMaxPool1d(1) of a text CNN's (N, L, C) conv output seen as (N, C, L): a NaN in a few rows only
    # (the last NaN wins, of either sign), ties elsewhere (the first wins), a row of -inf (its first element)
    x = np.round(arr(3, 30, 5, dtype=np.float32))
    x[0, [4, 20], 1] = np.nan
    x[0, 25, 1] = -np.nan
    x[1, 7, 2] = np.nan
    x[2, :, 3] = -np.inf
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, i = nn.AdaptiveMaxPool1d(size, return_indices=True)(ours.permute(0, 2, 1))
    ty, ti = torch.nn.AdaptiveMaxPool1d(size, return_indices=True)(theirs.permute(0, 2, 1))
    same_bits(y.array, ty.detach().numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())
    g = arr(*ty.shape, dtype=np.float32)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    same_bits(ours.grad.array, theirs.grad.numpy())


# ---- the 3-d pools: the same ops over (D, H, W) ----------------------------------------------------------------------
POOL3D = [
    ("max_pool3d", (2, 3, 5, 6, 4), (2,), {}),
    ("max_pool3d", (1, 2, 7, 6, 5), ((3, 2, 3),), dict(stride=(2, 1, 2), padding=(1, 1, 0), dilation=(1, 2, 1),
                                                     ceil_mode=True, return_indices=True)),
    ("max_pool3d", (3, 5, 5, 5), (3,), dict(stride=2, padding=1, return_indices=True)),  # unbatched
    ("avg_pool3d", (2, 3, 5, 6, 4), (2,), {}),
    ("avg_pool3d", (1, 2, 7, 6, 5), ((3, 2, 3),), dict(stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True)),
    ("avg_pool3d", (1, 2, 7, 6, 5), (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool3d", (3, 5, 4, 6), ((2, 1, 3),), dict(padding=(1, 0, 1), divisor_override=4)),  # unbatched
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 4), ((2, 4, 3),), {}),
    ("adaptive_avg_pool3d", (3, 5, 6, 7), ((None, 2, 9),), {}),
]


@pytest.mark.parametrize("name,shape,args,kw", POOL3D)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_3d_pools_vs_torch(torch, name, shape, args, kw, dtype):
    vs_torch(torch, name, arr(*shape, dtype=dtype), dtype, *args, **kw)


@pytest.mark.parametrize("shape,size", [((2, 3, 5, 6, 7), (2, 4, 3)), ((3, 4, 5, 6), (5, None, 2)), ((1, 2, 3, 3, 3), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_max_pool3d_vs_torch(torch, shape, size, dtype):
    vs_torch(torch, "adaptive_max_pool3d", arr(*shape, dtype=dtype), dtype, size, node=False, return_indices=True)
    x = arr(*shape)
    y, i = F.adaptive_max_pool3d_with_indices(minigrad.tensor(x), size)  # (a pair whatever return_indices says)
    ty, ti = torch.nn.functional.adaptive_max_pool3d_with_indices(torch.tensor(x), size)
    np.testing.assert_array_equal(y.array, ty.numpy())
    np.testing.assert_array_equal(i.array, ti.numpy())


def test_max_pool3d_with_indices_and_nan(torch):
    x = arr(1, 2, 4, 4, 4)
    x[0, 1, 1, 2, 3] = np.nan
    y, i = F.max_pool3d_with_indices(minigrad.tensor(x), 2)
    ty, ti = torch.nn.functional.max_pool3d_with_indices(torch.tensor(x), 2)
    np.testing.assert_array_equal(i.array, ti.numpy())
    np.testing.assert_array_equal(y.array, ty.numpy())


def test_lp_pool3d_vs_torch(torch):
    x = np.abs(arr(2, 3, 5, 6, 4)) + 0.1
    for p, k, s, ceil in [(2.0, 2, None, False), (3.0, (2, 3, 2), (1, 2, 2), True)]:
        y = F.lp_pool3d(minigrad.tensor(x, requires_grad=True), p, k, s, ceil)
        ty = torch.nn.functional.lp_pool3d(torch.tensor(x, requires_grad=True), p, k, s, ceil)
        np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-10)


def test_3d_pool_gradcheck():
    x = minigrad.tensor(arr(1, 2, 4, 5, 3), requires_grad=True)
    assert gradcheck(lambda x: F.max_pool3d(x, 2, stride=1, padding=1), (x,))
    assert gradgradcheck(lambda x: F.avg_pool3d(x, (2, 3, 2), stride=1, padding=1), (x,))
    assert gradgradcheck(lambda x: F.max_pool3d(x, 2, stride=(1, 2, 1)), (x,))


@pytest.mark.parametrize("call", [
    lambda t, m: m.max_pool3d(t.randn(2, 3, 4), 2),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), (2, 2)),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 2, stride=(1, 1)),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 2, padding=2),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), (2, 2, 3), padding=(0, 1, 2), dilation=(1, 1, 2)),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 4),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 0, stride=1),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 2, dilation=0),
    lambda t, m: m.max_pool3d(t.randn(1, 2, 3, 4, 5), 2, padding=-1),
    lambda t, m: m.avg_pool3d(t.randn(1, 2, 3, 4, 5), 4),
    lambda t, m: m.avg_pool3d(t.randn(1, 2, 3, 4, 5), 2, stride=0),
    lambda t, m: m.avg_pool3d(t.randn(1, 2, 3, 4, 5), (2, 2)),
    lambda t, m: m.avg_pool3d(t.randn(1, 2, 3, 4, 5), 2, divisor_override=0),
    lambda t, m: m.adaptive_avg_pool3d(t.randn(2, 3, 4), 2),
    lambda t, m: m.adaptive_avg_pool3d(t.randn(1, 2, 3, 4, 5), (2, 2)),
    lambda t, m: m.adaptive_avg_pool3d(t.randn(1, 2, 3, 4, 5), (-1, 2, 3)),
    lambda t, m: m.adaptive_avg_pool2d(t.randn(1, 2, 3, 4), (-1, 2)),
    lambda t, m: m.adaptive_avg_pool3d(t.ones(1, 2, 3, 4, 5, dtype=t.int64), 2),
    lambda t, m: m.adaptive_max_pool3d(t.randn(2, 3, 4), 2),
    lambda t, m: m.adaptive_max_pool3d(t.randn(1, 2, 3, 4, 5), (2, 2)),
    lambda t, m: m.adaptive_max_pool3d(t.randn(1, 2, 3, 4, 5), (-1, 2, 3)),
    lambda t, m: m.lp_pool3d(t.randn(1, 2, 3, 4, 5), 2, (2, 2)),
])
def test_3d_pool_errors_vs_torch(torch, call):
    raises_as_torch(torch, call)


@pytest.mark.parametrize("cls,args,kw", [
    ("MaxPool3d", (2,), {}), ("MaxPool3d", ((2, 3, 2),), dict(stride=1, padding=1, dilation=(1, 1, 2), ceil_mode=True)),
    ("AvgPool3d", (2,), {}), ("AvgPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                                                       divisor_override=3)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}), ("AdaptiveMaxPool3d", (2,), {}),
    ("LPPool3d", (2, 2), {}), ("LPPool3d", (1.5, (2, 3, 2)), dict(stride=1, ceil_mode=True)),
])
def test_3d_pool_modules_vs_torch(torch, cls, args, kw):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(ours) == repr(theirs)
    x = np.abs(arr(2, 3, 6, 5, 7)) + 0.1
    np.testing.assert_allclose(ours(minigrad.tensor(x)).array, theirs(torch.tensor(x)).numpy(), rtol=1e-10)


def test_max_pool3d_module_return_indices(torch):
    x = arr(1, 2, 4, 6, 4)
    y, i = nn.MaxPool3d(2, return_indices=True)(minigrad.tensor(x))
    ty, ti = torch.nn.MaxPool3d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(i.array, ti.numpy())
    np.testing.assert_array_equal(y.array, ty.numpy())


# ---- max unpooling -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,shape,kw,out", [
    (1, (2, 3, 8), dict(kernel_size=2), None),
    (1, (3, 9), dict(kernel_size=3, stride=2, padding=1), (9,)),  # unbatched
    (2, (2, 3, 6, 8), dict(kernel_size=2), None),
    (2, (2, 3, 7, 7), dict(kernel_size=2), (2, 3, 7, 7)),
    (2, (3, 7, 6), dict(kernel_size=(3, 2), stride=(2, 2), padding=(1, 0)), None),
    (3, (1, 2, 4, 6, 5), dict(kernel_size=2), (5, 7, 5)),
    (3, (2, 4, 5, 4), dict(kernel_size=(2, 3, 2), stride=(2, 2, 1), padding=(1, 1, 0)), None),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_unpool_vs_torch(torch, n, shape, kw, out, dtype):
    x = arr(*shape, dtype=dtype)
    tf = torch.nn.functional
    ty, ti = getattr(tf, f"max_pool{n}d")(torch.tensor(x), return_indices=True, **kw)
    pooled = ty.numpy()
    ours = minigrad.tensor(pooled, requires_grad=True)
    theirs = torch.tensor(pooled, requires_grad=True)
    y = getattr(F, f"max_unpool{n}d")(ours, minigrad.tensor(ti.numpy()), output_size=out, **kw)
    t = getattr(tf, f"max_unpool{n}d")(theirs, ti, output_size=out, **kw)
    assert y.shape == tuple(t.shape) and y.dtype == ours.dtype
    np.testing.assert_array_equal(y.array, t.detach().numpy())
    g = arr(*y.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    t.backward(torch.tensor(g))
    np.testing.assert_array_equal(ours.grad.array, theirs.grad.numpy())
    module, tmodule = getattr(nn, f"MaxUnpool{n}d")(**kw), getattr(torch.nn, f"MaxUnpool{n}d")(**kw)
    assert repr(module) == repr(tmodule)
    np.testing.assert_array_equal(module(ours, minigrad.tensor(ti.numpy()), out).array,
                                  tmodule(theirs, ti, out).detach().numpy())


def test_max_unpool2d_gradcheck():
    y, i = F.max_pool2d(minigrad.tensor(arr(1, 2, 4, 6)), 2, return_indices=True)
    assert gradcheck(lambda v: F.max_unpool2d(v, i, 2), (minigrad.tensor(y.array, requires_grad=True),))


@contextlib.contextmanager
def one_thread(torch):
    """PyTorch on one thread: on several, its planes race to write the invalid index its message names."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("call", [
    lambda m, y, i: m.max_unpool2d(y, i, 2, output_size=(9, 9)),
    lambda m, y, i: m.max_unpool2d(y, i, 2, output_size=(5,)),
    lambda m, y, i: m.max_unpool2d(y, i.int(), 2),
    lambda m, y, i: m.max_unpool2d(y, i[..., :1], 2),
    lambda m, y, i: m.max_unpool2d(y[0, 0], i[0, 0], 2),
    lambda m, y, i: m.max_unpool2d(y, i + 13, 2),
    lambda m, y, i: m.max_unpool2d(y, i - 5, 2),
    lambda m, y, i: m.max_unpool2d(y, i, 2, stride=1),
    lambda m, y, i: m.max_unpool2d(y.long(), i, 2),
    lambda m, y, i: m.max_unpool1d(y[0], i[0], 2),
    lambda m, y, i: m.max_unpool1d(y[0, 0], i[0, 0], 2),
    lambda m, y, i: m.max_unpool1d(y[0], i[0] + 30, 2),
    lambda m, y, i: m.max_unpool1d(y[0], i[0], 2, output_size=(2, 3, 9, 1)),
    lambda m, y, i: m.max_unpool1d(y[0], i[0], 2, output_size=(30,)),
    lambda m, y, i: m.max_unpool3d(y[0], i[0], 2),
    lambda m, y, i: m.max_unpool3d(y.unsqueeze(0), i.unsqueeze(0).int(), 2),
    lambda m, y, i: m.max_unpool3d(y.unsqueeze(0), i.unsqueeze(0) + 100, 2),
    lambda m, y, i: m.max_unpool3d(y.unsqueeze(0), i.unsqueeze(0), 2, output_size=(9, 9, 9)),
    lambda m, y, i: m.max_unpool3d(y.unsqueeze(0), i.unsqueeze(0), 2, stride=0),
    lambda m, y, i: m.max_unpool3d(y.unsqueeze(0), i.unsqueeze(0)[..., :1], 2),
])
def test_max_unpool_errors_vs_torch(torch, call):
    x = arr(2, 3, 4, 4)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    with pytest.raises(Exception) as theirs, one_thread(torch):
        call(torch.nn.functional, ty, ti)
    with pytest.raises(type(theirs.value)) as ours:
        call(F, minigrad.tensor(ty.numpy()), minigrad.tensor(ti.numpy()))
    assert str(ours.value) == str(theirs.value)


def test_max_unpool_names_the_last_invalid_index_as_pytorch_on_one_thread(torch):
    rng = np.random.default_rng(3)
    y, i = arr(3, 4, 2, 2), rng.integers(-20, 40, (3, 4, 2, 2))
    with pytest.raises(RuntimeError) as theirs, one_thread(torch):
        torch.nn.functional.max_unpool2d(torch.tensor(y), torch.tensor(i), 2)
    with pytest.raises(RuntimeError) as ours:
        F.max_unpool2d(minigrad.tensor(y), minigrad.tensor(i), 2)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [lambda F, x: F.max_pool2d(x, 2.5), lambda F, x: F.avg_pool2d(x, 2.0),
                                  lambda F, x: F.max_pool2d(x, 2, 1.5), lambda F, x: F.max_pool3d(x[None], 2.5),
                                  lambda F, x: F.avg_pool3d(x[None], 2, 1.5)])
def test_a_float_size_of_a_pool_is_refused_in_pytorchs_words(torch, call):
    with pytest.raises(TypeError) as theirs:
        call(torch.nn.functional, torch.ones(1, 1, 4, 4))
    with pytest.raises(TypeError) as ours:
        call(F, minigrad.ones(1, 1, 4, 4))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape,kw", [((2, 3, 4, 4), {"scale_factor": 2}), ((2, 3, 4, 5), {"size": (7, 3)}),
                                      ((1, 2, 3, 4, 2), {"scale_factor": (2, 1, 3)}),
                                      ((1, 2, 5), {"size": 8, "mode": "nearest-exact"})])
def test_interpolate_nearest_keeps_inf_and_nan_where_they_land_as_torch(torch, shape, kw):
    # nearest copies pixels: an inf or NaN input stays in its own outputs (a product by the 0/1 selection matrix
    # gave 0 * inf = NaN across the row); the gradient too, against PyTorch's
    x = arr(*shape, dtype=np.float32)
    x.flat[1], x.flat[-3] = np.inf, np.nan
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = F.interpolate(ours, **kw), torch.nn.functional.interpolate(theirs, **kw)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g = arr(*y.shape, dtype=np.float32)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{"size": (5, 7)}, {"size": (2, 3)}, {"scale_factor": (1.5, 2.5)}])
def test_interpolate_nearest_gradient_keeps_an_inf_in_its_source_pixel_as_torch(torch, kw):
    # a non-integer ratio's gradient: each output's gradient added to its source pixel (a product by the
    # transposed 0/1 matrix gave 0 * inf = NaN across whole rows)
    x = arr(1, 1, 3, 4, dtype=np.float32)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = F.interpolate(ours, **kw), torch.nn.functional.interpolate(theirs, **kw)
    g = arr(*y.shape, dtype=np.float32)
    g.flat[1] = np.inf
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape,kw", [((2, 3, 4, 4), {"scale_factor": 2}), ((2, 3, 4, 5), {"scale_factor": (3, 1)}),
                                      ((1, 2, 3, 4, 2), {"size": (6, 8, 6)})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_nearest_integer_scale_as_copies_and_block_sums(torch, shape, kw, dtype):
    # an integer upscale: f strided copies forward, f adds of the gradient's slabs backward; the values of the
    # 0/1 matrix products, PyTorch's, and differentiable twice
    from nn._functional import pooling

    x = arr(*shape, dtype=dtype)
    n = len(shape) - 2
    sizes = kw.get("size") or tuple(s * f for s, f in zip(shape[2:], np.broadcast_to(kw.get("scale_factor"), n)))
    mats = [pooling._interp_matrix(s, o, "nearest", False, None, dtype) for s, o in zip(shape[2:], sizes)]
    assert all(m.repeat == o // s for m, s, o in zip(mats, shape[2:], sizes))
    dense = []
    for m in mats:
        a = np.zeros((len(m.src), m.n_in), dtype=dtype)
        a[np.arange(len(m.src)), m.src] = 1
        dense.append(a)
    t = minigrad.tensor(x, requires_grad=True)
    y = F.interpolate(t, **kw)
    g = arr(*y.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    plain = pooling.Separable.apply(minigrad.tensor(x), tuple(dense))
    np.testing.assert_array_equal(y.detach().numpy(), plain.numpy())
    np.testing.assert_allclose(t.grad.numpy(), pooling.Separable.apply(minigrad.tensor(g), tuple(a.T for a in dense))
                               .numpy(), rtol=1e-6)
    tt = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.interpolate(tt, **kw)
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-6, atol=1e-6)
    if dtype == np.float64:
        assert gradgradcheck(lambda a: F.interpolate(a, **kw), (minigrad.tensor(x[:1, :1], requires_grad=True),))


# ---- avg_pool2d / avg_pool3d's CPU kernel (minigrad/backends/cpu/avg_pool.py) against the op's numpy path and PyTorch
@pytest.fixture(params=["kernel", "numpy"])
def avg_pool_path(request, monkeypatch):
    """Runs a test on the backend's compiled avg_pool and again on the op's numpy code (the kernel's `supports`
    declining); yields the path's name and the list of the shapes the kernel's forward and backward were called on."""
    from minigrad import backends
    from minigrad.backends.cpu import avg_pool, team

    if request.param == "kernel":
        if not team.available() or backends.get_kernels() != "fast":
            pytest.skip("the compiled kernels do not run here (no numba, or MINIGRAD_KERNELS is not 'fast')")
    else:
        monkeypatch.setattr(avg_pool, "supports", lambda *args: False)
    calls, forward, backward = [], avg_pool.forward, avg_pool.backward
    monkeypatch.setattr(avg_pool, "forward", lambda *args: calls.append(args[0].shape) or forward(*args))
    monkeypatch.setattr(avg_pool, "backward", lambda *args: calls.append(args[1]) or backward(*args))
    return request.param, calls


def avg_pool_run(lib, x, g, n=2, **kw):
    """(values, input gradient) of lib's avg_pool{n}d on x (a numpy array, or a function of lib making the input),
    the output gradient g (None: ones); lib is minigrad or torch."""
    t = lib.tensor(x) if isinstance(x, np.ndarray) else x(lib)
    t.requires_grad_()
    y = getattr(lib.nn.functional, f"avg_pool{n}d")(t, **kw)
    y.backward(lib.ones_like(y) if g is None else lib.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


AVG_KERNEL = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=1)),  # overlapping windows: an input's gradient is a sum
    ((2, 4, 20, 21), dict(kernel_size=3, stride=1, padding=1)),
    ((2, 4, 20, 21), dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),  # a last window past the padding
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((2, 3, 10, 12), dict(kernel_size=(3, 4), stride=(2, 3), padding=(1, 2), ceil_mode=True)),
    ((2, 3, 10, 12), dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 1), divisor_override=5)),
    ((2, 3, 11, 11), dict(kernel_size=4, stride=3, ceil_mode=True, divisor_override=7)),
    ((3, 9, 8), dict(kernel_size=3, stride=1, padding=1)),  # unbatched
    ((2, 3, 30, 31), dict(kernel_size=3, stride=2, padding=1)),  # a ResNet's downsampling
    ((2, 3, 5, 6), dict(kernel_size=(5, 6))),  # one window: the whole plane
    # avg_pool1d's shape: (N, C, 1, L)
    ((2, 3, 1, 94), dict(kernel_size=(1, 3), stride=(1, 2))),
    ((2, 3, 1, 94), dict(kernel_size=(1, 2))),
    ((2, 3, 1, 94), dict(kernel_size=(1, 3), stride=1, padding=(0, 1))),
    ((2, 3, 1, 95), dict(kernel_size=(1, 5), stride=(1, 3), padding=(0, 2), ceil_mode=True, count_include_pad=False)),
    ((2, 3, 1, 4), dict(kernel_size=(1, 5), padding=(0, 2), ceil_mode=True)),  # windows wider than the row
]


@pytest.mark.parametrize("shape,kw", AVG_KERNEL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool2d_kernel_vs_numpy_path_and_torch(torch, avg_pool_path, shape, kw, dtype):
    # the kernel sums each window row by row, left to right, from 0, and adds the gradients in output order:
    # PyTorch's CPU loop, so its bits; the numpy path sums in numpy's order (within float rounding)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(tuple(torch.nn.functional.avg_pool2d(torch.tensor(x), **kw).shape)).astype(dtype)
    ours, theirs = avg_pool_run(minigrad, x, g, **kw), avg_pool_run(torch, x, g, **kw)
    if avg_pool_path[0] == "kernel":
        same_bits(ours[0], theirs[0])
        same_bits(ours[1], theirs[1])
        assert len(avg_pool_path[1]) == 2
    else:
        tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
        for a, b in zip(ours, theirs):
            assert a.dtype == dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, **tol)
        assert avg_pool_path[1] == []


AVG3D_KERNEL = [
    ((2, 3, 6, 8, 7), dict(kernel_size=2)),
    ((2, 3, 6, 8, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 3, 6, 8, 7), dict(kernel_size=(2, 3, 3), stride=1, padding=(1, 1, 0), count_include_pad=False)),
    ((3, 5, 6, 7), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), divisor_override=4)),  # unbatched
]


@pytest.mark.parametrize("shape,kw", AVG3D_KERNEL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool3d_kernel_vs_torch(torch, avg_pool_path, shape, kw, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(tuple(torch.nn.functional.avg_pool3d(torch.tensor(x), **kw).shape)).astype(dtype)
    ours, theirs = avg_pool_run(minigrad, x, g, n=3, **kw), avg_pool_run(torch, x, g, n=3, **kw)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
    for a, b in zip(ours, theirs):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **tol)
        if avg_pool_path[0] == "kernel":  # (PyTorch's 3-d loop has the 2-d one's order)
            same_bits(a, b)
    assert len(avg_pool_path[1]) == (2 if avg_pool_path[0] == "kernel" else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool_nan_inf_and_signed_zeros_vs_torch(torch, avg_pool_path, dtype):
    # a window with a NaN, or with inf and -inf, is NaN; with infs of one sign, that inf; two float maxima overflow
    # to inf; a window of -0.0 is +0.0 (PyTorch's sum starts at 0)
    x = arr(2, 3, 9, 10, dtype=dtype)
    x[0, 0, :4, :4] = np.nan
    x[0, 1, 2, ::3] = np.inf
    x[0, 1, 5, 4] = -np.inf
    x[0, 2, :5, 3:] = np.inf
    x[1, 0] = -np.inf
    x[1, 2] = -0.0
    x[1, 1, 4, 4] = np.finfo(dtype).max
    x[1, 1, 4, 5] = np.finfo(dtype).max
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
               dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False)):
        g = arr(*torch.nn.functional.avg_pool2d(torch.tensor(x), **kw).shape, dtype=dtype)
        ours, theirs = avg_pool_run(minigrad, x, g, **kw), avg_pool_run(torch, x, g, **kw)
        if avg_pool_path[0] == "kernel":
            same_bits(ours[0], theirs[0])
        else:
            np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=1e-6)  # (NaN, inf where PyTorch has them)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-6)
    assert len(avg_pool_path[1]) == (6 if avg_pool_path[0] == "kernel" else 0)


@pytest.mark.parametrize("unbatched", [False, True])
def test_avg_pool_of_permuted_inputs_vs_torch(torch, avg_pool_path, unbatched):
    # non-contiguous inputs: a conv1d's (N, L, C) output seen as (N, C, L), a channels-last image
    seq, img = arr(4, 94, 8, dtype=np.float32), arr(2, 12, 13, 5, dtype=np.float32)
    cases = ((1, lambda lib: lib.tensor(seq).permute(0, 2, 1), dict(kernel_size=3, stride=2)),
             (1, lambda lib: lib.tensor(seq).permute(0, 2, 1), dict(kernel_size=3, stride=1, padding=1)),
             (2, lambda lib: lib.tensor(img).permute(0, 3, 1, 2), dict(kernel_size=3, stride=2, padding=1)),
             (2, lambda lib: lib.tensor(img).permute(0, 3, 1, 2)[:, :, ::2], dict(kernel_size=2)))
    for n, make, kw in cases:
        x = (lambda lib, make=make: make(lib)[1]) if unbatched else make
        ours, theirs = avg_pool_run(minigrad, x, None, n=n, **kw), avg_pool_run(torch, x, None, n=n, **kw)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        if avg_pool_path[0] == "kernel":
            same_bits(ours[0], theirs[0])
    assert len(avg_pool_path[1]) == (8 if avg_pool_path[0] == "kernel" else 0)


def test_avg_pool_kernel_bits_do_not_depend_on_the_thread_count():
    from minigrad import backends
    from minigrad.backends.cpu import team

    if not team.available() or backends.get_kernels() != "fast" or not team.has_team():
        pytest.skip("no thread team here (no numba, its fallback threading layer, or MINIGRAD_KERNELS is not 'fast')")
    x = arr(4, 16, 40, 41, dtype=np.float32)  # (more elements than team.TEAM_MIN_ELEMENTS: shared out)
    g = arr(4, 16, 21, 21, dtype=np.float32)
    from minigrad.backends.process import num_threads

    with num_threads(1):
        one = avg_pool_run(minigrad, x, g, kernel_size=3, stride=2, padding=1, ceil_mode=True)
    with num_threads(2):
        two = avg_pool_run(minigrad, x, g, kernel_size=3, stride=2, padding=1, ceil_mode=True)
    same_bits(one[0], two[0])
    same_bits(one[1], two[1])


def test_avg_pool_kernel_twice_differentiable_vs_numpy_path(avg_pool_path):
    # create_graph: the backward is itself an op (the adjoint), on the kernel too
    x = minigrad.tensor(arr(2, 2, 7, 6), requires_grad=True)
    assert gradgradcheck(lambda a: F.avg_pool2d(a, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                         (x,))
    assert gradgradcheck(lambda a: F.avg_pool3d(a, 2, stride=1, divisor_override=3), (minigrad.tensor(
        arr(2, 4, 3, 4), requires_grad=True),))
    assert (len(avg_pool_path[1]) > 0) == (avg_pool_path[0] == "kernel")


def _pool_call(name, shape, args, kw, module):
    def call(t, F):
        x = t.zeros(shape)
        if module:
            cls = {"max": "MaxPool", "avg": "AvgPool"}[name[:3]] + name[-2:]
            return getattr(t.nn, cls)(*args, **kw)(x)
        return getattr(F, name)(x, *args, **kw)
    return call


_POOL_ARG_ERRORS = [
    ("n+1 ints", {}), (2, {"stride": 0}), (2, {"stride": (2, 2, 2, 2)}), (-1, {}), (0, {}), (2, {"stride": -1}),
    (2, {"padding": -1}), (2, {"padding": 2}), (1, {"padding": 1}), (4, {"stride": 1, "padding": 3}), (-1, {"padding": 5}),
    (2, {"padding": (1, 1, 1, 1)}),
]


@pytest.mark.parametrize("module", [False, True])
@pytest.mark.parametrize("name,shape,args,kw", [
    (f"{kind}_pool{n}d", (1, 2) + (5,) * n, ((2,) * (n + 1),) if k == "n+1 ints" else (k,), kw)
    for n in (1, 2, 3) for kind in ("max", "avg") for k, kw in _POOL_ARG_ERRORS
] + [
    (f"max_pool{n}d", (1, 2) + (5,) * n, (2,), kw) for n in (1, 2, 3) for kw in (
        {"dilation": 0}, {"dilation": (1, 1, 1, 1)}, {"padding": 2, "dilation": 3}, {"padding": 2, "dilation": 3,
        "return_indices": True}, {"stride": 0, "return_indices": True}, {"padding": 2, "return_indices": True})
] + [
    (f"{kind}_pool{n}d", shape, (k,), {}) for n in (1, 2, 3) for kind in ("max", "avg") for k in (2, -1)
    for shape in ((5,) * n, (1, 1, 1) + (5,) * n, (1, 0) + (5,) * n, (1, 2) + (0,) * n)
])
def test_pool_argument_errors_as_torch_2_13(torch, name, shape, args, kw, module):
    # torch 2.13's 1-d and 2-d pools check their arguments as its 3-d ones do, one axis at a time (a zero stride, a
    # negative pad, a pad over half the dilated kernel), then the kernel, stride and dilation each with its own
    # text; minigrad's 2-d pools gave the older combined texts ("kernel_size, stride and dilation must be greater
    # than zero", "pad should be smaller than or equal to half of kernel size" for any pad) and its 3-d pools took
    # a negative stride for a zero one
    raises_as_torch(torch, _pool_call(name, shape, args, kw, module))
