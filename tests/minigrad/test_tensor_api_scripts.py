"""The tensor API as training scripts, notebooks and tutorials use it, against PyTorch: what they compute,
print and convert (the combinations and edges of single ops)."""
import collections
import re

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _both(make):
    """`make(lib)` under minigrad and under PyTorch: (value or exception type and text) for each (a type
    named in a text as minigrad names it: minigrad.FloatTensor for torch.FloatTensor)."""
    out = []
    for lib in (minigrad, torch):
        try:
            out.append(make(lib))
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            out.append((type(e).__name__, str(e).replace("minigrad.", "torch.")))
    return out


@pytest.mark.parametrize("data", [
    [True, 2], [True, 1.5], range(3), [range(2), range(2)], [np.float64(1.5), 2], [np.float32(1.5), 2.0],
    [np.float16(1), 1.5], [np.int32(1), np.int32(2)], [np.uint8(1), np.int8(1)], [[1, 2], [3.5, 4]],
    [np.array([1, 2], dtype=np.int32), [3, 4]], [], [[], []], (1, 2), [1, None], [1, "a"], [object()],
])
def test_tensor_infers_dtype_from_every_element(data):
    def make(lib):
        t = lib.tensor(data)
        return str(t.dtype).split(".")[1], list(t.shape), t.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "rand", "randn"])
@pytest.mark.parametrize("args", [
    "(2.5,)", "(2, 3.0)", "((2.0, 3),)", "([2, 3.0],)", "(2.0, 3)", "(2, 3, 4.0)", "([2.0, 3],)", "('a',)",
    "(np.float64(2.0),)", "(lib.tensor(2.0),)", "(None,)", "(2, None)", "(2, -1)", "((-1, 2),)", "(-3,)",
    "(lib.tensor(2), 3)", "(np.int64(2),)", "((2, 3),)", "(lib.Size([2]),)",
])
def test_sizes_that_are_not_ints_or_negative_raise_as_pytorch(fn, args):
    # torch.zeros(n / 2), torch.randn(batch, d // 2.0): PyTorch's argument parser's TypeError, its text
    def make(lib):
        return list(getattr(lib, fn)(*eval(args, {"lib": lib, "np": np})).shape)

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("call", [
    "lib.full((-1,), 2.)", "lib.full((2, -1), 2.)", "lib.randint(3, (-1,))", "lib.ones(1).new_zeros(-1)",
    "lib.ones(1).new_ones(2, -1)", "lib.ones(1).new_empty((2.0, 1))", "lib.ones(1).new_zeros(size=(2, 3))",
])
def test_other_makers_refuse_negative_and_float_sizes_as_pytorch(call):
    ours, theirs = _both(lambda lib: list(eval(call, {"lib": lib}).shape))
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "[lib.ones(1), lib.ones(1)]", "[lib.ones(1, 1) * 2, 3.5]", "[[lib.tensor(1.), 2.], [3, lib.tensor([4])]]",
    "[lib.tensor([3]), lib.tensor(True)]", "[lib.tensor([1.5], dtype=lib.float64)]", "(lib.tensor(2.5),)",
    "[lib.ones(2), lib.ones(2)]", "[lib.ones(0)]", "[lib.ones(2, dtype=lib.long)]", "[lib.tensor([True, False])]",
])
@pytest.mark.parametrize("dtype", [None, "float32", "int64", "bool"])
@pytest.mark.parametrize("ctor", ["tensor", "as_tensor", "FloatTensor", "LongTensor"])
def test_tensors_inside_lists_are_numbers(expr, dtype, ctor):
    # losses.append(loss_fn(out, y)) of (1,)-shaped outputs, then torch.tensor(losses): PyTorch reads each
    # tensor as one number (a 1-d result), and refuses larger ones by float(t) or operator.index(t)
    if dtype is not None and ctor.endswith("Tensor"):
        return

    def make(lib):
        data = eval(expr, {"lib": lib})
        kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        t = getattr(lib, ctor)(data, **kw)
        return str(t.dtype).split(".")[1], list(t.shape), t.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "S([2, 3]) + (4,)", "(4,) + S([2, 3])", "S([2, 3]) + S([1])", "S([2, 3])[1:]", "S([2, 3])[::-1]", "S([2, 3]) * 2",
    "2 * S([1])", "S([2, 3])[0]", "S([lib.tensor(3), np.int64(2), True])", "S([2.5])", "S(['a'])", "S([lib.tensor(2.)])",
    "S([2, 3]) + [4]", "lib.ones(2, 3).shape[:-1] + (5,)", "lib.ones(2, 3).size()[1:]",
])
def test_size_stays_a_size(expr):
    def make(lib):
        r = eval(expr, {"S": lib.Size, "lib": lib, "np": np})
        return type(r).__name__, repr(r).replace("minigrad.", "torch.")

    ours, theirs = _both(make)
    assert ours == theirs


_NAN_ROWS = [[1.0, float("nan"), 2.0, float("nan"), 0.0], [float("nan")] * 5, [4.0, 3.0, 2.0, 1.0, 0.0],
             [float("nan"), 1.0, 2.0, 3.0, 5.0]]


@pytest.mark.parametrize("expr", [
    "x.median()", "x.nanmedian()", "x.median(1)", "x.nanmedian(1)", "x.median(0, keepdim=True)", "x[2:].median()",
    "x.quantile(0.3, 1)", "x.nanquantile(0.3, 1)", "x.nanquantile(lib.tensor([0.3, 0.5]), 1, interpolation='nearest')",
    "x.nanquantile(0.3)", "x.quantile(0.3)", "x.nanquantile(0.5, 1, interpolation='midpoint')",
    "x.nanquantile(0.5, 1, keepdim=True, interpolation='lower')", "x[2:].quantile(0.25, 1, interpolation='higher')",
])
def test_median_and_quantile_of_nan(expr):
    def make(lib):
        r = eval(expr, {"x": lib.tensor(_NAN_ROWS), "lib": lib})
        return [t.tolist() for t in (r if isinstance(r, tuple) else (r,))]

    ours, theirs = _both(make)
    np.testing.assert_equal(ours, theirs)


def _warnings_of(lib, expr):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            eval(expr, {"lib": lib})
        except RuntimeError as e:
            return str(e)
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0], w.filename) for w in caught]


@pytest.mark.parametrize("expr", [
    "lib.tensor([1.]).std()", "lib.tensor([1., 2.]).var(correction=2)", "lib.ones(3, 1).var(1)", "lib.std(lib.tensor([1.]))",
    "lib.std_mean(lib.tensor([1.]))", "lib.var_mean(lib.tensor([1.]), 0)", "lib.tensor([1., 2.]).std()",
    "lib.tensor([]).mean()", "lib.ones(0, 3).mean(0)", "lib.var_mean(lib.tensor([1]))", "lib.std_mean(lib.tensor([True]))",
    "lib.tensor([1]).var()",
])
def test_spread_warnings_and_errors(expr):
    assert _warnings_of(minigrad, expr) == _warnings_of(torch, expr)


@pytest.mark.parametrize("expr", [
    "lib.tensor([]).max()", "lib.tensor([]).min()", "lib.tensor([]).amax()", "lib.tensor([]).amin()",
    "lib.max(lib.zeros(0, 3))", "lib.zeros(0, 3).aminmax()", "lib.zeros(0, 3).aminmax(dim=0)",
    "repr(lib.tensor([[3., 1.], [0., 5.]]).aminmax())", "repr(lib.tensor([3, 1]).aminmax(dim=0, keepdim=True))",
    "lib.tensor([[1., 2.], [3., 4.]]).topk(3)", "lib.tensor([1, 2]).requires_grad_()",
    "lib.tensor([1], requires_grad=True)", "lib.ones(2, dtype=lib.long, requires_grad=True)",
    "lib.arange(3, requires_grad=True)", "lib.nn.Parameter(lib.tensor([1]))", "lib.zeros_like(lib.tensor([1]), requires_grad=True)",
    "lib.tensor([1]).new_zeros(2, requires_grad=True)", "lib.tensor([1]).new_full((2,), 3, requires_grad=True)",
])
def test_reduction_and_grad_flag_texts(expr):
    def make(lib):
        return str(eval(expr, {"lib": lib})).replace("minigrad.", "torch.")

    ours, theirs = _both(make)
    if isinstance(ours, tuple):  # (an error: minigrad may name what it was given in parentheses after PyTorch's text)
        ours = (ours[0], re.sub(r" \([^()]*\)$", "", ours[1]))
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "lib.tensor([0, 1, -1, 2, -2, 3]) ** lib.tensor(-2)", "2 ** lib.tensor([-1, 0, 3])", "lib.pow(3, lib.tensor([-1, 2]))",
    "lib.tensor([2, 3, 0]) ** lib.tensor([-1, 2, -1])", "(-1) ** lib.tensor([-1, -2, -3], dtype=lib.int8)",
    "lib.tensor([3, 0, 200], dtype=lib.uint8) - 1", "lib.tensor([3, 0, 200], dtype=lib.uint8) + -3",
    "-3 * lib.tensor([3, 0, 200], dtype=lib.uint8)", "lib.tensor([3, 0, 200], dtype=lib.uint8) > -1",
    "lib.tensor([1, -2, 100], dtype=lib.int8) * 1000", "lib.tensor([1, -2, 100], dtype=lib.int8) / 1000",
    "lib.tensor([3, 0, 200], dtype=lib.uint8) / -3", "lib.tensor([1, -2, 100], dtype=lib.int8).div(1000)",
    "lib.tensor([1, -2, 100], dtype=lib.int8) // 1000", "lib.tensor([1, 2]) / 2", "lib.tensor([1, 2], dtype=lib.int32) / 2",
])
def test_integer_arithmetic_with_numbers(expr):
    def make(lib):
        r = eval(expr, {"lib": lib})
        return str(r.dtype).split(".")[1], r.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("src", [
    "x = lib.tensor([1, 2]); x.add_(0.5)", "x = lib.tensor([1, 2]); x /= 2", "x = lib.tensor([1, 2]); x.mul_(lib.tensor(2.5))",
    "x = lib.tensor([True, False]); x.add_(1)", "x = lib.tensor([1, 2]); x.add_(1, alpha=0.5)",
    "x = lib.tensor([1, 2]); x.add_(lib.tensor([1.5], dtype=lib.float64))", "x = lib.tensor([True]); x.sub_(True)",
    "x = lib.tensor([True]); x.sub_(1)", "x = lib.tensor([True]); x - True", "x = lib.tensor([True]); True - x",
    "x = lib.tensor([True]); x - lib.tensor([1])", "x = lib.tensor([5, -6]); x **= 2", "x = lib.tensor([5., -6.]); x //= 2",
    "x = lib.tensor([5, -6]); x %= 4", "x = lib.tensor([5, 6]); x &= 3", "x = lib.tensor([True, False]); x |= lib.tensor([False, True])",
    "x = lib.tensor([5, 6]); x ^= 1", "x = lib.tensor([5, 6]); x <<= 1", "x = lib.tensor([5, 6]); x >>= 1",
])
def test_inplace_ops_on_integer_and_bool_tensors(src):
    def make(lib):
        scope = {"lib": lib}
        exec(src, scope)
        x = scope["x"]
        return str(x.dtype).split(".")[1], x.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_augmented_assignment_writes_in_place():
    x = minigrad.tensor([5.0, -6.0])
    alias = x[:]
    for src in ("x **= 2", "x //= 3", "x %= 5"):
        exec(src, {"x": x})
    assert alias.tolist() == x.tolist() == [3.0, 2.0]


@pytest.mark.parametrize("expr", [
    "lib.cat([lib.tensor([]), x])", "lib.cat([x, lib.tensor([])], dim=2)", "lib.cat([lib.tensor([]), lib.tensor([])])",
    "lib.cat([lib.tensor([], dtype=lib.long), lib.tensor([[1, 2]])], 1)", "lib.cat([x, x[0]])",
    "lib.cat([x, x[:, :2, :3]], dim=0)", "lib.cat([lib.zeros(0, 3), x[0]])", "lib.cat([lib.tensor([]), x, lib.tensor(1.)])",
    "lib.cat([])", "lib.stack([])", "lib.cat([1, 2])", "lib.stack([x, 2])", "lib.cat(x)", "lib.cat([x, x[:, :, :2]], dim=-1)",
    "lib.cat((x, x[:, :1]), 1)", "lib.cat((x, x.double()), -1)", "lib.cat(t for t in (x, x))", "lib.cat((x, 2))",
    "lib.cat((x, x[:, :2, :3]), 2)", "lib.cat((x[0], x), 0)", "lib.cat((x,), axis=1)", "lib.cat(())",
    "lib.stack(x)", "lib.stack(t for t in (x, x))", "lib.stack((x, x), 1)", "lib.cat(collections.deque([x, x]))",
    "lib.cat(x.numpy())", "lib.stack(iter([x]))", "lib.cat(type('Rows', (list,), {})([x, x]), 1)",
])
def test_cat_as_scripts_use_it(expr):
    def make(lib):
        r = eval(expr, {"lib": lib, "x": lib.arange(24).reshape(2, 3, 4), "collections": collections})
        return str(r.dtype).split(".")[1], r.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_cat_onto_an_empty_start_keeps_the_gradient():
    w = minigrad.ones(2, 2, requires_grad=True)
    out = minigrad.tensor([])
    for _ in range(2):
        out = minigrad.cat([out, w * 2])
    out.sum().backward()
    assert out.shape == (4, 2) and w.grad.tolist() == [[4.0, 4.0], [4.0, 4.0]]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("src", [
    "x[[0, 0], [1, 1]] = lib.tensor([7., 8.])", "x[0] = lib.ones(3, 5)", "x[0] = lib.ones(2, 3, 4)",
    "x[0, :, [1, 2]] = lib.tensor([[1., 2., 3.], [4., 5., 6.]])", "x[:, 0] = lib.tensor([1., 2., 3.])",
    "x[x > 5] = lib.tensor([1., 2.])", "x[1:, 1] = lib.ones(2, 4)", "x[0] = lib.ones(4)",
    "x.index_put_((lib.tensor([0, 0]), lib.tensor([1, 1])), lib.tensor([1., 2.]))",
])
def test_setitem_shape_errors(src, grad):
    def make(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        if grad:
            x = x.requires_grad_() * 1
        exec(src, {"x": x, "lib": lib})
        return x.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "x[lib.tensor([1, 0], dtype=lib.uint8)]", "x[:, lib.tensor([1, 0, 1], dtype=lib.uint8)]",
    "x[lib.tensor([[1, 0, 1], [0, 0, 1]], dtype=lib.uint8)]",
])
def test_byte_tensor_index_is_a_mask(expr):
    def make(lib):
        with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
            return eval(expr, {"lib": lib, "x": lib.arange(6).reshape(2, 3)}).tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_numpy_force_of_a_tensor_requiring_grad():
    w = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        w.numpy()
    assert w.numpy(force=True).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("expr", [
    "lib.arange(lib.tensor(3))", "lib.arange(lib.tensor(3.))", "lib.arange(L.max())[None, :] < L[:, None]",
    "lib.arange(1, lib.tensor(4), 2)", "lib.ones(lib.tensor(2))", "lib.zeros(L.max(), 2)",
])
def test_sizes_and_bounds_from_0d_tensors(expr):
    def make(lib):
        r = eval(expr, {"lib": lib, "L": lib.tensor([2, 3])})
        return str(r.dtype).split(".")[1], r.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_autograd_error_hints():
    def modified(lib, anomaly):
        with lib.autograd.set_detect_anomaly(anomaly):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            b = a.sigmoid()
            c = b * 2
            b.mul_(3)
            c.sum().backward()

    for anomaly in (False, True):
        ours, theirs = _both(lambda lib, anomaly=anomaly: modified(lib, anomaly))
        assert ours[1].split("Hint: ")[1] == theirs[1].split("Hint: ")[1]

    def unused(lib):
        w, u = lib.ones(2, requires_grad=True), lib.ones(1, requires_grad=True)
        return lib.autograd.grad((w * 2).sum(), [w, u])

    ours, theirs = _both(unused)
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("other", ["b", 2.0, -3.0, 0.5, 2**40])
def test_float_remainder_is_pytorchs(dtype, other):
    a = np.array([-6, 6, -0.0, 0.0, 7, 5, -5, 3, -7.25, 1e4], dtype=dtype)
    b = np.array([2, -2, 3, -3, 0, np.inf, np.inf, -np.inf, 0.5, 3], dtype=dtype)

    def make(lib):
        x = lib.tensor(a)
        r = (x % lib.tensor(b) if other == "b" else x % other).numpy()
        return r.tolist(), (np.signbit(r) & ~np.isnan(r)).tolist()  # (the sign of zeros, which prints)

    ours, theirs = _both(make)
    np.testing.assert_equal(ours, theirs)


@pytest.mark.parametrize("expr", [
    "x.sum(dtype=lib.int32)", "x.sum(dtype=lib.int8)", "b.sum(dtype=lib.uint8)", "x.sum(dtype=lib.bool)", "x.sum(0, dtype=lib.int16)",
    "x.prod(dtype=lib.int32)", "x.cumsum(0, dtype=lib.int32)", "lib.tensor([1.5, 2.5]).sum(dtype=lib.int32)",
    "lib.tensor([100, 100], dtype=lib.int8).sum(dtype=lib.int8)", "x.nansum(dtype=lib.int32)", "x.sum()", "b.sum()", "x.int().prod()",
])
def test_integer_sums_keep_the_dtype_asked_for(expr):
    def make(lib):
        r = eval(expr, {"lib": lib, "x": lib.tensor([-2, 1, 3]), "b": lib.tensor([True, True])})
        return str(r.dtype).split(".")[1], r.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("index", [
    "(lib.tensor(-2), slice(-2, None), [1, -1])", "(lib.tensor(-1), None, [0], lib.tensor([False, True]))",
    "(lib.tensor(1), slice(None), lib.tensor([[0], [1]]))", "(lib.tensor(0), [1, 0], slice(None))",
    "(lib.tensor([0, 0]), lib.tensor([[False, True], [True, False], [False, True]]))",
    "([2, 2, 1], lib.tensor([True, True]))", "(lib.tensor([1]), lib.tensor([[0, 0]]), [0, 1, 0])",
])
def test_mixed_advanced_indexes(index):
    def make(lib):
        x = lib.arange(18).reshape(3, 3, 2)
        r = x[eval(index, {"lib": lib})]
        y = lib.arange(18).reshape(3, 3, 2)
        y[eval(index, {"lib": lib})] = -1
        return list(r.shape), r.tolist(), y.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_T_of_other_than_a_matrix_warns_once(monkeypatch):
    import warnings

    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for t in (minigrad.ones(2), minigrad.ones(2, 3, 4), minigrad.tensor(1.0), minigrad.tensor(2.0)):
            assert t.T.shape == t.shape[::-1]
        assert minigrad.ones(2, 3).T.shape == (3, 2)
    said = [str(w.message) for w in caught]
    assert len(said) == 2 and said[0].startswith("The use of `x.T` on tensors of dimension other than 2")
    assert said[1] == "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_half_erf_and_gelu_are_computed_in_float32(approximate):
    x = np.linspace(-8, 8, 801).astype(np.float16)

    def make(lib):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.gelu(t, approximate=approximate)
        y.backward(lib.ones_like(y))
        return t.detach().erf().numpy().astype(float), y.detach().numpy().astype(float), t.grad.numpy().astype(float)

    ours, theirs = _both(make)
    np.testing.assert_array_equal(ours[0], theirs[0])
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-5)  # (float16's last bit, at most)


def test_hardswish_gradient_at_its_ends():
    def make(lib):
        t = lib.tensor([-3.5, -3.0, -2.5, 0.0, 2.5, 3.0, 3.5], requires_grad=True)
        lib.nn.functional.hardswish(t).sum().backward()
        return t.grad.tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("data, dtype", [
    ([300], "uint8"), ([-1], "uint8"), ([1e10], "int32"), ([float("inf")], "int64"), ([float("nan")], "int8"),
    ([2**40], "int16"), (300, "uint8"), ([[1, -2], [3, 4]], "uint8"), ([1.7, -2.7], "int8"), (-129, "int8"),
    ([255, -255], "uint8"), ([-256], "uint8"),
])
def test_tensor_of_numbers_past_an_integer_dtype(data, dtype):
    def make(lib):
        return lib.tensor(data, dtype=getattr(lib, dtype)).tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "x.norm(p='nuc')", "x.norm(p='nuc', dim=(0, 1))", "x.norm(p='nuc', keepdim=True)", "lib.norm(x, 'nuc')",
    "lib.ones(3).norm(p='nuc')", "lib.ones(2, 3, 4).norm(p='nuc')", "lib.ones(2, 3, 4).norm(p='nuc', dim=(1, 2))",
])
def test_nuclear_norm(expr):
    def make(lib):
        r = eval(expr, {"lib": lib, "x": lib.tensor([[3.0, 1.0, 3.0], [0.0, 5.0, -1.0]])})
        return list(r.shape), np.round(r.numpy(), 5).tolist()

    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_half_scans_run_in_float32(op):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 1000)) if op == "cumsum" else 1 + rng.standard_normal((4, 30)) * 0.05).astype(np.float16)

    def make(lib):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(t, op)(1)
        y.sum().backward()
        return str(y.dtype).split(".")[1], y.detach().numpy().tolist(), t.grad.numpy().tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_half_softmax_is_computed_in_float32():
    x = (np.random.default_rng(0).standard_normal((64, 100)) * 3).astype(np.float16)

    def make(lib):
        return lib.tensor(x).softmax(-1).numpy().tolist()

    ours, theirs = _both(make)
    assert ours == theirs


def test_finfo_and_is_signed_as_printed():
    def make(lib):
        infos = [lib.finfo(d) for d in (lib.float32, lib.float16, lib.float64, lib.bfloat16)] + [lib.finfo()]
        return ([repr(f) for f in infos], [f.resolution for f in infos],
                [d.is_signed for d in (lib.int8, lib.uint8, lib.float32, lib.bool, lib.int64, lib.bfloat16)])

    ours, theirs = _both(make)
    assert ours == theirs


def test_tensor_of_a_list_of_arrays_warns_once(monkeypatch):
    import warnings

    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            t = minigrad.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert t.dtype == minigrad.float64 and t.shape == (2, 2)
    said = [str(w.message) for w in caught]
    assert said == ["Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the "
                    "list to a single numpy.ndarray with numpy.array() before converting to a tensor."]
    assert caught[0].filename == __file__
