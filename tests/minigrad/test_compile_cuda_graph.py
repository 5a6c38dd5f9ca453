"""minigrad.compile's CUDA graph replay (minigrad/compiler/cuda_graph.py): which programs a graph may
replay, decided at capture. This machine has no GPU: the graph's capture and launch themselves run in
bench/compile_gpu_check.py (bench/gpu_check.sh); here, that every program a graph would replay wrongly
is refused with its reason, and that CPU programs replay step by step."""
import numpy as np

import minigrad
import nn
import nn.functional as F

rng = np.random.default_rng(0)


def _t(*shape):
    return minigrad.tensor(rng.standard_normal(shape).astype(np.float32))


def _reason(f, *args):
    f(*args)
    (program,) = f._compiled.cache.values() if hasattr(f, "_compiled") else f.cache.values()
    assert program.graph is None  # nothing here replays through a graph
    return program.graph_reason


def test_a_pure_cpu_program_is_refused_only_for_its_device():
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).eval()
    c = minigrad.compile(model)
    with minigrad.no_grad():
        assert _reason(c, _t(3, 4)) == "its arrays are not all on a GPU"
        x = _t(3, 4)
        assert np.array_equal(c(x).array, model(x).array)  # the step-by-step replay


def test_random_draws_optimizer_calls_and_returned_inputs_are_refused():
    minigrad.manual_seed(0)
    drop = nn.Dropout(0.5)
    with minigrad.no_grad():
        assert "random" in _reason(minigrad.compile(lambda x: drop(x) * 2.0), _t(8))

    model = nn.Linear(4, 2)
    opt = nn.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    assert "reads live state" in _reason(minigrad.compile(step), _t(3, 4))

    def grads_only(x):
        F.mse_loss(model(x), x[:, :2]).backward()
    assert "accumulates gradients" in _reason(minigrad.compile(grads_only), _t(3, 4))

    with minigrad.no_grad():
        assert "returns one of its inputs" in _reason(minigrad.compile(lambda x: (x, x * 2.0)), _t(3))
