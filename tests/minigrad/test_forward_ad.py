"""torch.autograd.forward_ad: dual tensors' tangents and the API's errors, against PyTorch."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
import nn
import nn.functional as F
from minigrad.func import functional_call

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return mg.tensor(a), torch.tensor(a)


def tangent(lib, y):
    t = (fwAD if lib is mg else tfwAD).unpack_dual(y).tangent
    return None if t is None else t.detach().numpy() if lib is torch else t.numpy()


def both(fn, *shapes):
    """fn(lib, dual...) run in each library's dual_level; the outputs' tangents."""
    res = []
    for lib, ad in ((mg, fwAD), (torch, tfwAD)):
        with ad.dual_level():
            duals = [ad.make_dual(pair(*s, seed=i)[lib is torch], pair(*s, seed=10 + i)[lib is torch])
                     for i, s in enumerate(shapes)]
            res.append(tangent(lib, fn(lib, *duals)))
    return res


@pytest.mark.parametrize("name,fn,shapes", [
    ("sin_mul", lambda lib, x: x.sin() * 2 + x * x, [(3, 4)]),
    ("matmul", lambda lib, x, w: lib.matmul(x, w).tanh(), [(3, 4), (4, 2)]),
    ("matvec", lambda lib, w, x: w @ x, [(2, 3), (3,)]),
    ("softmax_sum", lambda lib, x: x.softmax(-1).sum(0), [(3, 4)]),
    ("views", lambda lib, x: x.t()[1:, ::2].reshape(-1).exp(), [(3, 4)]),
    ("mean_pow", lambda lib, x: (x ** 3).mean(), [(5,)]),
])
def test_tangents_match_torch(name, fn, shapes):
    got, want = both(fn, *shapes)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_functional_and_module():
    def run(lib, x):
        F_ = F if lib is mg else torch.nn.functional
        lin = (nn if lib is mg else torch.nn).Linear(4, 3).double()
        w, b = pair(3, 4, seed=5), pair(3, seed=6)
        with (mg if lib is mg else torch).no_grad():
            lin.weight.copy_(w[lib is torch])
            lin.bias.copy_(b[lib is torch])
        return F_.log_softmax(F_.gelu(lin(x)), -1)
    got, want = both(run, (2, 4))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_functional_call_with_dual_parameters():
    outs = []
    for lib, ad, call in ((mg, fwAD, functional_call), (torch, tfwAD, torch.func.functional_call)):
        lin = (nn if lib is mg else torch.nn).Linear(3, 2).double()
        x = pair(4, 3)[lib is torch]
        with ad.dual_level():
            params = {k: ad.make_dual(pair(*p.shape, seed=i)[lib is torch], pair(*p.shape, seed=9 + i)[lib is torch])
                      for i, (k, p) in enumerate(lin.named_parameters())}
            outs.append(tangent(lib, call(lin, params, (x,))))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


def test_hessian_vector_product_forward_over_reverse():
    outs = []
    for lib, ad in ((mg, fwAD), (torch, tfwAD)):
        p, v = pair(4)[lib is torch].requires_grad_(), pair(4, seed=1)[lib is torch]
        with ad.dual_level():
            x = ad.make_dual(p, v)
            f = (x.sin() * x.exp()).sum() + (x ** 3).sum()
            g, = lib.autograd.grad(f, x, create_graph=True)
            outs.append(tangent(lib, g))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


def test_inplace_and_views_share_tangents():
    outs = []
    for lib, ad in ((mg, fwAD), (torch, tfwAD)):
        with ad.dual_level():
            d = ad.make_dual(pair(4)[lib is torch], lib.ones(4, dtype=lib.float64))
            v = d[:2]
            v.mul_(3)
            c = lib.zeros(5, dtype=lib.float64)
            c[1:3] = d[2:]
            e = pair(4, seed=3)[lib is torch]
            e.add_(d * 2)
            with lib.no_grad():
                n = d * 5
            outs.append([tangent(lib, t) for t in (d, v, c, e, n)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_no_tangent_cases_and_flags():
    x, t = mg.randn(3, dtype=mg.float64), mg.randn(3, dtype=mg.float64)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, t)
        assert not d.requires_grad and d.grad_fn is None
        assert fwAD.unpack_dual(d).tangent is t
        assert fwAD.unpack_dual(x).tangent is None  # made outside: no tangent
        assert fwAD.unpack_dual(d, level=5).tangent is None  # (PyTorch: no tangent at a level that is not entered)
        assert fwAD.unpack_dual(d.argmax()).tangent is None  # integer outputs carry none
        assert fwAD.unpack_dual(mg.zeros_like(d)).tangent is None
        assert fwAD.unpack_dual(d.float()).tangent.dtype == mg.float32
        y = d.exp()
        assert not y.requires_grad and y.grad_fn is None
        p = mg.randn(3, dtype=mg.float64, requires_grad=True)
        dp = fwAD.make_dual(p, t)
        assert dp.requires_grad and dp.grad_fn.name() == "ViewBackward0"
    u = fwAD.unpack_dual(y)
    assert u.tangent is None and type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")


def error_text(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value).__name__, str(e.value)


def error_of(lib, ad, case):
    """(type name, text) of what `case` raises in one library."""
    p, t = pair(3)[lib is torch], pair(3, seed=1)[lib is torch]

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            return g

    def inside(fn):
        with ad.dual_level():
            fn()
    return error_text({
        "outside": lambda: ad.make_dual(p, t),
        "size": lambda: inside(lambda: ad.make_dual(p, t[:2])),
        "int": lambda: inside(lambda: ad.make_dual(p.long(), t.long())),
        "twice": lambda: inside(lambda: ad.make_dual(ad.make_dual(p, t), t)),
        "level": lambda: inside(lambda: ad.make_dual(p, t, level=5)),
        "nested": lambda: inside(lambda: ad.enter_dual_level()),
        "exit": lambda: ad.exit_dual_level(),
        "exit_other": lambda: inside(lambda: ad.exit_dual_level(level=3)),
        "custom_fn": lambda: inside(lambda: Exp.apply(ad.make_dual(p, t))),
    }[case])


@pytest.mark.parametrize("case", ["outside", "size", "int", "twice", "level", "nested", "exit", "exit_other",
                                  "custom_fn"])
def test_errors_as_torch(case):
    kind, text = error_of(torch, tfwAD, case)
    assert error_of(mg, fwAD, case) == (kind, text.replace("torch.", "minigrad."))  # (dtypes named by the library)
    assert fwAD._level is None  # every case left the level it entered


def test_detach_and_data_carry_no_tangent_as_torch():
    torch = pytest.importorskip("torch")
    p = np.random.default_rng(3).standard_normal(5)
    results = []
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(p), lib.ones(5, dtype=lib.float64))
            assert fw.unpack_dual(d.detach()).tangent is None and fw.unpack_dual(d.data).tangent is None
            results.append(np.asarray(fw.unpack_dual(d * d.detach()).tangent.tolist()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_a_dropout_tangent_uses_the_outputs_mask():
    fw = mg.autograd.forward_ad
    p = mg.tensor(np.random.default_rng(4).standard_normal(200) + 3.0)
    with fw.dual_level():
        d = fw.make_dual(p, mg.ones(200, dtype=mg.float64))
        mg.manual_seed(1)
        primal, tangent = fw.unpack_dual(F.dropout(d, 0.5))
        # y = mask * x / (1 - p): the tangent is mask / (1 - p) = y / x, zero exactly where y is
        np.testing.assert_allclose(tangent.numpy(), (primal / p).numpy(), rtol=1e-12)
        after = mg.rand(3)
    mg.manual_seed(1)
    F.dropout(p, 0.5)
    assert np.array_equal(after.numpy(), mg.rand(3).numpy())  # (one op's draws taken once from the stream)
