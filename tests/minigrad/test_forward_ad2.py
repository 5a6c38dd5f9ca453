"""forward_ad, continued: custom Functions' jvp, the repr of a dual, view tangents, ops' tangents, against PyTorch."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def fw(lib):
    return lib.autograd.forward_ad


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def tan(lib, y):
    t = fw(lib).unpack_dual(y).tangent
    return None if t is None else np.asarray(t.detach().tolist() if lib is torch else t.tolist())


def functions(lib):
    """The custom Functions of the cases below, in one library."""

    class Exp(lib.autograd.Function):  # the forward-mode AD tutorial's
        @staticmethod
        def forward(ctx, foo):
            result = foo.exp()
            ctx.save_for_forward(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            (foo,) = ctx.saved_tensors
            return gI * ctx.result + 0 * foo

    class MulAdd(lib.autograd.Function):  # setup_context style, several saved, several outputs
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(*inputs)

        @staticmethod
        def jvp(ctx, gx, gy):  # (zeros for an input without a tangent)
            x, y = ctx.saved_tensors
            return gx * y + x * gy, gx + gy

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def jvp(ctx, gx, gy):
            x, y = ctx.saved_tensors
            return (0 if gx is None else gx * y) + (0 if gy is None else gy * x)

    class Scale(lib.autograd.Function):  # a non-tensor argument gets None
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def jvp(ctx, gx, gk):
            assert gk is None
            return gx * ctx.k

    class Double_(lib.autograd.Function):  # in place: the jvp writes the input's tangent in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, gx):
            return gx.mul_(2)

    class Double2_(Double_):  # ... or is refused
        @staticmethod
        def jvp(ctx, gx):
            return gx * 2

    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            b = x * 3
            ctx.mark_non_differentiable(b)
            return x * 2, b

        @staticmethod
        def jvp(ctx, gx):
            return gx * 2, None

    class SplitBad(Split):
        @staticmethod
        def jvp(ctx, gx):
            return gx * 2, gx * 3

    class Few(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx, gx):
            return gx * 2

    class BadShape(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, gx):
            return gx[:1]

    class SavedForBackward(lib.autograd.Function):  # what jvp reads is save_for_forward's, not backward's
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def jvp(ctx, gx):
            return gx * len(ctx.saved_tensors) + 2

    return {k: v for k, v in locals().items() if k != "lib"}


def jvp_case(lib, name, requires_grad):
    """(the outputs' tangents, the inputs') of one custom Function's case, or (error type, text)."""
    fns = functions(lib)
    with fw(lib).dual_level():
        p = lib.tensor(arr(3), requires_grad=requires_grad)
        x = fw(lib).make_dual(p if not requires_grad else p * 1, lib.tensor(arr(3, seed=1)))
        y = lib.tensor(arr(3, seed=2))
        try:
            out = {"Exp": lambda: fns["Exp"].apply(x),
                   "MulAdd": lambda: fns["MulAdd"].apply(x, y),
                   "MulAdd_other": lambda: fns["MulAdd"].apply(y, x),
                   "NoMaterialize": lambda: fns["NoMaterialize"].apply(x, y),
                   "NoMaterialize_other": lambda: fns["NoMaterialize"].apply(y, x),
                   "Scale": lambda: fns["Scale"].apply(x, 3.0),
                   "Double_": lambda: fns["Double_"].apply(x * 1),
                   "Double2_": lambda: fns["Double2_"].apply(x * 1),
                   "Split": lambda: fns["Split"].apply(x),
                   "SplitBad": lambda: fns["SplitBad"].apply(x),
                   "Few": lambda: fns["Few"].apply(x),
                   "BadShape": lambda: fns["BadShape"].apply(x),
                   "SavedForBackward": lambda: fns["SavedForBackward"].apply(x),
                   }[name]()
        except Exception as e:
            return type(e).__name__, str(e)
        outs = out if isinstance(out, tuple) else (out,)
        return [tan(lib, o) for o in outs], tan(lib, x), [o.requires_grad for o in outs]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", ["Exp", "MulAdd", "MulAdd_other", "NoMaterialize", "NoMaterialize_other", "Scale",
                                  "Double_", "Double2_", "Split", "SplitBad", "Few", "BadShape", "SavedForBackward"])
def test_custom_function_jvp_as_torch(name, requires_grad):
    got, want = jvp_case(mg, name, requires_grad), jvp_case(torch, name, requires_grad)
    if isinstance(want[0], str):
        assert got == want
        return
    assert len(got[0]) == len(want[0]) and got[2] == want[2]
    for g, w in zip(got[0] + [got[1]], want[0] + [want[1]]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_custom_function_without_jvp_keeps_torchs_text():
    for lib in (mg, torch):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.exp()

        with fw(lib).dual_level():
            assert tan(lib, Exp.apply(lib.ones(2))) is None  # (no input with a tangent: the jvp is not needed)
            with pytest.raises(NotImplementedError) as e:
                Exp.apply(fw(lib).make_dual(lib.ones(2), lib.ones(2)))
        assert str(e.value) == "You must implement the jvp function for custom autograd.Function to use it with " \
                               "forward mode AD."


def reprs(lib):
    ad = fw(lib)
    f64 = lib.float64
    with ad.dual_level():
        d = ad.make_dual(lib.tensor([1.0, 2.0], dtype=f64), lib.ones(2, dtype=f64))
        p = lib.tensor([1.0, 2.0], dtype=f64, requires_grad=True)
        out = [repr(d), repr(d[0]), str(d), repr(ad.make_dual(p, lib.ones(2, dtype=f64))),
               repr(ad.make_dual(lib.tensor(1.0), lib.tensor(2.0))), repr(ad.make_dual(lib.ones(2, 3), lib.ones(2, 3))),
               repr(ad.make_dual(lib.ones(2, 30), lib.ones(2, 30))), repr(d.sin()), repr(ad.unpack_dual(d).primal)]
    return out + [repr(d)]  # (outside the level: no tangent)


def test_repr_of_a_dual_as_torch():
    assert reprs(mg) == [r.replace("torch.", "minigrad.") for r in reprs(torch)]


def F(lib):
    return lib.nn.functional


OPS = {  # name: (fn(lib, *duals), the duals' shapes)
    "clamp_tensor": (lambda lib, x, lo, hi: lib.clamp(x, min=lo, max=hi * 0.1 + 1), [(3, 4), (4,), (3, 1)]),
    "clamp_min_tensor": (lambda lib, x, lo: x.clamp(min=lo), [(3, 4), (3, 4)]),
    "where": (lambda lib, x, y: lib.where(x > 0, x, y), [(3, 4), (4,)]),
    "masked_fill": (lambda lib, x: x.masked_fill(x > 0.5, 2.0), [(3, 4)]),
    "lerp": (lambda lib, x, y, w: lib.lerp(x, y, w), [(3, 4), (4,), (3, 1)]),
    "lerp_scalar": (lambda lib, x, y: lib.lerp(x, y, 0.3), [(3, 4), (4,)]),
    "addcmul": (lambda lib, x, y, z: lib.addcmul(x, y, z, value=0.5), [(3, 4), (4,), (3, 1)]),
    "index_put": (lambda lib, x, v: x.index_put((lib.tensor([0, 2]),), v), [(3, 4), (4,)]),
    "sum_dim": (lambda lib, x: x.sum(1, keepdim=True), [(3, 4)]),
    "mean_dim": (lambda lib, x: x.mean((0, 2)), [(2, 3, 4)]),
    "amax": (lambda lib, x: x.amax(1), [(3, 4)]),
    "logsumexp": (lambda lib, x: x.logsumexp(0, keepdim=True), [(3, 4)]),
    "norm": (lambda lib, x: x.norm(dim=1), [(3, 4)]),
    "var": (lambda lib, x: x.var(1, keepdim=True), [(3, 4)]),
    "cumsum": (lambda lib, x: x.cumsum(1), [(3, 4)]),
    "cumprod": (lambda lib, x: x.cumprod(0), [(3, 4)]),
    "softmax": (lambda lib, x: F(lib).softmax(x, 0), [(3, 4)]),
    "log_softmax": (lambda lib, x: F(lib).log_softmax(x, -1), [(3, 4)]),
    "layer_norm": (lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "linear": (lambda lib, x, w, b: F(lib).linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "conv2d": (lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "embedding": (lambda lib, w: F(lib).embedding(lib.tensor([[0, 2], [1, 1]]), w), [(3, 4)]),
    "cross_entropy": (lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 3, 1])), [(3, 4)]),
    "matmul_batched": (lambda lib, a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)]),
    "matmul_vec": (lambda lib, a, b: a @ b, [(4,), (2, 4, 3)]),
    "cat": (lambda lib, a, b: lib.cat([a, b], 1), [(2, 3), (2, 2)]),
    "stack": (lambda lib, a, b: lib.stack([a, b], 0), [(2, 3), (2, 3)]),
    "split": (lambda lib, x: x.split([1, 3], 1)[1], [(2, 4)]),
    "chunk": (lambda lib, x: x.chunk(2, 0)[0], [(4, 3)]),
    "unbind": (lambda lib, x: x.unbind(1)[2], [(2, 4)]),
    "gather": (lambda lib, x: x.gather(1, lib.tensor([[0, 0], [3, 1], [2, 2]])), [(3, 4)]),
    "scatter": (lambda lib, x, s: x.scatter(1, lib.tensor([[0, 1], [3, 1], [2, 0]]), s), [(3, 4), (3, 2)]),
    "scatter_add": (lambda lib, x, s: x.scatter_add(0, lib.tensor([[0, 1, 2, 0]]), s), [(3, 4), (1, 4)]),
    "einsum": (lambda lib, a, b: lib.einsum("bij,jk->bik", a, b), [(2, 3, 4), (4, 5)]),
    "mul_broadcast": (lambda lib, a, b: a * b - b / (a * a + 1), [(3, 1), (4,)]),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), [(3, 4), (4,)]),
    "qr": (lambda lib, a: lib.linalg.qr(a)[1], [(4, 3)]),
    "eigvalsh": (lambda lib, a: lib.linalg.eigh(a + a.mT)[0], [(3, 3)]),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), [(3, 1), (4,)]),
}


def op_tangent(lib, name):
    fn, shapes = OPS[name]
    with fw(lib).dual_level():
        duals = [fw(lib).make_dual(lib.tensor(arr(*s, seed=i)), lib.tensor(arr(*s, seed=20 + i)))
                 for i, s in enumerate(shapes)]
        return tan(lib, fn(lib, *duals))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_tangents_match_torch(name):
    np.testing.assert_allclose(op_tangent(mg, name), op_tangent(torch, name), rtol=1e-10, atol=1e-12)


def test_a_views_tangent_is_read_from_its_bases():
    """What minigrad does (the module's docstring): a view's tangent is its base's at the view's place, read
    when asked for: the same values as PyTorch's, but a copy, where PyTorch's is a view of the base's."""
    got = []
    for lib in (mg, torch):
        with fw(lib).dual_level():
            d = fw(lib).make_dual(lib.tensor(arr(3, 4)), lib.tensor(arr(3, 4, seed=1)))
            v = d.t()[1:]
            got.append((tan(lib, v), tan(lib, d[1])))
            fw(lib).unpack_dual(v).tangent.zero_()
            if lib is mg:  # (a copy: the base's tangent is as it was)
                np.testing.assert_array_equal(tan(lib, d), arr(3, 4, seed=1))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_func_jvp_inside_a_dual_level_refused_as_torch():
    got = []
    for lib in (mg, torch):
        x, v = lib.tensor(arr(3)), lib.tensor(arr(3, seed=1))
        out = lib.func.jvp(lambda t: t.sin(), (x,), (v,))[1]  # (outside any level: as ever)
        with fw(lib).dual_level():
            with pytest.raises(RuntimeError) as e:
                lib.func.jvp(lambda t: t.sin(), (x,), (v,))
        got.append((np.asarray(out.tolist()), str(e.value)))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12)
    assert got[0][1] == got[1][1]
