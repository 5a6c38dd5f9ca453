"""A compiled training step's Adam / AdamW step replayed in its short form (Adam._replay_form): the same
bits as eager after N steps (parameters, gradients, exp_avg, exp_avg_sq, step counts), with what may
change between calls read at each call (a scheduler's lr, a frozen parameter, a loaded state dict, a
step hook: the whole step then), and with the numba kernels off."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends


def _model():
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))


def _setup(opt_cls, compiled, **kw):
    minigrad.manual_seed(0)
    model = _model()
    opt = opt_cls(model.parameters(), lr=1e-2, **kw)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, opt, (minigrad.compile(step) if compiled else step)


def _batches(n):
    rng = np.random.default_rng(1)
    return [(minigrad.tensor(rng.standard_normal((8, 6)).astype(np.float32)), minigrad.tensor(rng.integers(0, 3, 8)))
            for _ in range(n)]


def _run(opt_cls, compiled, n=6, between=None, **kw):
    """n steps, `between(i, model, opt)` before each call; -> (model, opt, losses, fn)."""
    model, opt, fn = _setup(opt_cls, compiled, **kw)
    losses = []
    for i, (x, y) in enumerate(_batches(n)):
        if between is not None:
            between(i, model, opt)
        losses.append(fn(x, y).array.copy())
    return model, opt, losses, fn


def _same(a, b):
    (m1, o1, l1, _), (m2, o2, l2, _) = a, b
    assert all(np.array_equal(u, v) for u, v in zip(l1, l2))
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert np.array_equal(p.array, q.array)
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert np.array_equal(p.grad.array, q.grad.array)
        s1, s2 = o1.state[p], o2.state[q]
        assert sorted(s1) == sorted(s2)
        for k in s1:
            assert s1[k].array.dtype == s2[k].array.dtype and np.array_equal(s1[k].array, s2[k].array), k


@pytest.mark.parametrize("opt_cls,kw", [(nn.optim.Adam, dict(weight_decay=0.1)), (nn.optim.AdamW, {}),
                                        (nn.optim.AdamW, dict(foreach=False, betas=(0.8, 0.9)))])
def test_same_bits_as_eager(opt_cls, kw):
    _same(_run(opt_cls, False, **kw), _run(opt_cls, True, **kw))


def test_replay_runs_no_full_step(group_steps):
    *_, fn = _run(nn.optim.AdamW, True, n=5)
    assert fn.stats.replays == 4
    assert len(group_steps) == 1  # the capture's step only


def test_replay_form_with_kernels_off_falls_back_to_full_step(group_steps):
    was = backends.get_kernels()
    backends.set_kernels("numpy")
    try:
            eager, compiled = _run(nn.optim.AdamW, False), _run(nn.optim.AdamW, True)
    finally:
        backends.set_kernels(was)
    _same(eager, compiled)
    assert compiled[3].stats.replays == 5 and len(group_steps) == 6 + 6  # (no kernel to prepare: each step whole)


def test_scheduler_lr_read_at_each_replay():
    def between(i, model, opt):
        if i == 0:
            opt.scheduler = nn.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e))
            opt.scheduler2 = nn.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        else:
            opt.scheduler.step()
            opt.scheduler2.step()

    eager, compiled = _run(nn.optim.AdamW, False, between=between), _run(nn.optim.AdamW, True, between=between)
    assert eager[1].param_groups[0]["lr"] != 1e-2
    _same(eager, compiled)


@pytest.mark.filterwarnings("ignore:.*capturing again")
def test_parameter_frozen_mid_run():
    def between(i, model, opt):
        if i == 3:
            model[2].weight.requires_grad_(False)

    eager, compiled = _run(nn.optim.Adam, False, n=7, between=between, weight_decay=0.1), \
        _run(nn.optim.Adam, True, n=7, between=between, weight_decay=0.1)
    assert compiled[0][2].weight.grad is None and float(compiled[1].state[compiled[0][2].weight]["step"]) == 3
    _same(eager, compiled)


def test_state_dict_loaded_between_calls():
    saved = {}

    def between(i, model, opt):
        if i == 2:
            saved["sd"] = opt.state_dict()
            saved["sd"] = {"state": {k: {n: t.clone() for n, t in v.items()} for k, v in saved["sd"]["state"].items()},
                           "param_groups": saved["sd"]["param_groups"]}
        if i == 4:
            opt.load_state_dict(saved["sd"])

    eager, compiled = _run(nn.optim.AdamW, False, n=7, between=between), \
        _run(nn.optim.AdamW, True, n=7, between=between)
    assert float(compiled[1].state[next(compiled[0].parameters())]["step"]) == 5
    _same(eager, compiled)


def test_step_hook_registered_between_calls(group_steps):
    seen = []

    def between(i, model, opt):
        if i == 3:
            def hook(o, args, kwargs):
                seen.append(o)
                o.param_groups[0]["lr"] *= 0.5

            opt.register_step_pre_hook(hook)

    eager = _run(nn.optim.AdamW, False, between=between)
    group_steps.clear()
    compiled = _run(nn.optim.AdamW, True, between=between)
    assert seen.count(compiled[1]) == 3 and len(group_steps) == 1 + 3  # the capture, then the hooked steps
    _same(eager, compiled)


def test_gradient_given_to_a_parameter_the_capture_skipped():
    """A parameter of the optimizer outside the model: no gradient at the capture, one given between calls."""

    def run(compiled):
        minigrad.manual_seed(0)
        model, extra = _model(), minigrad.zeros(4, requires_grad=True)
        opt = nn.optim.AdamW([*model.parameters(), extra], lr=1e-2)

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        fn = minigrad.compile(step) if compiled else step
        for i, (x, y) in enumerate(_batches(5)):
            if i >= 3:
                extra.grad = minigrad.ones(4)
            fn(x, y)
        return model, opt, extra

    (m1, o1, e1), (m2, o2, e2) = run(False), run(True)
    assert float(o2.state[e2]["step"]) == 2 and not np.array_equal(e2.array, np.zeros(4, np.float32))
    assert np.array_equal(e1.array, e2.array)
    _same((m1, o1, [], None), (m2, o2, [], None))


def test_state_tensor_replaced_between_calls():
    def between(i, model, opt):
        if i == 3:
            p = model[0].weight
            opt.state[p]["exp_avg"] = minigrad.zeros_like(p)
            opt.state[p]["exp_avg_sq"] = minigrad.full_like(p, 1.0)

    eager, compiled = _run(nn.optim.Adam, False, between=between), _run(nn.optim.Adam, True, between=between)
    _same(eager, compiled)
