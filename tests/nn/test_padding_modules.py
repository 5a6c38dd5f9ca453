"""The padding modules (ReflectionPad*, ReplicationPad*, CircularPad*, ConstantPad*, ZeroPad*) against PyTorch:
values, gradients, the `padding` attribute, reprs and errors; and TripletMarginWithDistanceLoss."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

RNG = np.random.default_rng(5)

KINDS = ["ReflectionPad", "ReplicationPad", "CircularPad", "ZeroPad"]


def run_both(torch, ours, theirs, x):
    """Forward and backward of sum(out * g) through both modules; the outputs and input gradients agree."""
    xo, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours(xo), theirs(xt)
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(tuple(ty.shape))
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n,padding,shape", [
    (1, 2, (2, 3, 5)), (1, (1, 3), (3, 6)),
    (2, 1, (2, 2, 4, 5)), (2, (1, 0, 2, 3), (2, 4, 5)),
    (3, 1, (1, 2, 3, 4, 5)), (3, (0, 1, 2, 1, 1, 0), (2, 3, 4, 4)),
])
def test_padding_modules_vs_torch(torch, kind, n, padding, shape):
    name = f"{kind}{n}d"
    ours, theirs = getattr(nn, name)(padding), getattr(torch.nn, name)(padding)
    assert ours.padding == theirs.padding and isinstance(ours.padding, tuple)
    assert repr(ours) == repr(theirs)
    run_both(torch, ours, theirs, RNG.standard_normal(shape))


@pytest.mark.parametrize("n,padding,value,shape", [
    (1, 2, 3.5, (2, 3, 5)), (2, (1, 2, 0, 3), -1.0, (1, 2, 3, 3)), (3, 1, 0.5, (2, 2, 3, 3)),
    (2, (-1, 2, 1, -1), 2.0, (2, 4, 5)),  # (negative amounts crop)
])
def test_constant_pad_vs_torch(torch, n, padding, value, shape):
    name = f"ConstantPad{n}d"
    ours, theirs = getattr(nn, name)(padding, value), getattr(torch.nn, name)(padding, value)
    assert ours.padding == theirs.padding and ours.value == theirs.value
    assert repr(ours) == repr(theirs)
    run_both(torch, ours, theirs, RNG.standard_normal(shape))


def test_zero_pad_is_a_constant_pad_and_keeps_integers(torch):
    for n in (1, 2, 3):
        assert isinstance(getattr(nn, f"ZeroPad{n}d")(1), getattr(nn, f"ConstantPad{n}d"))
        assert getattr(nn, f"ZeroPad{n}d")(1).value == getattr(torch.nn, f"ZeroPad{n}d")(1).value == 0.0
    x = np.arange(12).reshape(1, 3, 4)
    np.testing.assert_array_equal(nn.ZeroPad1d(1)(minigrad.tensor(x)).numpy(),
                                  torch.nn.ZeroPad1d(1)(torch.tensor(x)).numpy())


def test_padding_module_in_a_model_trains():
    model = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(2, 3, 3), nn.ReplicationPad2d((0, 1, 0, 1)))
    x = minigrad.tensor(RNG.standard_normal((2, 2, 5, 5)).astype(np.float32))
    y = model(x)
    assert tuple(y.shape) == (2, 3, 6, 6)
    y.pow(2).mean().backward()
    assert model[1].weight.grad is not None


def test_padding_module_errors_vs_torch(torch):
    x = RNG.standard_normal((1, 2, 3))
    cases = [
        (lambda m: m.CircularPad2d(1), (1, 2), ValueError, r"expected 3D or 4D input \(got 2D input\)"),
        (lambda m: m.CircularPad1d(1), (1, 2, 3, 4), ValueError, r"expected 2D or 3D input \(got 4D input\)"),
        (lambda m: m.ReflectionPad1d(3), (1, 2, 3), RuntimeError, "Padding size should be less than"),
        (lambda m: m.ReflectionPad2d(1), (1, 2, 3, 4, 5), NotImplementedError, "Padding size 4 is not supported"),
    ]
    for make, shape, error, match in cases:
        x = RNG.standard_normal(shape)
        for lib, mod in ((torch, torch.nn), (minigrad, nn)):
            with pytest.raises(error, match=match):
                make(mod)(lib.tensor(x))


# ---- TripletMarginWithDistanceLoss ----------------------------------------------------------------------------
def _l_inf(lib):
    return lambda a, b: (a - b).abs().max(-1).values


@pytest.mark.parametrize("distance", [None, "cosine", "linf"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss_vs_torch(torch, distance, swap, reduction):
    def dist(lib, functional):
        if distance == "cosine":
            return lambda a, b: 1.0 - functional.cosine_similarity(a, b)
        return _l_inf(lib) if distance == "linf" else None

    arrays = [RNG.standard_normal((5, 4)) for _ in range(3)]
    ins_o = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    ins_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    kw = dict(margin=0.7, swap=swap, reduction=reduction)
    y = F.triplet_margin_with_distance_loss(*ins_o, distance_function=dist(minigrad, F), **kw)
    ty = torch.nn.functional.triplet_margin_with_distance_loss(*ins_t, distance_function=dist(torch, torch.nn.functional),
                                                               **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    for a, b in zip(ins_o, ins_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    # the module gives the same
    module = nn.TripletMarginWithDistanceLoss(distance_function=dist(minigrad, F), **kw)
    np.testing.assert_allclose(module(*ins_o).detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_triplet_margin_with_distance_loss_module_and_errors(torch):
    ours, theirs = nn.TripletMarginWithDistanceLoss(), torch.nn.TripletMarginWithDistanceLoss()
    assert repr(ours) == repr(theirs)
    assert isinstance(ours.distance_function, nn.PairwiseDistance)
    assert (ours.margin, ours.swap, ours.reduction) == (theirs.margin, theirs.swap, theirs.reduction)
    for lib, mod, fn in ((torch, torch.nn, torch.nn.functional), (minigrad, nn, F)):
        with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                                             "got 0 instead"):
            mod.TripletMarginWithDistanceLoss(margin=0)
        with pytest.raises(TypeError):
            mod.TripletMarginWithDistanceLoss(None)  # (keyword-only arguments)
        a, b = lib.zeros(2, 3), lib.zeros(3)
        with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D inputs"):
            fn.triplet_margin_with_distance_loss(a, a, b)
        with pytest.raises(ValueError, match="margin must be greater than 0, got -1"):
            fn.triplet_margin_with_distance_loss(a, a, a, margin=-1)
        with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
            fn.triplet_margin_with_distance_loss(a, a, a, reduction="bad")
