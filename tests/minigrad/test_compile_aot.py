"""minigrad.compile(model) with the backward outside the call (torch.compile's usual use): the forward
is replayed as one op, CompiledFunctionBackward, whose backward replays the captured backward; every
gradient, error and hook is as eager's (minigrad/compiler/aot.py)."""
import re
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.compiler import RecompileWarning

rng = np.random.default_rng(0)


def _t(*shape, requires_grad=False):
    return minigrad.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=requires_grad)


def _mlp(p=0.1):
    minigrad.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(p), nn.Linear(16, 4))


@pytest.fixture(autouse=True)
def _no_fallback():
    with warnings.catch_warnings():  # a test here that expects eager says so with pytest.warns
        warnings.simplefilter("error", RecompileWarning)
        yield


def test_compiled_module_trains_as_eager_with_backward_and_step_outside():
    batches = [(_t(5, 8), minigrad.tensor(rng.integers(0, 4, 5))) for _ in range(5)]
    runs = []
    for compiled in (False, True):
        model = _mlp()
        fwd = minigrad.compile(model) if compiled else model
        opt = nn.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
        minigrad.manual_seed(7)  # (dropout's draws: the same stream in both runs)
        losses = []
        for x, y in batches:
            opt.zero_grad(set_to_none=True)
            out = fwd(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append(dict(losses=losses, out=out, params=[p.array.copy() for p in model.parameters()],
                         grads=[p.grad.array.copy() for p in model.parameters()], rng=minigrad.get_rng_state(),
                         fwd=fwd, model=model))
    eager, comp = runs
    assert eager["losses"] == comp["losses"]
    for k in ("params", "grads"):
        assert all(np.array_equal(a, b) for a, b in zip(eager[k], comp[k])), k
    assert eager["rng"] == comp["rng"]
    stats = comp["fwd"]._compiled.stats
    assert (stats.captures, stats.replays, stats.eager_calls) == (1, 4, 0)
    node = comp["out"].grad_fn
    assert node.name() == "CompiledFunctionBackward"
    edges = {id(n.variable) for n, _ in node.next_functions if n is not None}
    assert edges == {id(p) for p in comp["model"].parameters()}  # (x needs no gradient: no edge's node)


def test_gradient_flows_on_to_a_non_leaf_input_and_unused_results_count_as_zero():
    emb, lin = nn.Embedding(10, 6), nn.Linear(6, 6)

    def f(h):
        y = lin(h)
        return y.tanh(), (y * 2).sum(-1)

    cf = minigrad.compile(f)
    idx = minigrad.tensor(rng.integers(0, 10, (3, 4)))
    for _ in range(3):  # the capture, then replays
        got = []
        for fn in (f, cf):
            emb.zero_grad()
            lin.zero_grad()
            a, b = fn(emb(idx))
            a.sum().backward()  # b's gradient: none (zeros, as a node with several outputs materializes them)
            got.append([a.array.copy(), b.array.copy(), emb.weight.grad.array.copy(), lin.weight.grad.array.copy(),
                        lin.bias.grad.array.copy()])
        assert all(np.array_equal(u, v) for u, v in zip(*got))
    assert cf.stats.replays == 2
    assert a.grad_fn is b.grad_fn and (a.grad_fn.name(), a._output_nr, b._output_nr) == ("CompiledFunctionBackward", 0, 1)


def test_two_calls_before_one_backward_and_a_function_returning_its_loss():
    model = _mlp(p=0.0)
    cm = minigrad.compile(model)
    xs = [_t(4, 8) for _ in range(3)]
    for _ in range(3):
        for fwd in (model, cm):
            model.zero_grad(set_to_none=True)
            (fwd(xs[0]).square().mean() + fwd(xs[1]).abs().sum()).backward()  # two calls' slots at once
            if fwd is model:
                want = [p.grad.array.copy() for p in model.parameters()]
        assert all(np.array_equal(w, p.grad.array) for w, p in zip(want, model.parameters()))
    assert cm._compiled.stats.replays == 5

    loss_fn = minigrad.compile(lambda x, y: F.mse_loss(model(x), y))
    y = _t(4, 4)
    for _ in range(3):
        model.zero_grad(set_to_none=True)
        loss = loss_fn(xs[2], y)
        loss.backward()
        got = [p.grad.array.copy() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        F.mse_loss(model(xs[2]), y).backward()
        assert all(np.array_equal(g, p.grad.array) for g, p in zip(got, model.parameters()))
    assert loss_fn.stats.replays == 2


def _error(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


def test_backward_twice_and_retain_graph_as_eager():
    w = _t(3, requires_grad=True)
    f = lambda x: (x * w).sin()  # noqa: E731
    cf = minigrad.compile(f)
    x = _t(3)
    cf(x)  # the capture
    sums = []
    for fn in (f, cf):
        w.grad = None
        loss = fn(x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        sums.append(w.grad.array.copy())
        third = _error(loss.backward)
        assert third is not None and third.startswith("Trying to backward through the graph a second time")
    assert np.array_equal(*sums) and cf.stats.replays == 1


@pytest.mark.parametrize("what", ["input", "parameter", "result"])
def test_a_saved_tensor_changed_in_place_before_backward_is_eagers_error(what):
    lin = nn.Linear(3, 3)
    f = lambda x: lin(x).tanh()  # noqa: E731  (linear saves x and its weight, tanh its result)
    cf = minigrad.compile(f)
    messages = []
    for fn in (f, cf, cf):  # eager, the capture (eager), a replay
        x, w = _t(2, 3, requires_grad=True), lin.weight  # (x requires grad: linear saves its weight too)
        y = fn(x)
        with minigrad.no_grad():  # (as an optimizer's update; `.data` would hide the write from autograd)
            {"input": x, "parameter": w, "result": y}[what].mul_(2)
        messages.append(_error(y.sum().backward))
    assert cf.stats.replays == 1
    assert all(m is not None and "modified by an inplace operation" in m for m in messages)
    if what == "result":  # the saved result names its node: TanhBackward0 eagerly, the compiled op's here
        assert "output 0 of CompiledFunction," in messages[2]
    else:
        same_versions = [re.sub(r"version \d+", "version N", m) for m in messages]  # (the weight's grow run by run)
        assert same_versions[2] == same_versions[0]


def test_a_tensor_nothing_saved_may_change_before_backward():
    b = _t(3, requires_grad=True)
    f = lambda x: x * 3 + b  # noqa: E731  (neither the bias nor the result is saved)
    cf = minigrad.compile(f)
    for fn in (cf, cf):
        y = fn(_t(3))
        with minigrad.no_grad():
            b.add_(1)
        y.mul_(2)
        b.grad = None
        y.sum().backward()
        assert np.array_equal(b.grad.array, np.full(3, 2, np.float32))
    assert cf.stats.replays == 1


def test_hooks_of_the_caller_run_once_on_the_real_gradients():
    w = _t(3, requires_grad=True)
    seen = []
    handle = w.register_hook(lambda g: seen.append(g.array.copy()) or g * 10)
    h = _t(3, requires_grad=True)
    hin = h * 1  # a non-leaf input, its gradient kept
    hin.retain_grad()
    cf = minigrad.compile(lambda x: (x * w).sin())
    for _ in range(3):
        w.grad = h.grad = None
        y = cf(hin)
        y.sum().backward(retain_graph=True)
        want_w = np.cos(hin.array * w.array) * hin.array
        np.testing.assert_allclose(seen[-1], want_w, rtol=1e-6)
        np.testing.assert_allclose(w.grad.array, 10 * want_w, rtol=1e-6)  # (the hook's result accumulated)
        np.testing.assert_allclose(hin.grad.array, np.cos(hin.array * w.array) * w.array, rtol=1e-6)
        hin.grad = None
    assert len(seen) == 3 and cf.stats.replays == 2  # (not called at the capture's own backward)
    handle.remove()


def test_create_graph_through_a_replay_is_a_clear_error():
    w = _t(3, requires_grad=True)
    cf = minigrad.compile(lambda x: (x * w).sin())
    x = _t(3)
    cf(x)
    y = cf(x)
    msg = _error(lambda: minigrad.autograd.grad(y.sum(), w, create_graph=True))
    assert msg == "torch.compile with aot_autograd does not currently support double backward"  # (PyTorch's)


def test_a_result_that_views_an_input_runs_eagerly_with_a_reason():
    x = _t(2, 3, requires_grad=True)
    f = lambda x: x.view(-1)  # noqa: E731
    cf = minigrad.compile(f)
    with pytest.warns(RecompileWarning, match="view of an input"):
        cf(x)
    y = cf(x)
    y.sum().backward()
    assert y.grad_fn.name() == "ViewBackward0" and cf.stats.replays == 0
    assert np.array_equal(x.grad.array, np.ones((2, 3), np.float32))


def test_train_eval_and_no_grad_calls_keep_programs_apart():
    model = _mlp()
    cm = minigrad.compile(model)
    x = _t(4, 8)
    warnings.simplefilter("ignore", RecompileWarning)  # (each new grad mode or train/eval says it captures again)
    for i in range(2):
        model.train()
        minigrad.manual_seed(3)
        y_train = cm(x)
        y_train.sum().backward()
        with minigrad.no_grad():
            y_nograd = cm(x)
        model.eval()
        y_eval = cm(x)
        assert y_train.grad_fn.name() == ("CompiledFunctionBackward" if i else "AddmmBackward0")
        assert y_nograd.grad_fn is None
        assert y_eval.grad_fn is not None
        model.train()
        minigrad.manual_seed(3)
        assert np.array_equal(model(x).array, y_train.array)
    assert cm._compiled.stats.captures == 3 and cm._compiled.stats.replays == 3


_BACKWARDS = {  # out -> its backward, as a caller may start it
    "sum": lambda out, g: out.sum().backward(),
    "mean": lambda out, g: out.mean().backward(),
    "column": lambda out, g: out[:, 1].sum().backward(),
    "transposed max": lambda out, g: out.t().sum(0).max().backward(),
    "strided gradient": lambda out, g: out.backward(g),
}


@pytest.mark.parametrize("loss", list(_BACKWARDS))
def test_whatever_gradient_the_caller_sends_in_the_parameters_get_eagers(loss):
    """A sum's gradient arrives as a stride-0 view, a transpose's as a strided one: the replayed backward
    takes them as the ops' eager backwards do."""
    def model():
        minigrad.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))

    m, m2 = model(), model()
    cm = minigrad.compile(m2)
    for _ in range(3):
        x = _t(5, 8)
        g = _t(4, 5).t()
        for fwd, mod in ((m, m), (cm, m2)):
            mod.zero_grad()
            _BACKWARDS[loss](fwd(x), g)
        assert all(np.array_equal(a.grad.array, b.grad.array) for a, b in zip(m.parameters(), m2.parameters()))
    assert cm._compiled.stats.replays == 2


class _ThreeResults(nn.Module):
    """A model's logits, their loss, and an auxiliary head's output."""

    def __init__(self):
        super().__init__()
        self.body, self.main, self.aux = nn.Linear(4, 8), nn.Linear(8, 3), nn.Linear(8, 2)

    def forward(self, x, y):
        h = self.body(x).tanh()
        logits = self.main(h)
        return logits, F.cross_entropy(logits, y), self.aux(h)


_FROM = {"loss": lambda logits, loss, aux: loss, "logits": lambda logits, loss, aux: logits.square().sum(),
         "aux": lambda logits, loss, aux: aux.sum(), "loss and aux": lambda logits, loss, aux: loss + aux.mean()}


@pytest.mark.parametrize("start", list(_FROM))
def test_results_the_backward_does_not_reach_are_as_eagers(start):
    """nanoGPT returns (logits, loss) and backward starts from the loss: the logits send no gradient. A
    parameter only they reach gets none (not zeros: AdamW then leaves it alone, as eagerly), and the sum
    their gradient would have entered is its other term (no (B, T, V) zeros added)."""
    runs = []
    batches = [(_t(5, 4), minigrad.tensor(rng.integers(0, 3, 5))) for _ in range(3)]
    for compiled in (False, True):
        minigrad.manual_seed(0)
        m = _ThreeResults()
        fwd = minigrad.compile(m) if compiled else m
        opt = nn.optim.AdamW(m.parameters(), lr=0.1)
        for x, y in batches:
            opt.zero_grad()
            _FROM[start](*fwd(x, y)).backward()
            grads = [None if p.grad is None else p.grad.array.copy() for p in m.parameters()]
            opt.step()
        runs.append((grads, [p.array.copy() for p in m.parameters()], fwd))
    (eager_grads, eager_params, _), (grads, params, cm) = runs
    assert [g is None for g in grads] == [g is None for g in eager_grads] and any(g is None for g in grads) == (
        start != "loss and aux")
    assert all(g is None or np.array_equal(g, e) for g, e in zip(grads, eager_grads))
    assert all(np.array_equal(p, e) for p, e in zip(params, eager_params))
    program = next(iter(cm._compiled.cache.values()))
    assert cm._compiled.stats.replays == 2 and bool(program._backwards_without) == (start != "logits")
