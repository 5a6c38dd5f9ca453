"""minigrad.func (torch.func): grad, vmap, jacrev/jacfwd/hessian, vjp/jvp, functional_call and
stack_module_state, checked against PyTorch's and against the plain autograd they stand for."""
import copy

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, stack_module_state,
                           vjp, vmap)

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 6)


def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3))
    weights = np.random.default_rng(1)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(weights.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _np(tree):
    if isinstance(tree, dict):
        return {k: _np(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_np(v) for v in tree)
    return tree.detach().numpy()


def _close(a, b, rtol=1e-5, atol=1e-6):
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _close(a[k], b[k], rtol, atol)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_per_sample_gradients_are_each_samples_backward():
    model = _mlp(minigrad)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, minigrad.tensor(X), minigrad.tensor(Y))
    for i in range(len(X)):  # the same sample through the module's own parameters and backward()
        model.zero_grad()
        F.cross_entropy(model(minigrad.tensor(X[i:i + 1])), minigrad.tensor(Y[i:i + 1])).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(per_sample[name][i].numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert all(not g.requires_grad for g in per_sample.values())
    assert model[0].weight.grad is not None and all(p.grad_fn is None for p in model.parameters())


def test_transforms_match_pytorchs():
    torch = pytest.importorskip("torch")
    import torch.func as tf

    def run(lib, fn):
        x = lib.tensor(X)
        model = _mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}
        y = lib.tensor(Y)
        return {
            "grad_and_value": fn.grad_and_value(lambda p: lib.nn.functional.cross_entropy(
                fn.functional_call(model, p, (x,)), y))(params),
            "input grad": fn.grad(lambda t: model(t).sum())(x),
            "jacrev model": fn.jacrev(model)(x[0]),
            "jacrev argnums": fn.jacrev(lambda a, b: a * b.sum(), argnums=(0, 1))(x[0], x[1]),
            "jacfwd": fn.jacfwd(lambda t: t ** 2)(x[0]),
            "hessian": fn.hessian(lambda t: (t.sin() * t).sum())(x[0]),
            "vjp": fn.vjp(lib.sin, x[0])[1](lib.ones(4)),
            "jvp": fn.jvp(lambda t: t.sin() * 2, (x[0],), (lib.ones(4),)),
            "grad of grad": fn.grad(lambda t: fn.grad(lambda u: (u ** 3).sum())(t).sum())(x[0]),
            "aux": fn.grad(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x),
            "unused": fn.grad(lambda a, b: a.sum(), argnums=1)(x, x),
            "vmap out_dims": fn.vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(x),
            "vmap in_dims": fn.vmap(lambda a: a.sum(), in_dims=1)(x),
            "vmap nested": fn.vmap(fn.vmap(lambda a: a * 2))(x),
            "vmap dict": fn.vmap(lambda d: d["a"] + d["b"])({"a": x, "b": x * 2}),
            "vmap None": fn.vmap(lambda a, w: a @ w, in_dims=(0, None))(x, lib.ones(4, 2)),
            "vmap outer": fn.vmap(lib.outer)(x, x),
            "vmap kwargs": fn.vmap(lambda a, scale=1.0: a * scale)(x, scale=3.0),
            "vmap empty": fn.vmap(lambda a: a.sum(1))(lib.zeros(0, 3, 2)),
        }

    want, got = run(torch, tf), run(minigrad, minigrad.func)
    for key in want:
        _close(_np(got[key]), _np(want[key]))
        flags = lambda tree: [t.requires_grad for t in (tree.values() if isinstance(tree, dict) else  # noqa: E731
                                                          tree if isinstance(tree, tuple) else [tree])
                              if hasattr(t, "requires_grad")]
        assert flags(got[key]) == flags(want[key]), key


@pytest.mark.parametrize("case", ["nonscalar", "aux", "argnum", "int", "vmap sizes", "vmap None", "vmap dim",
                                  "vmap structure", "vmap float", "vmap random", "vmap none mapped"])
def test_errors_as_pytorchs(case):
    torch = pytest.importorskip("torch")
    import torch.func as tf

    def call(lib, fn):
        x, y = lib.ones(3, 4), lib.ones(4, 4)
        return {
            "nonscalar": lambda: fn.grad(lambda t: t * 2)(x),
            "aux": lambda: fn.grad(lambda t: t.sum(), has_aux=True)(x),
            "argnum": lambda: fn.grad(lambda t: t.sum(), argnums=1)(x),
            "int": lambda: fn.grad(lambda t: t.sum())(lib.ones(2, dtype=lib.long)),
            "vmap sizes": lambda: fn.vmap(lambda a, b: a + b)(x, y),
            "vmap None": lambda: fn.vmap(lambda a: a, in_dims=None)(x),
            "vmap dim": lambda: fn.vmap(lambda a: a, in_dims=2)(x),
            "vmap structure": lambda: fn.vmap(lambda a: a, in_dims=(0, 0))(x),
            "vmap float": lambda: fn.vmap(lambda a: 1.0)(x),
            "vmap random": lambda: fn.vmap(lambda a: a + lib.rand(4))(x),
            "vmap none mapped": lambda: fn.vmap(lambda a: a, in_dims=(None,))(x),
        }[case]()

    with pytest.raises(Exception) as want:
        call(torch, tf)
    with pytest.raises(type(want.value)) as got:
        call(minigrad, minigrad.func)
    assert str(got.value).split(":")[0] == str(want.value).split(":")[0]


def test_vmap_randomness_same_and_different():
    x = minigrad.zeros(5, 3)
    same = vmap(lambda a: a + minigrad.rand(3), randomness="same")(x)
    different = vmap(lambda a: a + minigrad.rand(3), randomness="different")(x)
    assert np.all(same.numpy() == same.numpy()[0]) and not np.all(different.numpy() == different.numpy()[0])


def test_functional_call_swaps_for_the_call_only():
    model = _mlp(minigrad)
    before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    zeros = {k: minigrad.zeros(tuple(v.shape), requires_grad=True) for k, v in model.named_parameters()}
    out = functional_call(model, zeros, minigrad.tensor(X))
    np.testing.assert_array_equal(out.detach().numpy(), 0)
    out.sum().backward()
    assert zeros["2.bias"].grad is not None and model[2].bias.grad is None
    with pytest.raises(RuntimeError):  # the module is itself again even when the call raises
        functional_call(model, zeros, minigrad.ones(2, 7))
    assert all(np.array_equal(v.numpy(), before[k]) for k, v in model.state_dict().items())
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    with pytest.raises(RuntimeError, match=r"(?s)reparametrizing for Sequential.*Missing key\(s\): '0.bias', '2.bias'"):
        functional_call(model, {"0.weight": zeros["0.weight"], "2.weight": zeros["2.weight"]}, (X,), strict=True)
    with pytest.raises(ValueError, match=r"\['0.weight'\] appeared in multiple dictionaries"):
        functional_call(model, (zeros, {"0.weight": zeros["0.weight"]}), (X,))


def test_functional_call_follows_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.head = nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, idx):
            return self.head(self.emb(idx))

    m = Tied()
    w = minigrad.ones(5, 3)
    out = functional_call(m, {"emb.weight": w}, (minigrad.tensor([1, 2]),))
    np.testing.assert_allclose(out.detach().numpy(), 3.0)
    untied = functional_call(m, {"emb.weight": w}, (minigrad.tensor([1, 2]),), tie_weights=False)
    assert not np.allclose(untied.detach().numpy(), 3.0)


def test_an_ensemble_through_stack_module_state_is_each_model():
    models = [nn.Linear(4, 2) for _ in range(3)]
    params, buffers = stack_module_state(models)
    assert params["weight"].shape == (3, 2, 4) and params["weight"].is_leaf and params["weight"].requires_grad
    base = copy.deepcopy(models[0])
    x = minigrad.tensor(X)
    out = vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


def test_torch_vmap_is_func_vmap():
    assert minigrad.vmap is vmap and minigrad.func.jacfwd is jacfwd and callable(hessian) and callable(jvp)
    assert callable(grad_and_value) and callable(vjp) and callable(jacrev)
