"""Fixes found by the torch.compile script probes of tests/minigrad/test_compile_scripts28.py."""
import copy
import warnings
import pickle

import numpy as np
import pytest

import minigrad
import nn

torch = pytest.importorskip("torch")


def test_a_module_compiled_with_the_eager_backend_is_an_optimized_module_that_runs_eagerly():
    t_model = torch.compile(torch.nn.Linear(3, 2), backend="eager")
    model = nn.Linear(3, 2)
    compiled = minigrad.compile(model, backend="eager")
    assert type(compiled).__name__ == type(t_model).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == list(t_model.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = minigrad.randn(4, 3)
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert compiled._compiled.stats.captures == 0 and compiled._compiled.stats.eager_calls == 3
    minigrad.compiler.reset()  # (forgets programs: the backend stays eager)
    compiled(x)
    # a copy and a pickle keep the backend
    for other in (copy.deepcopy(compiled), pickle.loads(pickle.dumps(compiled))):
        other(x)
        assert other._compiled.stats.captures == 0 and other._compiled.stats.eager_calls == 1
    assert compiled._compiled.stats.captures == 0
    # disable=True is the module itself, as PyTorch's
    assert minigrad.compile(model, disable=True) is model


def _custom_optimizer_run(T, compiled):
    """A user's optimizer class with its own `step` (momentum kept in its state, the lr read from its group),
    a scheduler changing the lr between calls, and the momentum set by hand."""

    class MySGD(T.optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @T.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "buf" not in state:  # (a branch on the state: the first step only)
                        state["buf"] = p.grad.clone()
                    else:
                        state["buf"].mul_(group["momentum"]).add_(p.grad)
                    p.add_(state["buf"], alpha=-group["lr"])

    T.manual_seed(0)
    model = T.nn.Linear(4, 3)
    torch.manual_seed(0)
    model.load_state_dict({k: T.tensor(v.detach().numpy()) for k, v in torch.nn.Linear(4, 3).state_dict().items()})
    opt = MySGD(model.parameters())
    sched = T.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)

    def step(x, y):
        loss = T.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    step = minigrad.compile(step) if compiled else step
    r = np.random.RandomState(0)
    x, y = T.tensor(r.randn(8, 4).astype(np.float32)), T.tensor(r.randint(0, 3, 8))
    values = []
    for i in range(6):
        values.append(step(x, y).detach().numpy())
        sched.step()
        if i == 3:
            opt.param_groups[0]["momentum"] = 0.0
    return values + [p.detach().numpy() for p in model.parameters()], step


def test_a_users_optimizer_step_is_re_run_at_each_replay_with_the_live_lr_and_state():
    want, _ = _custom_optimizer_run(minigrad, False)
    got, step = _custom_optimizer_run(minigrad, True)
    assert step.stats.replays == 5
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    torch.set_num_threads(1)
    reference, _ = _custom_optimizer_run(torch, False)
    for r, g in zip(reference, got):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def _own_step_scheduler_run(T, compiled):
    """A user's scheduler class with its own `step` that sets each group's lr, stepped inside the compiled
    training step."""

    class InverseTime(T.optim.lr_scheduler.LRScheduler):
        def step(self):
            self.last_epoch += 1
            for group in self.optimizer.param_groups:
                group["lr"] = 0.1 / (1 + self.last_epoch)

    T.manual_seed(0)
    model = T.nn.Linear(4, 3)
    torch.manual_seed(0)
    model.load_state_dict({k: T.tensor(v.detach().numpy()) for k, v in torch.nn.Linear(4, 3).state_dict().items()})
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    sched = InverseTime(opt)

    def step(x, y):
        loss = T.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        sched.step()
        return loss

    step = minigrad.compile(step) if compiled else step
    r = np.random.RandomState(0)
    x, y = T.tensor(r.randn(8, 4).astype(np.float32)), T.tensor(r.randint(0, 3, 8))
    values = []
    for _ in range(5):
        values += [step(x, y).detach().numpy(), np.float64(opt.param_groups[0]["lr"]), np.int64(sched.last_epoch)]
    return values + [p.detach().numpy() for p in model.parameters()], step


def test_a_users_scheduler_step_is_re_run_at_each_replay():
    want, _ = _own_step_scheduler_run(minigrad, False)
    got, step = _own_step_scheduler_run(minigrad, True)
    assert step.stats.replays == 4
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    torch.set_num_threads(1)
    reference, _ = _own_step_scheduler_run(torch, False)
    for r, g in zip(reference, got):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


class _ScratchSGD:
    """An optimizer written from scratch, as in a tutorial: a plain class whose `step` reads `self.lr`."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def step(self):
        for p in self.params:
            p.data -= self.lr * p.grad

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def _scratch_optimizer_run(T, compiled):
    T.manual_seed(0)
    model = T.nn.Linear(4, 3)
    torch.manual_seed(0)
    model.load_state_dict({k: T.tensor(v.detach().numpy()) for k, v in torch.nn.Linear(4, 3).state_dict().items()})
    opt = _ScratchSGD(model.parameters(), lr=0.1)

    def step(x, y):
        loss = T.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    step = minigrad.compile(step) if compiled else step
    r = np.random.RandomState(0)
    x, y = T.tensor(r.randn(8, 4).astype(np.float32)), T.tensor(r.randint(0, 3, 8))
    values = []
    for i in range(6):
        values.append(step(x, y).detach().numpy())
        if i == 2:
            opt.lr = 0.01  # a decay by hand, on the optimizer object
    return values + [p.detach().numpy() for p in model.parameters()], step


def test_a_plain_optimizers_lr_read_by_its_step_method_is_guarded():
    want, _ = _scratch_optimizer_run(minigrad, False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, step = _scratch_optimizer_run(minigrad, True)
    assert [str(w.message) for w in caught] == [
        "minigrad.compile: _scratch_optimizer_run.<locals>.step: capturing again: closure variable 'opt'.lr "
        "changed: 0.1 -> 0.01"]
    assert step.stats.captures == 2 and step.stats.replays == 4
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    torch.set_num_threads(1)
    reference, _ = _scratch_optimizer_run(torch, False)
    for r, g in zip(reference, got):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
