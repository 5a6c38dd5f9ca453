"""A compiled training step's linear layers and dropout in their replay forms (issue 30): Linear's
numpy step (`_numpy_step`: numpy's matmul calls made directly, where no backend takes the products) and
the CPU dropout backend's prepared step (its kernels' compiled functions looked up once). Each replay
gives eager's bits after N steps: losses, parameters, gradients, an input's gradient, the RNG state;
and each form is checked to be the one that ran, so that a test here cannot pass on the old path."""
import re

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends


def _run(make, shape, compiled, n=5, dtype=np.float32, x_grad=False):
    """n steps of a model made by `make()` on inputs of `shape`: (model, losses, input grads, a draw after, fn)."""
    minigrad.manual_seed(0)
    model = make()
    if dtype == np.float64:
        model = model.double()
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    fn = minigrad.compile(step) if compiled else step
    rng = np.random.default_rng(3)
    losses, grads = [], []
    for _ in range(n):
        x = minigrad.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=x_grad)
        y = minigrad.tensor(rng.integers(0, 5, shape[:-1]))
        losses.append(fn(x, y).array.copy())
        grads.append(None if x.grad is None else x.grad.array.copy())
    return model, losses, grads, minigrad.rand(8).array.copy(), fn  # (the generator where it stands)


def _same(a, b):
    (m1, l1, g1, r1, _), (m2, l2, g2, r2, _) = a, b
    assert all(np.array_equal(u, v) for u, v in zip(l1, l2))
    assert all((u is None and v is None) or np.array_equal(u, v) for u, v in zip(g1, g2))
    assert np.array_equal(r1, r2)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert np.array_equal(p.array, q.array)


def _forms(fn):
    """The qualified names of the array steps the compiled program calls."""
    (program,) = fn.cache.values()
    names = program._run_steps.__globals__
    return {getattr(v, "__qualname__", "") for k, v in names.items() if "_array_step" in k or "_array_backward" in k}


def _mlp(bias=True, p=0.1):
    return lambda: nn.Sequential(nn.Linear(8, 32, bias=bias), nn.GELU(), nn.Dropout(p), nn.Linear(32, 32, bias=bias),
                                 nn.Tanh(), nn.Dropout(p), nn.Linear(32, 5, bias=bias))


@pytest.mark.parametrize("shape", [(16, 8), (4, 6, 8), (2, 160, 8)])  # 2-D; rows in 3-D, under and over 256
@pytest.mark.parametrize("bias", [True, False])
def test_linear_and_dropout_forms_bit_for_bit(shape, bias):
    eager = _run(_mlp(bias), shape, False)
    compiled = _run(_mlp(bias), shape, True)
    _same(eager, compiled)
    forms = _forms(compiled[-1])
    assert "_numpy_step.<locals>.forward" in forms and "_numpy_step.<locals>.backward" in forms
    if backends.find("dropout", np.ones(shape[:-1] + (32,), np.float32), 0.1) is not None:
        assert "prepared_step.<locals>.step_forward" in forms and "prepared_step.<locals>.step_backward" in forms


def test_input_gradient_and_float64():
    """An input that requires grad gets Linear's gx (adopted as a leaf's .grad), in float64 too."""
    for dtype in (np.float32, np.float64):
        eager = _run(_mlp(), (12, 8), False, dtype=dtype, x_grad=True)
        compiled = _run(_mlp(), (12, 8), True, dtype=dtype, x_grad=True)
        assert compiled[2][-1] is not None
        _same(eager, compiled)


def test_outer_products_keep_the_general_step():
    """An inner size of 1 (Linear(1, n), a batch of one row, one output feature) is matmul_arrays' outer
    product: the general step, the same bits."""
    make = lambda: nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 5))  # noqa: E731
    eager, compiled = _run(make, (10, 1), False), _run(make, (10, 1), True)
    _same(eager, compiled)
    assert "_numpy_step.<locals>.forward" in _forms(compiled[-1])  # (the second layer's)
    eager, compiled = _run(_mlp(), (1, 8), False), _run(_mlp(), (1, 8), True)  # one row: the general step
    _same(eager, compiled)
    assert "_numpy_step.<locals>.forward" not in _forms(compiled[-1])


def test_dropout_prepared_step_falls_back_on_other_arrays():
    """The prepared step's arrays differ from the capture's (read-only, another layout): the backend's
    usual forward and backward, the same bits as they give."""
    cpu_dropout = pytest.importorskip("minigrad.backends.cpu.dropout")
    x = np.random.default_rng(0).standard_normal((8, 40)).astype(np.float32)
    if backends.find("dropout", x, 0.25) is None:
        pytest.skip("no CPU dropout kernel here")
    forward, backward = cpu_dropout.prepared_step(x, 0.25)
    for arg in (x, x.T.copy().T, np.asarray(x).copy()):
        arg.setflags(write=arg is not x)  # (the first one read-only)
        minigrad.manual_seed(1)
        y1, keep1 = forward(arg)
        minigrad.manual_seed(1)
        y2, keep2 = cpu_dropout.forward(arg, 0.25)
        assert np.array_equal(y1, y2) and np.array_equal(keep1, keep2)
        (g1,) = backward(keep1, arg)
        assert np.array_equal(g1, cpu_dropout.backward(arg, keep2, 1 / 0.75))


def test_gradient_sums_written_out():
    """The engine's gradient sums (a value read twice: a residual, a recurrent cell's state) are Add's
    array function, `x + y`, which the replay's code writes out (no call): eager's bits."""
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.f, self.out = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 5)

        def forward(self, x):
            h = self.inp(x)
            for _ in range(3):
                h = h + F.tanh(self.f(h))
            return self.out(h)

    eager, compiled = _run(Residual, (6, 8), False, x_grad=True), _run(Residual, (6, 8), True, x_grad=True)
    _same(eager, compiled)
    (program,) = compiled[-1].cache.values()
    assert re.search(r"(out|env\[\d+\]) = a0 \+ a1\n", program.code) and not re.search(r"Add_array\d+\(", program.code)
