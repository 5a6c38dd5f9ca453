"""F.unfold / F.fold (im2col / col2im), F.lp_pool1d / lp_pool2d and F.local_response_norm, with their modules,
against PyTorch: values, gradients, error texts and reprs."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)

CASES = [  # (name, args, kwargs, input shape)
    ("unfold", ((2, 3),), dict(dilation=(2, 1), padding=1, stride=(1, 2)), (2, 3, 7, 8)),
    ("unfold", (3,), {}, (3, 5, 6)),
    ("unfold", (2,), dict(stride=2), (1, 1, 4, 4)),
    ("fold", ((5, 6), (2, 3)), dict(stride=(1, 2), padding=1, dilation=(2, 1)), (2, 12, 15)),
    ("fold", ((4, 4), 2), {}, (8, 9)),
    ("fold", ((4, 5), 2), dict(stride=2, padding=(0, 1)), (1, 8, 6)),
    ("lp_pool1d", (1.5, 2), {}, (2, 3, 9)),
    ("lp_pool2d", (2, 3), dict(stride=2), (2, 3, 9, 9)),
    ("lp_pool2d", (3, (2, 3)), dict(ceil_mode=True), (2, 3, 7, 8)),
    ("local_response_norm", (2,), {}, (2, 5, 3)),
    ("local_response_norm", (4,), dict(alpha=0.1, beta=0.5, k=2.0), (2, 6, 3, 4, 2)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", CASES)
def test_values_and_gradients_match_pytorch(name, args, kwargs, shape):
    x = RNG.standard_normal(shape).astype(np.float64)
    if name.startswith("lp_pool") and args[0] != int(args[0]):
        x = np.abs(x)  # a fractional power of a negative number is NaN on both sides
    w = None
    results = []
    for lib, fn in ((torch, torch.nn.functional), (minigrad, F)):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(fn, name)(t, *args, **kwargs)
        if w is None:
            w = RNG.standard_normal(tuple(y.shape))
        (y * lib.tensor(w)).sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy(), str(y.grad_fn).split()[0].lstrip("<")))
    (ty, tg, tnode), (my, mg, mnode) = results
    np.testing.assert_allclose(my, ty, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mg, tg, rtol=1e-10, atol=1e-12)
    if name in ("fold", "unfold"):
        assert mnode == tnode  # Col2ImBackward0 / Im2ColBackward0


def test_fold_is_unforlds_adjoint_and_differentiates_twice():
    x = minigrad.tensor(RNG.standard_normal((2, 3, 6, 5)), requires_grad=True)
    cols = minigrad.tensor(RNG.standard_normal((2, 3 * 6, 12)))
    args = dict(kernel_size=(2, 3), padding=1, stride=2)
    # <unfold(x), c> = <x, fold(c)>
    left = float((F.unfold(x, **args) * cols).sum())
    right = float((x * F.fold(cols, (6, 5), **args)).sum())
    assert left == pytest.approx(right, rel=1e-12)
    assert minigrad.autograd.gradcheck(lambda t: F.unfold(t, **args), (x,))
    assert minigrad.autograd.gradgradcheck(lambda t: F.fold(F.unfold(t, **args) ** 2, (6, 5), **args), (x,))


@pytest.mark.parametrize("call", [
    lambda fn, lib: fn.fold(lib.zeros(2, 8, 3, 3), (4, 4), 2),
    lambda fn, lib: fn.fold(lib.zeros(1, 5, 9), (4, 4), 2),
    lambda fn, lib: fn.fold(lib.zeros(1, 8, 10), (4, 4), 2),
    lambda fn, lib: fn.unfold(lib.zeros(1, 1, 2, 2), 3),
    lambda fn, lib: fn.unfold(lib.zeros(1, 1, 4, 4), 0),
    lambda fn, lib: fn.local_response_norm(lib.zeros(2, 3), 2),
])
def test_errors_in_pytorchs_words(call):
    with pytest.raises(Exception) as want:
        call(torch.nn.functional, torch)
    with pytest.raises(type(want.value)) as got:
        call(F, minigrad)
    assert str(got.value) == str(want.value)


def test_module_reprs_and_forward():
    pairs = [(nn.Unfold(2, dilation=1, padding=1, stride=2), torch.nn.Unfold(2, dilation=1, padding=1, stride=2)),
             (nn.Fold((4, 5), 2), torch.nn.Fold((4, 5), 2)),
             (nn.LPPool2d(2, 3, stride=2), torch.nn.LPPool2d(2, 3, stride=2)),
             (nn.LPPool1d(1.5, 2), torch.nn.LPPool1d(1.5, 2)),
             (nn.LocalResponseNorm(3), torch.nn.LocalResponseNorm(3))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
    x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(nn.LocalResponseNorm(3)(minigrad.tensor(x)).numpy(),
                               torch.nn.LocalResponseNorm(3)(torch.tensor(x)).numpy(), rtol=1e-6)
