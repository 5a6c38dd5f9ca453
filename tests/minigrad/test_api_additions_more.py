"""torch.func's linearize/functionalize/replace_all_batch_norm_modules_, torch.library's op registration,
nn.attention's backend checks, top-level ops and Tensor methods: each compared with torch's."""

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


# ---- torch.library ------------------------------------------------------------------------------------------

def _setup_sin(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward_sin(ctx, g):
    x, = ctx.saved_tensors
    return g * x.cos()


def test_library_define_impl_autograd_opcheck():
    results = []
    for lib_mod, ops, backend in ((minigrad.library, minigrad.ops, minigrad), (torch.library, torch.ops, torch)):
        lib = lib_mod.Library("mg_apimore_a", "DEF")
        results.append([repr(lib), lib.define("mysin(Tensor x) -> Tensor")])
        lib.impl("mysin", lambda x: x.sin(), "CPU")
        x = backend.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = ops.mg_apimore_a.mysin(x)
        report = lib_mod.opcheck(ops.mg_apimore_a.mysin, (x,), raise_exception=False)
        results.append([y.detach().numpy().round(6).tolist(), type(y.grad_fn).__name__,
                        {k: v if v == "SUCCESS" else type(v).__name__ == "AssertionError" for k, v in report.items()}])
        lib_mod.register_autograd("mg_apimore_a::mysin", _backward_sin, setup_context=_setup_sin)
        lib_mod.register_fake("mg_apimore_a::mysin")(lambda x, b=backend: b.empty_like(x))
        y = ops.mg_apimore_a.mysin.default(x)
        y.sum().backward()
        fresh = backend.tensor([0.5, 1.0, 2.0], requires_grad=True)
        results.append([x.grad.numpy().round(6).tolist(), type(y.grad_fn).__name__,
                        lib_mod.opcheck(ops.mg_apimore_a.mysin, (fresh,),  # (torch's AOT check needs its compiler)
                                        test_utils=("test_schema", "test_autograd_registration", "test_faketensor"))])
        with pytest.raises(AttributeError) as e:
            _ = ops.mg_apimore_a.nope
        results.append(str(e.value))
    ours, theirs = results[:4], results[4:]
    assert ours == theirs
    with pytest.raises(RuntimeError) as em:
        minigrad.library.Library("mg_apimore_a", "DEF")
    with pytest.raises(RuntimeError) as et:
        torch.library.Library("mg_apimore_a", "DEF")
    assert str(em.value) == str(et.value).split("  If you")[0]  # (torch's goes on with C++ registration sites)
    _raises(lambda: minigrad.library.Library("mg_apimore_b", "BAD"), lambda: torch.library.Library("mg_apimore_b", "BAD"),
            ValueError)


def test_library_define_and_impl_functions():
    for lib_mod, ops, backend in ((minigrad.library, minigrad.ops, minigrad), (torch.library, torch.ops, torch)):
        lib_mod.define("mg_apimore_c::scale", "(Tensor x, float a) -> Tensor")
        lib_mod.impl("mg_apimore_c::scale", "cpu")(lambda x, a: x * a)
        assert ops.mg_apimore_c.scale(backend.ones(2), 3.0).tolist() == [3.0, 3.0]


def test_infer_schema():
    from typing import List, Optional

    for lib_mod, T in ((minigrad.library, minigrad.Tensor), (torch.library, torch.Tensor)):
        def g(x: T, n: int, s: float = 1.0, y: Optional[T] = None, b: bool = True, l: List[int] = None,
              st: str = "a") -> T: ...

        def h(x: T, out: T, o2: T) -> None: ...

        def k(x: T) -> tuple[T, T]: ...

        def bad(x: T, n) -> T: ...

        got = [lib_mod.infer_schema(g, mutates_args=()), lib_mod.infer_schema(h, mutates_args={"out", "o2"}),
               lib_mod.infer_schema(h, op_name="h", mutates_args="unknown"), lib_mod.infer_schema(k, mutates_args=())]
        with pytest.raises(ValueError) as e:
            lib_mod.infer_schema(bad, mutates_args=())
        got.append(str(e.value).replace("torch.", "minigrad."))
        if lib_mod is minigrad.library:
            ours = got
    assert ours == got
