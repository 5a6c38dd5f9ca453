"""F.affine_grid and F.grid_sample (2-D) against PyTorch: values for every mode x padding_mode x align_corners on
grids reaching outside [-1, 1], gradients to input, grid and theta, the spatial-transformer pattern, the
align_corners=None warning, and the error texts."""
import itertools
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

RNG = np.random.default_rng(11)
pytestmark = pytest.mark.usefixtures("own_rng")
TOL = dict(rtol=1e-12, atol=1e-12)


def arr(*shape, low=None, high=None):
    return RNG.standard_normal(shape) if low is None else RNG.uniform(low, high, shape)


def pair(a):
    import torch
    return minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def close(ours, theirs, **tol):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **(tol or TOL))


# ---- affine_grid ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (3, 2, 6, 1), (1, 1, 7, 7)])
def test_affine_grid_values_and_theta_grad(torch, size, align_corners):
    theta, theta_t = pair(arr(size[0], 2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size grids' align_corners=True warning
        g = F.affine_grid(theta, size, align_corners=align_corners)
        gt = torch.nn.functional.affine_grid(theta_t, size, align_corners=align_corners)
    assert tuple(g.shape) == tuple(gt.shape)
    close(g, gt)
    up = arr(*gt.shape)
    (g * minigrad.tensor(up)).sum().backward()
    (gt * torch.tensor(up)).sum().backward()
    close(theta.grad, theta_t.grad)


def test_affine_grid_identity_float32(torch):
    eye = np.array([[[1.0, 0, 0], [0, 1.0, 0]]], dtype=np.float32)
    g = F.affine_grid(minigrad.tensor(eye), (1, 1, 3, 4), align_corners=False)
    gt = torch.nn.functional.affine_grid(torch.tensor(eye), (1, 1, 3, 4), align_corners=False)
    assert g.dtype == minigrad.float32
    close(g, gt, rtol=1e-6, atol=1e-7)


# ---- grid_sample values and gradients ------------------------------------------------------------------------
CASES = list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode,padding_mode,align_corners", CASES)
def test_grid_sample_vs_torch(torch, mode, padding_mode, align_corners):
    x, xt = pair(arr(2, 3, 4, 5))
    g, gt = pair(arr(2, 6, 7, 2, low=-2.5, high=2.5))  # well outside [-1, 1]: several reflections
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    y = F.grid_sample(x, g, **kw)
    yt = torch.nn.functional.grid_sample(xt, gt, **kw)
    assert tuple(y.shape) == (2, 3, 6, 7)
    close(y, yt)
    up = arr(*yt.shape)
    (y * minigrad.tensor(up)).sum().backward()
    (yt * torch.tensor(up)).sum().backward()
    close(x.grad, xt.grad)
    close(g.grad, gt.grad, rtol=1e-10, atol=1e-12)  # bilinear: the weights' gradient; nearest: zeros


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_float32_and_other_shapes(torch, padding_mode):
    x = arr(1, 2, 1, 6).astype(np.float32)  # a one-row input: the reflection of a unit span
    g = arr(1, 3, 2, 2, low=-1.5, high=1.5).astype(np.float32)
    for ac in (False, True):
        y = F.grid_sample(minigrad.tensor(x), minigrad.tensor(g), padding_mode=padding_mode, align_corners=ac)
        yt = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), padding_mode=padding_mode,
                                             align_corners=ac)
        assert y.dtype == minigrad.float32
        close(y, yt, rtol=1e-5, atol=1e-6)


def test_grid_sample_nearest_rounds_half_to_even(torch):
    x = arr(1, 1, 1, 5)
    # align_corners=True, W=5: pixel x = (g + 1) * 2, so these land on 0.5, 1.5, 2.5 and 3.5 exactly
    g = np.zeros((1, 1, 4, 2))
    g[0, 0, :, 0] = [-0.75, -0.25, 0.25, 0.75]
    y = F.grid_sample(minigrad.tensor(x), minigrad.tensor(g), mode="nearest", align_corners=True)
    yt = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode="nearest", align_corners=True)
    close(y, yt)
    np.testing.assert_array_equal(y.numpy()[0, 0, 0], x[0, 0, 0, [0, 2, 2, 4]])


def test_identity_grid_reproduces_input(torch):
    x = arr(2, 3, 5, 4)
    eye = minigrad.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1, 0]]), (2, 1, 1)))
    for ac in (False, True):
        g = F.affine_grid(eye, (2, 3, 5, 4), align_corners=ac)
        y = F.grid_sample(minigrad.tensor(x), g, align_corners=ac)
        np.testing.assert_allclose(y.numpy(), x, rtol=1e-12, atol=1e-12)


# ---- the spatial-transformer pattern ---------------------------------------------------------------------------
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_spatial_transformer_vs_torch(torch, padding_mode):
    x = arr(3, 2, 6, 5)
    loc, loc_t = nn.Linear(2 * 6 * 5, 6).double(), torch.nn.Linear(2 * 6 * 5, 6).double()
    w, b = arr(6, 60) * 0.05, np.array([1.0, 0, 0, 0, 1, 0]) + arr(6) * 0.1
    with minigrad.no_grad():
        loc.weight.copy_(minigrad.tensor(w))
        loc.bias.copy_(minigrad.tensor(b))
    with torch.no_grad():
        loc_t.weight.copy_(torch.tensor(w))
        loc_t.bias.copy_(torch.tensor(b))
    xo, xt = pair(x)
    target = arr(3, 2, 6, 5)

    theta = loc(xo.reshape(3, -1)).reshape(3, 2, 3)
    grid = F.affine_grid(theta, (3, 2, 6, 5), align_corners=False)
    loss = F.mse_loss(F.grid_sample(xo, grid, padding_mode=padding_mode, align_corners=False),
                      minigrad.tensor(target))
    loss.backward()

    theta_t = loc_t(xt.reshape(3, -1)).reshape(3, 2, 3)
    grid_t = torch.nn.functional.affine_grid(theta_t, (3, 2, 6, 5), align_corners=False)
    loss_t = torch.nn.functional.mse_loss(
        torch.nn.functional.grid_sample(xt, grid_t, padding_mode=padding_mode, align_corners=False),
        torch.tensor(target))
    loss_t.backward()

    close(loss, loss_t)
    close(xo.grad, xt.grad, rtol=1e-10, atol=1e-12)
    close(loc.weight.grad, loc_t.weight.grad, rtol=1e-10, atol=1e-12)
    close(loc.bias.grad, loc_t.bias.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("side", [7, 24, 28, 29, 33, 64])
def test_identity_float32_samples_bit_for_bit_and_theta_grad_as_torch(torch, side, align_corners):
    """The spatial-transformer tutorial's start: theta the identity, float32 28x28 images. Each grid point lands
    on a pixel centre give or take a rounding, where bilinear sampling has a kink: the grid, the pixel
    coordinates and the sums must round as PyTorch's CPU kernel (its linspace, a fused multiply-add) or theta's
    gradient takes the other side of the kink (it differed by ~100 at 28x28)."""
    x = RNG.random((2, 1, side, side)).astype(np.float32)
    eye = np.tile(np.array([[1, 0, 0], [0, 1, 0]], np.float32), (2, 1, 1))
    theta, theta_t = pair(eye)
    size = (2, 1, side, side)
    g = F.affine_grid(theta, size, align_corners=align_corners)
    y = F.grid_sample(minigrad.tensor(x), g, align_corners=align_corners)
    gt = torch.nn.functional.affine_grid(theta_t, size, align_corners=align_corners)
    yt = torch.nn.functional.grid_sample(torch.tensor(x), gt, align_corners=align_corners)
    np.testing.assert_array_equal(g.detach().numpy(), gt.detach().numpy())
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    target = RNG.random((2, 1, side, side)).astype(np.float32)
    F.mse_loss(y, minigrad.tensor(target)).backward()
    torch.nn.functional.mse_loss(yt, torch.tensor(target)).backward()
    close(theta.grad, theta_t.grad, rtol=1e-4, atol=1e-6)


# ---- warnings and errors -------------------------------------------------------------------------------------
def test_align_corners_none_warns_as_torch(torch):
    theta = minigrad.tensor(arr(1, 2, 3))
    x, g = minigrad.tensor(arr(1, 1, 3, 3)), minigrad.tensor(arr(1, 2, 2, 2))
    for call, call_t in ((lambda: F.affine_grid(theta, (1, 1, 3, 3)),
                          lambda: torch.nn.functional.affine_grid(torch.tensor(theta.numpy()), (1, 1, 3, 3))),
                         (lambda: F.grid_sample(x, g),
                          lambda: torch.nn.functional.grid_sample(torch.tensor(x.numpy()), torch.tensor(g.numpy())))):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            call()
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            call_t()
        assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in theirs]
        assert len(ours) == 1 and "align_corners=False since 1.3.0" in str(ours[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.affine_grid(theta, (1, 1, 3, 3), align_corners=False)
        F.grid_sample(x, g, align_corners=True)


def _message(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("xs,gs,kw", [
    ((2, 1, 3, 3), (3, 4, 4, 2), {}),
    ((1, 1, 3, 3), (1, 4, 4, 3), {}),
    ((1, 1, 3, 3), (1, 4, 2), {}),
    ((2, 1, 3, 3), (2, 4, 4), {}),
    ((1, 3, 3), (1, 4, 2), {}),
    ((1, 1, 0, 3), (1, 4, 4, 2), {}),
    ((1, 1, 3, 3), (1, 4, 4, 2), {"mode": "bilinea"}),
    ((1, 1, 3, 3), (1, 4, 4, 2), {"padding_mode": "circular"}),
])
def test_grid_sample_errors_match_torch(torch, xs, gs, kw):
    ours = _message(lambda: F.grid_sample(minigrad.zeros(*xs), minigrad.zeros(*gs), align_corners=False, **kw))
    theirs = _message(lambda: torch.nn.functional.grid_sample(torch.zeros(*xs), torch.zeros(*gs),
                                                              align_corners=False, **kw))
    assert ours is not None and ours == theirs


def test_grid_sample_dtype_mismatch(torch):
    ours = _message(lambda: F.grid_sample(minigrad.zeros(1, 1, 3, 3), minigrad.zeros(1, 4, 4, 2, dtype=minigrad.float64),
                                          align_corners=False))
    theirs = _message(lambda: torch.nn.functional.grid_sample(
        torch.zeros(1, 1, 3, 3), torch.zeros(1, 4, 4, 2, dtype=torch.float64), align_corners=False))
    assert ours == theirs


@pytest.mark.parametrize("theta_shape,size,dtype", [
    ((2, 3), (1, 1, 3, 3), "float32"),
    ((2, 2, 3), (1, 1, 3, 3), "float32"),
    ((1, 2, 3), (1, 1, 3), "float32"),
    ((1, 2, 3), (1, 1, 0, 3), "float32"),
    ((1, 2, 3), (1, 1, 3, 3), "int64"),
])
def test_affine_grid_errors_match_torch(torch, theta_shape, size, dtype):
    ours = _message(lambda: F.affine_grid(minigrad.zeros(*theta_shape, dtype=getattr(minigrad, dtype)), size,
                                          align_corners=False))
    theirs = _message(lambda: torch.nn.functional.affine_grid(torch.zeros(*theta_shape, dtype=getattr(torch, dtype)),
                                                              size, align_corners=False))
    assert ours is not None
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1].replace("torch", "minigrad")


def test_unsupported_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(minigrad.zeros(1, 1, 3, 3), minigrad.zeros(1, 2, 2, 2), mode="bicubic", align_corners=False)


def test_exported():
    assert "grid_sample" in F.__all__ and "affine_grid" in F.__all__
