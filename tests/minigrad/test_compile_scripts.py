"""minigrad.compile on the code people write around a training or generation step: each compiled run
gives the eager run's values (same seed), or runs eagerly with a warning."""
import warnings

import numpy as np
import pytest

import minigrad
import nn

from minigrad.compiler import RecompileWarning


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        return fn(*args)


def _same(want, got):
    """Eager's values and a compiled run's, as many and equal bit for bit."""
    assert len(got) == len(want)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def _run_both(run, *args):
    """`run(compiled, *args)` -> (values, what it compiled), eagerly and compiled (its warnings quiet): the
    values checked equal; returns what the compiled run compiled (for its stats)."""
    want, _ = run(False, *args)
    got, compiled = _quiet(run, True, *args)
    _same(want, got)
    return compiled


def test_a_module_hook_registered_or_removed_between_calls_is_another_program():
    minigrad.manual_seed(0)
    model = nn.Linear(3, 2)
    compiled = minigrad.compile(model)
    x = minigrad.randn(2, 3)
    _quiet(compiled, x)
    double = model.register_forward_hook(lambda m, args, out: out * 2)
    np.testing.assert_array_equal(_quiet(compiled, x).detach().numpy(), model(x).detach().numpy())
    plus = model.register_forward_hook(lambda m, args, out: out + 1)  # a second hook of the same kind
    np.testing.assert_array_equal(_quiet(compiled, x).detach().numpy(), model(x).detach().numpy())
    double.remove()
    plus.remove()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
    np.testing.assert_array_equal(got.detach().numpy(), model(x).detach().numpy())
    assert "a hook was registered or removed" in str(caught[0].message)


def test_a_forward_hook_that_keeps_activations_makes_the_call_run_eagerly():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    kept = {}
    model[1].register_forward_hook(lambda m, args, out: kept.__setitem__("relu", out))
    compiled = minigrad.compile(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with minigrad.no_grad():
            for _ in range(3):
                x = minigrad.randn(2, 3)
                compiled(x)
                np.testing.assert_array_equal(kept["relu"].numpy(), model[1](model[0](x)).numpy())
    assert [str(w.message).split(": ")[2] for w in caught] == ["running eagerly"]
    assert "a forward hook that returns None" in str(caught[0].message)


def _accumulating_run(compiled):
    """Gradient accumulation over 4 micro-batches, the step's branch on a counter kept in a list."""
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)
    calls = [0]

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y) / 4
        loss.backward()
        calls[0] += 1
        if calls[0] % 4 == 0:
            opt.step()
            opt.zero_grad()
        return loss

    if compiled:
        step = minigrad.compile(step)
    losses = [step(minigrad.randn(3, 4), minigrad.randint(0, 2, (3,))).detach().numpy() for _ in range(10)]
    return losses, [p.detach().numpy() for p in model.parameters()], calls[0], step


def test_a_counter_kept_in_a_list_the_step_changes_makes_it_run_eagerly():
    want_losses, want_params, want_calls, _ = _accumulating_run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, params, calls, step = _accumulating_run(compiled=True)
    np.testing.assert_array_equal(np.array(losses), np.array(want_losses))
    for p, q in zip(params, want_params):
        np.testing.assert_array_equal(p, q)
    assert calls == want_calls == 10
    assert len(caught) == 1 and "a change to closure variable 'calls'" in str(caught[0].message)
    assert step.stats.replays == 0


def test_a_number_in_a_dict_the_step_reads_changed_between_calls_is_another_program():
    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Linear(3, 1)
        opt = nn.optim.SGD(model.parameters(), lr=0.1)
        cfg, sizes = {"scale": 1.0, "clip": 1.0}, [2.0]

        def step(x):
            loss = (model(x) * cfg["scale"] * sizes[0]).pow(2).mean()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
            opt.step()
            opt.zero_grad()
            return loss

        step = minigrad.compile(step) if compiled else step
        losses = []
        for i in range(4):
            losses.append(step(minigrad.randn(2, 3)).item())
            cfg["scale"], sizes[0] = 1.0 + i, 3.0
        return losses, [p.detach().numpy() for p in model.parameters()]

    want_losses, want_params = run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, params = run(compiled=True)
    assert losses == want_losses
    for p, q in zip(params, want_params):
        np.testing.assert_array_equal(p, q)
    assert "closure variable 'cfg': item 'scale' changed: 1.0 -> 2.0" in str(caught[1].message)


def test_a_draw_from_pythons_or_numpys_global_generator_makes_the_call_run_eagerly():
    import random

    def run(compiled):
        random.seed(0)
        np.random.seed(0)
        minigrad.manual_seed(0)
        model = nn.Linear(3, 3)

        def augment(x):
            if random.random() < 0.5:  # a random flip, as data augmentation does
                x = x.flip(-1)
            return model(x) * float(np.random.rand())

        f = minigrad.compile(augment) if compiled else augment
        x = minigrad.arange(3.0).reshape(1, 3)
        return [f(x).detach().numpy() for _ in range(6)], random.random()

    want, want_next = run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, got_next = run(compiled=True)
    np.testing.assert_array_equal(np.array(got), np.array(want))
    assert got_next == want_next
    assert len(caught) == 1 and "a draw from Python's random module" in str(caught[0].message)


def test_a_hand_written_update_reads_the_schedulers_lr_of_each_call():
    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Linear(3, 1)
        opt = nn.optim.SGD(model.parameters(), lr=0.1)
        sched = nn.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            lr = opt.param_groups[0]["lr"]
            with minigrad.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
                    p.grad = None
            return loss

        step = minigrad.compile(step) if compiled else step
        for _ in range(3):
            step(minigrad.randn(2, 3))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (the scheduler's: no optimizer.step() ran)
                sched.step()
        return [p.detach().numpy() for p in model.parameters()]

    want = run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecompileWarning)
        got = run(compiled=True)
    for p, q in zip(got, want):
        np.testing.assert_array_equal(p, q)
    assert "closure variable 'opt'.param_groups[0]: item 'lr' changed: 0.1 -> 0.05" in str(caught[0].message)


def test_results_keep_their_containers_types_and_a_tensor_returned_twice_is_one_object():
    import collections

    Out = collections.namedtuple("Out", "logits loss")

    def f(x):
        y = x * 2
        return Out(y, y.sum()), collections.OrderedDict(a=y), (y, y)

    compiled = minigrad.compile(f)
    for _ in range(3):  # the capture, then replays
        out, od, (a, b) = compiled(minigrad.ones(2))
        assert type(out) is Out and out.loss.item() == 4.0
        assert type(od) is collections.OrderedDict
        assert a is b
    assert compiled.stats.replays == 2


def test_freezing_a_layer_between_steps_captures_again_and_says_what_changed():
    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
        opt = nn.optim.AdamW(model.parameters(), lr=0.1)

        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        step = minigrad.compile(step) if compiled else step
        for i in range(5):
            if i == 3:
                model[0].requires_grad_(False)
            step(minigrad.randn(3, 4))
        return [p.detach().numpy() for p in model.parameters()], [p.grad for p in model.parameters()]

    want, want_grads = run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, grads = run(compiled=True)
    for p, q in zip(got, want):
        np.testing.assert_array_equal(p, q)
    assert grads == want_grads == [None] * 4
    assert str(caught[0].message).endswith("a tensor the function reads from outside changed: requires_grad True -> False")


def test_compiles_arguments_are_checked_as_pytorchs():
    def f(x):
        return x + 1

    for backend in ("inductor", "aot_eager", "cudagraphs"):  # PyTorch's names: captured and replayed
        g = minigrad.compile(f, backend=backend)
        assert [g(minigrad.ones(1)).item() for _ in range(2)] == [2.0, 2.0] and g.stats.replays == 1
    checks = [(dict(mode="reduce-overhead", options={"a": 1}), RuntimeError,
               "Either mode or options can be specified, but both can't be specified at the same time."),
              (dict(mode="bogus"), RuntimeError, "Unrecognized mode=bogus, should be one of: default, lite, "
               "reduce-overhead, max-autotune-no-cudagraphs, max-autotune"),
              (dict(backend="nope"), minigrad._dynamo.exc.InvalidBackend,
               "Invalid backend: 'nope', see `torch._dynamo.list_backends()` for available backends.")]
    for kwargs, error, text in checks:
        with pytest.raises(error) as raised:
            minigrad.compile(f, **kwargs)
        assert str(raised.value) == text
    with pytest.raises(AssertionError, match=r"A callable function is expected, but <class 'int'> is provided\."):
        minigrad.compile(3)
    assert minigrad.compile(f, backend="eager", mode="bogus") is f  # (the mode is the inductor backend's)


def test_compiles_argument_errors_are_pytorchs():
    torch = pytest.importorskip("torch")
    for kwargs in (dict(mode="reduce-overhead", options={"a": 1}), dict(mode="bogus"), dict(backend="nope")):
        with pytest.raises(Exception) as want:
            torch.compile(lambda x: x, **kwargs)
        with pytest.raises(Exception) as got:
            minigrad.compile(lambda x: x, **kwargs)
        assert str(got.value) == str(want.value)
        assert type(got.value).__name__ == type(want.value).__name__


def test_a_state_the_step_keeps_in_a_dict_runs_eagerly_and_a_cache_it_fills_replays():
    minigrad.manual_seed(0)
    rnn = nn.GRU(3, 5)
    state = {"h": minigrad.zeros(1, 2, 5)}

    def step(x):
        out, state["h"] = rnn(x, state["h"])  # a hidden state carried from call to call
        return out.sum()

    compiled = minigrad.compile(step)
    xs = [minigrad.randn(4, 2, 3) for _ in range(4)]
    with warnings.catch_warnings(record=True) as caught, minigrad.no_grad():
        warnings.simplefilter("always")
        got = [compiled(x).item() for x in xs]
        h = state["h"]
        state["h"] = minigrad.zeros(1, 2, 5)
        want = [step(x).item() for x in xs]
    assert got == want and np.array_equal(h.numpy(), state["h"].numpy())
    assert len(caught) == 1 and "running eagerly from now on: a change to closure variable 'state'" in str(
        caught[0].message)

    masks = {}

    def masked(x):
        T = x.shape[-1]
        if T not in masks:  # a cache filled on first use: its new key is guarded, not a missed change
            masks[T] = minigrad.ones(T, T).triu(1).bool()
        return x.masked_fill(masks[T], 0.0).sum()

    compiled = minigrad.compile(masked)
    x = minigrad.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        assert [compiled(x).item() for _ in range(4)] == [masked(x).item()] * 4
    assert compiled.stats.replays == 2 and compiled.stats.eager_calls == 0


def test_the_config_settings_scripts_set_are_accepted_and_an_unknown_one_is_pytorchs_error():
    minigrad._inductor.config.coordinate_descent_tuning = True
    minigrad._inductor.config.triton.unique_kernel_names = True
    minigrad._inductor.config.fx_graph_cache = True
    minigrad._dynamo.config.inline_inbuilt_nn_modules = True
    assert minigrad._inductor.config.coordinate_descent_tuning is True
    assert minigrad._dynamo.config.accumulated_recompile_limit == 256
    with pytest.raises(AttributeError, match=r"^torch._inductor.config.bogus does not exist$"):
        minigrad._inductor.config.bogus = 1
    with pytest.raises(AttributeError, match=r"^torch._dynamo.config.bogus does not exist$"):
        _ = minigrad._dynamo.config.bogus
    minigrad._inductor.config.coordinate_descent_tuning = False


def test_graph_break_makes_the_call_run_eagerly():
    minigrad.manual_seed(0)
    model = nn.Linear(3, 2)

    def f(x):
        y = model(x)
        minigrad._dynamo.graph_break()
        return y.relu()

    compiled = minigrad.compile(f)
    x = minigrad.randn(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert all(np.array_equal(compiled(x).detach().numpy(), f(x).detach().numpy()) for _ in range(3))
    assert len(caught) == 1 and "graph_break()" in str(caught[0].message)
    with pytest.raises(RuntimeError, match="graph_break"):
        minigrad.compile(f, fullgraph=True)(x)


def test_keyword_arguments_and_dict_entries_in_another_order_are_another_program():
    torch = pytest.importorskip("torch")

    def f(a, b):
        return a - b * 2

    def g(batch):
        return batch["x"] - batch["y"] * 2

    x, y = np.ones(2, np.float32), np.zeros(2, np.float32)
    for lib, compile_ in ((torch, lambda fn: torch.compile(fn, backend="eager")), (minigrad, minigrad.compile)):
        cf, cg = compile_(f), compile_(g)
        X, Y = lib.tensor(x), lib.tensor(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            got = [cf(a=X, b=Y), cf(b=Y, a=X), cg({"x": X, "y": Y}), cg({"y": Y, "x": X}),
                   cg({"x": X, "y": Y, "z": X}), cf(X, b=Y)]
        assert [t.tolist() for t in got] == [[1.0, 1.0]] * 6, lib.__name__


def test_a_device_or_a_slice_made_anew_for_each_call_replays():
    def f(x, dev, rows):
        return x.to(dev)[rows] * 2

    compiled = minigrad.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompileWarning)
        got = [compiled(minigrad.ones(3), minigrad.device("cpu"), slice(0, 2)).tolist() for _ in range(3)]
    assert got == [[2.0, 2.0]] * 3 and compiled.stats.replays == 2
    with pytest.warns(RecompileWarning, match=r"argument 2 changed: \(0, 2, None\) -> \(1, 2, None\)"):
        assert compiled(minigrad.ones(3), minigrad.device("cpu"), slice(1, 2)).tolist() == [2.0]


class _Settings:  # a class as a namespace of settings, as scripts write one
    scale = 1.0
    extra = {"k": 2.0}


def test_a_class_of_settings_changed_between_calls_is_another_program():
    def f(x):
        return x * _Settings.scale * _Settings.extra["k"]

    compiled = minigrad.compile(f)
    got, want = [], []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            for _ in range(3):
                got.append(compiled(minigrad.ones(1)).item())
                want.append(f(minigrad.ones(1)).item())
                _Settings.scale += 1
                _Settings.extra["k"] += 1
    finally:
        _Settings.scale, _Settings.extra["k"] = 1.0, 2.0
    assert got == want == [2.0, 6.0, 12.0]


def test_a_module_backward_hook_sees_each_backward_once_under_a_compiled_forward():
    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        seen = []
        model[0].register_full_backward_hook(lambda m, grad_input, grad_output: seen.append(grad_output[0].clone()))
        forward = minigrad.compile(model) if compiled else model
        for _ in range(3):
            forward(minigrad.randn(2, 3)).pow(2).sum().backward()
        return [g.numpy() for g in seen], model[0].weight.grad.numpy()

    want, want_grad = run(compiled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        got, grad = run(compiled=True)
    assert len(got) == len(want) == 3  # (the capture's own backward, on stand-in gradients, did not reach the hook)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(grad, want_grad)


def test_a_draw_from_a_numpy_generator_the_function_reads_makes_the_call_run_eagerly():
    def run(compiled):
        rng = np.random.default_rng(0)

        def noisy(x):
            return x * float(rng.random())

        f = minigrad.compile(noisy) if compiled else noisy
        return [f(minigrad.ones(2)).tolist() for _ in range(3)], rng.random()

    want = run(compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run(compiled=True) == want
    assert len(caught) == 1 and "a numpy generator" in str(caught[0].message)


SCALE = 1.0


def _scaled(k, x):
    return x * SCALE * k


class _Scaler:
    def __call__(self, x):
        return x * SCALE


@minigrad.no_grad()
def _evaluate(x):
    return x * SCALE


def test_the_globals_of_a_partial_a_callable_object_and_a_decorated_function_are_guarded():
    import functools

    global SCALE
    compiled = [minigrad.compile(functools.partial(_scaled, 2.0)), minigrad.compile(_Scaler()),
                minigrad.compile(_evaluate)]
    eager = [functools.partial(_scaled, 2.0), _Scaler(), _evaluate]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            for _ in range(3):
                for c, e in zip(compiled, eager):
                    assert c(minigrad.ones(1)).item() == e(minigrad.ones(1)).item()
                SCALE += 1
    finally:
        SCALE = 1.0


def test_an_input_that_is_not_contiguous_is_another_program():
    def flat(x):
        return x.view(-1) * 2

    def branch(x):
        return x * 2 if x.is_contiguous() else x * 3

    a, b = minigrad.arange(6.0).reshape(2, 3), minigrad.arange(6.0).reshape(3, 2).t()
    compiled_flat, compiled_branch = minigrad.compile(flat), minigrad.compile(branch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled_flat(a)
        with pytest.raises(RuntimeError, match="view size is not compatible"):  # as eagerly
            compiled_flat(b)
        assert compiled_branch(a).tolist() == branch(a).tolist()
        assert compiled_branch(b).tolist() == branch(b).tolist()
    assert "not contiguous" in str(caught[0].message)


class _KeepsMaps(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.maps = []  # the attention maps of each call, kept for a plot

    def forward(self, x):
        a = self.proj(x).softmax(-1)
        self.maps.append(a.detach())
        return a


def test_a_list_a_modules_forward_appends_to_makes_it_run_eagerly():
    minigrad.manual_seed(0)
    model = _KeepsMaps()
    compiled = minigrad.compile(model)
    xs = [minigrad.randn(2, 4) for _ in range(3)]
    with warnings.catch_warnings(record=True) as caught, minigrad.no_grad():
        warnings.simplefilter("always")
        for x in xs:
            compiled(x)
    assert len(model.maps) == 3
    for kept, x in zip(model.maps, xs):
        np.testing.assert_array_equal(kept.numpy(), model.proj(x).softmax(-1).detach().numpy())
    assert len(caught) == 1 and "a change to _KeepsMaps.maps" in str(caught[0].message)


class _Weighted(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = [1.0, 2.0]  # the loss terms' weights, set by the script between epochs

    def forward(self, x):
        return x * self.weights[0] + self.weights[1]


def test_a_list_of_numbers_on_a_module_changed_between_calls_is_another_program():
    model = _Weighted()
    compiled = minigrad.compile(model)
    x = minigrad.ones(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        assert compiled(x).item() == model(x).item() == 3.0
        model.weights = [3.0, 4.0]  # rebound
        assert compiled(x).item() == model(x).item() == 7.0
        model.weights[0] = 10.0  # changed in place
        assert compiled(x).item() == model(x).item() == 14.0
        assert compiled(x).item() == 14.0
    assert compiled._compiled.stats.replays == 1


def test_set_stance_as_a_function_a_context_manager_and_a_decorator():
    def f(x):
        return x * 2

    compiled = minigrad.compile(f)
    with minigrad.compiler.set_stance("force_eager"):
        assert compiled(minigrad.ones(1)).item() == 2.0
    assert compiled.stats.eager_calls == 1 and compiled.stats.captures == 0
    compiled(minigrad.ones(1))  # default: captured
    with minigrad.compiler.set_stance("eager_on_recompile"):
        compiled(minigrad.ones(1))  # replayed
        compiled(minigrad.ones(2))  # would capture: eagerly instead
    assert (compiled.stats.captures, compiled.stats.replays, compiled.stats.eager_calls) == (1, 1, 2)

    @minigrad.compiler.set_stance("fail_on_recompile")
    def strict(x):
        return compiled(x)

    assert strict(minigrad.ones(1)).item() == 2.0  # a cached program replays
    with pytest.raises(RuntimeError, match="^Detected recompile when torch.compile stance is 'fail_on_recompile'. "):
        strict(minigrad.ones(3))
    minigrad.compiler.set_stance("force_eager")
    try:
        assert compiled(minigrad.ones(1)).item() == 2.0 and compiled.stats.replays == 2
    finally:
        minigrad.compiler.set_stance("default")
    compiled(minigrad.ones(1))
    assert compiled.stats.replays == 3
    with pytest.raises(RuntimeError, match="^non-default stance cannot have force_backend set$"):
        minigrad.compiler.set_stance("force_eager", force_backend="eager")


def test_set_logs_is_accepted():
    assert minigrad._logging.set_logs(recompiles=True, graph_breaks=True) is None


_WEIGHTS = np.ones(3, np.float32)  # (a numpy array a script changes in place between calls)


def test_a_tensor_made_from_a_numpy_array_copies_the_array_as_it_is_at_each_call():
    def weigh(x):
        return x * minigrad.tensor(_WEIGHTS)

    compiled = minigrad.compile(weigh)
    try:
        for i in range(3):
            assert compiled(minigrad.ones(3)).tolist() == weigh(minigrad.ones(3)).tolist() == [1.0 + i, 1.0, 1.0]
            _WEIGHTS[0] += 1
    finally:
        _WEIGHTS[0] = 1.0
    assert compiled.stats.replays == 2


def test_a_numpy_scalar_argument_is_guarded_by_type_and_value():
    def f(x, s):
        return x * s

    compiled = minigrad.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        got = [compiled(minigrad.ones(2), np.float32(v)).tolist() for v in (0.5, 0.5, 0.25, 0.5)]
        assert compiled(minigrad.ones(1), np.float64(0.5)).tolist() == [0.5]
    assert got == [[0.5, 0.5], [0.5, 0.5], [0.25, 0.25], [0.5, 0.5]]
    assert (compiled.stats.captures, compiled.stats.replays) == (3, 2)


def test_a_hook_on_an_input_registered_before_the_call_is_not_skipped():
    minigrad.manual_seed(0)
    model = nn.Linear(3, 1)

    def step(x):
        loss = model(x).sum()
        loss.backward()
        return loss

    compiled = minigrad.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for i in range(3):
            grads = []
            for f in (compiled, step):
                x = minigrad.ones(2, 3, requires_grad=True)
                if i:
                    x.register_hook(lambda g: g * 2)
                f(x)
                grads.append(x.grad.numpy())
            np.testing.assert_array_equal(grads[0], grads[1])


def test_a_list_grown_past_its_first_items_between_calls_is_another_program():
    history = [float(i) for i in range(70)]  # (longer than the items a guard looks at)

    def smoothed(x):
        return x * minigrad.tensor(history[-5:]).mean()

    compiled = minigrad.compile(smoothed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecompileWarning)
        for i in range(3):
            assert compiled(minigrad.ones(1)).item() == smoothed(minigrad.ones(1)).item()
            history.append(100.0 * (i + 1))
    assert "closure variable 'history': its length changed: 70 -> 71" in str(caught[0].message)


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = 1.0

    def forward(self, x):
        return self.fc(x) * self.scale


def test_an_attribute_set_through_a_compiled_module_is_set_on_the_module_it_runs():
    minigrad.manual_seed(0)
    model = _Scaled()
    compiled = minigrad.compile(model)
    x = minigrad.randn(4, 3)
    _quiet(compiled, x)
    compiled.scale = 2.0  # PyTorch's wrapper sets it on _orig_mod
    compiled.fc = nn.Linear(3, 2)
    assert model.scale == 2.0 and model.fc is compiled.fc and "scale" not in compiled.__dict__
    np.testing.assert_array_equal(_quiet(compiled, x).detach().numpy(), model(x).detach().numpy())
    compiled.eval()  # the wrapper's own flag and the module's
    assert not compiled.training and not model.training and not model.fc.training
    compiled.training = True  # (the module's own flag, as `model.training = True`; its children's unchanged)
    assert compiled.training and model.training and not model.fc.training


def test_a_compiled_module_saved_whole_loads_and_captures_anew_for_its_own_parameters(tmp_path):
    import copy

    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    compiled = minigrad.compile(model)
    x = minigrad.randn(2, 3)
    _quiet(compiled, x)
    _quiet(compiled, x)
    minigrad.save(compiled, tmp_path / "model.pt")  # PyTorch's torch.save(compiled_model)
    loaded = minigrad.load(tmp_path / "model.pt", weights_only=False)
    assert type(loaded) is type(compiled) and list(loaded.state_dict()) == list(compiled.state_dict())
    np.testing.assert_array_equal(_quiet(loaded, x).detach().numpy(), model(x).detach().numpy())
    copied = copy.deepcopy(compiled)
    with minigrad.no_grad():
        copied._orig_mod[0].weight.mul_(2)  # (the copy's own module)
    np.testing.assert_array_equal(_quiet(copied, x).detach().numpy(), copied._orig_mod(x).detach().numpy())
    np.testing.assert_array_equal(_quiet(loaded, x).detach().numpy(), model(x).detach().numpy())
    assert loaded._compiled.stats.replays == 1 and copied._compiled.stats.captures == 1


class _MaxNormed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4, max_norm=1.0, padding_idx=0)
        self.table = nn.Parameter(minigrad.randn(10, 4))
        self.fc = nn.Linear(4, 3)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1) + nn.functional.embedding(ids, self.table, max_norm=0.5).sum(1))


def _max_norm_run(compiled):
    minigrad.manual_seed(0)
    model = _MaxNormed()
    opt = nn.optim.Adam(model.parameters(), lr=0.1)

    def step(ids, y):
        loss = nn.functional.cross_entropy(model(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def evaluate(ids):
        with minigrad.no_grad():
            return model(ids)

    if compiled:
        step, evaluate = minigrad.compile(step), minigrad.compile(evaluate)
    seen = []
    for _ in range(5):
        seen.append(step(minigrad.randint(0, 10, (4, 3)), minigrad.randint(0, 3, (4,))).detach().numpy())
        seen.append(evaluate(minigrad.randint(0, 10, (4, 3))).numpy())  # (looks up, and renorms, other rows)
    return seen + [p.detach().numpy() for p in model.parameters()], (step, evaluate)


def test_an_embeddings_max_norm_renorms_the_rows_each_replay_looks_up():
    step, evaluate = _run_both(_max_norm_run)
    assert step.stats.replays == 4 and evaluate.stats.replays == 4


_OUT_BUFFER = minigrad.zeros(5, 3)


def _out_run(compiled):
    minigrad.manual_seed(0)
    w = minigrad.randn(4, 3)

    def f(x):
        o = minigrad.empty(5, 3)
        minigrad.matmul(x, w, out=o)  # (the 60-minute blitz's way)
        minigrad.add(o, 1.0, out=_OUT_BUFFER)  # a buffer from before the call
        values, indices = minigrad.zeros(5), minigrad.zeros(5, dtype=minigrad.int64)
        minigrad.max(o, dim=1, out=(values, indices))
        return o * 2, values, indices

    if compiled:
        f = minigrad.compile(f)
    seen = []
    for _ in range(4):
        seen += [t.numpy() for t in f(minigrad.randn(5, 4))] + [_OUT_BUFFER.numpy().copy()]
    return seen, f


def test_a_result_written_into_out_is_written_at_each_replay():
    f = _run_both(_out_run)
    assert f.stats.replays == 3


def test_apply_inside_the_function_makes_the_call_run_eagerly():
    def f(x):
        y = x.clone()
        y.apply_(lambda v: v * 2)
        return y + 1

    compiled = minigrad.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            x = minigrad.randn(3)
            np.testing.assert_array_equal(compiled(x).numpy(), f(x).numpy())
    assert "Tensor.apply_()" in str(caught[0].message) and compiled.stats.replays == 0


# ops whose result is computed from their inputs' values outside the autograd ops (a replay must compute them again)
_FROM_VALUES = {
    "isin": lambda x, i: (minigrad.isin(i, minigrad.tensor([1, 3])), minigrad.isin(i, i[:2], invert=True),
                          minigrad.isin(2, i)),
    "adaptive_max_pool": lambda x, i: (nn.functional.adaptive_max_pool2d(x.view(1, 3, 4), 2, return_indices=True)
                                       + nn.functional.adaptive_max_pool1d(x.view(1, 3, 4), 3, return_indices=True)
                                       + (nn.functional.adaptive_max_pool2d(x.view(1, 3, 4), (1, 3)),)),
    "max_pool_indices": lambda x, i: (nn.functional.max_pool2d(x.view(1, 1, 3, 4), 2, return_indices=True)
                                      + nn.functional.max_pool1d(x.view(1, 3, 4), 2, return_indices=True)),
    "lu_pivots": lambda x, i: (minigrad.linalg.lu(x[:, :3]).P, minigrad.lu_unpack(*minigrad.linalg.lu_factor(x[:, :3])).P,
                               minigrad.linalg.lu_solve(*minigrad.linalg.lu_factor(x[:, :3]), x[:, 3:])),
    "matrix_rank": lambda x, i: (minigrad.linalg.matrix_rank(x * (x > 0)), minigrad.linalg.matrix_rank(x[:2] * (x[0] > 0)),
                                 minigrad.linalg.matrix_rank(x[:, :3] @ x[:, :3].T * (x[0, 0] > 0), hermitian=True)),
}


@pytest.mark.parametrize("name", sorted(_FROM_VALUES))
def test_an_op_computed_from_its_inputs_values_is_computed_again_at_each_replay(name):
    fn = _FROM_VALUES[name]
    compiled = minigrad.compile(lambda x, i: fn(x, i))
    minigrad.manual_seed(0)
    for _ in range(4):
        x, i = minigrad.randn(3, 4), minigrad.randint(0, 6, (6,))
        for got, want in zip(_quiet(compiled, x, i), fn(x, i)):
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert compiled.stats.replays == 3


def _scaled_by_freq_run(compiled):
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Embedding(6, 4, scale_grad_by_freq=True), nn.Flatten(), nn.Linear(20, 3))
    opt = nn.optim.SGD(model.parameters(), lr=0.5)

    def step(ids, y):
        loss = nn.functional.cross_entropy(model(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = minigrad.compile(step)
    losses = [step(minigrad.randint(0, 6, (4, 5)), minigrad.randint(0, 3, (4,))).detach().numpy() for _ in range(5)]
    return losses + [p.detach().numpy() for p in model.parameters()], step


def test_an_embeddings_gradient_scaled_by_frequency_counts_each_replays_ids():
    step = _run_both(_scaled_by_freq_run)
    assert step.stats.replays == 4


def _with_a_nan_every_other_call(fn, nan_first):
    compiled = minigrad.compile(fn)
    minigrad.manual_seed(0)
    for k in range(4):
        x = minigrad.randn(3, 5)
        if (k % 2 == 0) == nan_first:
            x[1, 2] = float("nan")
        for got, want in zip(_quiet(compiled, x), fn(x)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    return compiled


@pytest.mark.parametrize("nan_first", [True, False])
def test_a_median_finds_each_calls_nans_at_each_replay(nan_first):
    def medians(x):
        return tuple(x.median(dim=1)) + tuple(x.nanmedian(dim=0, keepdim=True)) + (x.median(), x.nanmedian())

    assert _with_a_nan_every_other_call(medians, nan_first).stats.replays == 3


@pytest.mark.parametrize("nan_first", [True, False])
def test_a_quantile_of_floats_makes_the_call_run_eagerly(nan_first):
    def quantiles(x):
        return minigrad.quantile(x, 0.3, dim=1), minigrad.nanquantile(x, minigrad.tensor([0.2, 0.9]), dim=0)

    compiled = _with_a_nan_every_other_call(quantiles, nan_first)
    assert compiled.stats.replays == 0 and compiled.stats.eager_calls == 3


def _optimizer_state_run(compiled):
    minigrad.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = nn.optim.Adam(model.parameters(), lr=0.1)

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach() * opt.state[model.weight]["step"]  # (a Python int, one more each call)

    if compiled:
        step = minigrad.compile(step)
    seen = [step(minigrad.randn(5, 4), minigrad.randint(0, 3, (5,))).numpy() for _ in range(5)]
    return seen + [p.detach().numpy() for p in model.parameters()]


def test_a_number_read_from_an_optimizers_state_is_not_frozen():
    _same(_optimizer_state_run(compiled=False), _quiet(_optimizer_state_run, True))


def test_the_numbers_in_a_deque_or_a_namedtuple_the_function_reads_are_guarded():
    from collections import deque, namedtuple

    rewards = deque(maxlen=3)  # a moving baseline, filled outside the step
    Settings = namedtuple("Settings", "scale")
    settings = [Settings(1.0)]

    def f(x):
        return x * (sum(rewards) / max(len(rewards), 1)) * settings[0].scale

    compiled = minigrad.compile(f)
    for i in range(5):
        rewards.append(float(i + 1))
        settings[0] = Settings(float(i % 2 + 1))
        x = minigrad.ones(2)
        np.testing.assert_array_equal(_quiet(compiled, x).numpy(), f(x).numpy())

    log = deque()

    def logs(x):
        y = x * 2
        log.append(y)
        return y

    compiled = minigrad.compile(logs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            compiled(minigrad.ones(2))
    assert len(log) == 3 and "running eagerly from now on: a change to" in str(caught[0].message)


def test_an_index_of_a_tensor_and_an_int_replays():
    weights = minigrad.randn(6, 5, 4, requires_grad=True)

    def f(ids):
        picked = weights[ids, 0] + weights[1:, ids[:2] % 5, 2].sum()  # (indexing's two-step index)
        picked.sum().backward()
        grad, weights.grad = weights.grad, None
        return picked.detach(), grad

    compiled = minigrad.compile(f)
    minigrad.manual_seed(0)
    for _ in range(3):
        ids = minigrad.randint(0, 6, (6,))
        for got, want in zip(_quiet(compiled, ids), f(ids)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert compiled.stats.replays == 2


def _masked_loss_run(compiled):
    minigrad.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = nn.optim.SGD(model.parameters(), lr=0.5)

    def step(x, y, keep):
        out = model(x)[keep]  # the positions a mask keeps
        loss = nn.functional.cross_entropy(out, y[keep]) + out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = minigrad.compile(step)
    seen = []
    for _ in range(4):
        x, y = minigrad.randn(6, 4), minigrad.randint(0, 3, (6,))
        seen.append(step(x, y, minigrad.rand(6) < 0.6).detach().numpy())
    return seen + [p.detach().numpy() for p in model.parameters()], step


def test_boolean_mask_indexing_makes_the_call_run_eagerly():
    step = _run_both(_masked_loss_run)
    assert step.stats.replays == 0


def test_a_module_compiled_in_place_is_saved_whole_and_copied():
    import copy
    import pickle

    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.compile()  # PyTorch's Module.compile
    x = minigrad.randn(2, 3)
    _quiet(model, x)
    _quiet(model, x)
    for copied in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):  # each compiles its own
        assert copied.forward.fn.__self__ is copied
        with minigrad.no_grad():
            copied[0].weight.mul_(2)
        np.testing.assert_array_equal(_quiet(copied, x).detach().numpy(), nn.Sequential.forward(copied, x).detach().numpy())
    buffer = __import__("io").BytesIO()
    minigrad.save(model, buffer)  # (minigrad.load runs no module code: the loaded model runs eagerly)
    buffer.seek(0)
    loaded = minigrad.load(buffer, weights_only=False)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), _quiet(model, x).detach().numpy())


def _decomposition_run(compiled):
    minigrad.manual_seed(0)
    model = nn.Linear(4, 4)
    opt = nn.optim.SGD(model.parameters(), lr=0.01)

    def step(x):
        A = model(x)
        w, V = minigrad.linalg.eigh(A @ A.T)
        loss = minigrad.linalg.svdvals(A).sum() + minigrad.linalg.qr(A).R.diagonal().abs().sum() + V[:, -1].abs().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = minigrad.compile(step)
    seen = [step(minigrad.randn(4, 4)).detach().numpy() for _ in range(4)]
    return seen + [p.detach().numpy() for p in model.parameters()], step


def test_a_gradient_through_a_decomposition_is_eagers():
    _run_both(_decomposition_run)


def test_a_histogram_of_a_tensor_that_requires_grad_has_no_derivative_as_eagerly():
    weight = nn.Parameter(minigrad.randn(3, 4))

    def f(x):
        y = x * weight
        hist = minigrad.histogram(y, bins=4).hist
        assert hist.requires_grad and hist.grad_fn.name() == "NotImplemented"  # (PyTorch's node, no backward)
        counts = minigrad.histc(y, bins=4, min=-2, max=2) + hist.detach()
        assert not counts.requires_grad
        loss = y.sum() + counts.sum()
        loss.backward()
        grad, weight.grad = weight.grad, None
        return loss.detach(), grad

    compiled = minigrad.compile(f)
    for _ in range(3):
        x = minigrad.randn(3, 4)
        for got, want in zip(_quiet(compiled, x), f(x)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert compiled.stats.replays == 2


class _ScaledBy(minigrad.autograd.Function):  # PyTorch 2's style: a forward without ctx, and setup_context
    @staticmethod
    def forward(x, w):
        return x * w

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, (g * x).sum(0)


def _setup_context_run(compiled, module):
    minigrad.manual_seed(0)
    model = nn.Linear(4, 3)
    w = nn.Parameter(minigrad.ones(3))
    opt = nn.optim.SGD(list(model.parameters()) + [w], lr=0.1)
    forward = (lambda x: _ScaledBy.apply(model(x), w))
    if compiled and module:
        forward = minigrad.compile(forward)

    def step(x, y):
        loss = nn.functional.cross_entropy(forward(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    if compiled and not module:
        step = minigrad.compile(step)
    seen = [step(minigrad.randn(5, 4), minigrad.randint(0, 3, (5,))).numpy() for _ in range(4)]
    return seen + [p.detach().numpy() for p in opt.param_groups[0]["params"]]


@pytest.mark.parametrize("module", [False, True])
def test_a_function_with_setup_context_replays(module):
    _same(_setup_context_run(False, module), _quiet(_setup_context_run, True, module))


def test_masked_select_makes_the_call_run_eagerly():
    weight = nn.Parameter(minigrad.randn(3, 4))

    def f(x):
        picked = minigrad.masked_select(x * weight, x > 0)
        (picked * 2).sum().backward()
        grad, weight.grad = weight.grad, None
        return picked.detach(), grad

    compiled = minigrad.compile(f)
    minigrad.manual_seed(0)
    for _ in range(4):
        x = minigrad.randn(3, 4)
        for got, want in zip(_quiet(compiled, x), f(x)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert compiled.stats.replays == 0


def test_is_nonzero_makes_the_call_run_eagerly():
    def f(x, i):
        return x * minigrad.is_nonzero(i[0])  # (a Python bool of the data, as bool(i[0]))

    compiled = minigrad.compile(f)
    for k in range(3):
        x, i = minigrad.randn(3), minigrad.tensor([k % 2, 1])
        np.testing.assert_array_equal(_quiet(compiled, x, i).numpy(), f(x, i).numpy())
    assert compiled.stats.replays == 0
