"""torch.func's linearize/functionalize/replace_all_batch_norm_modules_, torch.library's op registration,
nn.attention's backend checks, top-level ops and Tensor methods: each compared with torch's."""
import warnings

import numpy as np
import pytest

import minigrad
import nn

torch = pytest.importorskip("torch")


def _raises(fn_m, fn_t, exc=RuntimeError):
    with pytest.raises(exc) as em:
        fn_m()
    with pytest.raises(exc) as et:
        fn_t()
    assert str(em.value) == str(et.value).replace("torch.", "minigrad.")


# ---- torch.func ---------------------------------------------------------------------------------------------

def test_linearize_values_and_errors():
    x = np.random.default_rng(0).standard_normal(3).astype(np.float32)
    xm, xt = minigrad.tensor(x), torch.tensor(x)
    f_m = lambda a, b: (a.sin() * b, a + b)  # noqa: E731
    f_t = lambda a, b: (a.sin() * b, a + b)  # noqa: E731
    out_m, jvp_m = minigrad.func.linearize(f_m, xm, xm * 2)
    out_t, jvp_t = torch.func.linearize(f_t, xt, xt * 2)
    for om, ot in zip(out_m, out_t):
        np.testing.assert_allclose(om.numpy(), ot.numpy(), rtol=1e-6)
        assert om.requires_grad == ot.requires_grad
    for _ in range(2):  # the kept graph serves each call
        t1, t2 = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
        for jm, jt in zip(jvp_m(minigrad.tensor(t1), minigrad.tensor(t2)), jvp_t(torch.tensor(t1), torch.tensor(t2))):
            np.testing.assert_allclose(jm.numpy(), jt.numpy(), rtol=1e-6)
    _raises(lambda: jvp_m(minigrad.ones(3)), lambda: jvp_t(torch.ones(3)))
    _raises(lambda: jvp_m(minigrad.ones(2), minigrad.ones(3)), lambda: jvp_t(torch.ones(2), torch.ones(3)))
    _raises(lambda: jvp_m(minigrad.ones(3, dtype=minigrad.float64), minigrad.ones(3)),
            lambda: jvp_t(torch.ones(3, dtype=torch.float64), torch.ones(3)))


def _mutating(a, b, c):
    a.add_(1)
    d = b * 2
    d.mul_(3)
    return d, a, b.view(-1), a.view(-1), b[0], c


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_mutates_inputs_as_torch(remove):
    ins = [np.arange(4, dtype=np.float32).reshape(2, 2), np.ones((2, 2), np.float32)]
    am, bm = (minigrad.tensor(x) for x in ins)
    at, bt = (torch.tensor(x) for x in ins)
    fm, ft = minigrad.func.functionalize(_mutating, remove=remove), torch.func.functionalize(_mutating, remove=remove)
    assert fm.__name__ == ft.__name__ == "_mutating"
    outs_m, outs_t = fm(am, bm, 7), ft(at, bt, 7)
    assert outs_m[5] == outs_t[5] == 7
    for om, ot in zip(outs_m[:5], outs_t[:5]):
        np.testing.assert_array_equal(om.numpy(), ot.numpy())
    for xm, xt in ((am, at), (bm, bt)):
        np.testing.assert_array_equal(xm.numpy(), xt.numpy())
    for om, ot in zip(outs_m[:5], outs_t[:5]):  # which outputs alias an input: none a mutated one
        om.add_(5)
        ot.add_(5)
        for xm, xt in ((am, at), (bm, bt)):
            np.testing.assert_array_equal(xm.numpy(), xt.numpy())
    _raises(lambda: minigrad.func.functionalize(_mutating, remove="x"), lambda: torch.func.functionalize(_mutating, remove="x"))


def test_replace_all_batch_norm_modules_():
    net_m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Sequential(nn.BatchNorm1d(2, track_running_stats=False)))
    net_t = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2),
                                torch.nn.Sequential(torch.nn.BatchNorm1d(2, track_running_stats=False)))
    assert minigrad.func.replace_all_batch_norm_modules_(net_m) is net_m
    assert torch.func.replace_all_batch_norm_modules_(net_t) is net_t
    for i in (1, 2):
        bm, bt = (net_m[1], net_t[1]) if i == 1 else (net_m[2][0], net_t[2][0])
        for name in ("running_mean", "running_var", "num_batches_tracked", "track_running_stats"):
            assert getattr(bm, name) == getattr(bt, name)
    assert [k for k, _ in net_m.state_dict().items()] == [k for k, _ in net_t.state_dict().items()]
