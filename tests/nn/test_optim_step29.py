"""Adam / AdamW over many small parameters (issue 29): the backend's update looked up once per group and
step, with every implementation choice giving the per-parameter update's bits and PyTorch's values."""
import copy
import pickle

import numpy as np
import pytest

import minigrad
import nn
from minigrad import backends

SHAPES = [(16, 8), (16,), (16, 16), (16,), (5000,), (3, 16), (3,)]


def _params(dtypes=None):
    rng = np.random.default_rng(0)
    dtypes = dtypes or [np.float32] * len(SHAPES)
    ws = [rng.standard_normal(s).astype(d) for s, d in zip(SHAPES, dtypes)]
    gs = [[rng.standard_normal(s).astype(d) for s, d in zip(SHAPES, dtypes)] for _ in range(3)]
    return ws, gs


def _run(cls, ws, gs, **kw):
    ps = [nn.Parameter(minigrad.tensor(w.copy())) for w in ws]
    opt = cls(ps, lr=1e-2, **kw)
    for step_grads in gs:
        for p, g in zip(ps, step_grads):
            p.grad = minigrad.tensor(g.copy())
        opt.step()
    return [p.detach().numpy() for p in ps], opt


def _run_torch(torch, name, ws, gs, **kw):
    ps = [torch.nn.Parameter(torch.from_numpy(w.copy())) for w in ws]
    opt = getattr(torch.optim, name)(ps, lr=1e-2, **kw)
    for step_grads in gs:
        for p, g in zip(ps, step_grads):
            p.grad = torch.from_numpy(g.copy())
        opt.step()
    return [p.detach().numpy() for p in ps]


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_kernel_found_once_per_group_and_step(monkeypatch, name):
    ws, gs = _params()
    calls = []
    find = backends.find

    def counted(op, *args):
        calls.append(op)
        return find(op, *args)

    monkeypatch.setattr(backends, "find", counted)
    for foreach in (None, False):
        calls.clear()
        _run(getattr(nn.optim, name), ws, gs[:1], foreach=foreach, weight_decay=0.1)
        assert calls.count("adamw") <= 1  # one group, one step, one dtype and layout: one look-up


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("kw", [{}, {"amsgrad": True}, {"weight_decay": 0.1}, {"maximize": True}])
def test_implementations_same_bits_and_torch_values(name, kw):
    torch = pytest.importorskip("torch")
    ws, gs = _params()
    cls = getattr(nn.optim, name)
    want, _ = _run(cls, ws, gs, foreach=False, **kw)  # the per-parameter update: the reference for the bits
    for impl in ({"foreach": None}, {"foreach": True}, {"fused": True}, {"fused": False}):
        got, _ = _run(cls, ws, gs, **impl, **kw)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b), impl
    ref = _run_torch(torch, name, ws, gs, foreach=False, **kw)
    for a, b in zip(want, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_mixed_dtypes_in_one_group_each_stepped_in_its_own():
    # the kernel found for a float32 parameter does not take a float64 one: it is looked up again
    torch = pytest.importorskip("torch")
    dtypes = [np.float32, np.float64, np.float32, np.float64, np.float32, np.float64, np.float32]
    ws, gs = _params(dtypes)
    for foreach in (None, False):
        got, _ = _run(nn.optim.AdamW, ws, gs, foreach=foreach)
        ref = _run_torch(torch, "AdamW", ws, gs, foreach=False)
        for a, b in zip(got, ref):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_optimizer_pickles_and_copies_after_a_step():
    ws, gs = _params()
    got, opt = _run(nn.optim.AdamW, ws, gs[:1], foreach=False)
    again = pickle.loads(pickle.dumps(opt))
    twin = copy.deepcopy(opt)
    for o in (again, twin):
        assert [float(s["step"]) for s in o.state.values()] == [1.0] * len(SHAPES)
