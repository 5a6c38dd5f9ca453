"""The names PyTorch scripts use around torch.compile: Module.compile, torch.compiler's functions and
torch._dynamo's config, reset and hints, each doing what it says (or, where shapes are static here,
accepted and changing nothing)."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
from minigrad.compiler import RecompileWarning


def _mlp():
    minigrad.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))


def test_module_compile_compiles_its_calls_in_place():
    m = _mlp()
    x = minigrad.randn(5, 3)
    with minigrad.no_grad():
        want = m(x).array.copy()
        assert m.compile() is None  # in place, as PyTorch's
        outs = [m(x).array for _ in range(3)]
    assert all(np.array_equal(o, want) for o in outs)
    assert m.forward.stats.captures == 1 and m.forward.stats.replays == 2
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]  # nothing new registered
    with minigrad.no_grad():  # the module's own state is still what a replay reads
        m[0].weight.array[...] = 0.0
        assert not np.array_equal(m(x).array, want)


def test_module_compile_passes_compiles_arguments():
    m = _mlp()
    m.compile(fullgraph=True)
    assert m.forward.fullgraph
    with pytest.raises(minigrad._dynamo.exc.InvalidBackend, match="Invalid backend: 'nope'"):
        _mlp().compile(backend="nope")


def test_reset_forgets_every_program():
    f = minigrad.compile(lambda x: x * 2)
    g = minigrad.compile(lambda x: x + 1)
    x = minigrad.ones(3)
    for fn in (f, g, f, g):
        fn(x)
    assert f.stats.replays == g.stats.replays == 1
    minigrad.compiler.reset()
    f(x), g(x)
    assert f.stats.captures == g.stats.captures == 2
    minigrad._dynamo.reset()
    f(x)
    assert f.stats.captures == 3


def test_disable_makes_the_call_run_eagerly_with_a_reason():
    calls = []

    @minigrad.compiler.disable
    def log_it(t):
        calls.append(t.shape)
        return t

    @minigrad.compile
    def f(x):
        return log_it(x * 2) + 1

    x = minigrad.ones(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        outs = [f(x) for _ in range(3)]
    assert all(np.array_equal(o.array, [3.0, 3.0]) for o in outs)
    assert len(calls) == 3  # the Python ran every time: never replayed without it
    assert f.stats.replays == 0 and f.stats.eager_calls == 2
    said = [str(m.message) for m in w if issubclass(m.category, RecompileWarning)]
    assert len(said) == 1 and "log_it is marked minigrad.compiler.disable" in said[0]
    with pytest.raises(RuntimeError, match="fullgraph=True.*marked minigrad.compiler.disable"):
        minigrad.compile(lambda x: log_it(x), fullgraph=True)(x)
    assert minigrad.compiler.disable(recursive=False)(len) is not len  # the decorator with arguments


def test_is_compiling_is_true_only_while_capturing():
    seen = []
    note = seen.append  # (a list the function changes itself would make it run eagerly)

    @minigrad.compile
    def f(x):
        note(minigrad.compiler.is_compiling())
        return x + 1

    assert not minigrad.compiler.is_compiling()
    x = minigrad.ones(2)
    f(x), f(x)
    assert seen == [True]  # the capture ran the Python; the replay did not
    assert minigrad._dynamo.is_compiling is minigrad.compiler.is_compiling


def test_dynamo_config_cache_size_limit_is_the_program_cache():
    before = minigrad._dynamo.config.cache_size_limit
    try:
        minigrad._dynamo.config.cache_size_limit = 2
        assert minigrad.compiler.CACHE_SIZE_LIMIT == 2 and minigrad._dynamo.config.recompile_limit == 2
        f = minigrad.compile(lambda x: x + 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            for n in (1, 2, 3):
                f(minigrad.ones(n))
        assert f.stats.captures == 2 and f.stats.eager_calls == 1
        with pytest.raises(ValueError, match="positive int"):
            minigrad._dynamo.config.cache_size_limit = 0
    finally:
        minigrad._dynamo.config.cache_size_limit = before
    minigrad._dynamo.config.suppress_errors = True  # accepted
    assert minigrad._dynamo.config.suppress_errors is True
    with pytest.raises(AttributeError, match=r"torch._dynamo.config.cache_limit does not exist"):
        minigrad._dynamo.config.cache_limit = 3


def test_a_full_cache_missed_call_after_call_runs_eagerly_from_then_on():
    # with the cache full, a call that misses runs eagerly; once as many calls again have missed with no
    # replay between, the function stops computing its guard key (a cost of its own) and runs eagerly
    f = minigrad.compile(lambda x: x * 2)
    f.cache_size_limit = 2
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", RecompileWarning)
        for n in (1, 2, 3, 1, 4, 5, 2):  # misses 3, 4, 5 are each followed by a replay before the third
            assert f(minigrad.ones(n)).tolist() == [2.0] * n
        assert f.always_eager is None and (f.stats.captures, f.stats.replays, f.stats.eager_calls) == (2, 2, 3)
        for n in (6, 7, 8, 1):
            assert f(minigrad.ones(n)).tolist() == [2.0] * n
    assert f.always_eager is not None and (f.stats.replays, f.stats.eager_calls) == (2, 7)  # (1: eager too)
    assert sum("running eagerly from now on: the cache of 2 programs is full" in str(w.message) for w in seen) == 1
    f.reset()
    f(minigrad.ones(1))
    assert f.stats.captures == 3


def test_hints_are_accepted():
    x = minigrad.ones(4, 3)
    assert minigrad._dynamo.mark_dynamic(x, 0) is None and minigrad._dynamo.mark_static(x) is None
    assert minigrad.compiler.allow_in_graph(len) is len and minigrad.compiler.assume_constant_result(len) is len
    assert minigrad.compiler.cudagraph_mark_step_begin() is None
    assert minigrad.compiler.list_backends() == ["cudagraphs", "inductor", "minigrad"]
    assert minigrad._dynamo.maybe_mark_dynamic(x, 0) is None and minigrad.compiler.is_exporting() is False
    # `torch._dynamo.list_backends(exclude_tags=())`, as PyTorch's: the debug backends too
    assert minigrad._dynamo.list_backends(exclude_tags=()) == ["aot_eager", "cudagraphs", "eager", "inductor",
                                                               "minigrad"]


def test_a_scripts_unwrap_of_a_compiled_model_through_dynamos_eval_frame():
    # `if isinstance(model, torch._dynamo.eval_frame.OptimizedModule): model = model._orig_mod` before saving
    torch = pytest.importorskip("torch")
    for lib in (minigrad, torch):
        model = lib.nn.Linear(2, 2)
        compiled = lib.compile(model)
        assert isinstance(compiled, lib._dynamo.eval_frame.OptimizedModule)
        assert not isinstance(model, lib._dynamo.eval_frame.OptimizedModule)
        assert compiled._orig_mod is model
    from minigrad._dynamo.eval_frame import OptimizedModule

    assert OptimizedModule is type(minigrad.compile(nn.Linear(2, 2))) and issubclass(OptimizedModule, nn.Module)


def test_a_compiled_module_is_a_module_as_pytorchs_optimized_module():
    block = _mlp()
    cb = minigrad.compile(block)
    assert isinstance(cb, nn.Module) and type(cb).__name__ == "OptimizedModule" and cb._orig_mod is block
    assert cb.train() is cb and cb.eval() is cb and cb.to("cpu") is cb and not block.training  # (the child's mode)
    cb.train()
    assert list(cb.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias", "_orig_mod.2.weight", "_orig_mod.2.bias"]
    assert repr(cb).startswith("OptimizedModule(\n  (_orig_mod): Sequential(")
    # compiling each block of a model: the compiled blocks nest in containers, and train as the plain ones
    plain = nn.Sequential(_mlp(), nn.ReLU(), nn.Linear(2, 2))
    minigrad.manual_seed(0)
    inner = nn.Sequential(minigrad.compile(_mlp()), nn.ReLU(), nn.Linear(2, 2))
    inner[2].load_state_dict(plain[2].state_dict())
    assert [k for k, _ in inner.named_parameters()][:2] == ["0._orig_mod.0.weight", "0._orig_mod.0.bias"]
    for _ in range(3):
        x = minigrad.randn(4, 3)
        for m in (plain, inner):
            m.zero_grad()
            m(x).square().sum().backward()
        assert all(np.array_equal(p.grad.array, q.grad.array) for p, q in zip(plain.parameters(), inner.parameters()))
    assert inner[0]._compiled.stats.replays == 2


def test_a_copy_of_a_compiled_module_replays_its_own_parameters():
    import copy

    cb = minigrad.compile(_mlp())
    x = minigrad.randn(2, 3)
    with minigrad.no_grad():
        cb(x), cb(x)
        ema = copy.deepcopy(cb)  # (an EMA of a compiled model, say)
        ema._orig_mod[0].weight.mul_(0.5)
        outs = [ema(x).array for _ in range(3)]
        want = ema._orig_mod(x).array
    assert ema._orig_mod is not cb._orig_mod and ema._compiled.modules[0] is ema._orig_mod
    assert all(np.array_equal(o, want) for o in outs) and ema._compiled.stats.replays == 2
    with minigrad.no_grad():
        assert not np.array_equal(cb(x).array, want)
