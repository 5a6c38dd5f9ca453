"""foreach=True: one update over a group's concatenated parameters, the same bits as the
per-parameter update, and PyTorch's result within float tolerance."""
import numpy as np
import pytest

import minigrad
from minigrad import nn

SHAPES = [(5, 3), (3,), (4, 2, 2), (1,), (7,)]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
]


def _run(make, kw, foreach, steps=4, dtype=np.float32, skip=None):
    rng = np.random.default_rng(0)
    params = [minigrad.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]
    opt = make(params, **kw, foreach=foreach)
    for i in range(steps):
        for j, p in enumerate(params):
            p.grad = None if (skip is not None and i == 1 and j == skip) else \
                minigrad.tensor(rng.standard_normal(p.shape).astype(dtype))
        opt.step()
    return params, opt


@pytest.mark.parametrize("name,kw", CASES)
def test_foreach_same_bits_as_per_parameter(name, kw):
    make = getattr(minigrad.optim, name)
    loop, opt_loop = _run(make, kw, foreach=False)
    flat, opt_flat = _run(make, kw, foreach=True)
    for a, b in zip(loop, flat):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    for p, q in zip(loop, flat):  # the state too, shaped as the parameter
        for k, v in opt_loop.state[p].items():
            w = opt_flat.state[q][k]
            if k == "step":
                assert v == w
            else:
                assert tuple(w.shape) == tuple(p.shape)
                np.testing.assert_array_equal(v.numpy(), w.numpy())


@pytest.mark.parametrize("name,kw", CASES)
def test_foreach_matches_torch(name, kw):
    torch = pytest.importorskip("torch")
    params, _ = _run(getattr(minigrad.optim, name), kw, foreach=True, dtype=np.float64)
    rng = np.random.default_rng(0)
    ref = [torch.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
    opt = getattr(torch.optim, name)(ref, **kw, foreach=True)
    for _ in range(4):
        for p in ref:
            p.grad = torch.tensor(rng.standard_normal(tuple(p.shape)))
        opt.step()
    for a, b in zip(params, ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[4], CASES[7]])
def test_foreach_with_a_missing_gradient(name, kw):
    # a parameter without a gradient at one step is left alone there, in both ways
    make = getattr(minigrad.optim, name)
    loop, _ = _run(make, kw, foreach=False, skip=2)
    flat, _ = _run(make, kw, foreach=True, skip=2)
    for a, b in zip(loop, flat):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_foreach_after_load_state_dict():
    make = minigrad.optim.AdamW
    loop, opt_loop = _run(make, dict(lr=0.01), foreach=False, steps=2)
    flat, opt_flat = _run(make, dict(lr=0.01), foreach=True, steps=2)
    opt_flat.load_state_dict(opt_loop.state_dict())  # the state replaced: foreach makes its buffers again
    assert opt_flat.param_groups[0]["foreach"] is False  # the loaded group's setting, as PyTorch
    opt_flat.param_groups[0]["foreach"] = True
    rng = np.random.default_rng(5)
    for _ in range(2):
        grads = [rng.standard_normal(p.shape).astype(np.float32) for p in loop]
        for ps, opt in ((loop, opt_loop), (flat, opt_flat)):
            for p, g in zip(ps, grads):
                p.grad = minigrad.tensor(g)
            opt.step()
    for a, b in zip(loop, flat):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_default_is_the_same_bits():
    # foreach=None (the default) runs one way or the other by size; either way the loop's bits
    for name, kw in CASES:
        make = getattr(minigrad.optim, name)
        loop, _ = _run(make, kw, foreach=False)
        default, _ = _run(make, kw, foreach=None)
        for a, b in zip(loop, default):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_foreach_in_param_groups_and_repr():
    torch = pytest.importorskip("torch")
    model = nn.Linear(3, 2)
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1, foreach=True)
    assert opt.param_groups[0]["foreach"] is True
    assert "foreach: True" in repr(opt)
    assert torch.optim.SGD(torch.nn.Linear(3, 2).parameters(), lr=0.1).param_groups[0]["foreach"] is None


def test_foreach_with_a_duplicate_parameter_steps_it_twice_as_the_loop():
    out = []
    for foreach in (False, True):
        p = minigrad.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate"):
            opt = minigrad.optim.AdamW([p, p], lr=0.1, foreach=foreach)
        p.grad = minigrad.ones(4)
        opt.step()
        out.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(out[0], out[1])


def _big(foreach, steps=3):
    from nn.optim.optimizer import BLOCK

    rng = np.random.default_rng(1)
    params = [minigrad.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
              for n in (BLOCK // 2, BLOCK // 2 + 7, 5)]
    opt = minigrad.optim.AdamW(params, lr=0.01, weight_decay=0.1, foreach=foreach)
    for _ in range(steps):
        for p in params:
            p.grad = minigrad.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt.step()
    return params, opt


def test_foreach_true_over_a_large_group_steps_each_parameter_with_no_model_sized_copies():
    # past BLOCK elements the concatenation would cost two copies of the model, kept: True steps
    # parameter by parameter there, as None does, with the loop's bits
    loop, _ = _big(False)
    each, opt = _big(True)
    for a, b in zip(loop, each):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not opt._flat_state and not any(k[0] == "concat" for k in opt._scratch_buffers)


def test_foreach_when_the_parameters_with_gradients_change_and_the_learning_rate_moves():
    # the flat buffers are kept from step to step: a step over fewer (or other) parameters, and a new
    # lr (the update's numbers are cached per value), give the loop's bits
    out = []
    for foreach in (False, True):
        rng = np.random.default_rng(2)
        params = [minigrad.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in SHAPES]
        opt = minigrad.optim.AdamW(params, lr=0.01, foreach=foreach)
        for i, present in enumerate(([0, 1, 2, 3, 4], [1, 3], [0, 1, 2, 3, 4], [4])):
            for j, p in enumerate(params):
                p.grad = minigrad.tensor(rng.standard_normal(p.shape).astype(np.float32)) if j in present else None
            opt.param_groups[0]["lr"] = 0.01 * (i + 1)
            opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
