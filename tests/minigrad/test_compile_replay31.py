"""A compiled training step's zero_grad and Adam step in their replay forms (issue 30): `zero_grad(set_to_none)`
lets go of each leaf's gradient directly (nn/utils `_CompiledZeroGrad`), and Adam's short form holds its
per-parameter state by identity (no parameter hashed) and calls its kernel's compiled function for each
gradient (`prepared_forward`'s `entry`). Each gives eager's bits after N steps (losses, parameters, gradients,
optimizer state, the RNG state), each form is checked to be the one that ran, and what lies outside a form's
assumptions (zeroing in place, a `grad` property of a subclass's own, a state entry or a group's parameter
replaced) runs the full call, as eagerly."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
import nn.utils
from minigrad import Tensor


def _batches(n):
    rng = np.random.default_rng(2)
    return [(minigrad.tensor(rng.standard_normal((8, 6)).astype(np.float32)), minigrad.tensor(rng.integers(0, 3, 8)))
            for _ in range(n)]


def _run(compiled, zero="model", set_to_none=True, n=6, between=None, opt_cls=nn.optim.AdamW):
    """n steps of a small MLP with dropout; `zero`: whose zero_grad the step calls ("model", "opt"), before
    the forward. -> (model, opt, losses, a draw after, fn)."""
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.2), nn.Linear(16, 3))
    opt = opt_cls(model.parameters(), lr=1e-2)
    zero_grad = model.zero_grad if zero == "model" else opt.zero_grad

    def step(x, y):
        zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = minigrad.compile(step) if compiled else step
    losses = []
    for i, (x, y) in enumerate(_batches(n)):
        if between is not None:
            between(i, model, opt)
        losses.append(fn(x, y).array.copy())
    return model, opt, losses, minigrad.rand(4).array.copy(), fn


def _same(a, b):
    (m1, o1, l1, r1, _), (m2, o2, l2, r2, _) = a, b
    assert all(np.array_equal(u, v) for u, v in zip(l1, l2))
    assert np.array_equal(r1, r2)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert np.array_equal(p.array, q.array)
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert np.array_equal(p.grad.array, q.grad.array)
        s1, s2 = o1.state[p], o2.state[q]
        assert sorted(s1) == sorted(s2)
        for k in s1:
            assert np.array_equal(s1[k].array, s2[k].array), k


@pytest.fixture
def full_zero_grads(monkeypatch):
    """The parameters the full `_zero_grad` was handed by a replay (the form's fallback calls it by this name)."""
    calls = []
    full = nn.utils._zero_grad

    def counted(parameters, set_to_none=True):
        parameters = list(parameters)
        calls.append(len(parameters))
        return full(parameters, set_to_none)

    monkeypatch.setattr(nn.utils, "_zero_grad", counted)
    return calls


@pytest.mark.parametrize("zero", ["model", "opt"])
def test_zero_grad_form_bit_for_bit(zero, full_zero_grads):
    eager = _run(False, zero)
    full_zero_grads.clear()
    compiled = _run(True, zero)
    assert compiled[-1].stats.replays == 5
    (program,) = compiled[-1].cache.values()
    assert any(isinstance(v, nn.utils._CompiledZeroGrad) for v in program._run_steps.__globals__.values())
    assert full_zero_grads == []  # every replay's zero_grad was the form's own lines
    _same(eager, compiled)


def test_zero_grad_in_place_runs_the_full_call(full_zero_grads):
    eager = _run(False, "opt", set_to_none=False)
    full_zero_grads.clear()
    compiled = _run(True, "opt", set_to_none=False)
    assert compiled[-1].stats.replays == 5 and full_zero_grads == [4] * 6  # (the capture runs the form too)
    _same(eager, compiled)
    assert all(p.grad is not None for p in compiled[0].parameters())


def test_zero_grad_of_a_grad_property_of_its_own_runs_the_full_call(full_zero_grads):
    """A `grad` property other than Tensor's (here one that counts its reads), set between calls, is called
    as eagerly."""
    reads, monkeypatch = [], pytest.MonkeyPatch()
    prop = Tensor.grad

    def between(i, model, opt):
        if i == 3:
            monkeypatch.setattr(Tensor, "grad", property(lambda t: (reads.append(1), prop.fget(t))[1], prop.fset))

    eager = _run(False, between=between)
    monkeypatch.undo()
    reads.clear()
    full_zero_grads.clear()
    compiled = _run(True, between=between)
    assert compiled[-1].stats.replays == 5 and full_zero_grads == [1] * 4 * 3 and len(reads) >= 4 * 3
    monkeypatch.undo()
    _same(eager, compiled)


def test_zero_grad_form_reads_the_optimizers_groups_at_each_call(full_zero_grads):
    """A parameter group added between calls: its gradient is let go of too, as eagerly."""
    extra = {}

    def between(i, model, opt):
        if i == 3:
            extra["p"] = nn.Parameter(minigrad.ones(3))
            opt.add_param_group({"params": [extra["p"]]})
        if i >= 3:
            extra["p"].grad = minigrad.ones(3)

    eager = _run(False, "opt", between=between)
    assert extra["p"].grad is None
    compiled = _run(True, "opt", between=between)
    assert extra["p"].grad is None
    _same(eager, compiled)


def test_adam_form_hashes_no_parameter(monkeypatch, group_steps):
    eager = _run(False, opt_cls=nn.optim.Adam)
    hashes = []
    original = Tensor.__hash__
    monkeypatch.setattr(Tensor, "__hash__", lambda self: (hashes.append(1), original(self))[1])
    group_steps.clear()
    compiled = _run(True, opt_cls=nn.optim.Adam, n=2)
    hashes.clear()
    x, y = _batches(1)[0]
    for _ in range(3):
        compiled[-1](x, y)
    assert compiled[-1].stats.replays == 4 and len(group_steps) == 1  # the capture's full step only
    assert hashes == []
    monkeypatch.undo()
    _same(eager, _run(True, opt_cls=nn.optim.Adam))


def test_adam_state_entry_replaced_runs_the_full_step(group_steps):
    """`opt.state[p]` replaced by a new dict (of equal values, other arrays): that step whole, then the form."""
    def between(i, model, opt):
        if i == 3:
            p = model[0].weight
            opt.state[p] = {k: v.clone() for k, v in opt.state[p].items()}

    eager = _run(False, between=between)
    group_steps.clear()
    compiled = _run(True, between=between)
    assert len(group_steps) == 2  # the capture's, and the step after the replacement
    _same(eager, compiled)


@pytest.mark.filterwarnings("ignore:.*capturing again")
def test_adam_group_parameter_replaced_runs_the_full_step():
    """A parameter of a group replaced in place by another (a copy outside the model): eager steps the copy
    and no longer the model's weight; so does the replay."""
    def between(i, model, opt):
        if i == 3:
            opt.param_groups[0]["params"][0] = nn.Parameter(model[0].weight.detach().clone())

    eager, compiled = _run(False, between=between), _run(True, between=between)
    _same(eager, compiled)


def test_adamw_prepared_forward_takes_gradients_of_any_layout(monkeypatch):
    """The kernel's compiled function for contiguous gradients of the parameters' dtype; a transposed, a
    read-only and a float64 gradient are each read as numba's dispatcher reads them: the same bits."""
    cpu_adamw = pytest.importorskip("minigrad.backends.cpu.adamw")
    rng = np.random.default_rng(0)
    shapes = [(5, 7), (7,), (3, 4)]
    dispatched = []
    dispatcher = cpu_adamw._adam._plain()

    class Counted:
        def __call__(self, *args):
            dispatched.append(args[1].dtype)
            return dispatcher(*args)

        def __getattr__(self, name):
            return getattr(dispatcher, name)

    monkeypatch.setattr(cpu_adamw._adam, "_plain", lambda: Counted())
    arrays = [[rng.standard_normal(s).astype(np.float32) for _ in range(3)] for s in shapes]
    for a in arrays:
        a[2] = np.abs(a[2])
    twin = [[x.copy() for x in a] for a in arrays]
    run = cpu_adamw.prepared_forward(*zip(*arrays))
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    odd = [np.asfortranarray(grads[0]), grads[1].copy(), grads[2].astype(np.float64)]
    odd[1].setflags(write=False)
    for gs in (grads, odd):
        dispatched.clear()
        run(gs, 1e-2, 0.9, 0.99, 0.1, True, -1e-2, 1e-8)
        for (w, m, v), g in zip(twin, gs):
            scalars = cpu_adamw._scalars(np.float32, 1e-2, 0.9, 0.99, 0.1, True, -1e-2, 1e-8)
            dispatcher(w.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), w.reshape(-1)[:0], *scalars)
        for a, b in zip(arrays, twin):
            assert all(np.array_equal(x, y) for x, y in zip(a, b))
        assert dispatched == ([] if gs is grads else [np.float64])
