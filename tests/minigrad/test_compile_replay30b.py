"""Issue 30 continued: the replay forms of a compiled training step's clip_grad_norm_ (`_clip_form`: eager's
array calls, none of the Python around them) and of the CPU gelu, sigmoid and tanh kernels (prepared steps:
the kernels' compiled functions looked up once). Each replay gives eager's bits after N steps (losses,
parameters, gradients), each form is checked to be the one that ran, and the clip's form is checked to
give way to the full call where eager might do otherwise (a changed max_norm is read, not frozen)."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
import nn.utils as nn_utils


def _run(make, compiled, n=5, max_norm=0.05, frozen=(), unused=False, norm_type=2.0):
    """n steps (cross-entropy, backward, clip_grad_norm_, AdamW, zero_grad) of `make()` on (12, 8) inputs:
    (model, losses, grads after each clip, norms, fn)."""
    minigrad.manual_seed(0)
    model = make()
    for i in frozen:
        list(model.parameters())[i].requires_grad_(False)
    extra = nn.Linear(3, 3) if unused else None  # (in the clip's list, never given a gradient)
    params = list(model.parameters()) + ([] if extra is None else list(extra.parameters()))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        norm = nn_utils.clip_grad_norm_(params, max_norm, norm_type)
        grads = [None if p.grad is None else p.grad * 1 for p in params]  # (the clipped gradients, copied)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss, norm, grads

    fn = minigrad.compile(step) if compiled else step
    rng = np.random.default_rng(3)
    losses, grads, norms = [], [], []
    for _ in range(n):
        x = minigrad.tensor(rng.standard_normal((12, 8)).astype(np.float32))
        y = minigrad.tensor(rng.integers(0, 5, (12,)))
        loss, norm, g = fn(x, y)
        losses.append(loss.array.copy())
        norms.append(norm.array.copy())
        grads.append([None if t is None else t.array.copy() for t in g])
    return model, losses, grads, norms, fn


def _same(a, b):
    (m1, l1, g1, n1, _), (m2, l2, g2, n2, _) = a, b
    assert all(np.array_equal(u, v) for u, v in zip(l1, l2))
    assert all(np.array_equal(u, v) and u.dtype == v.dtype for u, v in zip(n1, n2))
    for s1, s2 in zip(g1, g2):
        assert all((u is None and v is None) or np.array_equal(u, v) for u, v in zip(s1, s2))
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert np.array_equal(p.array, q.array)


def _mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 16), nn.Sigmoid(),
                         nn.Linear(16, 5))


def _clip_call(fn):
    """The compiled program's clip_grad_norm_ (its `_CompiledClip`)."""
    (program,) = fn.cache.values()
    (clip,) = [v for v in program._run_steps.__globals__.values() if type(v) is nn_utils._CompiledClip]
    return clip


@pytest.fixture
def full_calls(monkeypatch):
    """How many times eager's clip computed a total norm (the full call, not the replay form)."""
    calls = []
    total_norm = nn_utils._total_norm
    monkeypatch.setattr(nn_utils, "_total_norm", lambda *a, **k: calls.append(1) or total_norm(*a, **k))
    return calls


@pytest.mark.parametrize("case", ["plain", "frozen", "unused", "no_clipping"])
def test_clip_form_bit_for_bit(case, full_calls):
    """After the capture (the full call, which makes the form), the form runs at each replay: eager's
    norms, clipped gradients, losses and parameters; a frozen parameter and one outside the model (no
    gradient) among the parameters too, and a max_norm above the norm (nothing scaled)."""
    kwargs = {"plain": {}, "frozen": {"frozen": (0, 3)}, "unused": {"unused": True},
              "no_clipping": {"max_norm": 1e6}}[case]
    eager = _run(_mlp, False, **kwargs)
    eager_calls = len(full_calls)
    compiled = _run(_mlp, True, **kwargs)
    _same(eager, compiled)
    assert eager_calls == 5 and len(full_calls) - eager_calls == 1  # (the capture's; the form at each replay)
    assert _clip_call(compiled[-1]).form is not None


def test_clip_other_norm_types_take_the_full_call(full_calls):
    """norm_type 1 or inf: no form (`_clip_form` is the 2-norm's); each replay the full call, eager's bits."""
    for norm_type in (1.0, float("inf")):
        full_calls.clear()
        eager, compiled = _run(_mlp, False, norm_type=norm_type), _run(_mlp, True, norm_type=norm_type)
        _same(eager, compiled)
        assert len(full_calls) == 10


def _grads_of(params):
    return [None if p.grad is None else p.grad.array.copy() for p in params]


def test_clip_form_falls_back(full_calls):
    """The compiled clip called on parameters whose gradients changed as a step might change them, beside
    eager's clip_grad_norm_ on copies: a changed max_norm (read fresh by the form), a replaced gradient (its
    new array read), a parameter without a gradient, then with it again (the full call, a new form), a
    non-finite gradient (eager's scaling, and eager's error with error_if_nonfinite), another norm_type."""
    compiled = _run(_mlp, True, n=3)
    clip = _clip_call(compiled[-1])
    assert clip.form is not None
    rng = np.random.default_rng(5)
    params = list(compiled[0].parameters())
    twins = [minigrad.tensor(p.array.copy(), requires_grad=True) for p in params]

    def give(grads):
        for p, t, g in zip(params, twins, grads):
            p.grad = None if g is None else minigrad.tensor(g.copy())
            t.grad = None if g is None else minigrad.tensor(g.copy())

    def check(max_norm, full, norm_type=2.0, error=False):
        before = len(full_calls)
        n1 = clip(params, max_norm, norm_type, error, None)
        n2 = nn_utils.clip_grad_norm_(twins, max_norm, norm_type, error)
        assert np.array_equal(n1.array, n2.array, equal_nan=True) and n1.array.dtype == n2.array.dtype
        assert all((u is None and v is None) or np.array_equal(u, v, equal_nan=True)
                   for u, v in zip(_grads_of(params), _grads_of(twins)))
        assert len(full_calls) - before == 1 + full  # (eager's call, and the compiled one's where it fell back)

    grads = [rng.standard_normal(p.shape).astype(np.float32) for p in params]
    give(grads)
    check(0.5, full=False)
    give(grads)
    check(3.0, full=False)  # (another max_norm: read at the call)
    grads[2] = grads[2] * 7
    give(grads)
    check(0.5, full=False)  # (replaced gradients: new arrays)
    give(grads[:4] + [None] + grads[5:])
    check(0.5, full=True)  # (a parameter without gradient)
    check_form = clip.form
    give(grads[:4] + [None] + grads[5:])
    check(0.5, full=False)  # (the form made for that set)
    give(grads)
    check(0.5, full=True)  # (the gradient back)
    assert clip.form is not check_form
    bad = [g.copy() for g in grads]
    bad[1][0] = np.inf
    give(bad)
    with np.errstate(invalid="raise"):  # (eager's scaling by 0 under its own errstate: no warning either way)
        check(0.5, full=True)
    give(bad)
    with pytest.raises(RuntimeError, match="non-finite") as e1:
        clip(params, 0.5, 2.0, True, None)
    with pytest.raises(RuntimeError) as e2:
        nn_utils.clip_grad_norm_(twins, 0.5, 2.0, True)
    assert str(e1.value) == str(e2.value)
    give(grads)
    check(0.5, full=True, norm_type=1.0)
    give(grads)
    check(0.5, full=False)
    for p, t in zip(params, twins):
        assert p.grad._version == t.grad._version


def test_clip_matches_torch():
    """The form's norm and clipped gradients against torch 2.13's clip_grad_norm_ (float32: the sums'
    orders differ, a few roundings apart)."""
    torch = pytest.importorskip("torch")
    compiled = _run(_mlp, True, n=3)
    clip = _clip_call(compiled[-1])
    params = list(compiled[0].parameters())
    rng = np.random.default_rng(7)
    grads = [rng.standard_normal(p.shape).astype(np.float32) for p in params]
    tparams = [torch.zeros(p.shape, requires_grad=True) for p in params]
    for p, t, g in zip(params, tparams, grads):
        p.grad, t.grad = minigrad.tensor(g.copy()), torch.tensor(g.copy())
    n1 = clip(params, 0.5, 2.0, False, None)
    n2 = torch.nn.utils.clip_grad_norm_(tparams, 0.5)
    assert n1.array.dtype == np.float32
    np.testing.assert_allclose(n1.array, n2.numpy(), rtol=1e-5)
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.grad.array, t.grad.numpy(), rtol=1e-5, atol=1e-8)


def test_gelu_and_sigmoid_prepared_steps_bit_for_bit():
    """The CPU gelu and sigmoid kernels' prepared steps (the mlp's GELU and Sigmoid): eager's bits after 5
    steps, and the prepared forms are the ones the program calls. (Tanh is numpy's tanh: no kernel.)"""
    from minigrad import backends

    x = np.ones((12, 32), np.float32)
    if backends.find("gelu", x, "none") is None or backends.find("sigmoid", x[:, :16]) is None:
        pytest.skip("no CPU gelu/sigmoid kernel here")
    eager, compiled = _run(_mlp, False), _run(_mlp, True)
    _same(eager, compiled)
    (program,) = compiled[-1].cache.values()
    steps = [v for v in program._run_steps.__globals__.values() if getattr(v, "__qualname__", "") in
             ("prepared_step.<locals>.step_forward", "prepared_step.<locals>.step_backward")]
    assert len(steps) == 4 and {v.__module__ for v in steps} == {"minigrad.backends.cpu.gelu", "minigrad.backends.cpu.sigmoid"}


@pytest.mark.parametrize("op", ["gelu", "sigmoid"])
def test_prepared_steps_fall_back_on_other_arrays(op):
    """A prepared step given arrays unlike the capture's (read-only, non-contiguous, another shape, float64
    gradient) runs the backend's usual forward and backward: the same bits as they give."""
    mod = pytest.importorskip(f"minigrad.backends.cpu.{op}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 40)).astype(np.float32) * 3
    args = (x, "none") if op == "gelu" else (x,)
    if not mod.supports(*args):
        pytest.skip("no CPU kernel here")
    forward, backward = mod.prepared_step(*args)
    ro = x.copy()
    ro.setflags(write=False)
    for arg in (x, ro, np.asfortranarray(x), x[:, ::2].copy(), rng.standard_normal((8, 40)).astype(np.float32)):
        y, saved = forward(arg)
        y2 = mod.forward(arg, "none") if op == "gelu" else mod.forward(arg)
        assert np.array_equal(y, y2)
        for g in (np.ones_like(y), rng.standard_normal(y.shape).astype(np.float32).T.copy().T):
            (gx,) = backward(saved, g)
            gx2 = mod.backward(arg, y2, g, "none") if op == "gelu" else mod.backward(g, y2)
            assert np.array_equal(gx, gx2)
