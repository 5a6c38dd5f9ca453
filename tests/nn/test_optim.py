"""Optimizers: PyTorch's trajectories (float64, 1e-10) through a mid-run checkpoint, state dicts, errors."""
import tracemalloc

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from nn.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

STEPS, RESUME_AT = 50, 25


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((16, 6)), rng.standard_normal((16, 3))


SMALL_BLOCK = 4096


@pytest.fixture
def torch(torch):
    """The shared fixture's PyTorch, on one thread: its 150-odd tiny steps per test are 100x slower
    when its thread pool competes with other processes for the cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 4096 elements, so that the blocked update path (with a partial last block) runs on
    parameters of test size."""
    monkeypatch.setattr(nn.optim.optimizer, "BLOCK", SMALL_BLOCK)


def _model():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 100), nn.Tanh(), nn.Linear(100, 100), nn.Tanh(), nn.Linear(100, 3)).double()
    assert model[2].weight.numel() % SMALL_BLOCK != 0 and model[2].weight.numel() > 2 * SMALL_BLOCK
    return model


def _groups(params, cls, kwargs):
    """Two parameter groups: the first layer with its own lr (and no weight decay), the rest with the defaults."""
    params = list(params)
    return cls([{"params": params[:2], "lr": kwargs["lr"] * 0.5, "weight_decay": 0.0}, {"params": params[2:]}],
               **kwargs)


def _torch_twin(torch, model):
    tnn = torch.nn
    twin = tnn.Sequential(tnn.Linear(6, 100), tnn.Tanh(), tnn.Linear(100, 100), tnn.Tanh(), tnn.Linear(100, 3)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), twin.parameters()):
            q.copy_(torch.from_numpy(p.array.copy()))
    return twin


def _our_step(model, opt, X, Y):
    opt.zero_grad()
    F.mse_loss(model(minigrad.tensor(X)), minigrad.tensor(Y)).backward()
    opt.step()


def _torch_step(torch, model, opt, X, Y):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(torch.from_numpy(X)), torch.from_numpy(Y)).backward()
    opt.step()


def _assert_same(model, twin, step):
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=0, atol=1e-10, err_msg=f"{name} at step {step}")


CONFIGS = [
    (SGD, dict(lr=0.1)),
    (SGD, dict(lr=0.1, weight_decay=0.05)),
    (SGD, dict(lr=0.05, momentum=0.9)),
    (SGD, dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.05)),
    (SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05)),
    (Adam, dict(lr=0.01)),
    (Adam, dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)),
    (Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    (AdamW, dict(lr=0.01, weight_decay=0.0)),
    (AdamW, dict(lr=0.01, betas=(0.9, 0.95), eps=1e-6, weight_decay=0.1)),
    (AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    (RMSprop, dict(lr=0.01)),
    (RMSprop, dict(lr=0.01, alpha=0.9, momentum=0.9, weight_decay=0.05)),
    (RMSprop, dict(lr=0.005, centered=True, momentum=0.5, eps=1e-6)),
    (RMSprop, dict(lr=0.01, centered=True, weight_decay=0.05, maximize=True)),
    (Adagrad, dict(lr=0.1)),
    (Adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.05, initial_accumulator_value=0.1, eps=1e-8)),
    (Adagrad, dict(lr=0.05, maximize=True)),
]


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_trajectory_matches_torch_across_checkpoint(torch, tmp_path, kernels, cls, kwargs):
    X, Y = _data()
    model = _model()
    twin = _torch_twin(torch, model)
    opt = _groups(model.parameters(), cls, kwargs)
    topt = _groups(twin.parameters(), getattr(torch.optim, cls.__name__), kwargs)
    for step in range(STEPS):
        if step == RESUME_AT:  # checkpoint to disk, then carry on with a new model and optimizer
            nn.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "ckpt.safetensors")
            ckpt = nn.load(tmp_path / "ckpt.safetensors")
            model = _model()
            model.load_state_dict(ckpt["model"])
            opt = _groups(model.parameters(), cls, {**kwargs, "lr": 123.0})  # hyperparameters come from the file
            opt.load_state_dict(ckpt["optimizer"])
        _our_step(model, opt, X, Y)
        _torch_step(torch, twin, topt, X, Y)
        _assert_same(model, twin, step)


def test_loads_pytorch_optimizer_state(torch):
    """A state dict in PyTorch's own layout (tensor steps, extra group keys) continues the same trajectory."""
    X, Y = _data()
    model = _model()
    twin = _torch_twin(torch, model)
    topt = torch.optim.AdamW(twin.parameters(), lr=0.01, weight_decay=0.1)
    for _ in range(5):
        _torch_step(torch, twin, topt, X, Y)
    tsd = topt.state_dict()
    sd = {"state": {k: {n: minigrad.tensor(v.numpy()) for n, v in s.items()} for k, s in tsd["state"].items()},
          "param_groups": tsd["param_groups"]}
    with minigrad.no_grad():
        for p, q in zip(model.parameters(), twin.parameters()):
            p.copy_(minigrad.tensor(q.detach().numpy()))
    opt = AdamW(model.parameters())
    opt.load_state_dict(sd)
    assert opt.state[model[0].weight]["step"] == 5 and opt.param_groups[0]["lr"] == 0.01
    for step in range(5):
        _our_step(model, opt, X, Y)
        _torch_step(torch, twin, topt, X, Y)
        _assert_same(model, twin, step)


@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("kwargs", [{}, {"foreach": False}, {"amsgrad": True}])
def test_state_names_in_pytorchs_order(cls, kwargs):
    # a printed `opt.state_dict()["state"][0].keys()` (a checkpoint's) lists step first, then the moments
    torch = pytest.importorskip("torch")
    p, tp = nn.Parameter(minigrad.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt, topt = getattr(nn.optim, cls)([p], **kwargs), getattr(torch.optim, cls)([tp], **kwargs)
    p.grad, tp.grad = minigrad.ones(2), torch.ones(2)
    opt.step()
    topt.step()
    assert list(opt.state_dict()["state"][0]) == list(topt.state_dict()["state"][0])


def test_state_dict_layout():
    model = _model()
    opt = _groups(model.parameters(), AdamW, dict(lr=0.01, betas=(0.9, 0.95)))
    X, Y = _data()
    _our_step(model, opt, X, Y)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert list(sd["state"]) == [0, 1, 2, 3, 4, 5]
    s0 = sd["state"][0]
    assert type(s0["step"]) is minigrad.Tensor and s0["step"].shape == () and s0["step"].dtype == minigrad.float32
    assert s0["step"].item() == 1.0
    assert s0["exp_avg"].shape == model[0].weight.shape and s0["exp_avg"].dtype == minigrad.float64
    g0, g1 = sd["param_groups"]
    assert g0["params"] == [0, 1] and g1["params"] == [2, 3, 4, 5]
    assert g0["lr"] == 0.005 and g1["lr"] == 0.01 and g1["betas"] == (0.9, 0.95) and g0["weight_decay"] == 0.0


def test_load_state_dict_validates_before_changing_anything():
    model = _model()
    opt = AdamW(model.parameters(), lr=0.01)
    X, Y = _data()
    _our_step(model, opt, X, Y)
    sd = opt.state_dict()
    before = {id(p): {k: (v.array.copy() if hasattr(v, "array") else v) for k, v in s.items()}
              for p, s in opt.state.items()}

    def unchanged():
        assert opt.param_groups[0]["lr"] == 0.01
        for p, s in opt.state.items():
            for k, v in s.items():
                np.testing.assert_array_equal(getattr(v, "array", v), before[id(p)][k])

    other = AdamW(list(model.parameters())[:2], lr=0.5)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(other.state_dict())
    unchanged()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    bad = {"state": {**sd["state"], 5: {**sd["state"][5], "exp_avg": minigrad.zeros(7)}},
           "param_groups": [{**sd["param_groups"][0], "lr": 0.5}]}
    with pytest.raises(ValueError, match=r"parameter 5 has 'exp_avg' of shape \[7\]"):
        opt.load_state_dict(bad)
    unchanged()
    # the loaded state is a copy: the state dict's tensors can be reused freely
    opt.load_state_dict(sd)
    assert opt.state[model[0].weight]["exp_avg"] is not sd["state"][0]["exp_avg"]


def test_a_set_of_parameters_is_taken_as_pytorch_takes_it(torch):
    # PyTorch lists a top-level set (its order is the user's risk); it refuses only a group's set
    w, tw = nn.Parameter(minigrad.ones(2)), torch.nn.Parameter(torch.ones(2))
    ours, theirs = Adam({w}, lr=0.1), torch.optim.Adam({tw}, lr=0.1)
    assert ours.param_groups[0]["params"] == [w] and len(theirs.param_groups[0]["params"]) == 1
    with pytest.raises(TypeError) as err:
        torch.optim.Adam([{"params": {tw}}])
    with pytest.raises(TypeError, match=f"^{err.value}$"):
        Adam([{"params": {w}}])


def test_errors():
    w = nn.Parameter(minigrad.ones(2))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        AdamW([])
    with pytest.raises(TypeError, match="ordered collections"):
        Adam([{"params": {w}}])
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        Adam([w, 3.0])
    with pytest.raises(TypeError, match="iterable of Tensors or dicts, but got minigrad.FloatTensor$"):
        Adam(w)  # a lone Parameter: PyTorch names its tensor type (torch.FloatTensor there)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        AdamW([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        AdamW([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        SGD([w], lr=0.1, nesterov=True)
    opt = SGD([w], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})


def test_param_groups_zero_grad_and_closure():
    a, b = nn.Parameter(minigrad.ones(3)), nn.Parameter(minigrad.ones(2))
    opt = SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 1.0})
    assert opt.param_groups[1]["momentum"] == 0.0 and opt.param_groups[1]["params"] == [b]

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + b.sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(a.array, 0.8)  # 1 - 0.1 * 2a
    np.testing.assert_allclose(b.array, 0.0)  # 1 - 1.0 * 1
    grad = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is grad and not grad.array.any()
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    opt.step()  # parameters without gradients are skipped
    np.testing.assert_allclose(a.array, 0.8)
    assert "Parameter Group 1" in repr(opt)


def test_blocked_and_whole_array_updates_agree(kernels):
    """A non-contiguous gradient takes the whole-array path; the result is the same, bit for bit."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((300, 200)).astype(np.float32)
    g = rng.standard_normal((200, 300)).astype(np.float32)
    results = []
    for grad in (np.ascontiguousarray(g.T), g.T):
        p = nn.Parameter(minigrad.tensor(w0.copy()))
        opt = AdamW([p], lr=1e-2, weight_decay=0.1)
        for _ in range(3):
            p.grad = minigrad.Tensor(grad)
            opt.step()
        results.append(p.array)
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("cls,kwargs", [(AdamW, dict(amsgrad=True)), (Adam, dict(weight_decay=0.1)),
                                        (SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
                                        (RMSprop, dict(momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
                                        (Adagrad, dict(lr_decay=0.1, weight_decay=0.1, maximize=True))])
def test_step_allocates_no_parameter_sized_memory(kernels, cls, kwargs):
    p = nn.Parameter(minigrad.randn(400, 400))
    p.grad = minigrad.randn(400, 400)
    opt = cls([p], **kwargs)
    opt.step()  # the first step creates the state
    data = p.array
    tracemalloc.start()
    opt.step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < p.nbytes / 20, f"a step allocated {peak} bytes for a {p.nbytes}-byte parameter"
    assert p.array is data  # updated in place


def test_optimizer_base_requires_step_group():
    with pytest.raises(NotImplementedError):
        Optimizer([nn.Parameter(minigrad.ones(1))], {}).step()


@pytest.mark.parametrize("cls", [Adam, AdamW])
def test_an_infinite_weight_leaves_the_moments_finite(kernels, cls):
    # a diverged weight stays inf, as in PyTorch, without turning its moments NaN (0 * inf)
    p = nn.Parameter(minigrad.tensor(np.array([np.inf, 1.0], np.float32)))
    p.grad = minigrad.tensor(np.array([0.5, 0.5], np.float32))
    opt = cls([p], lr=0.1)
    opt.step()
    state = opt.state[p]
    assert np.isinf(p.array[0]) and np.isfinite(p.array[1])
    assert np.isfinite(state["exp_avg"].array).all() and np.isfinite(state["exp_avg_sq"].array).all()


# ---- RMSprop and Adagrad: float32 against PyTorch, state dicts in its layout, resuming ------------------
SHAPES = [(30, 7), (7,), (3, 4, 5)]

RMS_ADAGRAD = [
    (RMSprop, dict()),
    (RMSprop, dict(lr=0.005, alpha=0.8, eps=1e-6, weight_decay=0.1)),
    (RMSprop, dict(momentum=0.9, maximize=True)),
    (RMSprop, dict(centered=True)),
    (RMSprop, dict(lr=0.003, centered=True, momentum=0.8, weight_decay=0.05, maximize=True)),
    (Adagrad, dict()),
    (Adagrad, dict(lr=0.05, lr_decay=0.2, eps=1e-6)),
    (Adagrad, dict(weight_decay=0.1, initial_accumulator_value=0.3, maximize=True)),
]


def _random_run(dtype, steps):
    """Seeded random starting values (one array per shape in SHAPES) and `steps` steps' gradients."""
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return values, grads


def _run_ours(cls, kwargs, values, grads):
    """Our optimizer over two groups (the second with half the lr), stepped on `grads`: (params, optimizer)."""
    params = [nn.Parameter(minigrad.tensor(v.copy())) for v in values]
    lr = kwargs.get("lr", 0.01)
    opt = cls([{"params": params[:1]}, {"params": params[1:], "lr": lr / 2}], **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = minigrad.tensor(g.copy())
        opt.step()
    return params, opt


def _run_torch(torch, cls, kwargs, values, grads):
    params = [torch.nn.Parameter(torch.from_numpy(v.copy())) for v in values]
    lr = kwargs.get("lr", 0.01)
    opt = getattr(torch.optim, cls.__name__)([{"params": params[:1]}, {"params": params[1:], "lr": lr / 2}],
                                             **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = torch.from_numpy(g.copy())
        opt.step()
    return params, opt


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 1e-6, 1e-6), (np.float64, 1e-12, 1e-14)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("cls,kwargs", RMS_ADAGRAD, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(RMS_ADAGRAD)])
def test_rmsprop_adagrad_match_torch(torch, cls, kwargs, dtype, rtol, atol):
    """Parameters and every state tensor after 20 steps, in float32 and float64. (PyTorch's float32
    kernels fuse some multiply-adds, numpy rounds twice: a few ulps apart, hence the absolute
    tolerance on parameters of size ~1.)"""
    values, grads = _random_run(dtype, 20)
    ours, opt = _run_ours(cls, kwargs, values, grads)
    theirs, topt = _run_torch(torch, cls, kwargs, values, grads)
    for i, (p, q) in enumerate(zip(ours, theirs)):
        assert p.dtype == getattr(minigrad, np.dtype(dtype).name)
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"parameter {i}")
        state, tstate = opt.state[p], topt.state[q]
        assert sorted(state) == sorted(tstate)
        assert state["step"] == int(tstate["step"]) == 20
        for name in state:
            if name != "step":
                np.testing.assert_allclose(state[name].array, tstate[name].numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"{name} of parameter {i}")


@pytest.mark.parametrize("cls,kwargs", [(RMSprop, dict(momentum=0.9, centered=True, weight_decay=0.1)),
                                        (Adagrad, dict(lr_decay=0.1, initial_accumulator_value=0.2))])
def test_rmsprop_adagrad_state_dict_layout_is_pytorchs(torch, cls, kwargs):
    """Same state names and group keys (hyperparameters and flags) as PyTorch's; a state dict that
    PyTorch saved continues its trajectory here."""
    values, grads = _random_run(np.float64, 10)
    ours, opt = _run_ours(cls, kwargs, values, grads[:5])
    theirs, topt = _run_torch(torch, cls, kwargs, values, grads[:5])
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == [0, 1, 2]
    for k in sd["state"]:
        assert sorted(sd["state"][k]) == sorted(tsd["state"][k])
        step, tstep = sd["state"][k]["step"], tsd["state"][k]["step"]  # (0-d float32 tensors, as PyTorch's)
        assert step.shape == tstep.shape == () and str(step.dtype)[9:] == str(tstep.dtype)[6:] and step.item() == 5.0
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        assert g == tg

    fresh = [nn.Parameter(minigrad.tensor(q.detach().numpy().copy())) for q in theirs]
    resumed = cls([{"params": fresh[:1]}, {"params": fresh[1:]}], lr=123.0)  # the groups and their hyperparameters come from the state dict
    resumed.load_state_dict({"state": {k: {n: (minigrad.tensor(v.numpy()) if n != "step" else v) for n, v in s.items()}
                                       for k, s in tsd["state"].items()},
                             "param_groups": tsd["param_groups"]})
    assert resumed.param_groups[1]["lr"] == kwargs.get("lr", 0.01) / 2
    for step_grads in grads[5:]:
        for p, q, g in zip(fresh, theirs, step_grads):
            p.grad = minigrad.tensor(g.copy())
            q.grad = torch.from_numpy(g.copy())
        resumed.step()
        topt.step()
    for p, q in zip(fresh, theirs):
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls,kwargs", [(RMSprop, dict(momentum=0.9, centered=True, weight_decay=0.1)),
                                        (Adagrad, dict(lr_decay=0.1, initial_accumulator_value=0.2))])
def test_rmsprop_adagrad_resume_is_the_uninterrupted_run(cls, kwargs):
    """Save the state dict half way, load it into a fresh optimizer, continue: the same bits as not stopping."""
    values, grads = _random_run(np.float32, 12)
    uninterrupted, _ = _run_ours(cls, kwargs, values, grads)

    params, opt = _run_ours(cls, kwargs, values, grads[:6])
    sd = opt.state_dict()
    params = [nn.Parameter(minigrad.tensor(p.array.copy())) for p in params]
    opt = cls([{"params": params[:1]}, {"params": params[1:]}], lr=5.0)
    opt.load_state_dict(sd)
    for step_grads in grads[6:]:
        for p, g in zip(params, step_grads):
            p.grad = minigrad.tensor(g.copy())
        opt.step()
    for p, q in zip(params, uninterrupted):
        np.testing.assert_array_equal(p.array, q.array)
    assert opt.state[params[0]]["step"] == 12


def test_adagrad_state_made_at_construction_and_for_added_groups():
    a, b = nn.Parameter(minigrad.ones(2, 3)), nn.Parameter(minigrad.ones(4))
    opt = Adagrad([a], lr=0.5, initial_accumulator_value=0.25)
    sd = opt.state_dict()  # before any step, as PyTorch's
    assert sd["state"][0]["step"] == 0
    np.testing.assert_array_equal(sd["state"][0]["sum"].array, np.full((2, 3), 0.25, np.float32))
    opt.add_param_group({"params": [b], "initial_accumulator_value": 3.0})
    a.grad, b.grad = minigrad.ones(2, 3), minigrad.ones(4)
    opt.step()
    # sum = init + 1, p = 1 - 0.5 / sqrt(sum)
    np.testing.assert_allclose(a.array, 1 - 0.5 / np.sqrt(1.25), rtol=1e-6)
    np.testing.assert_allclose(b.array, 1 - 0.5 / np.sqrt(4.0), rtol=1e-6)
    assert opt.state[b]["step"] == 1


def test_rmsprop_momentum_turned_on_later_gets_a_buffer():
    """A schedule (OneCycleLR) may set momentum after the first steps: the buffer starts then, at zero."""
    p = nn.Parameter(minigrad.tensor(np.array([1.0, -2.0])))
    opt = RMSprop([p], lr=0.1, alpha=0.5)
    p.grad = minigrad.tensor(np.array([1.0, 1.0]))
    opt.step()
    assert "momentum_buffer" not in opt.state[p]
    opt.param_groups[0]["momentum"] = 0.9
    before = p.array.copy()
    opt.step()
    v = 0.5 * 0.5 + 0.5  # v after two steps of g = 1
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].array, 1 / (np.sqrt(v) + 1e-8))
    np.testing.assert_allclose(p.array, before - 0.1 / (np.sqrt(v) + 1e-8))


@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("lr, kw", [(0.01, {"foreach": True}), ([0.01, 0.02], {}), ([0.01, 0.02], {"foreach": True})])
def test_a_tensor_lr_is_refused_where_pytorch_refuses_it(torch, cls, lr, kw):
    # PyTorch's foreach Adam takes a tensor lr only when capturable, and only one of one element
    with pytest.raises(ValueError) as want:
        getattr(torch.optim, cls)([torch.nn.Parameter(torch.ones(2))], lr=torch.tensor(lr), **kw)
    with pytest.raises(ValueError) as got:
        getattr(nn.optim, cls)([nn.Parameter(minigrad.ones(2))], lr=minigrad.tensor(lr), **kw)
    assert str(got.value) == str(want.value)


def test_rmsprop_adagrad_errors():
    w = nn.Parameter(minigrad.ones(2))
    for kwargs, message in [(dict(lr=-1), "Invalid learning rate: -1"), (dict(eps=-1), "Invalid epsilon value"),
                            (dict(momentum=-0.1), "Invalid momentum value"), (dict(alpha=-0.5), "Invalid alpha value"),
                            (dict(weight_decay=-1), "Invalid weight_decay value")]:
        with pytest.raises(ValueError, match=message):
            RMSprop([w], **kwargs)
    for kwargs, message in [(dict(lr=-1), "Invalid learning rate"), (dict(lr_decay=-1), "Invalid lr_decay value"),
                            (dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value"),
                            (dict(eps=-1), "Invalid epsilon value"), (dict(weight_decay=-1), "Invalid weight_decay")]:
        with pytest.raises(ValueError, match=message):
            Adagrad([w], **kwargs)
    with pytest.raises(TypeError):
        Adagrad([w], 0.1, 0, 0, 0, 1e-10, None, False)  # maximize is keyword-only, as in PyTorch
    assert minigrad.optim.RMSprop is RMSprop and minigrad.optim.Adagrad is Adagrad


# ---- Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD; maximize on SGD, Adam, AdamW -------------------------
import inspect  # noqa: E402

from nn.optim import ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop  # noqa: E402

NEW = [
    (Adadelta, dict()),
    (Adadelta, dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    (Adamax, dict()),
    (Adamax, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, maximize=True)),
    (NAdam, dict()),
    (NAdam, dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    (NAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (RAdam, dict()),  # 20 steps with beta2 0.999: rho_t <= 5 for the first 5 steps, then rectified
    (RAdam, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, maximize=True)),
    (RAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (Rprop, dict()),
    (Rprop, dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.08), maximize=True)),
    (ASGD, dict()),
    (ASGD, dict(lr=0.05, lambd=0.01, alpha=0.6, t0=5, weight_decay=0.1, maximize=True)),  # averaging from step 6
    (SGD, dict(lr=0.1, maximize=True)),
    (SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05, maximize=True)),
    (SGD, dict(lr=0.05, momentum=0.9, dampening=0.3, maximize=True)),
    (Adam, dict(lr=0.01, maximize=True)),
    (Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    (Adam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (AdamW, dict(lr=0.01, weight_decay=0.1, maximize=True)),
]
NEW_IDS = [f"{c.__name__}-{i}" for i, (c, _) in enumerate(NEW)]
# On the model, maximize (gradient ascent) drives the tanh units into saturation, where some gradients
# shrink to ~1e-16 and their sign is rounding: Rprop (which acts on signs), SGD and ASGD (plain gradient
# steps, which amplify the rounding) then part from PyTorch's trajectory legitimately. Their maximize
# runs on the same gradients are checked to 1e-12 by test_new_optimizers_match_torch.
MODEL_NEW = [(c, k) for c, k in NEW if not (c in (Rprop, ASGD, SGD) and k.get("maximize"))]
MODEL_NEW.append((ASGD, dict(lr=0.05, lambd=0.01, alpha=0.6, t0=5, weight_decay=0.1)))


@pytest.mark.parametrize("cls,kwargs", MODEL_NEW, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(MODEL_NEW)])
def test_new_optimizers_trajectory_matches_torch_across_checkpoint(torch, tmp_path, kernels, cls, kwargs):
    """The model's 50 steps against PyTorch (float64, 1e-10) through an nn.save checkpoint at step 25."""
    kwargs = {"lr": inspect.signature(cls).parameters["lr"].default, **kwargs}  # (the helper halves the lr)
    test_trajectory_matches_torch_across_checkpoint(torch, tmp_path, kernels, cls, kwargs)


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 1e-6, 1e-6), (np.float64, 1e-12, 1e-14)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("cls,kwargs", NEW, ids=NEW_IDS)
def test_new_optimizers_match_torch(torch, cls, kwargs, dtype, rtol, atol):
    """Parameters and every state entry (tensors, and the scalars NAdam's mu_product and ASGD's eta, mu)
    after 20 steps on random gradients, float32 and float64, two groups."""
    values, grads = _random_run(dtype, 20)
    ours, opt = _run_ours(cls, kwargs, values, grads)
    theirs, topt = _run_torch(torch, cls, kwargs, values, grads)
    moved = 0.0
    for i, (p, q, v) in enumerate(zip(ours, theirs, values)):
        assert p.dtype == getattr(minigrad, np.dtype(dtype).name)
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"parameter {i}")
        moved = max(moved, float(np.abs(p.array - v).max()))
        state, tstate = opt.state[p], topt.state[q]
        assert sorted(state) == sorted(tstate)
        if cls is not SGD:  # (SGD keeps no step)
            assert state["step"] == int(tstate["step"]) == 20
        for name in state:
            if name == "step":
                continue
            if name in cls.scalar_state:
                assert state[name].shape == () and str(state[name].dtype)[9:] == str(tstate[name].dtype)[6:], name
                assert state[name].item() == tstate[name].item(), name
            else:
                np.testing.assert_allclose(state[name].array, tstate[name].numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"{name} of parameter {i}")
    assert moved > 1e-3  # the parameters did move


@pytest.mark.parametrize("cls,kwargs", [(NAdam, dict(weight_decay=0.1)), (ASGD, dict(t0=3, lambd=0.01)),
                                        (Rprop, dict(maximize=True)), (Adadelta, dict(weight_decay=0.1)),
                                        (Adamax, dict()), (RAdam, dict(decoupled_weight_decay=True, weight_decay=0.1)),
                                        (Adam, dict(maximize=True)), (SGD, dict(momentum=0.9, maximize=True))])
def test_new_optimizers_state_dict_layout_is_pytorchs(torch, cls, kwargs):
    """Same state names and group keys (hyperparameters and flags) as PyTorch's; a state dict that
    PyTorch saved (0-d tensors for the scalars) continues its trajectory here."""
    values, grads = _random_run(np.float64, 10)
    _, opt = _run_ours(cls, kwargs, values, grads[:5])
    theirs, topt = _run_torch(torch, cls, kwargs, values, grads[:5])
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"])
    for k in sd["state"]:
        assert sorted(sd["state"][k]) == sorted(tsd["state"][k])
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        assert g == tg

    fresh = [nn.Parameter(minigrad.tensor(q.detach().numpy().copy())) for q in theirs]
    resumed = cls([{"params": fresh[:1]}, {"params": fresh[1:]}], lr=123.0)
    resumed.load_state_dict({"state": {k: {n: (minigrad.tensor(v.numpy()) if n != "step" else v) for n, v in s.items()}
                                       for k, s in tsd["state"].items()},
                             "param_groups": tsd["param_groups"]})
    assert resumed.param_groups[1]["lr"] == topt.param_groups[1]["lr"]
    for name in cls.scalar_state:
        assert type(resumed.state[fresh[0]][name]) is minigrad.Tensor and resumed.state[fresh[0]][name].shape == ()
    for step_grads in grads[5:]:
        for p, q, g in zip(fresh, theirs, step_grads):
            p.grad = minigrad.tensor(g.copy())
            q.grad = torch.from_numpy(g.copy())
        resumed.step()
        topt.step()
    for p, q in zip(fresh, theirs):
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls,kwargs", [(NAdam, dict(decoupled_weight_decay=True, weight_decay=0.1)),
                                        (ASGD, dict(t0=4, lambd=0.01)), (Rprop, dict()), (Adadelta, dict()),
                                        (Adamax, dict(maximize=True)), (RAdam, dict())])
def test_new_optimizers_resume_is_the_uninterrupted_run(tmp_path, cls, kwargs):
    """Save the state dict half way (through nn.save), load it into a fresh optimizer, continue: the same
    bits as not stopping."""
    values, grads = _random_run(np.float32, 12)
    uninterrupted, _ = _run_ours(cls, kwargs, values, grads)

    params, opt = _run_ours(cls, kwargs, values, grads[:6])
    nn.save({"optimizer": opt.state_dict()}, tmp_path / "opt.safetensors")
    sd = nn.load(tmp_path / "opt.safetensors")["optimizer"]
    params = [nn.Parameter(minigrad.tensor(p.array.copy())) for p in params]
    opt = cls([{"params": params[:1]}, {"params": params[1:]}], lr=5.0)
    opt.load_state_dict(sd)
    for step_grads in grads[6:]:
        for p, g in zip(params, step_grads):
            p.grad = minigrad.tensor(g.copy())
        opt.step()
    for p, q in zip(params, uninterrupted):
        np.testing.assert_array_equal(p.array, q.array)
    assert opt.state[params[0]]["step"] == 12


def test_adam_maximize_under_reference_kernels(torch):
    """MINIGRAD_KERNELS=reference runs Adam through nn/_functional/reference.py: maximize there too."""
    from minigrad import backends

    values, grads = _random_run(np.float64, 10)
    for cls, kwargs in [(Adam, dict(lr=0.01, maximize=True, weight_decay=0.1)), (AdamW, dict(maximize=True))]:
        with backends.kernels("reference"):
            ours, _ = _run_ours(cls, dict(kwargs, foreach=False), values, grads)
        theirs, _ = _run_torch(torch, cls, kwargs, values, grads)
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_maximize_ascends():
    """maximize=True steps up the gradient, for every optimizer that takes it (PyTorch's set)."""
    classes = [SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD]
    for cls in classes:
        p = nn.Parameter(minigrad.tensor(np.zeros(3)))
        opt = cls([p], lr=0.1, maximize=True)
        for _ in range(3):
            p.grad = minigrad.tensor(np.array([1.0, -2.0, 0.5]))
            opt.step()
        assert (np.sign(p.array) == [1, -1, 1]).all(), cls.__name__
        assert opt.param_groups[0]["maximize"] is True


@pytest.mark.parametrize("cls,kwargs", [(Adadelta, dict(weight_decay=0.1, maximize=True)),
                                        (Adamax, dict(weight_decay=0.1)), (NAdam, dict(weight_decay=0.1)),
                                        (RAdam, dict(weight_decay=0.1, decoupled_weight_decay=True)),
                                        (Rprop, dict(maximize=True)), (ASGD, dict(t0=0, weight_decay=0.1)),
                                        (SGD, dict(lr=0.1, maximize=True)), (Adam, dict(maximize=True))])
def test_new_optimizers_step_in_place_without_parameter_sized_memory(kernels, cls, kwargs):
    p = nn.Parameter(minigrad.randn(400, 400))
    p.grad = minigrad.randn(400, 400)
    opt = cls([p], **kwargs)
    opt.step()
    data = p.array
    tracemalloc.start()
    opt.step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # (Rprop's two boolean masks: a quarter of a float32 parameter each)
    limit = p.nbytes / 1.5 if cls is Rprop else p.nbytes / 20
    assert peak < limit, f"a step allocated {peak} bytes for a {p.nbytes}-byte parameter"
    assert p.array is data


def test_new_optimizers_by_hand():
    """A few steps worked out by hand: the formulas of the docstrings."""
    # Adadelta, one step of g = 2 from zero state: v = 0.1 * 4, delta = sqrt(eps) / sqrt(v + eps) * g
    p = nn.Parameter(minigrad.tensor(np.array([1.0])))
    opt = Adadelta([p], lr=1.0, rho=0.9, eps=1e-6)
    p.grad = minigrad.tensor(np.array([2.0]))
    opt.step()
    delta = np.sqrt(1e-6) / np.sqrt(0.4 + 1e-6) * 2.0
    np.testing.assert_allclose(p.array, 1.0 - delta, rtol=1e-14)
    np.testing.assert_allclose(opt.state[p]["acc_delta"].array, 0.1 * delta**2, rtol=1e-14)
    # Rprop: same sign grows the step (x1.2), a flip shrinks it (x0.5) and skips the move
    p = nn.Parameter(minigrad.tensor(np.array([0.0, 0.0])))
    opt = Rprop([p], lr=0.1)
    for g in ([1.0, 1.0], [1.0, -1.0], [1.0, -1.0]):
        p.grad = minigrad.tensor(np.array(g))
        opt.step()
    np.testing.assert_allclose(opt.state[p]["step_size"].array, [0.1 * 1.2 * 1.2, 0.1 * 0.5])
    np.testing.assert_allclose(p.array, [-0.1 - 0.12 - 0.144, -0.1 + 0.0 + 0.05])
    # ASGD with t0=1: ax follows p while mu = 1 / max(1, t - t0) (from the step before) is 1, that is
    # up to step 3; then it averages: at step 4 with mu = 1/2, the mean of p at steps 3 and 4
    p = nn.Parameter(minigrad.tensor(np.array([1.0])))
    opt = ASGD([p], lr=0.1, lambd=0.0, t0=1)
    seen = []
    for _ in range(4):
        p.grad = minigrad.tensor(np.array([1.0]))
        opt.step()
        seen.append(p.array[0])
        if len(seen) <= 3:
            assert opt.state[p]["ax"].array[0] == seen[-1]
    np.testing.assert_allclose(opt.state[p]["ax"].array, [(seen[2] + seen[3]) / 2], rtol=1e-15)
    assert opt.state[p]["mu"] == pytest.approx(1 / 3) and opt.state[p]["eta"] == pytest.approx(0.1, rel=1e-7)


def test_new_optimizers_errors():
    w = nn.Parameter(minigrad.ones(2))
    cases = [
        (Adadelta, dict(lr=-1), "Invalid learning rate"), (Adadelta, dict(rho=1.5), "Invalid rho value"),
        (Adadelta, dict(eps=-1), "Invalid epsilon value"), (Adadelta, dict(weight_decay=-1), "Invalid weight_decay"),
        (Adamax, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
        (Adamax, dict(eps=-1), "Invalid epsilon value"),
        (NAdam, dict(momentum_decay=-1), "Invalid momentum_decay value"),
        (NAdam, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
        (RAdam, dict(weight_decay=-1), "Invalid weight_decay value"), (RAdam, dict(lr=-1), "Invalid learning rate"),
        (Rprop, dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"), (Rprop, dict(lr=-1), "Invalid learning rate"),
        (ASGD, dict(weight_decay=-1), "Invalid weight_decay value"), (ASGD, dict(lr=-1), "Invalid learning rate"),
    ]
    for cls, kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            cls([w], **kwargs)
    with pytest.raises(TypeError):
        NAdam([w], 0.1, (0.9, 0.99), 1e-8, 0, 4e-3, False, None)  # foreach is keyword-only, as in PyTorch
    for cls in (Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD):
        assert getattr(minigrad.optim, cls.__name__) is cls and cls.__name__ in nn.optim.__all__


def test_sparse_adam_as_pytorch_on_dense_gradients(torch):
    # a skip-gram script's SparseAdam over Embedding(sparse=False) tables: PyTorch builds it, steps through
    # parameters without gradients, and refuses the dense gradients at the step, naming Adam
    seen = []
    for L in (minigrad, torch):
        emb = L.nn.Embedding(5, 3)
        for kwargs in (dict(lr=0), dict(eps=0), dict(betas=(0.9, 1.0))):
            with pytest.raises(ValueError) as err:
                L.optim.SparseAdam(emb.parameters(), **kwargs)
            seen.append(str(err.value))
        opt = L.optim.SparseAdam(list(emb.parameters()), lr=0.01)
        seen.append((repr(opt), opt.defaults))
        opt.step()  # no gradient yet: nothing to do
        emb(L.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError) as err:
            opt.step()
        seen.append(str(err.value))
    assert seen[:5] == seen[5:]
    assert seen[4] == "SparseAdam does not support dense gradients, please consider Adam instead"


def test_adadelta_with_step_lr_as_pytorch_examples_mnist(torch):
    """pytorch/examples' MNIST loop: Adadelta(lr=1.0) and StepLR(step_size=1, gamma=0.7) stepped once per
    epoch; 4 epochs of 6 batches against PyTorch (float64)."""
    from nn.optim.lr_scheduler import StepLR

    X, Y = _data()
    model = _model()
    twin = _torch_twin(torch, model)
    opt, topt = Adadelta(model.parameters(), lr=1.0), torch.optim.Adadelta(twin.parameters(), lr=1.0)
    sched, tsched = StepLR(opt, step_size=1, gamma=0.7), torch.optim.lr_scheduler.StepLR(topt, step_size=1, gamma=0.7)
    for epoch in range(4):
        for batch in range(6):
            _our_step(model, opt, X, Y)
            _torch_step(torch, twin, topt, X, Y)
            _assert_same(model, twin, (epoch, batch))
        sched.step()
        tsched.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-15)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.7**4)


def test_param_groups_are_the_callers_dicts_with_pytorchs_key_order():
    # `for g in opt.param_groups: print(g.keys())`, or a group dict kept and changed later (g["lr"] = ...):
    # PyTorch's group is the caller's dict, its keys first, then the defaults; a loaded group the saved one's
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (minigrad, torch):
        w, b = (lib.nn.Parameter(lib.ones(2)) for _ in range(2))
        g = {"lr": 0.5, "params": [b]}
        opt = lib.optim.Adam([{"params": [w], "betas": (0.8, 0.9)}, g], lr=0.1)
        opt.add_param_group({"params": lib.nn.Parameter(lib.ones(1)), "weight_decay": 0.1})
        assert opt.param_groups[1] is g
        g["lr"] = 0.25
        keys = [list(group) for group in opt.param_groups]
        sd = opt.state_dict()
        opt.load_state_dict(sd)
        seen.append((keys, [list(group) for group in sd["param_groups"]], [list(group) for group in opt.param_groups],
                     opt.param_groups[1]["lr"]))
    assert seen[0] == seen[1]
