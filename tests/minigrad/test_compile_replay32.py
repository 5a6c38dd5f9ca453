"""A replayed training step's code around its array work (issue 30): the engine's gradient sums of
array steps' values read as the arrays they are, with no type or shape check, and a gradient that is a
view adopted as `.grad` where it is the whole of an array nothing else holds (a bias's gradient reduced
and reshaped), where the engine copies it. Each replay gives eager's bits, and no two `.grad`s share memory."""
import re

import numpy as np

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import grad_mode


def _run(make, shape, compiled, n=4, after_two=None):
    """n AdamW steps of `make()` on inputs of `shape`: (model, losses, fn); `after_two(fn)` after the
    second call (the capture and a replay)."""
    minigrad.manual_seed(0)
    model = make()
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    fn = minigrad.compile(step) if compiled else step
    rng = np.random.default_rng(5)
    losses = []
    for k in range(n):
        x = minigrad.tensor(rng.standard_normal(shape).astype(np.float32))
        y = minigrad.tensor(rng.integers(0, 5, shape[:-1]))
        losses.append(fn(x, y).array.copy())
        if k == 1 and after_two is not None:
            after_two(fn)
    return model, losses, fn


def _same(eager, compiled):
    (m1, l1, _), (m2, l2, fn) = eager, compiled
    assert fn.stats.replays == len(l2) - 1
    assert all(np.array_equal(u, v) for u, v in zip(l1, l2))
    grads = []
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(q.array, p.array)
        np.testing.assert_array_equal(q.grad.array, p.grad.array)
        assert not any(np.shares_memory(q.grad.array, g) for g in grads)  # each leaf's own memory
        grads.append(q.grad.array)


class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.f, self.ln, self.out = nn.Linear(8, 16), nn.Linear(16, 16), nn.LayerNorm(16), nn.Linear(16, 5)

    def forward(self, x):
        h = self.inp(x)
        for _ in range(3):
            h = h + F.tanh(self.f(self.ln(h)))
        return self.out(h)


def _spy(monkeypatch, calls):
    """after_two for _run: each call of the engine's accumulation in the replay's code, into `calls`."""
    monkeypatch.setattr(grad_mode, "inference_tensors_made", False)  # (as in a training script: a process
    # that made an inference tensor leaves every gradient to the engine, and an earlier test may have)

    def spy(fn):
        ns = next(iter(fn.cache.values()))._run_steps.__globals__
        accumulate = ns["accumulate_into_leaf"]
        monkeypatch.setitem(ns, "accumulate_into_leaf", lambda v, g: (calls.append(v), accumulate(v, g))[1])
    return spy


def test_gradient_sums_of_array_steps_are_read_unchecked(monkeypatch):
    # every value a sum reads is an array step's, of the capture's shape at every call (the guards fix the
    # inputs' shapes): the sum is the expression alone, and its result is read as an array in turn, so a
    # summed gradient (self.f's and self.ln's, used three times) is adopted as `.grad` by the replay's lines
    calls = []
    eager, compiled = _run(_Residual, (6, 8), False), _run(_Residual, (6, 8), True, after_two=_spy(monkeypatch, calls))
    _same(eager, compiled)
    assert calls == []
    (program,) = compiled[-1].cache.values()
    adds = re.findall(r"# \d+: forward Add .*?\n(.*?)(?=    # \d+:)", program.code, re.S)
    sums = [code for code in adds if "Add_array_step" not in code]  # (not the residual's own, with a backward)
    assert len(sums) >= 8  # (the residual stream's gradient, and each of self.f's and self.ln's, 2 sums each)
    for code in sums:
        assert re.search(r"env\[\d+\] = a0 \+ a1\n", code)
        assert "isinstance(" not in code and "shape" not in code, code


def test_a_gradient_that_is_a_private_view_is_adopted(monkeypatch):
    # (2, 160, 8) inputs: the biases' and the layer norm's gradients are reduced over 320 rows into a row
    # and reshaped, a view of an array only that gradient holds: the replay adopts it (the engine would copy)
    calls = []
    eager = _run(_Residual, (2, 160, 8), False)
    compiled = _run(_Residual, (2, 160, 8), True, after_two=_spy(monkeypatch, calls))
    _same(eager, compiled)
    assert calls == []  # every gradient adopted by the replay's own lines
    assert any(p.grad.array.base is not None for p in compiled[0].parameters())  # (some of them views)


def test_views_of_one_array_are_not_both_adopted():
    # a.view(-1) + b.view(-1): both leaves' gradients are views of the one array the sum's backward hands
    # on; the first is copied (the array has another holder), the second then holds it alone and is
    # adopted. cat's backward hands each leaf part of one array: copied. Never two .grads on one memory.
    def run(compiled):
        minigrad.manual_seed(0)
        a, b = nn.Parameter(minigrad.randn(4, 3)), nn.Parameter(minigrad.randn(4, 3))
        c, d = nn.Parameter(minigrad.randn(2, 3)), nn.Parameter(minigrad.randn(5, 3))
        opt = nn.optim.SGD([a, b, c, d], lr=0.1)

        def step(x):
            opt.zero_grad()
            ((a.view(-1) + b.view(-1)).tanh() * x).sum().backward()
            (minigrad.cat([c, d]).sin() * 2).sum().backward()
            opt.step()

        f = minigrad.compile(step) if compiled else step
        for k in range(4):
            f(minigrad.tensor(np.full(12, 0.5 + k, np.float32)))
        return [a, b, c, d], getattr(f, "stats", None)

    eager, _ = run(False)
    comp, stats = run(True)
    assert stats.replays == 3
    for e, p in zip(eager, comp):
        np.testing.assert_array_equal(p.array, e.array)
        np.testing.assert_array_equal(p.grad.array, e.grad.array)
    grads = [p.grad.array for p in comp]
    assert not any(np.shares_memory(g, h) for i, g in enumerate(grads) for h in grads[:i])
