"""What a replayed training step does around its array work: gradients adopted as `.grad` in the
replay's own code, the same bits and the same aliasing as eager (docs/compile.md, "How a replay runs"),
and the thread count each kernel call asks for."""
import numpy as np

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import grad_mode


def _mlp_step(seed):
    minigrad.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 3))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, step


def _batches(n):
    rng = np.random.default_rng(1)
    return [(minigrad.tensor(rng.standard_normal((8, 6)).astype(np.float32)),
             minigrad.tensor(rng.integers(0, 3, 8))) for _ in range(n)]


def test_a_replay_adopts_array_step_gradients_without_the_engines_accumulation(monkeypatch):
    # (in a process that has made no inference tensor, as a training script's: once one exists the replay
    # leaves every gradient to the engine, which tells them apart; an earlier test in this worker may have)
    monkeypatch.setattr(grad_mode, "inference_tensors_made", False)
    batches = _batches(4)
    eager_model, eager_step = _mlp_step(0)
    for x, y in batches:
        eager_step(x, y)
    model, step = _mlp_step(0)
    compiled = minigrad.compile(step)
    compiled(*batches[0])
    compiled(*batches[1])
    ns = next(iter(compiled.cache.values()))._run_steps.__globals__
    calls = []
    accumulate = ns["accumulate_into_leaf"]
    monkeypatch.setitem(ns, "accumulate_into_leaf", lambda v, g: (calls.append(v), accumulate(v, g))[1])
    for x, y in batches[2:]:
        compiled(x, y)
    assert compiled.stats.replays == 3
    assert calls == []  # every gradient adopted by the replay's own test
    grads = [p.grad.array for p in model.parameters()]
    for i, (p, e) in enumerate(zip(model.parameters(), eager_model.parameters())):
        np.testing.assert_array_equal(p.array, e.array)
        np.testing.assert_array_equal(p.grad.array, e.grad.array)
        assert not any(np.shares_memory(grads[i], g) for g in grads[:i])  # each leaf's own array


def test_a_replay_with_grads_kept_or_shared_equals_eager():
    # .grad not None at the accumulation (no zero_grad: gradients add up), and one gradient array that two
    # leaves receive (a + b): the replay's adoption declines and the engine's accumulation runs, as eagerly
    def run(compiled):
        minigrad.manual_seed(0)
        a = nn.Parameter(minigrad.randn(4, 3))
        b = nn.Parameter(minigrad.randn(4, 3))
        w = nn.Parameter(minigrad.randn(3, 2))

        def step(x):
            ((a + b) @ w).tanh().sum().backward()

        f = minigrad.compile(step) if compiled else step
        for k in range(4):
            f(minigrad.tensor(np.full((4, 3), 0.5 + k, np.float32)))
            if k == 1:
                a.grad = None  # the next accumulation into a assigns again
        return a, b, w, getattr(f, "stats", None)

    ea, eb, ew, _ = run(False)
    ca, cb, cw, stats = run(True)
    assert stats.replays >= 2
    for e, c in ((ea, ca), (eb, cb), (ew, cw)):
        np.testing.assert_array_equal(c.grad.array, e.grad.array)
    assert not np.shares_memory(ca.grad.array, cb.grad.array)


def test_the_teams_thread_count_reads_the_environment_without_decoding_it(monkeypatch):
    # every kernel call asks threads(): it reads MINIGRAD_NUM_THREADS and OMP_NUM_THREADS from the mapping
    # behind os.environ (no str decoding per call), and still sees each change made through os.environ
    import os

    from minigrad.backends.cpu import team

    if os.name != "posix" or not team.has_team():
        import pytest

        pytest.skip("the thread team runs on POSIX with numba's OpenMP or TBB layer")
    decoded = []
    getitem = type(os.environ).__getitem__
    monkeypatch.setattr(type(os.environ), "__getitem__", lambda self, k: (decoded.append(k), getitem(self, k))[1])
    monkeypatch.setattr(team, "_requested", None)
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "1")
    assert team.threads() == 1
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    n = team.threads()
    assert n == min(2, team._numba.config.NUMBA_NUM_THREADS)
    decoded.clear()
    assert team.threads() == n
    assert decoded == []
    monkeypatch.delenv("MINIGRAD_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert team.threads() == 1
