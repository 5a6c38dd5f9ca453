"""Optimizer state dicts against PyTorch's: keys and their order, group entries, the type, dtype and value of
every state entry (the 0-d tensor `step`), and state dicts carried across in both directions."""
import copy

import numpy as np
import pytest

import minigrad
import nn

torch = pytest.importorskip("torch")

CONFIGS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, foreach=False)),
    ("Adam", dict()), ("Adam", dict(amsgrad=True, foreach=False, maximize=True)), ("AdamW", dict(weight_decay=0.1)),
    ("Adamax", dict()), ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("RAdam", dict()),
    ("ASGD", dict(t0=2)), ("Adagrad", dict(lr_decay=0.1)), ("Adadelta", dict()),
    ("RMSprop", dict(centered=True, momentum=0.9)), ("Rprop", dict()),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]


def _run(lib, name, kwargs, values, grads, sd=None):
    params = [lib.nn.Parameter(lib.tensor(v.copy())) for v in values]
    opt = getattr(lib.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}], **kwargs)
    if sd is not None:
        opt.load_state_dict(sd)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = lib.tensor(g.copy())
        opt.step()
    return params, opt


def _data(steps):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s).astype(np.float32) for s in [(3,), (2, 3), (4,)]]
    return values, [[rng.standard_normal(v.shape).astype(np.float32) for v in values] for _ in range(steps)]


def _assert_same_state_dict(sd, tsd):
    assert list(sd) == list(tsd) == ["state", "param_groups"]
    assert list(sd["state"]) == list(tsd["state"])
    for k, ts in tsd["state"].items():
        s = sd["state"][k]
        assert list(s) == list(ts)  # (PyTorch's order of entries)
        for name, tv in ts.items():
            v = s[name]
            if isinstance(tv, torch.Tensor):
                assert isinstance(v, minigrad.Tensor), name
                assert tuple(v.shape) == tuple(tv.shape) and str(v.dtype)[9:] == str(tv.dtype)[6:], name
                np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)
            else:
                assert type(v) is type(tv) and v == tv, name
    for g, tg in zip(sd["param_groups"], tsd["param_groups"], strict=True):
        assert list(g.items()) == list(tg.items())


def _to(lib, sd):
    """A state dict converted tensor by tensor (through numpy) to `lib`'s tensors."""
    def conv(v):
        if isinstance(v, (torch.Tensor, minigrad.Tensor)):
            return lib.tensor(np.array(v.detach().numpy()))
        return v
    return {"state": {k: {n: conv(v) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dict_matches_torch(name, kwargs):
    values, grads = _data(3)
    _, opt = _run(_M, name, kwargs, values, grads)
    _, topt = _run(torch, name, kwargs, values, grads)
    _assert_same_state_dict(opt.state_dict(), topt.state_dict())


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dicts_carry_across_both_ways(name, kwargs):
    """torch's state dict into minigrad, minigrad's into torch: both go on as the uninterrupted runs."""
    values, grads = _data(6)
    ps, opt = _run(_M, name, kwargs, values, grads[:3])
    tps, topt = _run(torch, name, kwargs, values, grads[:3])
    now = [p.detach().numpy().copy() for p in tps]
    ours_from_torch = _run(_M, name, kwargs, now, grads[3:], _to(_M, topt.state_dict()))[0]
    torch_from_ours = _run(torch, name, kwargs, now, grads[3:], _to(torch, opt.state_dict()))[0]
    full, _ = _run(torch, name, kwargs, values, grads)
    for a, b, c in zip(ours_from_torch, torch_from_ours, full):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_step_is_a_0d_tensor_scripts_can_read_and_copy():
    p = nn.Parameter(minigrad.ones(3))
    opt = nn.optim.AdamW([p], lr=0.1)
    for _ in range(2):
        p.grad = minigrad.ones(3)
        opt.step()
    step = opt.state[p]["step"]
    assert step.item() == 2.0 and int(step) == 2 and repr(step) == repr(torch.tensor(2.0)).replace("torch.", "")
    saved = copy.deepcopy(opt.state_dict())
    p.grad = minigrad.ones(3)
    opt.step()
    assert saved["state"][0]["step"].item() == 2.0 and opt.state[p]["step"].item() == 3.0


def test_int_steps_of_old_state_dicts_load_as_tensors():
    """A state dict saved when minigrad kept `step` a Python int goes on as the one saved with a tensor."""
    values, grads = _data(4)
    ps, opt = _run(_M, "Adam", {}, values, grads[:2])
    sd = opt.state_dict()
    old = {"state": {k: {**s, "step": int(s["step"].item())} for k, s in sd["state"].items()},
           "param_groups": sd["param_groups"]}
    now = [p.detach().numpy().copy() for p in ps]
    a = _run(_M, "Adam", {}, now, grads[2:], _to(_M, sd))
    b = _run(_M, "Adam", {}, now, grads[2:], old)
    for p, q in zip(a[0], b[0]):
        assert (p.detach().numpy() == q.detach().numpy()).all()
    step = b[1].state[b[0][0]]["step"]
    assert isinstance(step, minigrad.Tensor) and step.dtype == minigrad.float32 and step.item() == 4.0


def test_sparse_adam_keeps_an_int_step_as_torch():
    tp = torch.nn.Parameter(torch.zeros(4, 2))
    mp = nn.Parameter(minigrad.zeros(4, 2))
    topt, mopt = torch.optim.SparseAdam([tp]), nn.optim.SparseAdam([mp])
    tp.grad = torch.ones(4, 2).to_sparse()
    mp.grad = minigrad.ones(4, 2).to_sparse()
    topt.step()
    mopt.step()
    assert type(topt.state[tp]["step"]) is type(mopt.state[mp]["step"]) is int


class _M:  # minigrad under the names the helpers use for torch's
    tensor = staticmethod(minigrad.tensor)
    nn = nn
    optim = nn.optim
