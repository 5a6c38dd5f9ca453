"""minigrad.func (torch.func) against PyTorch: the per-sample-gradient, model-ensembling and Jacobian/Hessian
tutorials' computations on the same numbers, compositions (vmap of grad, jacrev of jacrev, jvp of grad, a
result differentiated again by .backward()), functional_call's tied weights, and the error texts."""
import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(3)


def libs():
    torch = pytest.importorskip("torch")
    return torch, minigrad


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=tol, atol=tol)


def _mlp(lib, weights):
    m = lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3)).double()
    with lib.no_grad():
        for p, w in zip(m.parameters(), weights):
            p.copy_(lib.tensor(w))
    return m


def _weights():
    return [RNG.standard_normal(s) for s in [(5, 6), (5,), (3, 5), (3,)]]


def _per_sample(lib, weights, x, y):
    model = _mlp(lib, weights)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(x), lib.tensor(y))
    assert list(grads) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert not grads["0.weight"].requires_grad and tuple(grads["0.weight"].shape) == (7, 5, 6)
    return grads


def test_per_sample_gradients_as_torch():
    weights, x, y = _weights(), RNG.standard_normal((7, 6)), RNG.integers(0, 3, 7)
    theirs, ours = (_per_sample(lib, weights, x, y) for lib in libs())
    for k in theirs:
        close(ours[k], theirs[k])


def _ensemble(lib, all_weights, x):
    models = [_mlp(lib, w) for w in all_weights]
    params, buffers = lib.func.stack_module_state(models)
    assert params["0.weight"].is_leaf and params["0.weight"].requires_grad

    def fmodel(params, buffers, x):
        return lib.func.functional_call(models[0], (params, buffers), (x,))

    same = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, lib.tensor(x[0]))
    each = lib.func.vmap(fmodel)(params, buffers, lib.tensor(x))
    each.sum().backward()
    return same, each, params["2.weight"].grad


def test_model_ensembling_as_torch():
    all_weights, x = [_weights() for _ in range(4)], RNG.standard_normal((4, 2, 6))
    theirs, ours = (_ensemble(lib, all_weights, x) for lib in libs())
    for a, b in zip(theirs, ours):
        close(b, a)


def _predict(lib):
    def predict(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()
    return predict


def _jacobians(lib, w, b, x, t):
    f, F = _predict(lib), lib.func
    W, B, X, T = (lib.tensor(a) for a in (w, b, x, t))
    return [F.jacrev(f, argnums=2)(W, B, X[0]),
            *F.jacrev(f, argnums=(0, 1))(W, B, X[0]),
            F.jacfwd(f, argnums=2)(W, B, X[0]),
            F.hessian(f, argnums=2)(W, B, X[0]),
            F.jacrev(F.jacrev(f, argnums=2), argnums=2)(W, B, X[0]),
            F.vmap(F.jacrev(f, argnums=2), in_dims=(None, None, 0))(W, B, X),
            F.vmap(F.hessian(f, argnums=2), in_dims=(None, None, 0))(W, B, X),
            F.jvp(F.grad(lambda v: v.sin().sum()), (T,), (X[0],))[1],  # a Hessian-vector product
            F.vjp(lambda v: v.exp() * 2, T)[1](X[1])[0],
            F.grad(F.grad(lambda v: v.sin()))(T[0])]


def test_jacobians_and_hessians_as_torch():
    w, b, x, t = RNG.standard_normal((4, 4)), RNG.standard_normal(4), RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    theirs, ours = (_jacobians(lib, w, b, x, t) for lib in libs())
    for a, b in zip(theirs, ours):
        assert tuple(a.shape) == tuple(b.shape)
        close(b, a)


def _outer_backward(lib):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    g = lib.func.grad(lambda a: (a ** 3).sum())(x)  # 3 x^2, differentiable w.r.t. x
    assert g.requires_grad
    g.sum().backward()
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    p = lib.func.grad(lambda a: (a * w).sum() ** 2)(lib.ones(3))  # through a closure's tensor
    p.sum().backward()
    return x.grad, w.grad


def test_results_stay_differentiable_for_an_outer_backward():
    theirs, ours = (_outer_backward(lib) for lib in libs())
    for a, b in zip(theirs, ours):
        close(b, a)


def _error_calls(lib):
    vmap, grad = lib.func.vmap, lib.func.grad
    return [lambda: vmap(lib.sum, in_dims=None)(lib.ones(2)),
            lambda: vmap(lib.sum, in_dims=2)(lib.ones(2)),
            lambda: vmap(lambda a, b: a, in_dims=(0, 0))(lib.ones(2), 3),
            lambda: vmap(lambda a: 3)(lib.ones(2)),
            lambda: vmap(lib.sum)(lib.ones(2, 3), lib.ones(3, 2)),
            lambda: grad(lambda a: a * 2)(lib.ones(2)),
            lambda: grad(lambda a: a.sum(), has_aux=True)(lib.ones(2)),
            lambda: grad(lambda a: a.sum(), argnums=3)(lib.ones(2)),
            lambda: lib.func.functional_call(lib.nn.Linear(2, 2), ({"bias": lib.ones(2)}, {"bias": lib.ones(2)}),
                                             lib.ones(1, 2))]


@pytest.mark.parametrize("case", range(9))
def test_errors_as_torch(case):
    texts = []
    for lib in libs():
        with pytest.raises(Exception) as info:
            _error_calls(lib)[case]()
        texts.append((type(info.value), str(info.value)))
    assert texts[1] == texts[0]


def _tied(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2, bias=False)
            self.b = lib.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    before = m.a.weight
    out = lib.func.functional_call(m, {"a.weight": lib.eye(2) * 2}, (lib.ones(1, 2),))
    assert m.a.weight is before and m.b.weight is before and isinstance(m.a.weight, lib.nn.Parameter)
    return out


def test_functional_call_ties_weights_and_restores_the_module():
    theirs, ours = (_tied(lib) for lib in libs())
    close(ours, theirs)
