"""conv1d, conv2d, conv_transpose1d/2d and nn.Conv1d / Conv2d / ConvTranspose1d/2d against PyTorch: values,
gradients (float32 and float64), finite differences, node names, PyTorch's init, and the errors for bad input."""
import math
import re

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def blas_splits_exact(dtype):
    """Whether this machine's BLAS gives a product's bits however the product is cut or transposed (one gemm
    of the whole, or gemms of column blocks, or the transposed product): Intel's OpenBLAS kernels and every
    dgemm seen do; the float32 kernels OpenBLAS runs on AVX2 AMD CPUs sum in an order that depends on the
    block, and on several threads a product big enough to share out may be cut differently when transposed.
    A backend that computes a convolution's products in other pieces than numpy's code can promise numpy's
    bits only where this holds (at the thread count in force); elsewhere float rounding."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 288)).astype(dtype), rng.standard_normal((288, 100)).astype(dtype)
    whole = a @ b
    blocks = np.concatenate([a @ b[:, i:i + 25] for i in range(0, 100, 25)], axis=1)
    return np.array_equal(whole, blocks) and np.array_equal(whole, (b.T @ a.T).T)


def assert_numpys_bits(fast, plain, dtype):
    """fast == plain bit for bit where the BLAS promises it (`blas_splits_exact`), else to float rounding of
    the values' size."""
    assert fast.shape == plain.shape and fast.dtype == plain.dtype
    if blas_splits_exact(dtype):
        np.testing.assert_array_equal(fast, plain)
    else:
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(fast, plain, rtol=64 * eps, atol=64 * eps * float(np.abs(plain).max(initial=0)))


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def vs_torch(torch, ours, theirs, arrays, dtype, **kw):
    """ours(*tensors, **kw) against theirs(*torch tensors, **kw): output, node name and every input's gradient."""
    xs = [None if a is None else minigrad.tensor(a, requires_grad=True) for a in arrays]
    ts = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = ours(*xs, **kw), theirs(*ts, **kw)
    assert y.shape == tuple(ty.shape) and y.dtype == xs[0].dtype
    assert y.grad_fn.name() == ty.grad_fn.name()
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    g = arr(*y.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        if x is not None:
            assert x.grad.dtype == x.dtype
            np.testing.assert_allclose(x.grad.array, t.grad.numpy(), **tol)


CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), True, {"stride": 2, "padding": 1}),
    ((2, 4, 9, 8), (6, 2, 3, 3), True, {"stride": (2, 1), "padding": (1, 2), "dilation": (2, 1), "groups": 2}),
    ((1, 3, 6, 7), (5, 3, 3, 3), False, {"padding": "same", "dilation": 2}),
    ((2, 3, 6, 6), (2, 3, 2, 4), True, {"padding": "same"}),  # even kernels: the extra pad goes last
    ((2, 3, 5, 5), (2, 3, 5, 5), True, {"padding": "valid"}),
    ((3, 6, 6), (4, 3, 3, 3), True, {"padding": 1}),  # unbatched
    ((2, 6, 5, 5), (6, 1, 3, 3), True, {"groups": 6}),  # depthwise
    ((2, 6, 7, 7), (6, 1, 3, 3), True, {"stride": 2, "padding": 1, "groups": 6}),  # MobileNet's strided depthwise
    ((2, 4, 7, 6), (4, 1, 1, 1), False, {"groups": 4}),  # its products of one column
    ((2, 3, 1, 1), (4, 3, 1, 1), True, {}),
]


@pytest.mark.parametrize("xs,ws,bias,kw", CONV2D)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_vs_torch(torch, xs, ws, bias, kw, dtype):
    vs_torch(torch, F.conv2d, torch.nn.functional.conv2d,
             [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype) if bias else None], dtype, **kw)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 9), (4, 3, 3), {}), ((2, 4, 11), (6, 2, 4), {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}),
    ((3, 8), (2, 3, 3), {"padding": "same"}),
    ((2, 4, 9), (4, 1, 4), {"padding": 3, "groups": 4}),  # Mamba's causal depthwise conv
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv1d_vs_torch(torch, xs, ws, kw, dtype):
    vs_torch(torch, F.conv1d, torch.nn.functional.conv1d,
             [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)], dtype, **kw)


@pytest.mark.parametrize("xs,ws,bias,kw", [
    ((2, 4, 5, 4), (4, 3, 3, 3), True, {"stride": 2, "padding": 1, "output_padding": 1}),
    ((2, 4, 5, 4), (4, 3, 3, 2), True, {"stride": (3, 2), "padding": (0, 2), "output_padding": (2, 1), "groups": 2,
                                        "dilation": (1, 2)}),
    ((4, 5, 4), (4, 3, 3, 3), False, {"stride": 2, "padding": 2, "output_padding": 1, "dilation": 2}),
    ((1, 2, 3, 3), (2, 2, 2, 2), True, {}),
    ((2, 3, 1, 2), (3, 2, 1, 2), True, {"dilation": 2, "output_padding": 1}),  # output_padding >= stride
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose2d_vs_torch(torch, xs, ws, bias, kw, dtype):
    out_channels = ws[1] * kw.get("groups", 1)
    vs_torch(torch, F.conv_transpose2d, torch.nn.functional.conv_transpose2d,
             [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(out_channels, dtype=dtype) if bias else None], dtype,
             **kw)


@pytest.mark.parametrize("fn,xs,ws,kw", [
    (F.conv2d, (2, 4, 5, 4), (4, 2, 3, 2), {"stride": (2, 1), "padding": 1, "groups": 2}),
    (F.conv2d, (1, 2, 5, 5), (3, 2, 2, 2), {"padding": "same", "dilation": 2}),
    (F.conv1d, (2, 2, 7), (3, 2, 3), {"stride": 2, "padding": 1}),
    (F.conv_transpose2d, (1, 2, 3, 3), (2, 3, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
])
def test_gradcheck(fn, xs, ws, kw):
    out_channels = ws[1] if fn is F.conv_transpose2d else ws[0]
    args = [minigrad.tensor(a, requires_grad=True) for a in (arr(*xs), arr(*ws), arr(out_channels))]
    assert gradcheck(lambda x, w, b: fn(x, w, b, **kw), args)


@pytest.mark.parametrize("fn,xs,ws,kw", [
    (F.conv2d, (1, 2, 4, 3), (2, 1, 2, 2), {"stride": (2, 1), "padding": 1, "groups": 2}),
    (F.conv1d, (2, 2, 5), (3, 2, 3), {"padding": "same", "dilation": 2}),
    (F.conv_transpose2d, (1, 2, 3, 2), (2, 2, 2, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    (F.conv_transpose2d, (1, 2, 2, 2), (2, 2, 1, 2), {"dilation": 2, "output_padding": 1}),
])
def test_gradgradcheck(fn, xs, ws, kw):
    # the gradients are convolutions themselves (recorded): differentiable again, in x, w and the upstream grad
    out_channels = ws[1] if fn is F.conv_transpose2d else ws[0]
    args = [minigrad.tensor(a, requires_grad=True) for a in (arr(*xs), arr(*ws), arr(out_channels))]
    assert gradgradcheck(lambda x, w, b: fn(x, w, b, **kw), args)


def test_second_derivative_vs_torch(torch):
    x, w = arr(2, 3, 5, 5), arr(4, 3, 3, 3)
    ours = [minigrad.tensor(a, requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    gx, gw = minigrad.autograd.grad((F.conv2d(*ours, stride=2, padding=1) ** 2).sum(), ours, create_graph=True)
    ((gx ** 2).sum() + (gw ** 2).sum()).backward()
    tgx, tgw = torch.autograd.grad((torch.nn.functional.conv2d(*theirs, stride=2, padding=1) ** 2).sum(), theirs,
                                   create_graph=True)
    ((tgx ** 2).sum() + (tgw ** 2).sum()).backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.array, t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_only_needed_gradients_and_no_grad():
    x, w = minigrad.tensor(arr(2, 3, 5, 5)), minigrad.tensor(arr(4, 3, 3, 3), requires_grad=True)
    F.conv2d(x, w).sum().backward()
    assert x.grad is None and w.grad.shape == w.shape
    with minigrad.no_grad():
        y = F.conv2d(x, w)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("call", [
    lambda t, m: m.conv2d(t.randn(2, 3), t.randn(3, 2, 3, 3)),  # rank
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(3, 2, 3, 3)),  # channels
    lambda t, m: m.conv2d(t.randn(1, 2, 2, 2), t.randn(3, 2, 3, 3)),  # kernel larger than the input
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(3, 2, 3, 3), groups=2),  # groups do not divide
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), stride=2, padding="same"),
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), padding="foo"),
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), padding=-1),
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), stride=0),
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), t.randn(3)),  # bias size
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), stride=(1, 2, 3)),
    lambda t, m: m.conv2d(t.randn(1, 4, 5, 5), t.randn(4, 4, 3, 3), t.randn(4).double()),  # bias dtype
    lambda t, m: m.conv1d(t.randn(2, 4, 5, 5), t.randn(3, 4, 3)),
    lambda t, m: m.conv_transpose2d(t.randn(1, 4, 5, 5), t.randn(3, 2, 3, 3)),
    lambda t, m: m.conv_transpose2d(t.randn(1, 4, 5, 5), t.randn(4, 2, 3, 3), stride=2, output_padding=2),
])
def test_errors_match_torch_types(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F)
    assert "\n" not in str(ours.value) and len(str(ours.value)) > 20



@pytest.mark.parametrize("name,xs,ws,kw", [
    ("conv2d", (0, 5, 9, 8), (4, 5, 3, 3), {"padding": 1}),
    ("conv2d", (0, 5, 9, 8), (4, 5, 3, 3), {}),
    ("conv2d", (0, 4, 9, 8), (6, 2, 3, 3), {"stride": 2, "groups": 2}),
    ("conv1d", (0, 5, 9), (4, 5, 3), {"stride": 2}),
    ("conv3d", (0, 2, 4, 4, 4), (3, 2, 2, 2, 2), {"padding": 1}),
    ("conv_transpose1d", (0, 4, 5), (4, 3, 3), {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (0, 4, 5, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (0, 4, 5, 5), (4, 3, 3, 3), {}),  # (stride 1: the flipped-correlation path)
    ("conv_transpose3d", (0, 4, 3, 3, 3), (4, 3, 2, 2, 2), {"stride": 2}),
])
def test_an_empty_batch_gives_an_empty_output_and_zero_weight_gradients_as_torch(torch, name, xs, ws, kw):
    out_channels = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    arrays = [arr(*xs), arr(*ws), arr(out_channels)]
    vs_torch(torch, getattr(F, name), getattr(torch.nn.functional, name), arrays, np.float64, **kw)


def test_an_empty_batch_through_a_module_and_a_second_derivative(torch):
    m, tm = nn.Conv2d(3, 6, 3, groups=3), torch.nn.Conv2d(3, 6, 3, groups=3)
    x, tx = minigrad.zeros(0, 3, 5, 5, requires_grad=True), torch.zeros(0, 3, 5, 5, requires_grad=True)
    y, ty = m(x), tm(tx)
    assert y.shape == tuple(ty.shape)
    (gw,) = minigrad.autograd.grad(y.sum(), m.weight, create_graph=True)
    (tgw,) = torch.autograd.grad(ty.sum(), tm.weight, create_graph=True)
    assert gw.shape == tuple(tgw.shape) and not gw.array.any()
    (gx,) = minigrad.autograd.grad((gw * gw).sum() + (y * y).sum(), x)
    assert gx.shape == (0, 3, 5, 5)


@pytest.mark.parametrize("call", [
    lambda t, m: m.conv2d(t.randn(2, 3, 5, 5), t.randn(0, 3, 3, 3)),
    lambda t, m: m.conv1d(t.randn(2, 3, 5), t.randn(0, 3, 3)),
    lambda t, m: m.conv2d(t.randn(2, 4, 5, 5), t.randn(0, 2, 3, 3), groups=2),
    lambda t, m: m.conv2d(t.randn(2, 4, 5, 5), t.randn(1, 4, 3, 3), groups=4),
    lambda t, m: m.conv_transpose2d(t.randn(2, 0, 5, 5), t.randn(0, 3, 3, 3)),
])
def test_too_few_output_channels_for_the_groups_is_torchs_error(torch, call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(RuntimeError) as ours:
        call(minigrad, F)
    assert str(ours.value) == str(theirs.value)

def test_error_messages_name_the_shapes():
    with pytest.raises(RuntimeError, match=r"expected input\[1, 4, 5, 5\] to have 2 channels, but got 4"):
        F.conv2d(minigrad.randn(1, 4, 5, 5), minigrad.randn(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d"):
        F.conv2d(minigrad.randn(5, 5), minigrad.randn(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"Kernel size can't be greater than actual input size"):
        F.conv2d(minigrad.randn(1, 2, 2, 2), minigrad.randn(3, 2, 3, 3))


@pytest.mark.parametrize("cls,args,kw", [
    ("Conv2d", (3, 8, 3), {"padding": 1}),
    ("Conv2d", (4, 6, (3, 2)), {"stride": 2, "groups": 2, "bias": False}),
    ("Conv2d", (3, 4, 3), {"padding": "same", "padding_mode": "reflect"}),
    ("Conv2d", (3, 4, 3), {"padding": 2, "padding_mode": "circular", "dilation": 2}),
    ("Conv2d", (3, 4, 2), {"padding": 1, "padding_mode": "replicate"}),
    ("Conv1d", (3, 5, 3), {"stride": 2, "padding": 1}),
])
def test_modules_match_torch_with_the_same_weights(torch, cls, args, kw):
    m, tm = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert m.weight.shape == tuple(tm.weight.shape)
    with torch.no_grad():
        for name, p in tm.named_parameters():
            p.copy_(torch.tensor(np.array(getattr(m, name).array)))
    x = arr(2, args[0], 9, 8) if cls == "Conv2d" else arr(2, args[0], 9)
    x = x.astype(np.float32)
    np.testing.assert_allclose(m(minigrad.tensor(x)).array, tm(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_init_is_pytorchs_kaiming_uniform():
    minigrad.manual_seed(0)
    m = nn.Conv2d(16, 64, 3)
    bound = 1 / math.sqrt(16 * 9)  # kaiming_uniform_(a=sqrt(5)) on fan_in = 16 * 3 * 3
    w = m.weight.array
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound  # U(-b, b) has std b / sqrt 3
    assert np.abs(m.bias.array).max() <= bound
    assert m.weight.dtype == minigrad.float32


def test_module_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")


def test_conv2d_trains_a_step():
    minigrad.manual_seed(0)
    m = nn.Conv2d(2, 3, 3, padding=1)
    x = minigrad.randn(4, 2, 6, 6)
    target = minigrad.randn(4, 3, 6, 6)
    opt = nn.optim.SGD(m.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        loss = ((m(x) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("n,groups,stride,dilation,padding", [(5, 1, 2, 1, 1), (3, 2, 1, 2, 2), (1, 3, 2, 1, 0)])
def test_conv2d_batch_last_layout_matches_a_direct_sum(n, groups, stride, dilation, padding):
    # the convolutions run batch last, (C, *spatial, N): check y, gx and gw against the definition, per sample
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((n, 6, 9, 8)), rng.standard_normal((6, 6 // groups, 3, 3))
    xt, wt = minigrad.tensor(x, requires_grad=True), minigrad.tensor(w, requires_grad=True)
    y = F.conv2d(xt, wt, stride=stride, padding=padding, dilation=dilation, groups=groups)
    g = rng.standard_normal(y.shape)
    y.backward(minigrad.tensor(g))
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    ref, gx, gw = np.zeros(y.shape), np.zeros(xp.shape), np.zeros(w.shape)
    cg = 6 // groups
    for o in range(6):
        cs = slice((o // cg) * cg, (o // cg + 1) * cg)
        for i in range(y.shape[2]):
            for j in range(y.shape[3]):
                rows = slice(i * stride, i * stride + 2 * dilation + 1, dilation)
                cols = slice(j * stride, j * stride + 2 * dilation + 1, dilation)
                ref[:, o, i, j] = np.einsum("nckl,ckl->n", xp[:, cs, rows, cols], w[o])
                gx[:, cs, rows, cols] += g[:, o, i, j][:, None, None, None] * w[o]
                gw[o] += np.einsum("n,nckl->ckl", g[:, o, i, j], xp[:, cs, rows, cols])
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(xt.grad.numpy(), gx[:, :, padding:padding + 9, padding:padding + 8], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(wt.grad.numpy(), gw, rtol=1e-10, atol=1e-10)


# ---- conv_transpose1d and the ConvTranspose modules ---------------------------------------------------------------
@pytest.mark.parametrize("xs,ws,bias,kw", [
    ((2, 3, 7), (3, 4, 3), True, {}),
    ((2, 4, 6), (4, 3, 4), True, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2}),
    ((3, 5), (3, 2, 2), False, {"stride": 3, "output_padding": 2}),  # unbatched
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose1d_vs_torch(torch, xs, ws, bias, kw, dtype):
    vs_torch(torch, F.conv_transpose1d, torch.nn.functional.conv_transpose1d,
             [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[1] * kw.get("groups", 1), dtype=dtype) if bias
              else None], dtype, **kw)


def test_conv_transpose1d_gradcheck():
    x, w, b = (minigrad.tensor(arr(*s), requires_grad=True) for s in ((1, 2, 4), (2, 3, 3), (3,)))
    assert gradcheck(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1), (x, w, b))
    assert gradgradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2), (x, w))


@pytest.mark.parametrize("n,args,kw,shape", [
    (1, (2, 4, 3), {}, (2, 2, 7)),
    (1, (4, 6, 4), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2, "bias": False},
     (2, 4, 5)),
    (2, (3, 2, 3), {}, (2, 3, 5, 4)),
    (2, (4, 2, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0), "groups": 2}, (1, 4, 4, 5)),
    (2, (2, 3, 4), {"stride": 2, "padding": 1}, (2, 4, 4)),  # DCGAN's upsampling block, unbatched
])
def test_conv_transpose_modules_vs_torch(torch, n, args, kw, shape):
    ours = getattr(nn, f"ConvTranspose{n}d")(*args, **kw).double()
    theirs = getattr(torch.nn, f"ConvTranspose{n}d")(*args, **kw).double()
    assert repr(ours) == repr(theirs)
    assert ours.weight.shape == tuple(theirs.weight.shape)
    with torch.no_grad():  # the same weights on both sides
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        if theirs.bias is not None:
            theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    x = arr(*shape)
    xo, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours(xo), theirs(xt)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = arr(*y.shape)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10, atol=1e-10)
    if theirs.bias is not None:
        np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_transpose_output_size_vs_torch(torch):
    ours, theirs = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = arr(1, 2, 4, 4, dtype=np.float32)
    for size in [(7, 7), (8, 8), (7, 8), [1, 3, 8, 7]]:
        assert ours(minigrad.tensor(x), output_size=size).shape == tuple(theirs(torch.tensor(x), output_size=size).shape)
    msgs = []
    for m, mod in ((minigrad, nn), (torch, torch.nn)):
        with pytest.raises(ValueError) as e:
            mod.ConvTranspose1d(2, 3, 3, stride=2)(m.randn(1, 2, 5), output_size=[20])
        msgs.append(str(e.value))
        with pytest.raises(ValueError) as e:
            mod.ConvTranspose1d(2, 3, 3)(m.randn(1, 2, 5), output_size=[1, 2, 3, 4])
        msgs.append(str(e.value))
        with pytest.raises(ValueError) as e:
            mod.ConvTranspose2d(2, 3, 3, padding_mode="reflect")
        msgs.append(str(e.value))
    assert [s.replace("minigrad.Size", "torch.Size") for s in msgs[:3]] == msgs[3:]


def test_conv_transpose_init_bounds():
    # PyTorch's init: weight and bias in U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = out_channels/groups * prod(k)
    m = nn.ConvTranspose2d(8, 6, 3, groups=2)
    bound = 1 / math.sqrt(3 * 9)
    assert m.weight.shape == (8, 3, 3, 3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.weight.detach().numpy()).max() > 0.5 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound


@pytest.mark.parametrize("call", [
    lambda t, m: m.conv_transpose1d(t.randn(1, 4, 5), t.randn(3, 2, 3)),  # channels
    lambda t, m: m.conv_transpose1d(t.randn(1, 4, 5), t.randn(4, 2, 3), stride=2, output_padding=2),
    lambda t, m: m.conv_transpose1d(t.randn(1, 4, 5), t.randn(4, 2, 3), padding="same"),
])
def test_conv_transpose1d_errors_vs_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad, F)
    if "output padding" in str(theirs.value) or "padding' must" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


# ---- the 3-d convolutions: the same ops over three spatial dims ----------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, bias, kw", [
    ((2, 3, 5, 6, 4), (4, 3, 3, 2, 3), True, {}),
    ((1, 4, 6, 5, 7), (6, 2, 2, 3, 3), False, dict(stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ((4, 5, 5, 5), (2, 4, 3, 3, 3), True, dict(padding="same")),  # unbatched
    ((2, 2, 4, 5, 6), (3, 2, 1, 2, 3), True, dict(stride=2, padding=1)),
])
def test_conv3d_vs_torch(torch, xs, ws, bias, kw, dtype):
    b = arr(ws[0], dtype=dtype) if bias else None
    vs_torch(torch, F.conv3d, torch.nn.functional.conv3d, [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), b], dtype,
             **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, bias, kw", [
    ((2, 3, 3, 4, 2), (3, 2, 3, 2, 3), True, {}),
    ((1, 4, 3, 2, 3), (4, 3, 2, 3, 3), False, dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2),
                                                  groups=2, dilation=(1, 2, 1))),
    ((2, 3, 3, 3), (2, 2, 3, 3, 3), True, dict(stride=2)),  # unbatched
])
def test_conv_transpose3d_vs_torch(torch, xs, ws, bias, kw, dtype):
    b = arr(ws[1] * kw.get("groups", 1), dtype=dtype) if bias else None
    vs_torch(torch, F.conv_transpose3d, torch.nn.functional.conv_transpose3d,
             [arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), b], dtype, **kw)


def test_top_level_conv3d_names_are_the_functional_ones():
    assert minigrad.conv3d is F.conv3d and minigrad.conv_transpose3d is F.conv_transpose3d


@pytest.mark.parametrize("call", [
    lambda m, x, w: m.conv3d(x, w, padding=(1, 1)),
    lambda m, x, w: m.conv3d(x[0, 0, 0], w),
    lambda m, x, w: m.conv3d(x, w.repeat(1, 1, 2, 2, 2)),
    lambda m, x, w: m.conv_transpose3d(x, w, stride=2, output_padding=2),
])
def test_conv3d_errors_vs_torch(torch, call):
    x, w = arr(1, 2, 3, 4, 5, dtype=np.float32), arr(2, 2, 3, 3, 3, dtype=np.float32)
    with pytest.raises(Exception) as theirs:
        call(torch.nn.functional, torch.tensor(x), torch.tensor(w))
    with pytest.raises(type(theirs.value), match=f"^{re.escape(str(theirs.value))}$"):
        call(F, minigrad.tensor(x), minigrad.tensor(w))


@pytest.mark.parametrize("cls, args, kw, shape", [
    ("Conv3d", (2, 4, 3), dict(padding=1, bias=False), (2, 2, 4, 5, 3)),
    ("Conv3d", (4, 6, (1, 2, 3)), dict(stride=(1, 2, 1), groups=2, padding_mode="reflect", padding=(0, 1, 1)),
     (1, 4, 3, 5, 6)),
    ("ConvTranspose3d", (2, 4, 3), dict(stride=2, output_padding=1), (2, 2, 2, 3, 2)),
])
def test_3d_conv_modules_vs_torch(torch, cls, args, kw, shape):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, p in theirs.named_parameters():
        getattr(ours, name).data = minigrad.tensor(p.detach().numpy())
    x = arr(*shape, dtype=np.float32)
    y, ty = ours(minigrad.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [((64, 6, 14, 14), (16, 6, 5, 5), {"stride": 2}),
                                        ((5, 1, 7, 7), (6, 1, 5, 5), {"padding": 2}),
                                        ((3, 4, 8, 7), (6, 2, 3, 3), {"groups": 2, "stride": 2})])
def test_conv2d_output_copied_by_the_backend_is_the_numpy_copys(torch, monkeypatch, xs, ws, kw, dtype):
    # the product's (positions, batch, channels) into (batch, channels, positions): the backend's compiled copy
    # (groups 1) gives the bits of numpy's copy of the transposed view, and PyTorch's values
    from minigrad import backends
    from minigrad.backends.cpu import conv_layout

    x, w, b = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)
    copies = []
    real = conv_layout.forward
    monkeypatch.setattr(conv_layout, "forward", lambda y: copies.append(y.shape) or real(y))
    fast = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), **kw)
    assert len(copies) == (kw.get("groups", 1) == 1) and fast.array.flags.c_contiguous
    with backends.kernels("numpy"):
        plain = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), **kw)
    assert len(copies) == (kw.get("groups", 1) == 1)
    assert fast.shape == plain.shape
    assert_numpys_bits(fast.array, plain.array, dtype)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kw).numpy()
    np.testing.assert_allclose(fast.array, want, **(dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else {}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [((64, 32, 10, 10), (64, 32, 3, 3), {}),  # g's images 4 KiB apart
                                        ((64, 8, 10, 10), (16, 4, 3, 3), {"groups": 2}),  # and col2im's
                                        ((5, 1, 9, 8), (6, 1, 3, 3), {"padding": (2, 1)}),
                                        ((3, 4, 11, 9), (6, 2, 3, 2), {"groups": 2, "stride": (2, 1),
                                                                       "dilation": (2, 1), "padding": 1}),
                                        ((2, 3, 7, 8), (4, 3, 1, 1), {"stride": 3})])
def test_conv2d_backward_by_the_backends_copies_is_numpys(torch, monkeypatch, xs, ws, kw, dtype):
    # groups: the gradient moved batch last by the compiled tiled copy, and col2im compiled (adds, crop, batch first
    # in one pass), or, one group, each image's columns w^T g[n] added into gx[n] (no moves): the bits of numpy's
    # code for the input's, weight's and bias' gradients, and PyTorch's values; also for conv_transpose2d, whose
    # forward is the same col2im
    from minigrad import backends
    from minigrad.backends.cpu import batch_last, col2im, conv_input

    calls = []
    for mod in (batch_last, col2im, conv_input):
        monkeypatch.setattr(mod, "forward", lambda *a, real=mod.forward, name=mod.__name__: calls.append(name)
                            or real(*a))
    x, w, b = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)

    def grads(conv, x, w, b, shape=None):
        ts = [minigrad.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = conv(*ts, **kw)
        y.backward(minigrad.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype)))
        return [y.array] + [t.grad.array for t in ts]

    def conv_t(x, w, b, **kw):
        return F.conv_transpose2d(x, w, b, **kw)

    tkw = {k: v for k, v in kw.items() if k != "padding"}
    xt = arr(xs[0], ws[0], 5, 4, dtype=dtype)
    bt = arr(ws[1] * kw.get("groups", 1), dtype=dtype)
    fast = grads(F.conv2d, x, w, b)
    aliased = xs[0] == 64  # (the tiled copy only where the gradient's images lie a multiple of 4 KiB apart)
    no_columns = kw.get("groups", 1) == 1 and fast[0][0, 0].size >= conv_input.MIN_POSITIONS
    assert ("minigrad.backends.cpu.conv_input" if no_columns else "minigrad.backends.cpu.col2im") in calls
    assert ("minigrad.backends.cpu.col2im" in calls) != no_columns
    assert ("minigrad.backends.cpu.batch_last" in calls) == (aliased and not no_columns)
    fast_t = grads(lambda *a, **k: conv_t(*a, **tkw), xt, w, bt)
    with backends.kernels("numpy"):
        calls.clear()
        plain, plain_t = grads(F.conv2d, x, w, b), grads(lambda *a, **k: conv_t(*a, **tkw), xt, w, bt)
        assert calls == []
    for f, p in zip(fast + fast_t, plain + plain_t):
        assert_numpys_bits(f, p, dtype)
    for conv, ours, arrays, kws in ((torch.nn.functional.conv2d, fast, (x, w, b), kw),
                                    (torch.nn.functional.conv_transpose2d, fast_t, (xt, w, bt), tkw)):
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        y = conv(*ts, **kws)
        y.backward(torch.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype)))
        for mine, theirs in zip(ours, [y.detach()] + [t.grad for t in ts]):
            scale = np.abs(theirs.numpy()).max()  # (float32 sums of thousands of terms: their size's rounding)
            np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-4 if dtype == np.float32 else 1e-7,
                                       atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


def test_padded_conv2d_input_moved_by_the_tiled_copy_is_numpys(monkeypatch):
    # a padded convolution (a conv autoencoder's 3x3, padding 1) on images a multiple of 4 KiB apart: its input
    # goes batch last through the compiled tiled copy, then into the zero border; the bits of numpy's strided copy
    # (the general path's: the weight's gradient takes it; the forward's image by image kernel and the compiled
    # im2col, which moves the input itself, are set aside)
    from minigrad import backends
    from minigrad.backends.cpu import batch_last, conv_forward, im2col

    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)
    monkeypatch.setattr(im2col, "supports", lambda *a: False)
    calls = []
    monkeypatch.setattr(batch_last, "forward", lambda *a, real=batch_last.forward: calls.append(1) or real(*a))
    x, w, b = arr(32, 16, 16, 16), arr(1, 16, 3, 3), arr(1)
    fast = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), padding=1).array
    assert calls
    with backends.kernels("numpy"):
        plain = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), padding=1).array
    np.testing.assert_array_equal(fast, plain)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, kernel, stride, dilation, pads", [
    ((32, 32, 8, 8), (4, 4), (2, 2), (1, 1), ((1, 1), (1, 1))),  # DCGAN discriminator's second conv: 4 x 4 out
    ((32, 64, 4, 4), (4, 4), (1, 1), (1, 1), ((0, 0), (0, 0))),  # its last: one position
    ((3, 5, 7, 9), (3, 2), (2, 3), (2, 1), ((1, 2), (0, 3))),  # uneven pads, strides, dilations; odd sizes
    ((1, 2, 1, 5), (1, 3), (1, 1), (1, 2), ((0, 0), (2, 2)))])
def test_compiled_im2col_is_numpys_batch_last_columns(dtype, xs, kernel, stride, dilation, pads):
    # the compiled im2col (the move batch last, the zero padding and the windows in one pass) copies the bits of
    # numpy's: the padded batch-last array's strided windows
    from nn._functional import conv as C
    from minigrad.backends.cpu import im2col

    x = arr(*xs, dtype=dtype)
    out = tuple(C.out_size(s, k, st, d, lo, hi) for s, k, st, d, (lo, hi) in zip(xs[2:], kernel, stride, dilation,
                                                                                 pads))
    assert im2col.supports(x, kernel)
    cols = im2col.forward(x, pads, kernel, stride, dilation, out)
    assert cols.flags.c_contiguous and cols.dtype == dtype
    np.testing.assert_array_equal(cols, C.im2col(C.batch_last(x, pads), kernel, stride, dilation, out))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_map_convs_take_the_compiled_im2col_vs_numpy_and_torch(torch, monkeypatch, dtype):
    # DCGAN's 4 x 4 maps (too few positions for the image by image kernels): the general path's columns made by the
    # compiled im2col, forward and weight gradient; the bits of numpy's columns (the same product) and torch's values
    from minigrad import backends
    from minigrad.backends.cpu import im2col

    calls = []
    monkeypatch.setattr(im2col, "forward", lambda *a, real=im2col.forward: calls.append(1) or real(*a))
    x, w, b = arr(32, 32, 8, 8, dtype=dtype), arr(64, 32, 4, 4, dtype=dtype), arr(64, dtype=dtype)
    runs = []
    for kernels in ("fast", "numpy"):
        with backends.kernels(kernels):
            ts = [minigrad.tensor(a, requires_grad=True) for a in (x, w, b)]
            y = F.conv2d(*ts, stride=2, padding=1)
            y.backward(minigrad.tensor(np.cos(np.arange(y.numel(), dtype=dtype)).reshape(y.shape)))
            runs.append([y.array] + [t.grad.array for t in ts])
        if kernels == "fast":
            assert len(calls) == 2  # (the forward's columns and the weight gradient's)
    for fast, plain in zip(*runs):
        np.testing.assert_array_equal(fast, plain)
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = torch.nn.functional.conv2d(*ts, stride=2, padding=1)
    y.backward(torch.cos(torch.arange(y.numel(), dtype=y.dtype)).reshape(y.shape))
    for mine, theirs in zip(runs[0], [y.detach()] + [t.grad for t in ts]):
        scale = np.abs(theirs.numpy()).max()
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-4 if dtype == np.float32 else 1e-7,
                                   atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(13, 32, 8, 12), (64, 64, 24, 24), (3, 16, 4, 4, 16)])
def test_batch_last_tiles_are_numpys_moved_copy(dtype, shape):
    # the tiled copy's tiles of 8 images x 64 positions, partial ones at the ends (13 images, 96 positions)
    from minigrad.backends.cpu import batch_last

    a = arr(*shape, dtype=dtype)
    assert batch_last.supports(a)
    out = batch_last.forward(a)
    assert out.flags.c_contiguous and out.dtype == dtype
    np.testing.assert_array_equal(out, np.moveaxis(a, 0, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [((32, 16, 1, 1), (16, 64, 4, 4), {}),  # DCGAN's first layer: 1 x 1 to 4 x 4
                                        ((1, 3, 2, 1), (3, 5, 3, 4), {"padding": (0, 1)}),  # batch 1, 2 to 12
                                        ((2, 4, 2, 2), (4, 2, 3, 3), {"groups": 2, "dilation": 2})])
def test_conv_transpose2d_spreading_its_input_takes_col2im_vs_torch(torch, monkeypatch, xs, ws, kw, dtype):
    # stride 1 but SPREAD times the input's positions and more out: col2im's product over the input's positions,
    # not the flipped correlation's over the output's, nor conv_input's per image (as few positions as DCGAN's
    # 1 x 1 noise); PyTorch's values and gradients of x, w and b
    from minigrad.backends.cpu import col2im, conv_input

    calls = []
    for mod in (col2im, conv_input):
        monkeypatch.setattr(mod, "forward", lambda *a, real=mod.forward, m=mod: calls.append(m) or real(*a))
    x = arr(xs[0], 2 * xs[1], *xs[2:], dtype=dtype)[:, ::2]  # (a non-contiguous input too)
    w, b = arr(*ws, dtype=dtype), arr(ws[1] * kw.get("groups", 1), dtype=dtype)
    ts = [minigrad.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = F.conv_transpose2d(*ts, **kw)
    # (the forward's col2im; before: none, the correlation; and not image by image: too few positions per image)
    assert calls and all(m is col2im for m in calls)
    gy = np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype)
    y.backward(minigrad.tensor(gy))
    tt = [torch.tensor(a.copy(), requires_grad=True) for a in (x, w, b)]
    ty = torch.nn.functional.conv_transpose2d(*tt, **kw)
    ty.backward(torch.tensor(gy))
    for mine, theirs in zip([y] + [t.grad for t in ts], (ty.detach(),) + tuple(t.grad for t in tt)):
        assert mine.array.dtype == dtype and tuple(mine.shape) == tuple(theirs.shape)
        # (an element summed from terms as large as the largest result cancels to a small one: its rounding is
        # the large terms', so the absolute tolerance scales with them; float32 sums in another order differ so)
        scale = max(float(np.abs(theirs.numpy()).max()), 1.0)
        tol = dict(rtol=1e-4, atol=1e-5 * scale) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12 * scale)
        np.testing.assert_allclose(mine.array, theirs.numpy(), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [((32, 16, 8, 8), (1, 16, 3, 3), {"padding": 1}),  # conv_ae's last conv
                                        ((4, 16, 6, 5), (8, 16, 3, 3), {"padding": 1}),
                                        ((3, 4, 7, 6), (2, 4, 5, 3), {}),  # no padding: the gradient padded by k - 1
                                        ((3, 4, 7, 6), (4, 4, 3, 3), {"padding": 2}),  # padding = k - 1: no pad before
                                        ((2, 6, 9, 7), (4, 3, 3, 2), {"groups": 2, "dilation": (2, 1),
                                                                      "padding": (2, 1)})])
def test_stride1_input_grad_as_a_flipped_correlation_vs_col2im_and_torch(torch, monkeypatch, xs, ws, kw, dtype):
    # with stride 1 and no more output than input channels, the input's gradient (and conv_transpose2d's output)
    # is a convolution of the padded gradient with the flipped weight: no col2im; the same values as col2im's
    # (another order of the sums) and PyTorch's, for x, w and b, and for conv_transpose2d's x, w and b
    from nn._functional import conv as conv_mod
    from minigrad.backends.cpu import col2im, conv_input

    calls = []
    for mod in (col2im, conv_input):
        monkeypatch.setattr(mod, "forward", lambda *a, real=mod.forward: calls.append(1) or real(*a))
    x, w, b = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)
    xt = arr(xs[0], ws[0], 5, 6, dtype=dtype)
    bt = arr(ws[1] * kw.get("groups", 1), dtype=dtype)
    tkw = dict(kw, padding=min(kw.get("padding", 0), ws[-1] - 1) if isinstance(kw.get("padding", 0), int)
               else kw["padding"])

    def grads(conv, arrays, kws):
        ts = [minigrad.tensor(a, requires_grad=True) for a in arrays]
        y = conv(*ts, **kws)
        y.backward(minigrad.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype)))
        return [y.array] + [t.grad.array for t in ts]

    runs = (F.conv2d, (x, w, b), kw), (F.conv_transpose2d, (xt, w, bt), tkw)
    fast = [grads(*r) for r in runs]
    assert calls == []
    monkeypatch.setattr(conv_mod, "_as_correlation", lambda *a: None)
    general = [grads(*r) for r in runs]
    assert calls  # (the general path is col2im's, or its product adding into the frame)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    for (tconv, arrays, kws), ours, col2im_s in zip(((torch.nn.functional.conv2d,) + runs[0][1:],
                                                    (torch.nn.functional.conv_transpose2d,) + runs[1][1:]),
                                                   fast, general):
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        y = tconv(*ts, **kws)
        y.backward(torch.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype)))
        for mine, other, theirs in zip(ours, col2im_s, [y.detach()] + [t.grad for t in ts]):
            assert mine.dtype == other.dtype == dtype and mine.shape == tuple(theirs.shape)
            np.testing.assert_allclose(mine, other, **tol)
            np.testing.assert_allclose(mine, theirs.numpy(), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("conv, xs, ws, kw", [
    ("conv2d", (6, 8, 12, 11), (16, 8, 3, 3), {}),  # mnist_cnn's conv2: more output than input channels
    ("conv2d", (16, 16, 20, 20), (32, 16, 3, 3), {"padding": 1}),  # (large enough for the team)
    ("conv2d", (3, 4, 11, 9), (6, 4, 3, 2), {"stride": (2, 1), "dilation": (1, 2), "padding": (1, 2)}),
    ("conv2d", (2, 3, 9, 8), (5, 3, 4, 2), {"padding": "same", "dilation": (2, 1)}),  # the odd pad after
    ("conv2d", (1, 3, 64, 64), (16, 3, 3, 3), {"padding": 1}),  # a style transfer's first conv, batch 1
    ("conv2d", (4, 5, 17, 15), (7, 5, 3, 3), {"stride": 2, "padding": 2}),  # a stride along the width too
    ("conv_transpose2d", (2, 6, 5, 4), (6, 3, 3, 3), {"stride": (2, 1), "padding": 1, "output_padding": (1, 0)}),
    ("conv_transpose2d", (3, 8, 4, 4), (8, 4, 4, 4), {"stride": 2, "padding": 1})])  # DCGAN's generator
def test_input_grad_image_by_image_vs_col2im_and_torch(torch, monkeypatch, dtype, conv, xs, ws, kw):
    # one group: each image's columns w^T g[n] made by bands of output rows in the cache and added straight into
    # gx[n], each element's terms in col2im's order: the same bits on one thread and two, col2im's values (the
    # same sums; BLAS may round a product of another size otherwise) and PyTorch's
    from minigrad.backends.cpu import conv_input

    calls = []
    monkeypatch.setattr(conv_input, "forward", lambda *a, real=conv_input.forward: calls.append(1) or real(*a))
    monkeypatch.setattr(conv_input, "MIN_POSITIONS", 1)  # (these small maps through it too)
    monkeypatch.setattr(conv_input, "BAND_POSITIONS", 8)  # (several bands per image at these sizes)
    monkeypatch.setattr(conv_input, "BAND_BYTES", 1)
    x, w, b = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[1] if conv == "conv_transpose2d" else ws[0],
                                                                   dtype=dtype)

    def grads(lib, f):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, **kw)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts]

    fast = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        fast[threads] = grads(minigrad, getattr(F, conv))
    assert calls
    calls.clear()
    monkeypatch.setattr(conv_input, "supports", lambda *a: False)
    general = grads(minigrad, getattr(F, conv))  # (col2im's)
    assert calls == []
    theirs = grads(torch, getattr(torch.nn.functional, conv))
    for mine, two, other, want in zip(fast["1"], fast["2"], general, theirs):
        assert mine.dtype == dtype and mine.shape == want.shape
        assert np.array_equal(mine, two)
        scale = np.abs(want).max()  # (float32 sums of thousands of terms: their size's rounding)
        for ref in (other, want):
            np.testing.assert_allclose(mine, ref, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                       atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [
    ((4, 16, 32, 32), (16, 16, 3, 3), {"padding": 1}),  # resnet_small's 3x3
    ((3, 3, 16, 20), (8, 3, 3, 3), {"padding": 1, "bias": False}),  # 3 channels in
    ((1, 5, 40, 36), (4, 5, 4, 3), {"stride": (2, 1), "padding": (1, 2)}),  # batch 1, a stride, an even kernel
    ((2, 4, 36, 36), (6, 4, 3, 3), {"dilation": (2, 3), "padding": (3, 1)}),
    ((2, 6, 18, 18), (5, 6, 3, 3), {"padding": "same", "transpose": True}),  # a non-contiguous input
    ((1, 16, 64, 64), (16, 16, 3, 3), {"padding": 1}),  # a style-transfer script's 16 -> 16 at batch 1
    ((128, 16, 8, 8), (16, 16, 3, 3), {"padding": 1}),  # stride 1 on small maps: the columns over the padded width
    ((8, 16, 16, 16), (16, 16, 3, 3), {"padding": 1, "bias": False}),  # a DDPM U-Net's
    ((1, 3, 10, 9), (4, 3, 2, 3), {"padding": (0, 1)}),  # batch 1, no padding in height, an even kernel
    ((2, 4, 12, 12), (5, 4, 3, 3), {"dilation": 2}),  # 8 x 8 out, no padding
    ((2, 3, 9, 10), (4, 3, 4, 4), {"padding": "same"}),  # more padding after than before
    ((8, 32, 16, 16), (64, 32, 3, 3), {"stride": 2, "padding": 1, "bias": False}),  # stride 2 to 8 x 8 (a ResNet's)
    ((3, 1, 16, 16), (32, 1, 4, 4), {"stride": 2, "padding": 1}),  # DCGAN's discriminator's first, 1 channel in
])
def test_conv2d_forward_image_by_image_vs_the_general_path_and_torch(torch, monkeypatch, threads, dtype, xs,
                                                                           ws, kw):
    # maps of 256 positions and more: each image's columns made from the unpadded input into a buffer and one
    # product per image written straight into y, on one thread and the team's (and the input's gradient where
    # it is a correlation with the flipped weight): the general path's values (each entry the same dot product,
    # summed by BLAS, whose small-matrix code may round it otherwise) and PyTorch's, and gradients in x, w and b
    from minigrad.backends.cpu import conv_forward

    monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
    kw = dict(kw)
    bias, transpose = kw.pop("bias", True), kw.pop("transpose", False)
    calls = []
    monkeypatch.setattr(conv_forward, "forward", lambda *a, real=conv_forward.forward: calls.append(1) or real(*a))
    x = arr(*(xs[:2] + xs[:1:-1] if transpose else xs), dtype=dtype)
    x = x.swapaxes(2, 3) if transpose else x
    w, b = arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype) if bias else None

    def grads(lib, f):
        ts = [None if a is None else lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, **kw)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts if t is not None]

    fast = grads(minigrad, F.conv2d)
    assert calls
    calls.clear()
    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)
    general = grads(minigrad, F.conv2d)
    assert calls == []
    theirs = grads(torch, torch.nn.functional.conv2d)
    for mine, other, want in zip(fast, general, theirs):
        assert mine.dtype == dtype and mine.shape == want.shape
        # (the gradients: float32 sums of up to 16384 terms of either sign, which round at the terms' size, 1)
        scale = max(np.abs(want).max(), 1.0)
        for ref in (other, want):
            np.testing.assert_allclose(mine, ref, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                       atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1024, 8, 16), (512, 3, 7), (100, 2, 3)])  # destination rows 4 KiB apart, and not
def test_output_moved_batch_first_is_numpys_copy(dtype, shape):
    from minigrad.backends.cpu import conv_layout

    y = arr(*shape, dtype=dtype)
    out = conv_layout.forward(y)
    assert out.flags.c_contiguous and out.dtype == dtype
    np.testing.assert_array_equal(out, np.moveaxis(y, 0, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5, 16, 1024), (3, 7, 512), (2, 3, 100)])  # rows 4 KiB apart, and not
def test_gradient_moved_positions_first_is_numpys_copy(dtype, shape):
    from minigrad.backends.cpu import conv_layout

    g = arr(*shape, dtype=dtype)
    out = conv_layout.backward(g[:, :, ::-1])  # (a non-contiguous gradient too)
    assert out.flags.c_contiguous and out.dtype == dtype
    np.testing.assert_array_equal(out, np.moveaxis(g[:, :, ::-1], (0, 1), (-2, -1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weight_grad_through_the_tiled_gradient_move_is_numpys_and_torchs(torch, monkeypatch, dtype):
    # 32 x 32 maps: the output's gradient's channel rows lie 4 KiB apart; moved positions first by the compiled
    # tiled copy for the general path's weight gradient: the bits of numpy's code, and PyTorch's values
    from minigrad import backends
    from minigrad.backends.cpu import conv_forward, conv_layout

    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)  # (the general path's: it takes the move)
    calls = []
    monkeypatch.setattr(conv_layout, "backward", lambda g, real=conv_layout.backward: calls.append(g.shape) or real(g))
    x, w, b = arr(3, 4, 32, 32, dtype=dtype), arr(8, 4, 3, 3, dtype=dtype), arr(8, dtype=dtype)

    def grads(lib, f):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, padding=1)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)))
        return np.asarray(ts[1].grad)

    fast = grads(minigrad, F.conv2d)
    assert calls == [(3, 8, 1024)]
    with backends.kernels("numpy"):
        plain = grads(minigrad, F.conv2d)
    assert calls == [(3, 8, 1024)]
    assert_numpys_bits(fast, plain, dtype)
    want = grads(torch, torch.nn.functional.conv2d)
    np.testing.assert_allclose(fast, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=(1e-4 if dtype == np.float32 else 1e-12) * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride, padding, dilation", [((1, 1), (0, 0), (1, 1)), ((1, 1), (1, 2), (1, 1)),
                                                       ((2, 3), (1, 0), (1, 1)), ((1, 2), (2, 1), (2, 1))])
def test_image_columns_are_the_padded_inputs_windows(dtype, stride, padding, dilation):
    # the compiled columns of one image (its flat unsigned-offset copy), whole and of a band of output rows,
    # against numpy's windows of the padded image, exactly: every entry a copy, 0 in the padding
    from minigrad.backends.cpu import conv_forward

    x = arr(3, 4, 11, 13, dtype=dtype)
    kernel = (3, 2)
    pads = tuple((p, p) for p in padding)
    out = tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                for s, p, d, k, st in zip(x.shape[2:], padding, dilation, kernel, stride))
    args = conv_forward._args(kernel, stride, dilation, pads, out)
    padded = np.pad(x, ((0, 0), (0, 0)) + pads)
    for n in range(x.shape[0]):
        cols = np.full(4 * kernel[0] * kernel[1] * out[0] * out[1], np.nan, dtype=dtype)
        conv_forward._columns(cols, x, n, *args, 0, out[0])
        want = np.stack([padded[n, c, i * dilation[0]:, j * dilation[1]:][::stride[0], ::stride[1]][:out[0], :out[1]]
                         for c in range(4) for i in range(kernel[0]) for j in range(kernel[1])])
        assert np.array_equal(cols.reshape(want.shape), want)
        band = np.full(4 * kernel[0] * kernel[1] * 2 * out[1], np.nan, dtype=dtype)
        conv_forward._columns(band, x, n, *args, 1, 3)
        assert np.array_equal(band.reshape(want.shape[0], 2, out[1]), want[:, 1:3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("padding, dilation", [((0, 0), (1, 1)), ((1, 2), (1, 1)), ((2, 1), (2, 1)), ((0, 1), (1, 3))])
def test_wide_columns_are_the_padded_inputs_windows(dtype, padding, dilation):
    # at stride 1, one image's columns over the padded width, whole and of a band of output rows: of each run of
    # Wp positions per output row, the first OW are numpy's windows of the padded image, exactly
    from minigrad.backends.cpu import conv_forward

    x = arr(3, 4, 11, 13, dtype=dtype)
    kernel = (3, 2)
    pads = tuple((p, p) for p in padding)
    out = tuple(s + 2 * p - d * (k - 1) for s, p, d, k in zip(x.shape[2:], padding, dilation, kernel))
    Hp, Wp = out[0] + (kernel[0] - 1) * dilation[0], out[1] + (kernel[1] - 1) * dilation[1]
    padded = np.pad(x, ((0, 0), (0, 0)) + pads)
    assert padded.shape[2:] == (Hp, Wp)
    for n in range(x.shape[0]):
        xp = np.zeros(4 * Hp * Wp + (kernel[1] - 1) * dilation[1], dtype=dtype)
        conv_forward._pad(xp, x, n, padding[0], padding[1], Hp, Wp)
        assert np.array_equal(xp[:4 * Hp * Wp].reshape(4, Hp, Wp), padded[n])
        want = np.stack([padded[n, c, i * dilation[0]:, j * dilation[1]:][:out[0], :out[1]]
                         for c in range(4) for i in range(kernel[0]) for j in range(kernel[1])])
        for p0, p1 in ((0, out[0]), (1, 3)):
            cols = np.full(want.shape[0] * (p1 - p0) * Wp, np.nan, dtype=dtype)
            conv_forward._wide_columns(cols, xp, 4, *kernel, *dilation, Hp, Wp, p0, p1)
            assert np.array_equal(cols.reshape(want.shape[0], p1 - p0, Wp)[:, :, :out[1]], want[:, p0:p1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [
    ((19, 16, 16, 16), (8, 16, 3, 3), {"padding": 1}),  # two full blocks of 8 images and a partial one
    ((1, 3, 32, 32), (16, 3, 3, 3), {"padding": 1}),  # batch 1
    ((5, 8, 40, 36), (4, 8, 4, 3), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)}),
    ((11, 32, 16, 16), (64, 32, 3, 3), {"stride": 2, "padding": 1}),  # stride 2 to 8 x 8 (a ResNet's)
    ((9, 16, 17, 17), (32, 16, 1, 1), {"stride": 2}),  # a 1 x 1 stride-2 shortcut to 9 x 9
])
def test_conv2d_weight_grad_image_by_image_vs_the_general_path_and_torch(torch, monkeypatch, dtype, xs, ws, kw):
    # the weight's gradient summed image by image into blocks of 8 images, the blocks added in order: the same
    # bits on one thread and two, the general path's values (another order of the sums) and PyTorch's
    from minigrad.backends.cpu import conv_forward

    calls = []
    monkeypatch.setattr(conv_forward, "backward", lambda *a, real=conv_forward.backward: calls.append(1) or real(*a))
    x, w = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype)
    g = np.cos(np.arange(1, 1 + xs[0] * ws[0] * 4096)).astype(dtype)

    def weight_grad(lib, f):
        xt, wt = lib.tensor(x), lib.tensor(w, requires_grad=True)
        y = f(xt, wt, **kw)
        y.backward(lib.tensor(g[:y.numel()].reshape(tuple(y.shape))))
        return np.asarray(wt.grad)

    fast = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        fast[threads] = weight_grad(minigrad, F.conv2d)
    assert len(calls) == 2 and np.array_equal(fast["1"], fast["2"])
    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)
    general = weight_grad(minigrad, F.conv2d)
    assert len(calls) == 2
    want = weight_grad(torch, torch.nn.functional.conv2d)
    for other in (general, want):
        assert fast["1"].dtype == dtype and fast["1"].shape == other.shape
        np.testing.assert_allclose(fast["1"], other, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=(1e-5 if dtype == np.float32 else 1e-12) * np.abs(other).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, kw", [
    ((32, 96, 32), (64, 32, 3), {}),  # char_cnn's: the embedding permuted (a non-contiguous input)
    ((1, 40, 5), (7, 5, 4), {"stride": 2, "padding": 2}),  # batch 1, an even kernel
    ((3, 30, 6), (4, 6, 3), {"dilation": 2, "padding": 1}),
    ((2, 20, 8), (6, 4, 3), {"groups": 2}),  # (groups: the general path's)
])
def test_conv1d_through_the_2d_kernels_vs_the_general_path_and_torch(torch, monkeypatch, dtype, xs, ws, kw):
    # a Conv1d as a 2-d conv of height 1: the image-by-image forward, weight gradient and input gradient; the
    # general path's values and PyTorch's for the output and the gradients of x, w and b
    from minigrad.backends.cpu import conv_forward, conv_input

    calls = []
    for mod in (conv_forward, conv_input):
        monkeypatch.setattr(mod, "forward", lambda *a, real=mod.forward, m=mod: calls.append(m) or real(*a))
    monkeypatch.setattr(conv_forward, "backward", lambda *a, real=conv_forward.backward: calls.append("gw") or real(*a))
    monkeypatch.setattr(conv_input, "MIN_POSITIONS", 1)  # (the short ones through it too)
    x = arr(*xs, dtype=dtype).transpose(0, 2, 1)
    w, b = arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)

    def grads(lib, f):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, **kw)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts]

    fast = grads(minigrad, F.conv1d)
    # (the input's gradient by conv_input, or as the flipped correlation by conv_forward where O <= C)
    kernels = [m is conv_forward for m in calls].count(True) + [m is conv_input for m in calls].count(True)
    assert (kernels, calls.count("gw")) == ((0, 0) if "groups" in kw else (2, 1))
    calls.clear()
    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)
    monkeypatch.setattr(conv_input, "supports", lambda *a: False)
    general = grads(minigrad, F.conv1d)
    assert calls == []
    theirs = grads(torch, torch.nn.functional.conv1d)
    for mine, other, want in zip(fast, general, theirs):
        assert mine.dtype == dtype and mine.shape == want.shape
        scale = np.abs(want).max()
        for ref in (other, want):
            np.testing.assert_allclose(mine, ref, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                       atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


@pytest.mark.parametrize("fn, xs, ws, taken", [
    (F.conv2d, (8, 64, 4, 4), (1, 64, 4, 4), False),  # (a DCGAN discriminator's last layer: 1 x 1 outputs)
    (F.conv2d, (8, 16, 4, 10), (8, 16, 4, 3), False),  # (a 2-d conv down to one row of 8)
    (F.conv1d, (8, 16, 8), (32, 16, 3), False),  # (a row of 6)
    (F.conv1d, (8, 16, 16), (32, 16, 3), True),  # (a row of 14)
])
def test_one_row_outputs_take_the_image_kernel_only_for_a_conv1d_of_12_positions_or_more(torch, monkeypatch, fn,
                                                                                          xs, ws, taken):
    # the image-by-image kernel takes a Conv1d's single row (each column row one run of the input's) where the row
    # is long enough; a 2-d conv whose output is one row, or a short row, stays on the general path (its per-image
    # products of a position or a few each cost ~3x the step); values and gradients PyTorch's either way
    from minigrad.backends.cpu import conv_forward

    calls = []
    monkeypatch.setattr(conv_forward, "forward", lambda *a, real=conv_forward.forward: calls.append(1) or real(*a))
    x, w = arr(*xs, dtype=np.float64), arr(*ws, dtype=np.float64)
    got = []
    for lib, f in ((minigrad, fn), (torch, getattr(torch.nn.functional, fn.__name__))):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w)]
        y = f(*ts)
        y.sum().backward()
        got.append([np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts])
    assert bool(calls) == taken
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, xs, ws, kw, forward, weight_grad", [
    (F.conv2d, (4, 16, 16, 16), (32, 16, 3, 3), {"stride": 2, "padding": 1}, True, True),  # 8 x 8 out
    (F.conv2d, (4, 16, 15, 15), (32, 16, 1, 1), {"stride": (2, 2)}, True, True),  # 8 x 8 out, a 1 x 1 kernel
    (F.conv2d, (4, 8, 16, 24), (8, 8, 3, 3), {"stride": (2, 3), "padding": 1}, True, True),  # 8 x 8 out
    (F.conv2d, (4, 16, 14, 14), (32, 16, 3, 3), {"stride": 2, "padding": 1}, False, False),  # 7 x 7 out
    (F.conv2d, (4, 32, 8, 8), (64, 32, 4, 4), {"stride": 2, "padding": 1}, False, False),  # 4 x 4 (DCGAN's D)
    (F.conv2d, (4, 16, 8, 8), (16, 16, 3, 3), {"padding": 1}, True, False),  # stride 1: the forward only (wide)
    # DCGAN's generator's last: its input's gradient is a stride-2 conv of g to 8 x 8, its weight's gradient
    # one with x's 8 x 8 as the output
    (F.conv_transpose2d, (4, 32, 8, 8), (32, 1, 4, 4), {"stride": 2, "padding": 1}, True, True),
    (F.conv_transpose2d, (4, 64, 4, 4), (64, 32, 4, 4), {"stride": 2, "padding": 1}, False, False),  # 4 x 4
])
def test_strided_convs_take_the_image_kernels_from_8_by_8_positions(torch, monkeypatch, fn, xs, ws, kw, forward,
                                                                     weight_grad):
    # a strided conv's forward and weight gradient image by image from 64 output positions (the general path's
    # strided batch-wide columns the slower there), on the general path below; values and gradients the
    # general path's and PyTorch's either way
    from minigrad.backends.cpu import conv_forward

    calls = []
    monkeypatch.setattr(conv_forward, "forward", lambda *a, real=conv_forward.forward: calls.append("y") or real(*a))
    monkeypatch.setattr(conv_forward, "backward", lambda *a, real=conv_forward.backward: calls.append("gw") or real(*a))
    x, w = arr(*xs, dtype=np.float32), arr(*ws, dtype=np.float32)

    def grads(lib, f):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w)]
        y = f(*ts, **kw)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(np.float32)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts]

    fast = grads(minigrad, fn)
    assert ("y" in calls, "gw" in calls) == (forward, weight_grad)
    monkeypatch.setattr(conv_forward, "supports", lambda *a: False)
    general = grads(minigrad, fn)
    theirs = grads(torch, getattr(torch.nn.functional, fn.__name__))
    for mine, other, want in zip(fast, general, theirs):
        assert mine.dtype == np.float32 and mine.shape == want.shape
        for ref in (other, want):
            np.testing.assert_allclose(mine, ref, rtol=1e-4, atol=1e-5 * max(np.abs(want).max(), 1.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn, xs, ws, kw", [
    ("conv2d", (8, 16, 32, 32), (16, 1, 3, 3), {"stride": 2, "padding": 1}),  # MobileNet's strided 3 x 3
    ("conv2d", (3, 6, 8, 8), (6, 1, 5, 5), {"padding": 2, "bias": False}),
    ("conv2d", (2, 4, 9, 11), (12, 1, 3, 2), {"stride": (2, 3), "padding": (1, 2), "dilation": (2, 1)}),  # M = 3
    ("conv2d", (2, 5, 12, 10), (10, 1, 4, 3), {"padding": "same", "dilation": (1, 2)}),  # more padding after, M = 2
    ("conv2d", (2, 8, 16, 16), (8, 1, 7, 7), {"padding": 3}),  # ConvNeXt's 7 x 7
    ("conv2d", (2, 6, 13, 13), (6, 1, 3, 3), {"stride": 3}),  # no padding, a row past the last window's
    ("conv1d", (4, 8, 13), (8, 1, 4), {"padding": 3}),  # Mamba's causal conv (the extra outputs of a crop)
    ("conv1d", (2, 3, 17), (6, 1, 3), {"stride": 2, "padding": 2, "dilation": 3, "bias": False}),  # M = 2
    ("conv_transpose2d", (2, 6, 5, 5), (6, 1, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
])
def test_depthwise_conv_vs_the_general_path_and_torch(torch, monkeypatch, dtype, fn, xs, ws, kw):
    # groups == in_channels: the compiled depthwise loops for the output and the gradients of x and w (another
    # order of each sum): the same bits on one thread and two, the general path's values and PyTorch's
    from minigrad.backends.cpu import depthwise

    kw = dict(kw)
    bias = kw.pop("bias", True)
    groups = ws[0] if fn == "conv_transpose2d" else xs[1]
    calls = []
    for name in ("forward", "input_grad", "weight_grad"):
        monkeypatch.setattr(depthwise, name, lambda *a, real=getattr(depthwise, name), n=name: calls.append(n) or real(*a))
    x, w = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype)
    b = arr(ws[1] * groups if fn == "conv_transpose2d" else ws[0], dtype=dtype) if bias else None

    def grads(lib):
        ts = [None if a is None else lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = getattr(lib.nn.functional, fn)(*ts, groups=groups, **kw)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts if t is not None]

    fast = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("MINIGRAD_NUM_THREADS", threads)
        fast[threads] = grads(minigrad)
    assert {"forward", "weight_grad"} <= set(calls) and ("input_grad" in calls or "forward" in calls[1:])
    calls.clear()
    monkeypatch.setattr(depthwise, "supports", lambda *a: False)
    general = grads(minigrad)
    assert calls == []
    theirs = grads(torch)
    for mine, two, other, want in zip(fast["1"], fast["2"], general, theirs):
        assert mine.dtype == dtype and mine.shape == want.shape
        assert np.array_equal(mine, two)
        scale = max(np.abs(want).max(), 1.0)
        for ref in (other, want):
            np.testing.assert_allclose(mine, ref, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                       atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)


@pytest.mark.parametrize("fn, xs, ws, groups, taken", [
    (F.conv2d, (2, 6, 8, 8), (6, 1, 3, 3), 6, True),  # depthwise
    (F.conv2d, (2, 6, 8, 8), (18, 1, 3, 3), 6, True),  # channel multiplier 3
    (F.conv1d, (2, 6, 9), (6, 1, 4), 6, True),  # a Conv1d as height 1
    (F.conv2d, (2, 6, 8, 8), (6, 2, 3, 3), 3, False),  # two channels a group: the general path's
    (F.conv2d, (2, 1, 8, 8), (4, 1, 3, 3), 1, False),  # one channel in, one group: the image kernels'
    (F.conv3d, (2, 4, 5, 5, 5), (4, 1, 3, 3, 3), 4, False),  # 3-d: the general path's
    (F.conv2d, (2, 6, 4, 4), (6, 1, 5, 5), 6, False),  # a 5 x 5 kernel on a 4 x 4 map: the general path's
])
def test_depthwise_kernel_takes_one_group_per_input_channel(torch, monkeypatch, fn, xs, ws, groups, taken):
    # the compiled depthwise loops take a conv whose every group is one input channel (more than one) and whose
    # output channels are a multiple of them, 1-d and 2-d; other convs keep their paths; PyTorch's values either way
    from minigrad.backends.cpu import depthwise

    calls = []
    monkeypatch.setattr(depthwise, "forward", lambda *a, real=depthwise.forward: calls.append(1) or real(*a))
    x, w = arr(*xs), arr(*ws)
    got = []
    for lib, f in ((minigrad, fn), (torch, getattr(torch.nn.functional, fn.__name__))):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w)]
        y = f(*ts, padding=1, groups=groups)
        y.sum().backward()
        got.append([np.asarray(y.detach())] + [np.asarray(t.grad) for t in ts])
    assert bool(calls) == taken
    for mine, want in zip(*got):
        np.testing.assert_allclose(mine, want, rtol=1e-10, atol=1e-12)
