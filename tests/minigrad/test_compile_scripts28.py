"""torch.compile scripts run on minigrad with only their imports changed: each script is written once,
against a `torch`-like namespace, and run three ways: torch eager (the reference, within float tolerance),
minigrad eager and minigrad compiled (equal bit for bit: the same seed gives the same dropout masks)."""
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.compiler import RecompileWarning

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy().copy() if hasattr(t, "detach") else np.asarray(t)


def _weights(model):
    return {k: _np(v) for k, v in model.state_dict().items()}


def _load(T, model, weights):
    model.load_state_dict({k: T.tensor(v) for k, v in weights.items()})


def _three_ways(script, *args, rng=False, lines=None, **kwargs):
    """Runs `script(T, compile, *args)` as torch eager, minigrad eager and minigrad compiled; returns the
    compiled run's extra result (and appends its RecompileWarning lines to `lines`). Without RNG torch is
    the reference within float tolerance."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecompileWarning)
        eager, _ = script(minigrad, lambda m, **kw: m, *args, **kwargs)
        got, extra = script(minigrad, minigrad.compile, *args, **kwargs)
    if lines is not None:
        lines += [str(w.message) for w in caught if issubclass(w.category, RecompileWarning)]
    assert len(got) == len(eager)
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    if not rng:
        torch.set_num_threads(1)
        want, _ = script(torch, lambda m, **kw: m, *args, **kwargs)
        assert len(want) == len(got)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    return extra


def _mlp(T, p=0.0, skip=True):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(4, 16)
            self.drop = T.nn.Dropout(p)
            self.fc2 = T.nn.Linear(16, 3)
            self.skip = skip

        def forward(self, x):
            h = self.drop(T.relu(self.fc1(x)))
            if self.skip:  # a branch on a config flag
                h = h + h.mean(-1, keepdim=True)
            if x.shape[0] == 1:  # a branch on a shape
                h = h * 2
            return self.fc2(h)

    torch.manual_seed(0)
    reference = _weights(_make_torch_net(p, skip)) if T is not torch else None
    T.manual_seed(0)
    model = Net()
    if reference is not None:
        _load(T, model, reference)
    return model


_NETS = {}


def _make_torch_net(p, skip):
    if (p, skip) not in _NETS:
        _NETS[(p, skip)] = _mlp(torch, p, skip)
    return _NETS[(p, skip)]


def _data(n, seed=0, dtype=np.float32):
    r = np.random.RandomState(seed)
    return r.randn(n, 4).astype(dtype), r.randint(0, 3, n)


def _module_training(T, compile, mode_kw):
    """`model = torch.compile(model)` before training, a smaller last batch, a scheduler, clipping, then
    an evaluation under no_grad after model.eval()."""
    model = compile(_mlp(T), **mode_kw)
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = T.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    x, y = _data(22)
    out = []
    for _ in range(2):
        model.train()
        for i in range(0, 22, 8):  # batches of 8, 8, 6
            xb, yb = T.tensor(x[i:i + 8]), T.tensor(y[i:i + 8])
            loss = T.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            T.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            out.append(_np(loss))
        sched.step()
        model.eval()
        with T.no_grad():
            pred = model(T.tensor(x[:5]))
            out.append(_np(pred))
            out.append(_np(model(T.tensor(x[:1]))))  # the shape branch
    out += [_np(p) for p in model.parameters()]
    return out, model


@pytest.mark.parametrize("mode_kw", [{}, {"mode": "reduce-overhead"}, {"mode": "max-autotune"},
                                     {"fullgraph": True}, {"dynamic": True}, {"dynamic": False},
                                     {"backend": "inductor"}, {"backend": "aot_eager"}, {"backend": "eager"}])
def test_a_compiled_module_trained_then_evaluated_gives_eagers_values(mode_kw):
    model = _three_ways(_module_training, mode_kw)
    assert type(model).__name__ == "OptimizedModule"
    # (three batch shapes in training and two in evaluation captured; backend="eager" only calls)
    want = (0, 0, 10) if mode_kw.get("backend") == "eager" else (4, 6, 0)
    assert (_stats(model).captures, _stats(model).replays, _stats(model).eager_calls) == want


def _whole_step(T, compile, accumulate):
    """nanoGPT's shape: the whole step compiled (forward, loss, backward, clip, step, zero_grad), a closure
    over the model and optimizer; a scheduler changes the lr between calls; gradient accumulation; a layer
    frozen mid-training."""
    model = _mlp(T)
    opt = T.optim.AdamW(model.parameters(), lr=1e-2)
    sched = T.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))

    def micro(xb, yb):
        loss = T.nn.functional.cross_entropy(model(xb), yb) / accumulate
        loss.backward()
        return loss

    def step():
        T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    micro, step = compile(micro), compile(step)
    x, y = _data(40, seed=1)
    out = []
    for it in range(10):
        if it == 6:
            model.fc1.weight.requires_grad_(False)  # freeze a layer
        xb, yb = T.tensor(x[4 * it:4 * it + 4]), T.tensor(y[4 * it:4 * it + 4])
        out.append(_np(micro(xb, yb)))
        if (it + 1) % accumulate == 0:
            step()
            sched.step()
            out.append(np.float64(opt.param_groups[0]["lr"]))
    out += [_np(p) for p in model.parameters()]
    return out, (micro, step)


@pytest.mark.parametrize("accumulate", [1, 2])
def test_a_whole_training_step_compiled_with_accumulation_a_scheduler_and_a_frozen_layer(accumulate):
    lines = []
    micro, step = _three_ways(_whole_step, accumulate, lines=lines)
    # (the layer frozen: captured again, with its line)
    assert micro.stats.captures == step.stats.captures == 2 and micro.stats.replays == 8
    assert lines == [f"minigrad.compile: _whole_step.<locals>.{name}: capturing again: a tensor the function "
                     "reads from outside changed: requires_grad True -> False" for name in ("micro", "step")]


def _one_function_step(T, compile):
    """The whole step as one compiled function, with the lr set by hand between calls (a Python float the
    optimizer reads at each step)."""
    model = _mlp(T)
    opt = T.optim.SGD(model.parameters(), lr=0.1)

    @compile
    def train_step(xb, yb):
        opt.zero_grad()
        loss = T.nn.functional.mse_loss(model(xb).sum(-1), yb)
        loss.backward()
        T.nn.utils.clip_grad_value_(model.parameters(), 0.05)
        opt.step()
        return loss

    x, _ = _data(24, seed=2)
    out = []
    for it in range(6):
        for g in opt.param_groups:
            g["lr"] = 0.1 * 0.5 ** it
        xb = T.tensor(x[4 * it:4 * it + 4])
        out.append(_np(train_step(xb, xb.sum(-1))))
    out += [_np(p) for p in model.parameters()]
    return out, train_step


def test_a_compiled_step_reads_the_lr_set_between_calls():
    assert _three_ways(_one_function_step).stats.replays == 5


def _dtype_change(T, compile):
    model = compile(_mlp(T))
    x, _ = _data(3)
    out = [_np(model(T.tensor(x)))]
    model.double()
    out.append(_np(model(T.tensor(x.astype(np.float64)))))
    model.float()
    out.append(_np(model(T.tensor(x))))
    return out, model


def test_a_compiled_module_cast_to_double_and_back_runs_each_dtype():
    assert _stats(_three_ways(_dtype_change)).replays == 1


def _free_function(T, compile):
    @compile
    def f(x, y, *, alpha=1.0, beta=0.5):
        return T.tanh(x * alpha) + beta * y

    x, _ = _data(3)
    a, b = T.tensor(x), T.tensor(x[::-1].copy())
    out = [f(a, b), f(a, b, alpha=2.0), f(a, b, beta=-1.0, alpha=0.5), f(a, b)]
    return [_np(v) for v in out], f


def test_a_compiled_free_function_with_keyword_arguments():
    _three_ways(_free_function)


def _changing_defaults(T, compile):
    def g(x, scale=2.0):
        return x * scale

    h = compile(g)
    x = T.ones(2)
    out = [_np(h(x))]
    g.__defaults__ = (5.0,)
    out.append(_np(h(x)))
    return out, h


def test_a_compiled_functions_default_changed_between_calls():
    _three_ways(_changing_defaults)


def _dropout_training(T, compile):
    model = compile(_mlp(T, p=0.3))
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    T.manual_seed(123)
    x, y = _data(12, seed=3)
    out = []
    for i in range(0, 12, 4):
        loss = T.nn.functional.cross_entropy(model(T.tensor(x[i:i + 4])), T.tensor(y[i:i + 4]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(_np(loss))
    model.eval()
    out.append(_np(model(T.tensor(x))))
    out += [_np(p) for p in model.parameters()] + [_np(T.rand(3))]
    return out, model


def test_dropout_in_a_compiled_module_draws_eagers_masks():
    assert _stats(_three_ways(_dropout_training, rng=True)).replays == 2


def test_a_compiled_modules_state_dict_keys_and_load_are_pytorchs():
    t_model = torch.compile(_mlp(torch), backend="eager")
    m_model = minigrad.compile(_mlp(minigrad))
    assert list(m_model.state_dict()) == list(t_model.state_dict())
    assert m_model._orig_mod.__class__.__name__ == "Net"
    assert list(m_model._orig_mod.state_dict()) == list(t_model._orig_mod.state_dict())
    # with the prefix, into the compiled module
    state = {k: v * 0 + 1 for k, v in m_model.state_dict().items()}
    m_model.load_state_dict(state)
    assert float(m_model._orig_mod.fc1.weight.detach().sum()) == 64.0
    # without the prefix, into the compiled module: PyTorch's error, the missing and unexpected keys
    plain = {k.removeprefix("_orig_mod."): v for k, v in state.items()}
    with pytest.raises(RuntimeError) as want:
        t_model.load_state_dict({k: torch.tensor(_np(v)) for k, v in plain.items()})
    with pytest.raises(RuntimeError) as got:
        m_model.load_state_dict(plain)
    assert str(got.value) == str(want.value)
    # the plain model takes the unprefixed keys; nanoGPT's strip of the prefix
    m_model._orig_mod.load_state_dict(plain)
    fresh = _mlp(minigrad)
    fresh.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in m_model.state_dict().items()})
    x = minigrad.tensor(_data(2)[0])
    np.testing.assert_array_equal(_np(fresh(x)), _np(m_model(x)))


def test_a_state_dict_loaded_into_a_compiled_module_is_seen_by_the_next_replay():
    model = minigrad.compile(_mlp(minigrad))
    x = minigrad.tensor(_data(2)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        model(x)
        model(x)
        other = _mlp(minigrad, skip=True)
        with minigrad.no_grad():
            for p in other.parameters():
                p.mul_(3)
        model.load_state_dict({"_orig_mod." + k: v for k, v in other.state_dict().items()})
        np.testing.assert_array_equal(_np(model(x)), _np(other(x)))


def test_the_unknown_backend_error_is_pytorchs():
    with pytest.raises(Exception) as want:
        torch.compile(lambda x: x, backend="nonesuch")
    with pytest.raises(Exception) as got:
        minigrad.compile(lambda x: x, backend="nonesuch")
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def _resets(T, compile):
    model = _mlp(T)
    cm = compile(model)
    x = T.tensor(_data(3)[0])
    out = [_np(cm(x))]
    T._dynamo.reset()
    out.append(_np(cm(x)))
    T.compiler.reset()
    with T.no_grad():
        model.fc2.weight.add_(1.0)
    out.append(_np(cm(x)))
    T._dynamo.config.suppress_errors = True
    try:
        out.append(_np(cm(x)))
    finally:
        T._dynamo.config.suppress_errors = False
    return out, cm


def test_reset_and_suppress_errors_between_calls():
    _three_ways(_resets)


def _disabled_helper(T, compile):
    class Block(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 4)

        @T.compiler.disable
        def scale(self, h):
            return h * 0.5

        def forward(self, x):
            return self.scale(self.lin(x)) + (1.0 if T.compiler.is_compiling() else 0.0) * 0

    block = Block()
    torch.manual_seed(0)
    _load(T, block, {"lin." + k: _np(v) for k, v in torch.nn.Linear(4, 4).state_dict().items()})
    cb = compile(block)
    x = T.tensor(_data(3)[0])
    out = []
    for _ in range(3):
        y = cb(x)
        y.sum().backward()
        out += [_np(y), _np(block.lin.weight.grad)]
    return out, cb


def test_a_submodules_method_under_compiler_disable():
    """The call reaching the disabled method runs eagerly from then on, said in one line."""
    lines = []
    model = _three_ways(_disabled_helper, lines=lines)
    assert lines == ["minigrad.compile: Block: running eagerly: _disabled_helper.<locals>.Block.scale is marked "
                     "minigrad.compiler.disable"]
    assert _stats(model).eager_calls == 2


def test_is_compiling_inside_a_compiled_model():
    seen = []

    class M(minigrad.nn.Module):
        def forward(self, x):
            seen.append(minigrad.compiler.is_compiling())
            return x + 1 if minigrad.compiler.is_compiling() else x - 1

    m = minigrad.compile(M())
    x = minigrad.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        outs = [_np(m(x)) for _ in range(3)]
    assert not minigrad.compiler.is_compiling()
    # as torch.compile's: the traced branch is the one every compiled call runs
    t = torch.compile(_torch_is_compiling_model(), backend="eager")
    want = _np(t(torch.ones(2)))
    for o in outs:
        np.testing.assert_array_equal(o, want)


def _torch_is_compiling_model():
    class M(torch.nn.Module):
        def forward(self, x):
            return x + 1 if torch.compiler.is_compiling() else x - 1
    return M()


def _stats(compiled):
    return getattr(compiled, "_compiled", compiled).stats


def _branches(T, compile):
    """A config flag flipped between calls, through the compiled module and on the module itself, and a
    batch of one (the forward's shape branch)."""
    model = compile(_mlp(T))
    x = T.tensor(_data(3)[0])
    out = [model(x), model(x[:1])]
    model.skip = False
    out += [model(x), model(x[:1])]
    getattr(model, "_orig_mod", model).skip = True
    out += [model(x), model(x[:1])]
    return [_np(o) for o in out], model


def test_a_branch_on_a_config_flag_and_on_a_shape_follows_each_call():
    model = _three_ways(_branches)
    assert model._orig_mod.skip is True and _stats(model).replays == 2


def _accumulate_by_step_number(T, compile):
    """Gradient accumulation decided inside the compiled step from the step number it is passed."""
    model = _mlp(T)
    opt = T.optim.SGD(model.parameters(), lr=0.1)

    @compile
    def step(xb, i):
        loss = model(xb).pow(2).mean() / 4
        loss.backward()
        if (i + 1) % 4 == 0:
            opt.step()
            opt.zero_grad()
        return loss

    x = T.tensor(_data(3)[0])
    out = [_np(step(x, i)) for i in range(12)]
    return out + [_np(p) for p in model.parameters()], step


def test_accumulation_decided_from_the_step_number_inside_the_compiled_step():
    _three_ways(_accumulate_by_step_number)


def _input_gradient(T, compile):
    """An adversarial step: the input requires grad, its gradient read after the backward."""
    model = compile(_mlp(T))
    out = []
    for seed in range(3):
        x = T.tensor(_data(4, seed=seed)[0]).requires_grad_(True)
        loss = T.nn.functional.cross_entropy(model(x), T.tensor([0, 1, 2, 0]))
        loss.backward()
        out += [_np(x.grad), _np(model((x + 0.1 * x.grad.sign()).detach()))]
    return out, model


def test_an_input_gradient_through_a_compiled_model():
    model = _three_ways(_input_gradient)
    assert _stats(model).replays == 4


def _batch_norm(T, compile):
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(4, 6), T.nn.BatchNorm1d(6), T.nn.ReLU(), T.nn.Linear(6, 2))
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(),
                                    torch.nn.Linear(6, 2))
    _load(T, net, _weights(reference))
    model = compile(net)
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    x, _ = _data(30, seed=5)
    out = []
    for i in range(5):
        model.train()
        loss = model(T.tensor(x[6 * i:6 * i + 6])).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with T.no_grad():
            out += [_np(loss), _np(model(T.tensor(x[:3])))]
    return out + [_np(v) for v in net.state_dict().values()], model


def test_batch_norm_statistics_through_train_and_eval_switches():
    model = _three_ways(_batch_norm)
    assert _stats(model).replays == 8


def _reseeded_noise(T, compile):
    """Noise and dropout drawn inside a compiled function, the seed and the RNG state set between calls,
    and a generator passed in."""
    F = T.nn.functional

    @compile
    def noisy(x, p):
        return F.dropout(x + T.randn_like(x) * 0.1, p=p, training=True)

    x = T.ones(3, 4)
    out = []
    for i in range(6):
        if i % 2 == 0:
            T.manual_seed(7)
        if i == 3:
            state = T.get_rng_state()
        if i == 5:
            T.set_rng_state(state)
        out.append(_np(noisy(x, 0.5 if i < 4 else 0.25)))
    g = T.Generator().manual_seed(3)

    @compile
    def shifted(x, g):
        return x + T.randn(x.shape, generator=g)

    out += [_np(shifted(x, g)) for _ in range(3)]
    g.manual_seed(3)
    out.append(_np(shifted(x, g)))
    return out, (noisy, shifted)


def test_random_draws_inside_a_compiled_function_follow_the_seed_set_between_calls():
    noisy, shifted = _three_ways(_reseeded_noise, rng=True)
    assert noisy.stats.replays == 4 and shifted.stats.replays == 3
