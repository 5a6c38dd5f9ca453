"""The PyTorch habits of issue 16, each against PyTorch itself: numpy-style keywords, 0-d
reductions, gather with a small index, sign's node, list indexing, integer bitwise ops,
integer linspace, rounding division, mixed-dtype products and type promotion."""
import functools
import re
import tracemalloc
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck


def both(torch, fn, *arrays, grad=False):
    """fn(L, *tensors) in minigrad and torch: (value, dtype name, exception type) for each."""
    out = []
    for L in (mg, torch):
        ts = [L.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        try:
            r = fn(L, *ts)
            out.append((np.asarray(r.detach().numpy() if hasattr(r, "detach") else r), str(r.dtype).split(".")[-1], None))
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            out.append((None, None, type(e)))
    return out


def same(torch, fn, *arrays):
    (g, gd, ge), (w, wd, we) = both(torch, fn, *arrays)
    assert (ge is None) == (we is None), (ge, we)
    if ge is not None:
        assert issubclass(ge, we) or issubclass(we, ge), (ge, we)
        return
    assert gd == wd and g.shape == w.shape
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-6, atol=1e-6, equal_nan=True)


X = np.arange(12.0).reshape(3, 4) - 5


@pytest.mark.parametrize("op", ["sum", "mean", "std", "var", "prod", "any", "all", "amax", "amin", "logsumexp"])
def test_axis_and_keepdims_are_aliases(torch, op):
    same(torch, lambda L, x: getattr(x, op)(axis=1), X)
    same(torch, lambda L, x: getattr(L, op)(x, axis=0, keepdims=True), X)


@pytest.mark.parametrize("op", ["sum", "amax", "amin", "mean", "logsumexp", "prod", "softmax", "log_softmax",
                                "std", "var", "argmax", "max"])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_reductions_of_0d_tensors(torch, op, dim):
    def fn(L, x):
        r = getattr(x, op)(dim)
        return r[0] if op == "max" else r

    same(torch, fn, np.array(2.5))
    if dim != 1 and op not in ("argmax", "max", "std", "var"):
        x = mg.tensor(2.5, dtype=mg.float64, requires_grad=True)
        assert gradcheck(lambda t: getattr(t, op)(dim), (x,))


def test_empty_dim_list_reduces_everything(torch):
    same(torch, lambda L, x: x.sum(dim=()), X)
    same(torch, lambda L, x: x.mean(dim=[]), X)


def test_gather_with_a_smaller_index(torch):
    idx = np.array([[0, 3], [2, 1]])
    same(torch, lambda L, x, i: x.gather(1, i), X, idx)
    same(torch, lambda L, x, i: x.gather(0, i), X, idx[:, :1] % 3)
    x = mg.tensor(X, requires_grad=True)
    assert gradcheck(lambda t: t.gather(1, mg.tensor(idx)), (x,))
    for bad in (np.array([[0], [1], [1], [0]]), np.array([[4]]), np.array([[-1]]), np.array([0, 1])):
        same(torch, lambda L, x, i: x.gather(1, i), X, bad)


def test_sign_records_a_zero_gradient(torch):
    for L in (mg, torch):
        x = L.tensor([-2.0, 0.0, 3.0], requires_grad=True)
        y = x.sign()
        assert y.grad_fn.name() == "SignBackward0"
        (y * 2).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]


A3 = np.arange(60.0).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    ([0, 1], [1, 2]), (slice(None), [0, 2]), ([0, 2], slice(1, 3)), ([0, 1], slice(None), [1, 2]),
    (0, slice(None), [1, 2]), (slice(None), 1, [0, 3]), ([0, 1], 1, [0, 1]), (Ellipsis, [0, 1]), ([],), (1, [0, 2], 2),
    (None, [0, 1], None, [1, 2]), ([[0], [1]], slice(None), [1, 2]), ([[0, 1]], slice(1, None), [[2], [3]]),
    [0, 2], [slice(None), [0, 2]], [Ellipsis, [0, 1]],
])
def test_list_indexing_like_torch(torch, index):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation of a list of lists as a tuple index
        same(torch, lambda L, x: x[index], A3)
    x = mg.tensor(A3, requires_grad=True)
    assert gradcheck(lambda t: t[index] * 1.0, (x,)) if mg.tensor(A3)[index].numel() else True


NON_TUPLE = "Using a non-tuple sequence for multidimensional indexing is deprecated"


@pytest.mark.parametrize("index", [[[0, 1], [1, 2]], [[0, 2]], [[[0], [2]], [[1], [1]]], [[2, 0], [1, 1], [0, 2]],
                                   [[0, 1], slice(None), 2], [[0.0, 2.0]], [range(2)], [0, None], [[]]])
def test_a_nested_list_is_a_tuple_of_indices_as_pytorch_2_13_reads_it(torch, index):
    # PyTorch 2.13 still reads a list holding lists (or slices, None...) as a tuple, and warns
    res = []
    for L in (mg, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                got = L.tensor(A3)[index]
                out = (list(got.shape), got.numpy().tolist())
            except IndexError as e:
                out = str(e)
        res.append((out, [str(m.message).startswith(NON_TUPLE) for m in w]))
    assert res[0] == res[1]
    assert res[0][1] == [True]
    x = mg.tensor(A3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not isinstance(res[0][0], str) and mg.tensor(A3)[index].numel():
            assert gradcheck(lambda t: t[index] * 1.0, (x,))


@pytest.mark.parametrize("index", [[[0, 1], [1, 2]], [[0.0, 1.0]], [[True, False, True]], [[1, 2.0]]])
def test_a_nested_list_setitem_as_pytorchs(torch, index):
    res = []
    for L in (mg, torch):
        x = L.arange(12.0).reshape(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[index] = -1.0
        res.append(x.numpy())
    np.testing.assert_array_equal(*res)


@pytest.mark.parametrize("index", [[1.0], [0.0, 2.0], [1.7, -1.5], (slice(None), [1.9]), (slice(None), [1.0, 0]),
                                   np.array([1.7, 0.2]), [1.0, True]])
def test_a_list_of_floats_indexes_as_its_truncated_ints_as_pytorchs(torch, index):
    got, want = mg.tensor(A3)[index], torch.tensor(A3)[index]
    assert list(got.shape) == list(want.shape) and np.array_equal(got.numpy(), want.numpy())
    x, y = mg.tensor(A3.copy()), torch.tensor(A3.copy())
    x[index], y[index] = -1.0, -1.0
    np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("index", [[float("nan")], [1.0, float("inf")], 1.0, np.float64(1), np.float32(1), np.bool_(True),
                                   (0, 1.0), "a", [1, "a"]])
def test_float_and_numpy_scalar_indices_are_refused_with_pytorchs_errors(torch, index):
    errs = []
    for L in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                L.tensor(A3)[index]
            errs.append((type(e.value), str(e.value)))
            with pytest.raises(Exception) as e:
                L.tensor(A3)[index] = 0.0
            errs.append((type(e.value), str(e.value)))
    assert errs[:2] == errs[2:]


@pytest.mark.parametrize("index", [True, False, (True, 1), (None, True), (1, True), (True, Ellipsis, False),
                                   ([True, False, True], True), (np.int64(1),), (None, Ellipsis, None)])
def test_python_bool_indices_are_0d_masks_as_pytorchs(torch, index):
    res = []
    for L in (mg, torch):
        t = L.tensor(A3, requires_grad=True)
        y = t[index]
        (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        z = L.tensor(5.0, requires_grad=True)[True] if type(index) is bool else None
        u = L.tensor(A3.copy())
        u[index] = -1.0
        res.append((list(y.shape), y.detach().numpy().tolist(), t.grad.numpy().tolist(),
                    None if z is None else list(z.shape), u.numpy().tolist()))
    assert res[0] == res[1]


def test_setitem_with_int_and_list_separated_by_slice(torch):
    res = []
    for L in (mg, torch):
        x = L.tensor(A3.copy())
        x[0, :, [1, 2]] = L.tensor(np.arange(8.0).reshape(4, 2))
        res.append(x.numpy())
    np.testing.assert_array_equal(*res)


I = np.array([[5, -3, 12], [7, 0, 1]], dtype=np.int64)


@pytest.mark.parametrize("op", ["and", "or", "xor", "lshift", "rshift", "invert", "rand", "ror", "rxor"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_bitwise_ops_keep_the_integer_dtype(torch, op, dtype):
    a = np.abs(I).astype(dtype)
    fns = {"and": lambda L, x: x & 6, "or": lambda L, x: x | x.flip(0), "xor": lambda L, x: x ^ 3,
           "lshift": lambda L, x: x << 2, "rshift": lambda L, x: x >> 1, "invert": lambda L, x: ~x,
           "rand": lambda L, x: 1 & x, "ror": lambda L, x: 2 | x, "rxor": lambda L, x: True ^ x}
    if dtype is np.bool_ and op in ("lshift", "rshift"):
        return
    same(torch, fns[op], a)


def test_bitwise_ops_refuse_floats(torch):
    same(torch, lambda L, x: x & 1, X)
    same(torch, lambda L, x: ~x, X)


@pytest.mark.parametrize("args", [(-5, 5, 4), (0, 10, 7), (3, -8, 5), (0, 1, 1), (2, 7, 0), (-3.5, 9.2, 6)])
def test_integer_linspace_like_torch(torch, args):
    for dt in ("int64", "int32"):
        assert mg.linspace(*args, dtype=getattr(mg, dt)).tolist() == torch.linspace(*args, dtype=getattr(torch, dt)).tolist()


@pytest.mark.parametrize("mode", ["floor", "trunc", "nearest"])
def test_rounding_div_like_torch(torch, mode):
    b = np.array([2.0, -3.0, 0.5, 4.0])
    same(torch, lambda L, x, y: L.div(x, y, rounding_mode=mode), X, b)
    same(torch, lambda L, x, y: L.div(x, y, rounding_mode=mode), I[:, :2].repeat(2, 1), np.array([[2, -3, 5, -1]]))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        mg.div(mg.ones(2), 2, rounding_mode="nearest") if mode == "nearest" else (_ for _ in ()).throw(RuntimeError("rounding_mode"))


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounding_div_in_place_like_torch(torch, mode):
    # div_(..., rounding_mode=) with nothing to record wrote the true quotient: the mode was dropped
    b = np.array([2.0, -3.0, 0.5, 4.0])
    same(torch, lambda L, x, y: x.clone().div_(y, rounding_mode=mode), X, b)
    same(torch, lambda L, x, y: x.clone().div_(2.5, rounding_mode=mode), X, b)
    ints = np.array([[7, -7, 5, 0], [-3, 3, 9, -9]])
    same(torch, lambda L, x, y: x.clone().div_(y, rounding_mode=mode), ints, np.array([[2, -3, 5, -1]]))
    same(torch, lambda L, x: x.clone().div_(2.5, rounding_mode=mode), ints)  # an int tensor: both refuse


def test_floordiv_and_mod_operators(torch):
    b = np.array([[2, -3, 5, -1]])
    for fn in (lambda L, x, y: x // y, lambda L, x, y: x % y, lambda L, x, y: 7 // y, lambda L, x, y: 7 % y,
               lambda L, x, y: x % 2.5, lambda L, x, y: -7.5 // y):
        same(torch, fn, I[:, :2].repeat(2, 1), b)
        same(torch, fn, X, b.astype(np.float64))
    same(torch, lambda L, x: x // 0, I)  # integer division by zero is an error in both


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((2, 2, 3), (2, 3, 2)), ((2, 2, 3), (3,))])
def test_matmul_refuses_mixed_dtypes(torch, sa, sb):
    same(torch, lambda L, a, b: a @ b.double(), np.ones(sa, np.float32), np.ones(sb, np.float32))
    same(torch, lambda L, a, b: a * b.double().sum(), np.ones(sa, np.float32), np.ones(sb, np.float32))


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("op", ["add", "mul", "div", "floordiv", "mod", "sub", "lt", "and", "pow"])
def test_type_promotion_like_torch(torch, op):
    fns = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "sub": lambda a, b: a - b,
           "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "lt": lambda a, b: a < b,
           "and": lambda a, b: a & b, "pow": lambda a, b: a ** b}
    f = fns[op]
    base = np.array([[1, 2], [3, 1]])
    for d1 in DTYPES:
        for shape1 in ((2, 2), ()):
            a = base.astype(d1) if shape1 else np.array(2).astype(d1)
            for other in [(d, s) for d in DTYPES for s in ((2, 2), ())] + [(True, None), (3, None), (2.5, None)]:
                if other[1] is None:
                    same(torch, lambda L, x, s=other[0]: f(x, s), a)
                    same(torch, lambda L, x, s=other[0]: f(s, x), a)
                else:
                    b = base.astype(other[0]) if other[1] else np.array(1).astype(other[0])
                    same(torch, lambda L, x, y: f(x, y), a, b)


@pytest.mark.parametrize("name,args", [("exp", ()), ("sqrt", ()), ("tanh", ()), ("clamp_min", (0.5,)), ("tril", ()),
                                       ("mul", (2.0,)), ("atan2", (1.5,)), ("lerp", (None, 0.3)), ("cumsum", (1,)),
                                       ("round", ()), ("fmod", (0.7,)), ("logit", ())])
def test_inplace_forms_like_torch(torch, name, args):
    res = []
    for L in (mg, torch):
        base = L.tensor(np.linspace(0.1, 0.9, 6).reshape(2, 3), requires_grad=True)
        x = base * 1.0
        a = tuple(L.tensor(np.full((2, 3), v)) if isinstance(v, float) and name in ("atan2",) else
                  (L.tensor(np.ones((2, 3))) if v is None else v) for v in args)
        out = getattr(x, name + "_")(*a)
        assert out is x and x._version > 0
        x.sum().backward()
        res.append((x.detach().numpy(), base.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_inplace_refuses_a_wider_result(torch):
    for L in (mg, torch):
        with pytest.raises(RuntimeError, match="can't be cast"):
            L.tensor([1, 4]).sqrt_()
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            L.ones(3).add_(L.ones(2, 3))


def test_index_put_accumulates_repeats_like_torch(torch):
    res = []
    for L in (mg, torch):
        x = L.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        v = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = x.index_put((L.tensor([0, 0, 2]), L.tensor([1, 1, 3])), v, accumulate=True)
        (y * L.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), v.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_like_torch(torch, interpolation):
    a = np.random.default_rng(3).standard_normal((3, 5))
    for q in (0.3, [0.0, 0.5, 1.0]):
        for dim in (None, 1):
            res = []
            for L in (mg, torch):
                x = L.tensor(a, requires_grad=True)
                qq = L.tensor(q, dtype=L.float64) if isinstance(q, list) else q
                y = L.quantile(x, qq, dim=dim, keepdim=dim is not None, interpolation=interpolation)
                y.sum().backward()
                res.append((y.detach().numpy(), x.grad.numpy()))
            for g, w in zip(*res):
                np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("edges", [20, 800])  # (under and over _FLAT_ADD_AT entries)
def test_scatter_reduce_of_an_expanded_row_index_is_the_general_ufunc_at_and_torch(torch, reduce, include_self, edges):
    # a GNN's `zeros(N, F).scatter_reduce(0, dst.unsqueeze(1).expand(-1, F), msg, ...)`: from ~1,000 entries
    # through one flat index (numpy's fast ufunc.at loop), the elements in the same order as ufunc.at on the
    # tuple index, so its bits; PyTorch's values and gradients
    rng = np.random.default_rng(1)
    n, width = 30, 32
    base = rng.standard_normal((n, width)).astype(np.float32)
    src = rng.uniform(0.5, 1.5, (edges, width)).astype(np.float32)
    dst = rng.integers(0, n - 3, edges)  # (the last rows untouched)
    idx = np.broadcast_to(dst[:, None], (edges, width))
    at = (idx, np.arange(width)[None, :])
    want = base.copy()
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    if not include_self:
        want[at] = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
    ufunc.at(want, at, src)
    if reduce == "mean":
        count = np.full(base.shape, 1 if include_self else 0, np.float32)
        np.add.at(count, at, np.float32(1))
        want = want / np.maximum(count, 1)
    res = []
    for L in (mg, torch):
        x, s = L.tensor(base, requires_grad=True), L.tensor(src, requires_grad=True)
        y = x.scatter_reduce(0, L.tensor(dst).unsqueeze(1).expand(-1, width), s, reduce=reduce,
                             include_self=include_self)
        (y * L.tensor(base)).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
    assert np.array_equal(res[0][0], want)
    for got, exp in zip(*res):
        np.testing.assert_allclose(got, exp, rtol=2e-5, atol=1e-6)



@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_max_and_min_reduce_as_amax_and_amin_without_a_gradient_as_torch(torch, reduce,
                                                                                        include_self):
    # scatter_'s older names: PyTorch's forward takes them (in place or not), its backward refuses them
    base, src, idx = [2.0, 2.0, 2.0, 2.0], [1.0, 5.0, 3.0, -2.0, 4.0], [0, 1, 0, 1, 3]
    got = []
    for L in (mg, torch):
        x = L.tensor(base)
        x.scatter_reduce_(0, L.tensor(idx), L.tensor(src), reduce=reduce, include_self=include_self)
        s = L.tensor(src, requires_grad=True)
        y = L.tensor(base).scatter_reduce(0, L.tensor(idx), s, reduce, include_self=include_self)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        got.append((x.tolist(), y.tolist(), str(e.value)))
    assert got[0] == got[1]

def test_scatter_src_larger_than_index_forward(torch):
    res = [L.scatter(L.tensor(np.arange(12.0).reshape(3, 4)), 1, L.tensor([[0], [3]]), L.ones(3, 2, dtype=L.float64))
           .numpy() for L in (mg, torch)]
    np.testing.assert_array_equal(*res)


@pytest.mark.parametrize("rows_n, width, n", [(4, 50, 30), (8, 500, 300)])  # (under and over _FLAT_ADD_AT entries)
def test_scatter_add_and_index_backward_sum_repeats_in_order_as_the_general_add_at_and_torch(torch, rows_n, width, n):
    # scatter_add(_)'s index and `x[rows, ids]`'s backward add through one flat index (numpy's fast add.at loop)
    # from ~1,000 entries: the same elements in the same order as numpy's add.at on the tuple index, so its bits,
    # and PyTorch's values; scatter_add_ adds into self's own array (no copy written back), its version bumped,
    # its errors PyTorch's
    rng = np.random.default_rng(0)
    base = rng.standard_normal((rows_n, width)).astype(np.float32)
    src = rng.standard_normal((rows_n, n)).astype(np.float32)
    ids = rng.integers(0, width, (rows_n, n))  # (repeats in each row)
    rows = np.arange(rows_n)[:, None]
    want = base.copy()
    np.add.at(want, (rows, ids), src)
    for L in (mg, torch):
        x = L.tensor(base)
        array = x.numpy() if L is mg else None
        y = x.scatter_add(1, L.tensor(ids), L.tensor(src))
        x.scatter_add_(1, L.tensor(ids), L.tensor(src))
        assert x._version == 1 and np.array_equal(y.numpy(), x.numpy())
        if L is mg:
            assert np.array_equal(x.numpy(), want) and x.numpy() is array  # bit for bit, in place
        else:
            np.testing.assert_allclose(x.numpy(), want, rtol=1e-6, atol=1e-6)
        w = L.tensor(base, requires_grad=True)
        g = L.tensor(src)
        w[L.tensor(rows), L.tensor(ids)].backward(g)
        grad = np.zeros_like(base)
        np.add.at(grad, (rows, ids), src)
        if L is mg:
            assert np.array_equal(w.grad.numpy(), grad)
        else:
            np.testing.assert_allclose(w.grad.numpy(), grad, rtol=1e-6, atol=1e-6)
        for bad_ids, text in ((ids + width, f"index [0-9]+ is out of bounds for dimension 1 with size {width}"),
                              (ids - width, f"index -[0-9]+ is out of bounds for dimension 1 with size {width}")):
            t = L.tensor(base)
            with pytest.raises(RuntimeError, match=text):
                t.scatter_add_(1, L.tensor(bad_ids), L.tensor(src))
            assert t._version == 0 and np.array_equal(t.numpy(), base)
        with pytest.raises(RuntimeError, match="scatter\\(\\): Expected self.dtype to be equal to src.dtype"):
            L.tensor(base).scatter_add_(1, L.tensor(ids), L.tensor(src, dtype=L.float64))
    x, ids, ones = mg.zeros(64, 5000), mg.tensor(rng.integers(0, 5000, (64, 40))), mg.ones(64, 40)
    x.scatter_add_(1, ids, ones)
    tracemalloc.start()
    x.scatter_add_(1, ids, ones)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < x.numpy().nbytes // 4 and x.sum().item() == 2 * 64 * 40  # no copy of x made


def test_index_put_accumulating_adds_into_self_in_order_as_torch(torch):
    # index_put_((rows, ids), v, accumulate=True), a bag of words' counts: each value added to self's own entry
    # in turn (PyTorch's in-place order), with no copy of self; negative ids and a bad index take the general path
    rng = np.random.default_rng(1)
    base, values = rng.standard_normal((4, 50)).astype(np.float32), rng.standard_normal((4, 30)).astype(np.float32)
    ids = rng.integers(-50, 50, (4, 30))
    rows = np.arange(4)[:, None]
    for ids_ in (np.abs(ids), ids):  # (in range: the new path; with negative ids: the general one)
        sequential = base.copy()
        np.add.at(sequential, (rows, ids_), values)
        got = []
        for L in (mg, torch):
            x = L.tensor(base)
            out = x.index_put_((L.arange(4).unsqueeze(1).expand(4, 30), L.tensor(ids_)), L.tensor(values),
                               accumulate=True)
            assert out is x and x._version == 1 and x.dtype == L.float32
            got.append(x.numpy())
        np.testing.assert_allclose(got[0], got[1], rtol=1e-6, atol=1e-6)
        if ids_ is not ids:
            assert np.array_equal(got[0], sequential) and np.array_equal(got[1], sequential)
    for L in (mg, torch):  # the general path's errors, PyTorch's words (numpy's "axis", expand's text before)
        x, rows_ = L.zeros(4, 5), L.arange(4).unsqueeze(1).expand(4, 3)
        for put in (x.index_put_, functools.partial(L.index_put, x)):
            with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 5"):
                put((rows_, L.full((4, 3), 5)), L.ones(4, 3), accumulate=True)
            with pytest.raises(RuntimeError, match=re.escape("shape mismatch: value tensor of shape [4, 2] cannot be "
                                                             "broadcast to indexing result of shape [4, 3]")):
                put((rows_, L.zeros(4, 3, dtype=L.long)), L.ones(4, 2), accumulate=True)
    x, ids, ones = mg.zeros(64, 5000), mg.tensor(rng.integers(0, 5000, (64, 40))), mg.ones(64, 40)
    index = (mg.arange(64).unsqueeze(1).expand(64, 40), ids)
    x.index_put_(index, ones, accumulate=True)
    tracemalloc.start()
    x.index_put_(index, ones, accumulate=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < x.numpy().nbytes // 4 and x.sum().item() == 2 * 64 * 40  # no copy of x made


def test_dtype_helpers_like_torch(torch):
    for name in ("float16", "float32", "float64"):
        assert mg.finfo(getattr(mg, name)).eps == torch.finfo(getattr(torch, name)).eps
        assert mg.finfo(getattr(mg, name)).max == torch.finfo(getattr(torch, name)).max
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        assert (mg.iinfo(getattr(mg, name)).min, mg.iinfo(getattr(mg, name)).max) == \
            (torch.iinfo(getattr(torch, name)).min, torch.iinfo(getattr(torch, name)).max)
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            assert str(mg.promote_types(getattr(mg, a), getattr(mg, b))).split(".")[-1] == \
                str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
            assert mg.can_cast(getattr(mg, a), getattr(mg, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))
    assert str(mg.result_type(mg.tensor([1]), 2.5)) == "minigrad.float32"


def test_set_default_dtype_like_torch(torch):
    try:
        mg.set_default_dtype(mg.float64)
        assert mg.get_default_dtype() == mg.float64
        assert mg.tensor([1.5]).dtype == mg.float64 and mg.ones(2).dtype == mg.float64
        assert (mg.tensor([1]) / 2).dtype == mg.float64 and mg.tensor([1]).exp().dtype == mg.float64
    finally:
        mg.set_default_dtype(mg.float32)
    assert mg.tensor([1.5]).dtype == mg.float32


def test_set_default_dtype_refuses_what_torch_refuses_with_its_text(torch):
    # None and names are not dtypes (numpy would read None as float64); an integer dtype is not a float one
    cases = [(None, None), ("float64", "float64"), (float, float), (np.float64, np.float64), (mg.int64, torch.int64)]
    for mine, theirs in cases:
        with pytest.raises(TypeError) as expected:
            torch.set_default_dtype(theirs)
        with pytest.raises(TypeError) as got:
            mg.set_default_dtype(mine)
        assert str(got.value) == str(expected.value)
        assert mg.get_default_dtype() == mg.float32


def test_small_torch_habits(torch):
    for L in (mg, torch):
        assert tuple(L.ones(2, 3).argmax(keepdim=True).shape) == (1, 1)
        assert [t.tolist() for t in L.where(L.tensor([0, 1, 1]))] == [[1, 2]]
        assert L.ones(2, 3).size(-1) == 3
        with pytest.raises(IndexError, match="Dimension out of range"):
            L.ones(2, 3).size(2)
        assert L.ones(3, 1).sort(dim=0, stable=True).values.shape == (3, 1)


def test_digamma_and_trigamma(torch):
    # PyTorch's CPU trigamma is good to ~5e-10 relative; minigrad's is its method (its values, to the last bits)
    v = np.array([-2.5, -0.5, 0.3, 1.0, 2.0, 7.5, 30.0])
    np.testing.assert_allclose(mg.digamma(mg.tensor(v)).numpy(), torch.digamma(torch.tensor(v)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mg.polygamma(1, mg.tensor(v)).numpy(), torch.polygamma(1, torch.tensor(v)).numpy(),
                               rtol=1e-12)
    x = mg.tensor(v[2:], requires_grad=True)
    assert gradcheck(lambda t: t.digamma(), (x,))
    assert gradcheck(lambda t: t.polygamma(1), (x,))  # trigamma's derivative is polygamma(2, x)
    np.testing.assert_allclose(mg.polygamma(2, mg.tensor(v)).numpy(), torch.polygamma(2, torch.tensor(v)).numpy(),
                               rtol=1e-12)
    try:
        from scipy.special import polygamma
    except ImportError:
        return
    np.testing.assert_allclose(mg.polygamma(1, mg.tensor(v)).numpy(), polygamma(1, v), rtol=1e-9)
    np.testing.assert_allclose(mg.polygamma(2, mg.tensor(v)).numpy(), polygamma(2, v), rtol=1e-12)


def test_factories_take_size_keyword(torch):
    for name in ("zeros", "ones", "empty", "rand", "randn"):
        assert tuple(getattr(mg, name)(size=(2, 3)).shape) == tuple(getattr(torch, name)(size=(2, 3)).shape)


def test_shape_changing_inplace_forms_like_torch(torch):
    res = []
    for L in (mg, torch):
        x = L.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 2
        y.unsqueeze_(0)
        y.transpose_(0, 2)
        (y * L.arange(6.0).reshape(3, 2, 1)).sum().backward()
        z = L.ones(2, 1, 3)
        z.squeeze_(1)
        z.t_()
        res.append((tuple(y.shape), x.grad.tolist(), tuple(z.shape)))
    assert res[0] == res[1]


def _scalar_habits(L):
    """A script's uses of 0-d results in place: a loss summed with +=, a count kept in a tensor, a
    bag-of-words vector filled by `vec[i] += 1`, an element changed through the view `t[i]` is."""
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = 0
    for i in range(1, 4):
        loss += (x * i).sum()  # the first += makes a tensor; the later ones add into it, recorded
    loss += x.max()
    loss.backward()
    count = L.ones(4).sum()
    count += 1
    count.mul_(2)
    vec = L.zeros(5)
    for i in (1, 3, 1, 4):
        vec[i] += 1
    m = L.zeros(2, 3)
    m[1][2] += 5  # m[1] and then its element are views of m
    e = m[0, 1]
    e.add_(7)
    v = L.zeros(3)
    v.select(0, 0).fill_(1)
    v.unbind()[1].fill_(2)
    list(v)[2].fill_(3)
    return (float(loss), x.grad.tolist(), float(count), vec.tolist(), m.tolist(), e._version, m._version,
            float(e), v.tolist())


def test_scalar_results_and_single_elements_take_in_place_ops():
    loss, grad, count, vec, m, e_version, m_version, e, v = _scalar_habits(mg)
    assert loss == 6 * 6 + 3 and grad == [6.0, 6.0, 7.0]
    assert count == 10.0
    assert vec == [0.0, 2.0, 0.0, 1.0, 1.0]
    assert m == [[0.0, 7.0, 0.0], [0.0, 0.0, 5.0]] and e == 7.0 and e_version == m_version > 0
    assert v == [1.0, 2.0, 3.0]
    s = mg.ones(3).sum()
    assert type(s.numpy()) is np.ndarray and s.numpy().shape == ()  # a 0-d array, as PyTorch's .numpy()


def test_scalar_habits_like_torch(torch):
    assert _scalar_habits(mg) == _scalar_habits(torch)


# ---- logspace, histogram, histc -------------------------------------------------------------------------
LOGSPACE = [
    ((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((0, 2, 3, 2.0), {}), ((0.1, 3.7, 7), {}), ((-3.3, 5.1, 33), {}),
    ((0.1, 3.7, 7), {"dtype": "float64"}), ((0, 1, 5), {"dtype": "float16"}), ((0, 2, 3), {"dtype": "int64"}),
    ((0, 3, 4), {"base": 2, "dtype": "int32"}), ((-2, 2, 5), {"dtype": "int64"}), ((0, 10, 5), {"base": 3,
    "dtype": "int64"}), ((0, 2, 0), {}), ((1, 1, 1), {}), ((2, -1, 4), {"base": 0.5}), ((0, 1, -1), {}),
]


@pytest.mark.parametrize("args,kw", LOGSPACE)
def test_logspace_like_torch(torch, args, kw):
    def run(L):
        k = dict(kw, **({"dtype": getattr(L, kw["dtype"])} if "dtype" in kw else {}))
        return L.logspace(*args, **k)

    try:
        want = run(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)):
            run(mg)
        return
    got = run(mg)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] and tuple(got.shape) == tuple(want.shape)
    # the powers come from different pow() implementations: equal to a few units in the last place
    rtol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-14}.get(str(want.dtype).split(".")[-1], 0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol)


def test_logspace_without_torch():
    t = mg.logspace(0, 3, 4)
    assert t.dtype == mg.float32 and t.tolist() == [1.0, 10.0, 100.0, 1000.0]
    assert mg.logspace(0, 4, 5, base=2, dtype=mg.int64).tolist() == [1, 2, 4, 8, 16]
    assert mg.logspace(mg.tensor(1.0), mg.tensor(2.0), 2, dtype=mg.float64).tolist() == [10.0, 100.0]
    assert mg.logspace(0, 1, 3, requires_grad=True).requires_grad
    with pytest.raises(TypeError):
        mg.logspace(0, 1, 3, 10.0, mg.float64)  # dtype is keyword-only, as PyTorch's
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        mg.logspace(0, 1, -2)


XH = [1.0, 2.0, 1.0, 3.0, 2.5]
HISTOGRAMS = [
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), bins=4),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d)),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), 4, range=(0.0, 4.0)),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), 4, range=(0, 3)),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), L.tensor([0.0, 1.5, 4.0], dtype=d)),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), L.tensor([0.0, 2.0, 2.5], dtype=d), density=True),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), 4, weight=L.tensor([1.0, 2, 3, 4, 5], dtype=d)),
    lambda L, d: L.histogram(L.tensor(XH, dtype=d), 4, weight=L.tensor([1.0, 2, 3, 4, 5], dtype=d), density=True),
    lambda L, d: L.tensor(XH, dtype=d).histogram(3),
    lambda L, d: L.tensor(XH, dtype=d).histogram(bins=L.tensor([1.0, 2.0, 3.0], dtype=d), density=True),
    lambda L, d: L.histogram(L.tensor([[1.0, 2], [3, 4]], dtype=d), 2, weight=L.ones(4, 1, dtype=d)),
    lambda L, d: L.histogram(L.tensor([1.0, 1, 1], dtype=d), 2),  # one value: widened by 0.5 each side
    lambda L, d: L.histogram(L.tensor([], dtype=d), 2),  # no data: [0, 1]
    lambda L, d: L.histogram(L.tensor(1.5, dtype=d), 2),
    lambda L, d: L.histogram(L.tensor([0.1, 0.2, 0.3, 0.7, 1.0], dtype=d), 3, range=(0.1, 0.7)),  # edges' rounding
    lambda L, d: L.histogram(L.tensor([1.0, float("nan"), float("inf")], dtype=d), 2, range=(0.0, 2.0)),
    lambda L, d: L.histogram(L.tensor([5.0, 3], dtype=d), 2, range=(0.0, 2.0), density=True),  # 0/0: NaN
    lambda L, d: L.histogram(L.tensor(np.random.default_rng(0).standard_normal(1000), dtype=d), 37),
    lambda L, d: L.histogram(L.tensor(np.random.default_rng(1).standard_normal((40, 25)), dtype=d), 10,
                             range=(-1.0, 1.5), weight=L.tensor(np.random.default_rng(2).random((40, 25)), dtype=d),
                             density=True),
]


@pytest.mark.parametrize("i", range(len(HISTOGRAMS)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_like_torch(torch, i, dtype):
    got = HISTOGRAMS[i](mg, getattr(mg, dtype))
    want = HISTOGRAMS[i](torch, getattr(torch, dtype))
    assert type(got).__name__ == "histogram" and got._fields == ("hist", "bin_edges")
    for g, w in ((got.hist, want.hist), (got.bin_edges, want.bin_edges)):
        assert str(g.dtype).split(".")[-1] == dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6 if dtype == "float32" else 1e-12, equal_nan=True)
    # (inner edges may differ in the last place: PyTorch's linspace kernel is vectorized)
    assert got[0] is got.hist and got[1] is got.bin_edges


HISTOGRAM_ERRORS = [
    lambda L: L.histogram(L.tensor([1, 2, 3]), 3),
    lambda L: L.histogram(L.tensor([1.0, 2.0], dtype=L.float16), 3),
    lambda L: L.histogram(L.tensor(XH), 3, range=(2.0, 1.0)),
    lambda L: L.histogram(L.tensor(XH), 0),
    lambda L: L.histogram(L.tensor(XH), -1),
    lambda L: L.histogram(L.tensor(XH), L.tensor([[0.0, 1.0]])),
    lambda L: L.histogram(L.tensor(XH), L.tensor([3.0])),
    lambda L: L.histogram(L.tensor(XH), L.tensor([0.0, 1.0], dtype=L.float64)),
    lambda L: L.histogram(L.tensor(XH), 3, weight=L.tensor([1.0, 2])),
    lambda L: L.histogram(L.tensor(XH), 3, weight=L.tensor([1, 2, 3, 4, 5])),
    lambda L: L.histogram(L.tensor([1.0, float("nan"), 2]), 2),
    lambda L: L.histogram(L.tensor(XH), 2, range=(0.0, float("inf"))),
    lambda L: L.histc(L.tensor([1, 2])),
    lambda L: L.histc(L.tensor([1.0, 2]), 4, min=3, max=1),
    lambda L: L.histc(L.tensor([1.0, 2]), -1),
    lambda L: L.histc(L.tensor([1.0, float("inf")]), 3),
    lambda L: L.histc(L.tensor([1.0, 2.0]), 3, min=0, max=float("inf")),
]


@pytest.mark.parametrize("i", range(len(HISTOGRAM_ERRORS)))
def test_histogram_errors_like_torch(torch, i):
    with pytest.raises(Exception) as want:
        HISTOGRAM_ERRORS[i](torch)
    with pytest.raises(want.type) as got:
        HISTOGRAM_ERRORS[i](mg)
    assert str(got.value) == str(want.value)


HISTCS = [
    lambda L, d: L.histc(L.tensor(XH, dtype=d), 4),
    lambda L, d: L.histc(L.tensor(XH, dtype=d)),
    lambda L, d: L.histc(L.tensor([1.0, 2, 1], dtype=d), 4, min=0, max=3),
    lambda L, d: L.histc(L.tensor([1.0, 1, 1], dtype=d), 3),
    lambda L, d: L.histc(L.tensor([], dtype=d), 3),
    lambda L, d: L.histc(L.tensor([1.0, 5, -1], dtype=d), 3, min=2, max=2),  # min == max: the data's range
    lambda L, d: L.histc(L.tensor([1.0, float("nan")], dtype=d), 3, min=0, max=2),
    lambda L, d: L.tensor(np.random.default_rng(0).standard_normal((30, 30)), dtype=d).histc(17, min=-1, max=2),
]


@pytest.mark.parametrize("i", range(len(HISTCS)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_like_torch(torch, i, dtype):
    got, want = HISTCS[i](mg, getattr(mg, dtype)), HISTCS[i](torch, getattr(torch, dtype))
    assert str(got.dtype).split(".")[-1] == dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [
    lambda L, t, b, w: L.histogram(t, 3, density=True), lambda L, t, b, w: t.histogram(2),
    lambda L, t, b, w: L.histogram(t.detach(), bins=b), lambda L, t, b, w: L.histogram(t.detach(), 2, weight=w),
    lambda L, t, b, w: L.histogram(t.detach(), 2), lambda L, t, b, w: L.histc(t, 3)])
def test_histogram_of_a_tensor_that_requires_grad_is_pytorchs_node_without_derivative(torch, call):
    # the activations lecture's `hy, hx = torch.histogram(t, density=True)` of a layer's output: PyTorch's results
    # require grad through a node that has no derivative (printed grad_fn=<NotImplemented>, refusing .numpy(), a
    # backward through them raising), hence the lecture's `hx[:-1].detach()`; histc's have no node
    seen = []
    for L in (mg, torch):
        t = L.tensor([0.5, -1.0, 2.0, 0.1], requires_grad=True)
        b, w = L.tensor([-1.0, 0.0, 1.0, 3.0], requires_grad=True), L.ones(4, requires_grad=True)
        out = call(L, t, b, w)
        outs = list(out) if isinstance(out, tuple) else [out]
        row = [(o.requires_grad, repr(o).replace("minigrad", "torch"), o.detach().tolist()) for o in outs]
        for o in outs:
            if o.requires_grad:
                with pytest.raises(RuntimeError) as e:
                    o.sum().backward()
                row.append(str(e.value))
                with pytest.raises(RuntimeError) as e:
                    o.numpy()
                row.append(str(e.value))
        seen.append(row)
    assert seen[0] == seen[1]


def test_histogram_without_torch():
    x = mg.tensor([0.0, 0.5, 1.0, 1.0, 3.0, 4.0])
    hist, edges = mg.histogram(x, 4)
    assert edges.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and hist.tolist() == [2.0, 2.0, 0.0, 2.0]
    assert x.histogram(4).hist.tolist() == hist.tolist()
    h = mg.histogram(x, mg.tensor([0.0, 1.0, 4.0]), weight=mg.tensor([1.0, 1, 1, 1, 1, 10]))
    assert h.hist.tolist() == [2.0, 13.0]  # the last edge is in the last bin
    d = mg.histogram(x, 4, density=True).hist
    assert float((d * 1.0).sum()) == pytest.approx(1.0)  # integrates to 1 (unit-width bins)
    assert mg.histogram(x, 2, range=(1.0, 2.0)).hist.tolist() == [2.0, 0.0]  # outside values are dropped
    assert not mg.histogram(mg.tensor(x.tolist(), requires_grad=True).detach(), 2).hist.requires_grad
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        mg.histogram(mg.tensor([1, 2]))
    assert mg.histc(mg.tensor([0.0, 1.0, 1.0, 2.0]), 2).tolist() == [1.0, 3.0]


def _legacy_constructors(L):
    nn = L.nn
    made = [L.Tensor(2, 3), L.Tensor([1, 2]), L.Tensor([1.5, 2.0]), L.Tensor(), L.Tensor(L.Size([2, 3])),
            L.Tensor([True, False]), L.Tensor((4, 5)), L.LongTensor([1, 2]), L.FloatTensor(2, 3),
            L.DoubleTensor([1, 2]), L.IntTensor(3), L.BoolTensor([1, 0]), L.ByteTensor([3])]
    out = [(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in made]
    out += [t.tolist() for t in made[1:3] + made[5:8] + [made[9], made[11], made[12]]]  # (not the uninitialised)
    w = nn.Parameter(L.Tensor(4, 3))  # a custom layer's weight, initialised after
    nn.init.constant_(w, 0.5)
    x = L.LongTensor([1, 2])
    out += [tuple(w.shape), str(w.dtype).split(".")[-1], w.requires_grad, float(w.detach().sum()),
            isinstance(x, L.LongTensor), isinstance(x, L.FloatTensor), isinstance(x, L.Tensor),
            str(x.type(L.FloatTensor).dtype).split(".")[-1], str(x.type("torch.DoubleTensor").dtype).split(".")[-1],
            x.type().split(".")[-1], str(L.Tensor([-4.0]).double().dtype).split(".")[-1]]
    for bad in (lambda: L.Tensor(-1), lambda: L.Tensor(["a"]), lambda: L.FloatTensor(2, "x")):
        with pytest.raises((RuntimeError, TypeError, ValueError)):
            bad()
    return out


def test_legacy_tensor_constructors_like_torch(torch):
    assert _legacy_constructors(mg) == _legacy_constructors(torch)


def _legacy_new(L):
    x, w = L.ones(2, dtype=L.float64), L.ones(3, 4)
    made = [x.new(2, 3), x.new(L.Size([2, 3])), x.new([1, 2]), x.new((2, 3)), x.new(), w.new(5, 2).zero_(),
            w.new(3)]
    out = [(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in made]
    out += [made[2].tolist(), made[3].tolist(), made[5].tolist(), x.new(x) is x]
    with pytest.raises(TypeError):
        x.new(w)  # another dtype
    return out


def test_legacy_new_like_torch(torch):
    # older scripts' `weight.new(nlayers, bsz, nhid).zero_()` (pytorch/examples' word model before new_zeros)
    assert _legacy_new(mg) == _legacy_new(torch)


def _legacy_of_tensors(L):
    # a list holding tensors (one number each), as tensor() takes it: `torch.Tensor([loss, 2])`
    made = [L.Tensor([L.tensor(1.5), 2]), L.LongTensor([L.tensor(3), L.tensor(4)]), L.Tensor((L.tensor([7.0]),)),
            L.Tensor([[L.tensor(1), 2.5]])]
    return [(t.tolist(), str(t.dtype).split(".")[-1], tuple(t.shape)) for t in made]


def test_legacy_tensor_constructors_of_tensors_like_torch(torch):
    assert _legacy_of_tensors(mg) == _legacy_of_tensors(torch)


_LEGACY_CALLS = {  # name: (call, whether its values are set: PyTorch leaves a sized tensor's uninitialised)
    "numpy_int_size": (lambda L, a: L.Tensor(np.int64(3)), False),
    "numpy_int32_size": (lambda L, a: L.Tensor(np.int32(2)), False),
    "size_keyword": (lambda L, a: L.Tensor(size=(2, 3)), False),
    "long_size_keyword": (lambda L, a: L.LongTensor(size=[2]), False),
    "new_numpy_int_size": (lambda L, a: a.new(np.int64(3)), False),
    "device_keyword": (lambda L, a: L.Tensor([1.0, 2.0], device="cpu"), True),
    "sizes_device_keyword": (lambda L, a: L.Tensor(2, 3, device="cpu"), False),
    "data_keyword": (lambda L, a: L.Tensor(data=[1, 2]), True),
    "range": (lambda L, a: L.Tensor(range(3)), True),
    "long_range": (lambda L, a: L.LongTensor(range(3)), True),
    "tolist": (lambda L, a: L.Tensor(a.tolist()), True),
    "three_sizes": (lambda L, a: L.Tensor(2, 3, 4), False),
    "tensor_requires_grad": (lambda L, a: L.Tensor(a, requires_grad=True), None),
    "int_requires_grad": (lambda L, a: L.Tensor(1, requires_grad=True), None),
    "list_requires_grad": (lambda L, a: L.LongTensor([1, 2], requires_grad=True), None),
    "two_tensors": (lambda L, a: L.Tensor(a, a), None),
    "two_lists": (lambda L, a: L.Tensor([1], [2]), None),
    "list_and_sizes": (lambda L, a: L.Tensor([1], 2, 3), None),
    "tensor_dtype": (lambda L, a: L.Tensor(a, dtype=L.float64), None),
    "tensor_size_keyword": (lambda L, a: L.Tensor(a, size=(2,)), None),
    "int_size_keyword": (lambda L, a: L.Tensor(size=2), None),
    "new_dtype": (lambda L, a: a.new(2, 3, dtype=L.float64), None),
    "tensor_device": (lambda L, a: L.Tensor(a, device="cpu"), None),
    "new_tensor_device": (lambda L, a: a.new(a, device="cpu"), None),
    "cuda_device": (lambda L, a: L.Tensor([1], device="cuda"), None),
    "float_size": (lambda L, a: L.Tensor(2, 3.0), None),
    "none": (lambda L, a: L.Tensor(None), None),
    "new_float": (lambda L, a: a.new(2.5), None),
    "new_str": (lambda L, a: a.new("ab"), None),
    "bytes": (lambda L, a: L.Tensor(b"ab"), None),
    "ragged": (lambda L, a: L.Tensor([[1, 2], [3]]), None),
    "long_ragged": (lambda L, a: L.LongTensor([[1], [2, 3]]), None),
    "str_element": (lambda L, a: L.Tensor([1, "a"]), None),
    "none_element": (lambda L, a: L.Tensor([1, None]), None),
    "complex_element": (lambda L, a: L.Tensor([[1, 2], [3, 4j]]), None),
    "float_tensor_of_double": (lambda L, a: L.FloatTensor(L.zeros(2, dtype=L.float64)), None),
    "long_tensor_of_float": (lambda L, a: L.LongTensor(a), None),
    "half_tensor_of_float": (lambda L, a: L.HalfTensor(a), None),
    "new_of_double": (lambda L, a: a.new(a.double()), None),
}


@pytest.mark.parametrize("name", _LEGACY_CALLS)
def test_legacy_constructor_arguments_like_torch(torch, name):
    call, valued = _LEGACY_CALLS[name]

    def made(L):
        try:
            t = call(L, L.arange(6.0).reshape(2, 3))
        except Exception as e:
            return type(e).__name__, str(e).replace("minigrad.", "torch.")
        return tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad, t.tolist() if valued else None

    assert made(mg) == made(torch)


def test_legacy_new_of_an_array_shares_it_like_torch(torch):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for L in (mg, torch):
        t = L.ones(1).new(a)
        t[0, 0] = 7.0
        assert a[0, 0] == 7.0, L.__name__
        a[0, 0] = 0.0


def test_legacy_tensor_constructors_make_default_float_tensors():
    assert mg.Tensor(2, 3).shape == (2, 3) and mg.Tensor(2, 3).dtype == mg.float32
    assert mg.Tensor([1, 2]).dtype == mg.float32 and mg.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert mg.LongTensor([1, 2]).dtype == mg.int64 and isinstance(mg.LongTensor([1]), mg.LongTensor)
    assert not isinstance(mg.tensor([1.0]), mg.LongTensor)
    a = np.arange(3)
    assert mg.Tensor._wrap(a).array is a  # the library's own tensors keep the array as it is


def _int_indexes(L):
    P = L.tensor(np.arange(24.0).reshape(2, 3, 4))
    picked = [P[1, 2], P[1, 2, 3], P[0, :, 1], P[-1, -2], P[:, 1, 2]]
    P[1, 2, 3].add_(100)  # each pick is a view of P
    x = L.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 1.0
    z = y[1, 2]  # recorded: one select node per int, as PyTorch records it
    names, fn = [], z.grad_fn
    while fn is not None and fn.name() != "MulBackward0":
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    (z * 3).backward()
    return [p.tolist() for p in picked] + [names, x.grad.tolist()]


def test_several_int_indexes_like_torch(torch):
    assert _int_indexes(mg) == _int_indexes(torch)


def _script_habits(L):
    import pickle

    from_np = L.FloatTensor(np.array([1.5, 2.5]))  # a float64 state, converted
    longs = L.LongTensor(np.array([3, 4], dtype=np.int32))
    t = L.ones(2)
    m = L.nn.Linear(2, 2)
    m(L.ones(1, 2)).sum().backward()  # pickled after backward: its parameters have grads and accumulators
    back = pickle.loads(pickle.dumps(m))
    v = L.autograd.Variable(L.ones(2), requires_grad=True)
    return [str(from_np.dtype).split(".")[-1], from_np.tolist(), str(longs.dtype).split(".")[-1], longs.tolist(),
            t == None, t != None, tuple(t.to("cpu", non_blocking=True).shape),  # noqa: E711 (the habit tested)
            L.cuda.memory_allocated(), L.cuda.max_memory_allocated(), L.cuda.memory_reserved(), L.cuda.empty_cache(),
            L.accelerator.is_available(), L.accelerator.current_accelerator(),
            back.weight.tolist() == m.weight.tolist(), back.weight.requires_grad, v.requires_grad]


def test_script_habits_like_torch(torch):
    if torch.cuda.is_available():
        pytest.skip("the answers asked for are those of a machine without a GPU")
    assert _script_habits(mg) == _script_habits(torch)


def test_pickle_and_deepcopy_of_a_non_leaf_like_torch(torch):
    import copy
    import pickle

    for L in (mg, torch):
        x = L.ones(2, requires_grad=True)
        y = pickle.loads(pickle.dumps(x * 2))  # a leaf that requires grad, its graph left behind
        assert y.tolist() == [2.0, 2.0] and y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError, match="graph leaves"):
            copy.deepcopy(x * 2)
        z = copy.deepcopy(x)
        assert z.requires_grad and z.grad_fn is None and z is not x


def test_combinations_poisson_storage_offset_apply_inference_flag(torch):
    import minigrad as _mg

    for r, rep in ((2, False), (2, True), (3, False), (0, False), (4, False)):
        got = _mg.combinations(_mg.arange(3), r=r, with_replacement=rep)
        want = torch.combinations(torch.arange(3), r=r, with_replacement=rep)
        assert got.shape == tuple(want.shape) and got.tolist() == want.tolist()
    x = _mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    _mg.combinations(x).prod(-1).sum().backward()
    assert x.grad.tolist() == [5.0, 4.0, 3.0]
    p = _mg.poisson(_mg.full((2000,), 4.0))
    assert p.dtype == _mg.float32 and abs(float(p.mean()) - 4.0) < 0.3 and float((p - p.round()).abs().sum()) == 0
    with pytest.raises(RuntimeError, match="non-negative"):
        _mg.poisson(_mg.tensor([-1.0]))
    a, ta = _mg.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    for f in (lambda t: t[1:, 2:], lambda t: t.t(), lambda t: t[2], lambda t: t[1:][1:], lambda t: t):
        assert f(a).storage_offset() == f(ta).storage_offset()
    b = _mg.arange(4.0)
    assert b.apply_(lambda v: v * v + 1) is b and b.tolist() == [1.0, 2.0, 5.0, 10.0]
    with pytest.raises(RuntimeError, match="apply_"):
        _mg.ones(2, requires_grad=True).apply_(lambda v: v)
    assert _mg.is_inference_mode_enabled() is False
    with _mg.inference_mode():
        assert _mg.is_inference_mode_enabled() is True


def _third_round(L):
    F = L.nn.functional
    c = L.tensor([1.0, -1.0]) > 0
    out = [(str(w.dtype).split(".")[-1], w.tolist()) for w in
           (L.where(c, 1.0, -1.0), L.where(c, 1, 0), L.where(c, 1, 0.5), L.where(c, True, False))]
    t = L.tensor(np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]]))
    for f in (lambda: L.var_mean(t, 1, unbiased=False), lambda: L.var_mean(t, 1, True),
              lambda: L.std_mean(t, dim=1, unbiased=False), lambda: L.var_mean(t, 0, correction=0, keepdim=True)):
        out.append([r.tolist() for r in f()])
    out += [L.isin(L.tensor([1, 2, 3]), L.tensor([2])).tolist(), L.isin(L.tensor([1, 2, 3]), 2, invert=True).tolist()]
    # a zero row's norm: its gradient is 0 there (not 0/0), so normalize and cosine_similarity stay finite
    x = L.tensor(np.array([[3.0, 4.0], [0.0, 0.0]]), requires_grad=True)
    n = x.norm(dim=1)
    (n * L.tensor([1.0, 2.0])).sum().backward()
    out += [n.tolist(), x.grad.tolist(), n.grad_fn.name()]
    z = L.zeros(2, 3, dtype=L.float64, requires_grad=True)
    F.normalize(z, dim=1).sum().backward()
    w = L.zeros(1, 3, dtype=L.float64, requires_grad=True)
    F.cosine_similarity(w, L.ones(1, 3, dtype=L.float64)).sum().backward()
    v = L.tensor(np.array([1.0, 2.0, 2.0]), requires_grad=True)
    (g,) = L.autograd.grad(v.norm(), v, create_graph=True)
    g.sum().backward()
    return out + [z.grad.tolist(), w.grad.tolist(), v.grad.tolist()]


def test_where_of_numbers_var_mean_isin_and_a_zero_norm_like_torch(torch):
    got, want = _third_round(mg), _third_round(torch)
    assert got[:4] == want[:4] and got[8:10] == want[8:10] and got[12] == want[12]  # dtypes, bools, the node
    for i in (4, 5, 6, 7, 10, 11, 13, 14, 15):  # numbers: to rounding (sums in another order)
        for a, b in zip(got[i] if i < 8 else [got[i]], want[i] if i < 8 else [want[i]]):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


@pytest.mark.parametrize("shapes", [((2,), (3,), None), ((3,), (2,), (3,)), ((3,), (3,), (2, 2)), ((3,), None, (2,))])
def test_where_of_shapes_that_do_not_broadcast_raises_torchs_error(torch, shapes):
    # PyTorch's RuntimeError, its sizes named in its order (condition, input, other); was numpy's ValueError
    def call(L):
        c, x, y = (L.ones(s) if s is not None else 1.0 for s in shapes)
        return L.where(c > 0, x, y)

    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError, match=r"^" + re.escape(str(want.value))):
        call(mg)


@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("create_graph", [False, True])
def test_mean_of_an_empty_tensor_backward_is_quiet(torch, dim, create_graph):
    # PyTorch's: an empty gradient and no warning (the backward divided by a count of 0: numpy's warning)
    x, tx = mg.zeros(0, 3, requires_grad=True), torch.zeros(0, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (g,) = mg.autograd.grad(x.mean(dim).sum(), x, create_graph=create_graph)
    (tg,) = torch.autograd.grad(tx.mean(dim).sum(), tx)
    assert tuple(g.shape) == tuple(tg.shape)


def test_numpy_ufuncs_on_a_tensor_give_a_tensor_as_torch(torch):
    # np.exp(t) and friends hand their result back through __array_wrap__: a tensor, as in PyTorch (a bool
    # result as uint8, as PyTorch gives it); a numpy array or scalar before
    cases = [lambda L, t: np.exp(t), lambda L, t: np.exp(t[0]), lambda L, t: np.equal(t, t),
             lambda L, t: np.maximum(t, 1.5), lambda L, t: np.add(np.ones(2), t), lambda L, t: np.sin(L.tensor([1, 2]))]
    for case in cases:
        got, want = case(mg, mg.tensor([1.0, 2.0])), case(torch, torch.tensor([1.0, 2.0]))
        assert type(got) is mg.Tensor
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_take_along_picks_numpys_take_along_axis_entries():
    # the last-dim path (one flat index over rows) against numpy's own take_along_axis, on every dim
    from minigrad.ops._util import take_along

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 7)).astype(np.float32)
    for dim in range(3):
        idx = rng.integers(0, x.shape[dim], x.shape[:dim] + (2,) + x.shape[dim + 1:])
        np.testing.assert_array_equal(take_along(np, x, idx, dim), np.take_along_axis(x, idx, axis=dim))
    assert take_along(np, x[:, 0, :].T, np.zeros((7, 1), dtype=np.int64), 1).shape == (7, 1)  # (a non-contiguous x)
    # one row (a batch of one's logits: a plain take), of one or more dims, strided too
    for row in (x[:1, :1], x[1, 2], x[:1, 1, ::2], x[2:3, :, 3]):
        idx = rng.integers(0, row.shape[-1], row.shape[:-1] + (3,))
        np.testing.assert_array_equal(take_along(np, row, idx, row.ndim - 1), np.take_along_axis(row, idx, axis=-1))


def test_topk_and_max_of_one_row_as_torch(torch):
    # a sampler's topk of (1, V) logits, a NaN, +-inf and -0.0 among them; max(-1) of one row. Among equal
    # values PyTorch's pick is its own (its partial sort's): with ties, values only, and indices that point at them
    rng = np.random.default_rng(2)
    distinct = rng.permutation(65).astype(np.float32)[None] - 30.0
    distinct[0, 3], distinct[0, 7], distinct[0, 9] = np.nan, np.inf, -np.inf
    tied = (rng.integers(-3, 4, (1, 65)) * 0.5).astype(np.float32)
    tied[0, 11] = -0.0
    for x, ties in ((distinct, False), (tied, True)):
        for a in (x, x[0], x[:, ::-1]):
            for k, largest in ((10, True), (10, False), (65, True), (1, False)):
                got, want = mg.tensor(a.copy()).topk(k, -1, largest), torch.tensor(a.copy()).topk(k, -1, largest)
                np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                if ties:
                    np.testing.assert_array_equal(a[..., got.indices.numpy()].reshape(want.values.shape),
                                                  want.values.numpy())
                else:
                    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            got, want = mg.tensor(a.copy()).max(-1), torch.tensor(a.copy()).max(-1)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_topk_and_max_along_each_dim_as_torch(torch):
    x = np.random.default_rng(1).standard_normal((4, 3, 7)).astype(np.float32)
    for dim in range(3):
        for k in (1, 2):
            for largest in (True, False):
                got, want = mg.tensor(x).topk(k, dim, largest), torch.tensor(x).topk(k, dim, largest)
                np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        for keepdim in (False, True):
            got, want = mg.tensor(x).max(dim, keepdim), torch.tensor(x).max(dim, keepdim)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_a_0d_tensor_indexed_or_written_by_a_0d_id_tensor_raises_as_torch(torch):
    # the id tensor's int stands in for it only on a tensor with dims: a 0-d one keeps PyTorch's own error
    for L in (torch, mg):
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
            L.tensor(3.0)[L.tensor(0)]
        t = L.tensor(3.0)
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
            t[L.tensor(0)] = 1.0


@pytest.mark.parametrize("n", [3, 511, 512, 5000])  # (where below 512 elements, the bit select from there)
def test_pick_gives_wheres_elements_bit_for_bit(n):
    from minigrad.device import pick

    rng = np.random.default_rng(n)
    for dt in (np.float32, np.float64):
        a, b = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
        a[::7], b[::5], a[1] = np.inf, np.nan, -0.0
        keep = rng.random(n) > 0.5
        for got, want in ((pick(keep, a), np.where(keep, a, dt(0))), (pick(keep, a, b), np.where(keep, a, b))):
            assert got.dtype == dt and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("make", [
    lambda L: L.arange(18).view(3, 3, 2), lambda L: L.arange(6)[2:].view(2, 2), lambda L: L.arange(6).view(2, 3).t(),
    lambda L: L.tensor([1.0, 2.5, -3.25e-5]), lambda L: L.tensor([True, False]), lambda L: L.tensor([], dtype=L.float64),
    lambda L: L.ones(2, 3, dtype=L.float64)[:, 1]])
def test_storage_prints_and_shares_the_memory_as_pytorch(torch, make):
    # makemore's lecture prints `a.storage()` to show a view's numbers are the same memory: every element of it,
    # one a line, then the storage's type and size; written through, the tensor sees it
    seen = []
    for L in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = make(L)
            s = t.storage()
            row = [str(s).replace("minigrad", "torch"), len(s), s.size(), s.element_size(), s.nbytes(), s.tolist(),
                   t.storage_offset(), s.data_ptr() == t.data_ptr() - t.storage_offset() * s.element_size(),
                   str(t.untyped_storage()).replace("minigrad", "torch"), t.untyped_storage().nbytes()]
            if len(s):
                s[len(s) - 1] = 1
                row.append(t.tolist())
        seen.append(row)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("view", [lambda t: t, lambda t: t[:, 1:], lambda t: t.t()])
def test_storage_of_a_column_major_array_is_its_memory_as_pytorch(torch, view):
    # from_numpy of a Fortran-ordered array: the storage is that memory in its own order, written through
    # (minigrad copied the view in row order, so a write into the storage was lost)
    seen = []
    for L in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = view(L.from_numpy(np.asfortranarray(np.arange(6.0).reshape(2, 3))))
            s = t.storage()
            s[5] = 100.0
            seen.append((s.tolist(), t.tolist(), t.storage_offset(), len(t.untyped_storage())))
    assert seen[0] == seen[1]


def test_storage_warns_once_as_pytorch(monkeypatch):
    import minigrad.storage

    monkeypatch.setattr(minigrad.storage, "warned", False)
    with pytest.warns(UserWarning, match=r"^TypedStorage is deprecated\. .* use tensor\.untyped_storage\(\) instead "
                                         r"of tensor\.storage\(\)$") as seen:
        mg.ones(2).storage()
        mg.ones(3).storage()
    assert len(seen) == 1 and seen[0].filename == __file__


def _legacy_of_array(L, make):
    """`L.Tensor` of a numpy array `make()` returns: dtype, shape, values, and whether a write into the array
    afterwards shows through the tensor (shared memory), or the error's type and text."""
    a = make()
    try:
        t = L.Tensor(a)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)
    before = t.tolist()
    if a.size:
        a.reshape(-1)[0] = 7 if a.dtype != np.bool_ else False
    return str(t.dtype).split(".")[-1], tuple(t.shape), before, t.tolist() != before


_LEGACY_ARRAYS = {
    **{np.dtype(dt).name: (lambda dt=dt: np.array([[1, 0, 3], [2, 5, 1]]).astype(dt))
       for dt in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)},
    "0-d float64": lambda: np.array(2.5),
    "0-d float32": lambda: np.array(2.5, dtype=np.float32),
    "non-contiguous float32": lambda: np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],
    "non-contiguous int64": lambda: np.arange(12).reshape(3, 4)[:, ::2],
    "negative strides float32": lambda: np.arange(4, dtype=np.float32)[::-1],
    "negative strides float64": lambda: np.arange(4.0)[::-1],
    "empty float64": lambda: np.zeros((0, 3)),
    "empty float32": lambda: np.zeros((0, 3), dtype=np.float32),
    "big-endian float32": lambda: np.arange(3, dtype=">f4"),
}


@pytest.mark.parametrize("case", list(_LEGACY_ARRAYS))
def test_legacy_tensor_of_numpy_array_like_torch(torch, case):
    # torch.Tensor(array): the default dtype, sharing the array's memory only when it already has that dtype
    assert _legacy_of_array(mg, _LEGACY_ARRAYS[case]) == _legacy_of_array(torch, _LEGACY_ARRAYS[case])


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_legacy_tensor_of_numpy_array_follows_default_dtype(torch, default):
    def made(L):
        old = L.get_default_dtype()
        L.set_default_dtype(getattr(L, default))
        try:
            return [_legacy_of_array(L, make) for make in (lambda: np.ones(2, np.float32), lambda: np.ones(2))]
        finally:
            L.set_default_dtype(old)

    assert made(mg) == made(torch)


def _legacy_of_tensor(L, dtype, requires_grad):
    src = L.ones(3, dtype=getattr(L, dtype), requires_grad=requires_grad)
    t = L.Tensor(src)
    with L.no_grad():
        src[0] = 5
    return t is src, str(t.dtype).split(".")[-1], t.tolist(), t.requires_grad, t.is_leaf


@pytest.mark.parametrize("dtype, requires_grad", [("float32", False), ("float64", False), ("int64", False),
                                                  ("bool", False), ("float32", True)])
def test_legacy_tensor_of_tensor_is_an_alias_like_torch(torch, dtype, requires_grad):
    assert _legacy_of_tensor(mg, dtype, requires_grad) == _legacy_of_tensor(torch, dtype, requires_grad)


def _legacy_misc(L):
    out = []
    for make in (lambda: L.Tensor([np.float64(1.5), np.float32(2)]), lambda: L.Tensor([np.array([1, 2]), np.array([3, 4])]),
                 lambda: 1.0 - L.Tensor(np.array([True, False])),  # CleanRL's `1.0 - torch.Tensor(done)`
                 lambda: L.Tensor(np.array([0.5, 1.5])) @ L.ones(2),  # a float64 array meets float32 weights
                 lambda: L.nn.Parameter(L.Tensor(np.ones(2))), lambda: L.Tensor(np.float64(2.0)), lambda: L.Tensor(2.0),
                 lambda: L.Tensor("ab"), lambda: L.FloatTensor(np.ones(2)), lambda: L.LongTensor(np.array([1.7, 2.2])),
                 lambda: L.DoubleTensor(np.ones(2, dtype=np.float32))):
        try:
            t = make()
            out.append((type(t).__name__, str(t.dtype).split(".")[-1], t.tolist()))
        except (TypeError, ValueError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    a = np.ones(2, dtype=np.float32)
    shared = L.FloatTensor(a)
    a[0] = 3
    return out + [shared.tolist()]


def test_legacy_tensor_of_numpy_values_like_torch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the warning on a list of arrays)
        assert _legacy_misc(mg) == _legacy_misc(torch)


@pytest.mark.parametrize("reduce, include_self", [("prod", True), ("prod", False), ("amax", False), ("amin", False)])
def test_scatter_reduce_gradient_with_zeros_and_ties_as_torch(torch, reduce, include_self):
    # prod: a lone 0 of its group gets the product of the others (not 0); amax/amin: self's value equal to the
    # result shares the tie even without include_self (PyTorch counts it, though it passes self nothing)
    base, src, idx = [3.0, 0.0, 3.0, 1.0], [3.0, 3.0, 2.0, 0.0, 5.0], [0, 0, 2, 3, 1]
    got = []
    for L in (mg, torch):
        x = L.tensor(base, dtype=L.float64, requires_grad=True)
        s = L.tensor(src, dtype=L.float64, requires_grad=True)
        y = x.scatter_reduce(0, L.tensor(idx), s, reduce, include_self=include_self)
        y.backward(L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64))
        got.append((y.tolist(), x.grad.tolist(), s.grad.tolist()))
    np.testing.assert_allclose(np.concatenate([np.ravel(a) for a in got[0]]),
                               np.concatenate([np.ravel(a) for a in got[1]]), rtol=1e-12)


_INDEX_REDUCE_SELF = [[1.0, 2.0, 0.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [0.0, 2.0, 3.0]]
_INDEX_REDUCE_SOURCE = [[1.0, 0.0, 1.0], [3.0, 5.0, 9.0], [1.0, 0.0, 3.0]]


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, -1])
def test_index_reduce_values_gradients_and_node_as_torch(torch, reduce, include_self, dim):
    # repeated ids, zeros and ties (the self and source values above) in the gradients
    got = []
    for L in (mg, torch):
        a = L.tensor(_INDEX_REDUCE_SELF, dtype=L.float64)
        s = L.tensor(_INDEX_REDUCE_SOURCE, dtype=L.float64)
        a, s = (a, s) if dim == 0 else (a.t().contiguous(), s.t().contiguous())
        a.requires_grad_(), s.requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its beta warning)
            y = a.index_reduce(dim, L.tensor([0, 2, 0]), s, reduce, include_self=include_self)
            fn = L.index_reduce(a.detach(), dim, L.tensor([0, 2, 0]), s.detach(), reduce, include_self=include_self)
            inplace = a.detach().clone()
            inplace.index_reduce_(dim, L.tensor([0, 2, 0]), s.detach(), reduce, include_self=include_self)
        y.backward(L.arange(1.0, 13.0, dtype=L.float64).reshape(y.shape))
        got.append([y.grad_fn.name(), y.tolist(), fn.tolist(), inplace.tolist(), a.grad.tolist(), s.grad.tolist()])
    assert got[0][0] == got[1][0]
    for m, t in zip(got[0][1:], got[1][1:]):
        np.testing.assert_allclose(m, t, rtol=1e-12)


def test_index_reduce_integer_mean_and_half_as_torch(torch):
    got = []
    for L in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = L.tensor([[1, 2, 3], [4, 5, 6]]).index_reduce(0, L.tensor([1, 1]), L.tensor([[3, 5, 9], [2, 2, 2]]),
                                                              "mean")
            h = L.ones(2, 3, dtype=L.float16).index_reduce(1, L.tensor([0, 0]), L.ones(2, 2, dtype=L.float16) * 3,
                                                           "mean")
        got.append((str(x.dtype)[-5:], x.tolist(), str(h.dtype)[-7:], h.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x, "sum"),
    lambda L, x: x.index_reduce(0, L.tensor([0.0, 1.0]), x, "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([[0, 1]]), x, "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0]), x, "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x.double(), "amax"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 2]), x, "amin"),
    lambda L, x: x.index_reduce(0, L.tensor([0, -1]), x, "amin"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x[:, :1], "mean"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), 2.0, "mean"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x, "mean", include_self=1),
    lambda L, x: x.bool().index_reduce(0, L.tensor([0, 1]), x.bool(), "mean"),
    lambda L, x: x.bool().index_reduce(0, L.tensor([0, 1]), x.bool(), "amax", include_self=False),
    lambda L, x: L.ones(2, requires_grad=True).index_reduce_(0, L.tensor([0]), L.ones(1), "prod"),
])
def test_index_reduce_refusals_as_torch(torch, call):
    got = []
    for L in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                call(L, L.tensor([[1.0, 2.0], [3.0, 4.0]]))
        got.append((type(e.value), str(e.value)))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatter_add_and_gather_with_an_index_expanded_from_one_id_per_row_as_the_general_path_and_torch(torch, dtype):
    # a graph's messages added at their nodes: `out.scatter_add_(0, dst.unsqueeze(-1).expand_as(msg), msg)` and
    # `x.gather(0, src.unsqueeze(-1).expand(E, D))` go a row at a time (index_add's and index_select's loops), with
    # the element-wise path's bits (repeats summed in the index's order), PyTorch's values, gradients and errors
    rng = np.random.default_rng(1)
    n, e, d = 40, 900, 8
    base = rng.standard_normal((n, d)).astype(dtype)
    msg = rng.standard_normal((e, d)).astype(dtype)
    dst = rng.integers(0, n, e)  # (repeats)
    want = base.copy()
    np.add.at(want, (dst[:, None], np.arange(d)), msg)  # the element-wise sums, in the index's order
    picked = base[dst]
    gy = rng.standard_normal((n, d)).astype(dtype)
    got = {}
    for L in (mg, torch):
        idx = L.tensor(dst).unsqueeze(-1).expand_as(L.tensor(msg))
        x = L.tensor(base)
        x.scatter_add_(0, idx, L.tensor(msg))
        m = L.tensor(msg, requires_grad=True)
        s = L.tensor(base, requires_grad=True)
        y = s.scatter_add(0, idx, m)
        y.backward(L.tensor(gy))
        v = L.tensor(base, requires_grad=True)
        gathered = v.gather(0, idx)
        gathered.backward(L.tensor(msg))
        got[L] = (x.numpy(), y.detach().numpy(), m.grad.numpy(), s.grad.numpy(), gathered.detach().numpy(),
                  v.grad.numpy())
        with pytest.raises(RuntimeError, match=f"index {n} is out of bounds for dimension 0 with size {n}"):
            L.tensor(base).scatter_add_(0, (L.tensor(dst) * 0 + n).unsqueeze(-1).expand_as(L.tensor(msg)), L.tensor(msg))
        with pytest.raises(RuntimeError, match=f"index -1 is out of bounds for dimension 0 with size {n}"):
            L.tensor(base).gather(0, (L.tensor(dst) * 0 - 1).unsqueeze(-1).expand(e, d))
    x, y, gm, gs, gathered, gv = got[mg]
    assert np.array_equal(x, want) and np.array_equal(y, want)  # bit for bit the element-wise path's
    assert np.array_equal(gathered, picked) and np.array_equal(gm, gy[dst]) and np.array_equal(gs, gy)
    gv_want = np.zeros_like(base)
    np.add.at(gv_want, (dst[:, None], np.arange(d)), msg)
    assert np.array_equal(gv, gv_want)
    for a, b in zip(got[mg], got[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # a copied (not expanded) index, a narrower one and another dim keep the element-wise path and its values
    for L in (mg, torch):
        idx = L.tensor(np.repeat(dst[:, None], d, 1))
        got[L] = (L.tensor(base).scatter_add(0, idx, L.tensor(msg)).numpy(),
                  L.tensor(base).gather(0, idx[:, :3]).numpy(),
                  L.tensor(base.T.copy()).scatter_add(1, L.tensor(dst).unsqueeze(0).expand(d, e), L.tensor(msg.T.copy())).numpy())
    for a, b in zip(got[mg], got[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda L, t: L.zeros(2, dtype=t), lambda L, t: L.tensor([1, 2], dtype=t), lambda L, t: L.ones(2).to(t),
    lambda L, t: L.full((2,), 1, dtype=t), lambda L, t: L.empty(3, dtype=t), lambda L, t: L.ones(2).new_zeros(2, dtype=t),
])
@pytest.mark.parametrize("kind", [float, complex, int, bool])
def test_python_types_as_dtypes_are_pytorchs(make, kind):
    # `dtype=float` is a double in PyTorch whatever the default dtype (and complex a complex128)
    torch = pytest.importorskip("torch")
    assert str(make(mg, kind).dtype).replace("minigrad.", "torch.") == str(make(torch, kind).dtype)
