"""Lazy modules (nn.LazyLinear, LazyConv1d/2d, LazyConvTranspose1d/2d, LazyBatchNorm1d/2d): sizes read from the
first input, as PyTorch's (the d2l book builds every model so)."""
import numpy as np
import pytest

import minigrad
import minigrad.nn as nn


def build(lib):
    return lib.nn.Sequential(lib.nn.LazyConv2d(4, 3, padding=1), lib.nn.LazyBatchNorm2d(), lib.nn.ReLU(),
                             lib.nn.Flatten(), lib.nn.LazyLinear(5))


def test_reprs_shapes_and_types_before_and_after_the_first_call_are_pytorchs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    ours, theirs = build(minigrad), build(torch)
    assert repr(ours) == repr(theirs)
    assert [type(p).__name__ for p in ours.parameters()] == [type(p).__name__ for p in theirs.parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours(minigrad.tensor(x)), theirs(torch.tensor(x))
    assert repr(ours) == repr(theirs)
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    assert [tuple(b.shape) for b in ours.buffers()] == [tuple(b.shape) for b in theirs.buffers()]


def test_an_optimizer_made_before_the_first_call_trains_the_materialized_parameters():
    minigrad.manual_seed(0)
    lazy = build(minigrad)
    params = list(lazy.parameters())
    opt = minigrad.optim.SGD(lazy.parameters(), lr=0.1)
    x = minigrad.randn(2, 3, 6, 6)
    minigrad.manual_seed(1)
    lazy(x)  # materialized and drawn here
    minigrad.manual_seed(1)  # the plain layers, drawn from the same numbers: the same initial values
    plain = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(144, 5))
    for a, b in zip(lazy.parameters(), plain.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    plain_opt = minigrad.optim.SGD(plain.parameters(), lr=0.1)
    for model, o in ((lazy, opt), (plain, plain_opt)):
        o.zero_grad()
        model(x).square().sum().backward()
        o.step()
    assert all(p is q for p, q in zip(params, lazy.parameters()))  # the same objects, now Parameters
    assert all(type(p) is nn.Parameter for p in params)
    for a, b in zip(lazy.parameters(), plain.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_an_uninitialized_parameter_says_what_to_do():
    m = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="Call `forward` to initialize the parameters"):
        _ = m.weight.shape
    with pytest.raises(ValueError, match="uninitialized parameter in <method 'numel'"):
        sum(p.numel() for p in m.parameters())
    assert repr(m.weight) == "<UninitializedParameter>" and m.has_uninitialized_params()


@pytest.mark.parametrize("make, x_shape, weight_shape", [
    (lambda: nn.LazyConvTranspose2d(3, 2, stride=2), (4, 5, 5), (4, 3, 2, 2)),  # unbatched: channels first
    (lambda: nn.LazyConv1d(6, 3, groups=2), (1, 4, 9), (6, 2, 3)),
    (lambda: nn.LazyConvTranspose1d(2, 3), (2, 5, 7), (5, 2, 3)),
    (lambda: nn.LazyBatchNorm1d(), (3, 7), (7,)),
])
def test_each_lazy_layer_reads_its_input_size(make, x_shape, weight_shape):
    m = make()
    m(minigrad.randn(*x_shape))
    assert tuple(m.weight.shape) == weight_shape and not isinstance(m, nn.modules.LazyModuleMixin)


def test_lazy_batch_norm_without_affine_has_no_parameters():
    bn = nn.LazyBatchNorm1d(affine=False)
    bn(minigrad.randn(3, 7))
    assert bn.weight is None and tuple(bn.running_mean.shape) == (7,) and repr(bn).startswith("BatchNorm1d(7,")


@pytest.mark.parametrize("name,args,shape", [
    ("LazyConv3d", (4, 3), (2, 3, 4, 5, 4)), ("LazyConvTranspose3d", (4, 2), (2, 3, 3, 2, 3)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 3)), ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)), ("LazyInstanceNorm3d", (), (2, 3, 2, 3, 2)),
])
def test_3d_and_instance_norm_lazy_modules_vs_torch(name, args, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y, ty = ours(minigrad.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    assert y.shape == tuple(ty.shape)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}


def test_lazy_instance_norm_of_an_unbatched_input_fails_as_pytorchs():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        torch.nn.LazyInstanceNorm2d()(torch.zeros(3, 4, 4))
    with pytest.raises(ValueError) as ours:
        nn.LazyInstanceNorm2d()(minigrad.zeros(3, 4, 4))
    assert str(ours.value) == str(theirs.value)
