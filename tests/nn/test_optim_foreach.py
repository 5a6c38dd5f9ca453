"""`foreach=` / `fused=` are accepted as PyTorch's and give the same update as the default."""
import numpy as np
import pytest

import minigrad
import nn


def _run(opt_cls, steps=3, **kw):
    minigrad.manual_seed(0)
    params = [minigrad.randn(4, 3, requires_grad=True), minigrad.randn(5, requires_grad=True)]
    opt = opt_cls(params, lr=0.1, **kw)
    for _ in range(steps):
        loss = sum((p * p).sum() for p in params)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("opt_cls, extra", [
    (nn.optim.SGD, dict(momentum=0.9)),
    (nn.optim.Adam, {}),
    (nn.optim.AdamW, {}),
])
@pytest.mark.parametrize("flag", [dict(foreach=True), dict(fused=True), dict(foreach=False)])
def test_foreach_fused_give_the_default_update(opt_cls, extra, flag):
    base = _run(opt_cls, **extra)
    other = _run(opt_cls, **extra, **flag)
    for a, b in zip(base, other):
        np.testing.assert_array_equal(a, b)
    p = minigrad.zeros(2, requires_grad=True)
    group = opt_cls([p], lr=0.1, **extra, **flag).param_groups[0]
    assert all(group[k] == v for k, v in flag.items())


@pytest.mark.parametrize("opt_cls", [nn.optim.SGD, nn.optim.Adam, nn.optim.AdamW])
def test_foreach_and_fused_together_refused(opt_cls):
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        opt_cls([minigrad.zeros(2, requires_grad=True)], lr=0.1, foreach=True, fused=True)


@pytest.mark.parametrize("opt_cls, extra, flags", [
    (nn.optim.RMSprop, dict(momentum=0.9, centered=True), [dict(foreach=True), dict(foreach=False),
                                                           dict(capturable=True, differentiable=True)]),
    (nn.optim.Adagrad, dict(lr_decay=0.1), [dict(foreach=True), dict(fused=True), dict(foreach=False),
                                            dict(differentiable=True)]),
])
def test_rmsprop_adagrad_flags_give_the_default_update(opt_cls, extra, flags):
    """PyTorch's implementation flags (RMSprop has no `fused`, as in PyTorch) are kept in the groups."""
    base = _run(opt_cls, **extra)
    for flag in flags:
        other = _run(opt_cls, **extra, **flag)
        for a, b in zip(base, other):
            np.testing.assert_array_equal(a, b)
        group = opt_cls([minigrad.zeros(2, requires_grad=True)], lr=0.1, **extra, **flag).param_groups[0]
        assert all(group[k] == v for k, v in flag.items())


def test_rmsprop_has_no_fused_and_adagrad_refuses_both():
    with pytest.raises(TypeError):
        nn.optim.RMSprop([minigrad.zeros(2, requires_grad=True)], fused=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        nn.optim.Adagrad([minigrad.zeros(2, requires_grad=True)], foreach=True, fused=True)
