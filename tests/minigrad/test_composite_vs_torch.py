"""PyTorch's convenience ops (minigrad/ops/composite.py and friends) against PyTorch: values,
dtypes and float64 gradients of the same call in both libraries."""
import warnings

import numpy as np
import pytest

import minigrad as mg

rng = np.random.default_rng(0)
A, B = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
V3, V4 = rng.standard_normal(3), rng.standard_normal(4)
M33, C3 = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
BT, BT2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 3))
I, S = np.array([3, 1, 1, 0, 5]), np.sort(rng.standard_normal(6))
CASES = {
 "addmm": (lambda L,a,b,c: L.addmm(a,b,c,beta=0.5,alpha=2), [M33, A, rng.standard_normal((4,3))]),
 "addmv": (lambda L,a,b,c: L.addmv(a,b,c), [V3, A, V4]),
 "addbmm": (lambda L,a,b,c: L.addbmm(a,b,c), [M33, BT[:, :3, :], BT2]),
 "baddbmm": (lambda L,a,b,c: L.baddbmm(a,b,c, alpha=0.5), [rng.standard_normal((2,3,3)), BT[:, :3, :], BT2]),
 "addr": (lambda L,a,b,c: L.addr(a,b,c), [A, V3, V4]),
 "addcmul": (lambda L,a,b,c: L.addcmul(a,b,c,value=0.3), [A, B, V4]),
 "addcdiv": (lambda L,a,b,c: a.addcdiv(b,c+5,value=0.3), [A, B, V4]),
 "outer": (lambda L,a,b: L.outer(a,b), [V3, V4]),
 "inner": (lambda L,a,b: L.inner(a,b), [A, B]),
 "trace": (lambda L,a: L.trace(a), [A]),
 "kron": (lambda L,a,b: L.kron(a,b), [C3, M33]),
 "cross": (lambda L,a,b: L.cross(a,b,dim=1), [C3, C3[::-1].copy()]),
 "diff": (lambda L,a: L.diff(a, n=2, dim=1), [A]),
 "hypot": (lambda L,a,b: L.hypot(a,b), [A, B]),
 "logaddexp2": (lambda L,a,b: L.logaddexp2(a,b), [A, B]),
 "xlogy": (lambda L,a,b: L.xlogy(a,b.abs()), [A, B]),
 "sinc": (lambda L,a: L.sinc(a), [A]),
 "logit": (lambda L,a: L.logit(a.sigmoid()), [A]),
 "fmax": (lambda L,a,b: L.fmax(a,b), [A, B]),
 "heaviside": (lambda L,a,b: L.heaviside(a,b), [A, B]),
 "nansum": (lambda L,a: L.nansum(a,1), [A]),
 "nanmean": (lambda L,a: L.nanmean(a), [A]),
 "median": (lambda L,a: L.median(a), [A]),
 "median_dim": (lambda L,a: a.median(1)[0], [A]),
 "median_dim_idx": (lambda L,a: a.median(1, keepdim=True)[1], [A]),
 "kthvalue": (lambda L,a: a.kthvalue(2, 0)[0], [A]),
 "mode": (lambda L,a: L.mode(L.round(a), 1)[0], [A]),
 "hstack": (lambda L,a,b: L.hstack([a,b]), [A, B]),
 "vstack": (lambda L,a,b: L.vstack([a,b]), [V4, B]),
 "dstack": (lambda L,a,b: L.dstack([a,b]), [A, B]),
 "column_stack": (lambda L,a,b: L.column_stack([a,b]), [V3, A]),
 "tensor_split": (lambda L,a: L.tensor_split(a, 3, dim=1)[2], [A]),
 "tensor_split_idx": (lambda L,a: a.tensor_split([1, 3], dim=1)[1], [A]),
 "rot90": (lambda L,a: L.rot90(a, 1), [A]),
 "rot90_3": (lambda L,a: L.rot90(a, -1, (1, 0)), [A]),
 "diagflat": (lambda L,a: L.diagflat(a, 1), [C3]),
 "block_diag": (lambda L,a,b: L.block_diag(a,b), [C3, M33]),
 "cartesian_prod": (lambda L,a,b: L.cartesian_prod(a,b), [V3, V4]),
 "meshgrid_xy": (lambda L,a,b: L.meshgrid(a,b,indexing="xy")[0], [V3, V4]),
 "cov": (lambda L,a: L.cov(a), [A]),
 "corrcoef": (lambda L,a: L.corrcoef(a), [A]),
 "cdist": (lambda L,a,b: L.cdist(a,b), [A, B]),
 # a row against itself: distance 0, where the gradient is PyTorch's 0, not 0/0
 "cdist_self": (lambda L,a: L.cdist(a,a), [A]),
 "cdist_self_p3": (lambda L,a: L.cdist(a,a,p=3), [A]),
 "cdist_self_p1": (lambda L,a: L.cdist(a,a,p=1), [A]),
 "cdist_self_pinf": (lambda L,a: L.cdist(a,a,p=float("inf")), [A]),
 "norm_p3_zero_row": (lambda L,a: L.cat([a[:2], a[2:] * 0]).norm(p=3, dim=1), [A]),
 "movedim": (lambda L,a: L.movedim(a, (0, 1), (2, 0)), [BT]),
 "narrow": (lambda L,a: a.narrow(1, -3, 2), [A]),
 "select": (lambda L,a: a.select(1, -1), [A]),
 "take": (lambda L,a: L.take(a, L.tensor([[0, 5], [11, 2]])), [A]),
 "take_along_dim": (lambda L,a: L.take_along_dim(a, L.tensor([[0], [2], [1]]), 1), [A]),
 "index_fill": (lambda L,a: a.index_fill(1, L.tensor([0, 2]), -1.0), [A]),
 "index_copy": (lambda L,a,b: a.index_copy(0, L.tensor([2, 0]), b), [A, B[:2]]),
 "masked_scatter": (lambda L,a,b: a.masked_scatter(a > 0, b), [A, B]),
 "renorm": (lambda L,a: a.renorm(2, 0, 1.0), [A]),
 "trapz": (lambda L,a: L.trapezoid(a), [A]),
 "vander": (lambda L,a: L.vander(a, 4), [V3]),
 "float_power": (lambda L,a: L.float_power(a.abs(), 2.5), [A]),
 "nan_to_num": (lambda L,a: L.nan_to_num(L.log(a)), [A]),
 "std_mean": (lambda L,a: L.std_mean(a, 1)[0], [A]),
 "var_mean": (lambda L,a: L.var_mean(a, 0, correction=0)[0], [A]),
 "aminmax": (lambda L,a: L.aminmax(a, dim=1)[1], [A]),
 "dist": (lambda L,a,b: L.dist(a,b), [A, B]),
 "count_nonzero": (lambda L,a: L.count_nonzero(L.round(a), 1), [A]),
 "searchsorted": (lambda L,a: L.searchsorted(L.tensor(S), a), [A]),
 "bucketize": (lambda L,a: L.bucketize(a, L.tensor(S), right=True), [A]),
 "bincount": (lambda L: L.bincount(L.tensor(I)), []),
 "bincount_w": (lambda L: L.bincount(L.tensor(I), weights=L.tensor(np.arange(5.))), []),
 "unique": (lambda L: L.unique(L.tensor(I), return_inverse=True, return_counts=True)[1], []),
 "unique_c": (lambda L: L.unique_consecutive(L.tensor(I), return_counts=True)[1], []),
 "histc": (lambda L,a: L.histc(a, 5), [A]),
 "tril_indices": (lambda L: L.tril_indices(3, 4, 1), []),
 "gcd": (lambda L: L.gcd(L.tensor(I), L.tensor([6, 4, 2, 3, 10])), []),
 "ldexp": (lambda L,a: L.ldexp(a, L.tensor([1, 2, -1, 0])), [A]),
 "signbit": (lambda L,a: a.signbit(), [A]),
 "atleast_3d": (lambda L,a: L.atleast_3d(a), [V3]),
 "swapaxes": (lambda L,a: a.swapaxes(0, 1), [A]),
 "select_scatter": (lambda L,a,b: L.select_scatter(a, b[0], 0, 1), [A, B]),
 "slice_scatter": (lambda L,a,b: L.slice_scatter(a, b[:, :2], 1, 2, 4), [A, B]),
 "diagonal_scatter": (lambda L,a,b: L.diagonal_scatter(a, b.diagonal(1), 1), [A, B]),
 "as_strided": (lambda L,a: a.as_strided((2, 2), (1, 2), 1), [A]),
 "as_strided_overlap": (lambda L,a: L.as_strided(a, (3, 3), (1, 1)), [A]),
}

# PyTorch has no derivative for heaviside, and its ldexp with integer exponents rounds 2^-k to 0
NO_GRAD = {"heaviside", "histc", "ldexp", "vander"}


def run(L, name):
    fn, arrays = CASES[name]
    ts = [L.tensor(a, requires_grad=True) for a in arrays]
    out = fn(L, *ts)
    value = out.detach().numpy().copy()
    grads = None
    if out.dtype == L.float64 and ts and name not in NO_GRAD:
        w = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        (out * w).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in ts]
    return value, str(out.dtype).split(".")[-1], grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_matches_torch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (gv, gd, gg), (wv, wd, wg) = run(mg, name), run(torch, name)
    assert gd == wd and gv.shape == wv.shape
    if name != "ldexp":
        np.testing.assert_allclose(gv, wv, rtol=1e-10, atol=1e-12, equal_nan=True)
    if wg is not None:
        for a, b in zip(gg, wg):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_frexp_as_torch(torch, dtype):
    x = np.array([0.0, -0.0, 1.0, -3.5, np.inf, -np.inf, np.nan, 1e-40, 8.0, 0.1, 6e4, 3e-5], dtype=dtype)
    mx, tx = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    want = torch.frexp(tx)
    for got in (mg.frexp(mx), mx.frexp()):
        assert type(got).__name__ == type(want).__name__ == "frexp"
        assert got.mantissa.dtype == getattr(mg, dtype) and got.exponent.dtype == mg.int32
        m, tm = got.mantissa.detach().numpy(), want.mantissa.detach().numpy()
        np.testing.assert_array_equal(m, tm)
        np.testing.assert_array_equal(np.signbit(m), np.signbit(tm))
        np.testing.assert_array_equal(got.exponent.numpy(), want.exponent.numpy())
        assert got.mantissa.grad_fn.name() == want.mantissa.grad_fn.name() and not got.exponent.requires_grad
    w = np.linspace(-1, 1, len(x)).astype(dtype)
    (want.mantissa * torch.tensor(w)).sum().backward()
    (mg.frexp(mx).mantissa * mg.tensor(w)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-3 if dtype == "float16" else 1e-7)
    with pytest.raises(RuntimeError) as t:
        torch.frexp(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError) as e:
        mg.frexp(mg.tensor([1, 2]))
    assert str(e.value) == str(t.value)


def _grad_fn_chain(t):
    names, f = [], t.grad_fn
    while f is not None and not f.name().endswith("AccumulateGrad"):  # (PyTorch's has a namespace)
        names.append(f.name())
        f = f.next_functions[0][0] if f.next_functions else None
    return names


@pytest.mark.parametrize("repeats, dim", [(2, 1), (3, -1), (2, 0), (0, 1), (3, None)])
def test_repeat_interleave_count_as_torch(torch, repeats, dim):
    # one int count: PyTorch copies by broadcast (its backward a sum), not by an index select
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    outs = []
    for L in (mg, torch):
        t = L.tensor(x, requires_grad=True)
        y = t.repeat_interleave(repeats, dim=dim)
        w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(np.float32), requires_grad=True)
        (gx,) = L.autograd.grad((y * w).sum(), t, create_graph=True)
        (gw,) = L.autograd.grad((gx * gx).sum(), w)  # through the backward's own graph
        outs.append((y.detach().numpy(), str(y.dtype), _grad_fn_chain(y), y.is_contiguous(), gx.detach().numpy(),
                     gw.numpy()))
    (gy, gd, gc, gcont, ggx, ggw), (wy, wd, wc, wcont, wgx, wgw) = outs
    assert (gd.split(".")[-1], gc, gcont) == (wd.split(".")[-1], wc, wcont)
    np.testing.assert_array_equal(gy, wy)
    np.testing.assert_allclose(ggx, wgx, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ggw, wgw, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("repeats, dim", [(2, 1), (3, -1), (2, 0), (0, 1), (3, None)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "int64", "0-d"])
def test_repeat_interleave_count_no_grad_as_torch(torch, repeats, dim, layout):
    # no graph to record: numpy's repeat alone; a new contiguous tensor as PyTorch's clone makes it
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    if layout == "int64":
        x = (x * 10).astype(np.int64)
    if layout == "0-d":
        x, dim = x[0, 0, 0], None
    outs = []
    for L in (mg, torch):
        t = L.tensor(x)
        if layout == "transposed":
            t = t.transpose(0, 2)
        with L.no_grad():
            y = t.repeat_interleave(repeats, dim=dim)
        before = t.clone()
        if y.numel():
            y.view(-1)[0] = 7  # a copy: the input unchanged
        outs.append((y.numpy().copy(), str(y.dtype).split(".")[-1], tuple(y.shape), y.stride(), y.is_contiguous(),
                     bool((t == before).all()), t._version))
    (gy, *grest), (wy, *wrest) = outs
    assert grest == wrest
    np.testing.assert_array_equal(gy, wy)


def _norm_and_grads(L, p, dim, data):
    x = L.tensor(data, requires_grad=True)
    y = L.linalg.vector_norm(x, p, dim=dim)
    node = type(y.grad_fn).__name__ if y.grad_fn is not None else None
    (g,) = L.autograd.grad(y.sum(), [x], allow_unused=True)
    x2 = L.tensor(data, requires_grad=True)
    L.linalg.vector_norm(x2, p, dim=dim).sum().backward()
    grads = [None if t is None else np.round(np.asarray(t.tolist(), dtype=float), 5).tolist() for t in (g, x2.grad)]
    return node if p == 0 else None, np.round(np.asarray(y.tolist(), dtype=float), 5).tolist(), grads


@pytest.mark.parametrize("p", [0, -1, -2, -0.5])
@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("data", [[[1.0, 0.0, -2.0], [3.0, 4.0, 0.0]], [[1.0, 0.5, -2.0], [3.0, 4.0, 0.0]],
                                  [[1.0, 0.5, -2.0], [3.0, 4.0, 1.5]]])
def test_vector_norm_of_order_zero_or_negative_like_torch(torch, p, dim, data):
    # order 0: recorded, with no gradient (x.grad stays None); negative orders: 0 at a slice holding a zero,
    # and a gradient of 0 there (not nan)
    assert _norm_and_grads(mg, p, dim, data) == _norm_and_grads(torch, p, dim, data)


def _norm_graph(L, f, data, weights):
    # the node, its edges, the value, the gradient and a second derivative (create_graph through the backward)
    x = L.tensor(data, dtype=L.float64, requires_grad=True)
    y = f(L, x)
    w = L.tensor(np.resize(weights, tuple(y.shape)))
    (g,) = L.autograd.grad((y * w).sum(), [x], create_graph=True)
    (h,) = L.autograd.grad((g * L.tensor(np.linspace(-1.0, 1.0, x.numel()).reshape(x.shape))).sum(), [x])
    names = [type(y.grad_fn).__name__] + [type(n).__name__ for n, _ in y.grad_fn.next_functions]
    h = L.zeros_like(x).add(h)  # (PyTorch's may be a ZeroTensor, with no storage to read)
    return names, np.asarray(y.tolist()), np.asarray(g.tolist()), np.asarray(h.tolist())


@pytest.mark.parametrize("p", [1, float("inf"), float("-inf"), 3, 0.5, -1, 1.5])
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}, {"dim": 0, "keepdim": True}])
@pytest.mark.parametrize("data", [[[1.0, 0.5, -2.0, 0.3], [3.0, -4.0, 1.5, 2.0]],
                                  [[1.0, 0.0, -2.0, 2.0], [0.0, 0.0, 0.0, 0.0]]])  # (zeros, ties)
def test_vector_norm_is_one_node_like_torch(torch, p, kw, data):
    # one LinalgVectorNormBackward0 for every order, as x.norm and linalg.vector_norm: its gradient, and the
    # derivative of that gradient, PyTorch's
    for f in (lambda L, x: x.norm(p, **kw), lambda L, x: L.linalg.vector_norm(x, p, **kw)):
        got, want = _norm_graph(mg, f, data, [1.0, -2.0, 3.0, 0.5]), _norm_graph(torch, f, data, [1.0, -2.0, 3.0, 0.5])
        assert got[0] == want[0] == ["LinalgVectorNormBackward0", "AccumulateGrad"]
        for a, b in zip(got[1:], want[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, -1, float("inf"), float("-inf")])
def test_dist_is_one_node_like_torch(torch, p):
    a_data, b_data = rng.standard_normal((3, 1)), rng.standard_normal(4)
    out = []
    for L in (mg, torch):
        a, b = L.tensor(a_data, requires_grad=True), L.tensor(b_data, requires_grad=True)
        y = L.dist(a, b, p)
        ga, gb = L.autograd.grad(y * 3, [a, b], create_graph=True)
        ha, hb = (L.zeros_like(t).add(h) for t, h in zip((a, b), L.autograd.grad((ga * ga).sum() + (gb * gb).sum(), [a, b])))
        out.append(([type(y.grad_fn).__name__, [type(n).__name__ for n, _ in y.grad_fn.next_functions]],
                    [np.asarray(t.tolist()) for t in (y, ga, gb, ha, hb)]))
    (mg_names, mg_vals), (t_names, t_vals) = out
    assert mg_names == t_names == ["DistBackward0", ["AccumulateGrad", "AccumulateGrad"]]
    for m, t in zip(mg_vals, t_vals):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-12)


def _outcome(f):
    try:
        return "value", np.asarray(f().tolist()).round(5).tolist()
    except Exception as e:  # noqa: BLE001 (the type and text compared with PyTorch's)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", [
    lambda L: L.dist(L.tensor([1.0, 2.0]), L.tensor([0.0, 0.0]), L.tensor(3.0)),  # a 0-d tensor is a number
    lambda L: L.dist(L.tensor([1.0, 2.0]), L.tensor([0.0, 0.0]), L.tensor([3.0])),
    lambda L: L.dist(L.tensor([1.0, 2.0]), L.tensor([0.0, 0.0]), "fro"),
    lambda L: L.dist(L.arange(3), L.arange(3)),
    lambda L: L.dist(L.zeros(0), L.zeros(0), -1),
    lambda L: L.linalg.vector_norm(L.zeros(0, 3), float("inf")),
    lambda L: L.linalg.vector_norm(L.zeros(2, 0), -0.5, dim=(0, 1)),
    lambda L: L.linalg.vector_norm(L.zeros(0, 3), -1, dim=1),
    lambda L: L.ones(3, 4).norm(p="nuc", dim=1),
    lambda L: L.ones(3, 4).norm(p="nuc", dim=[1]),
    lambda L: L.ones(3, 4).norm(p="abc"),
    lambda L: L.ones(3, 4).norm(p="abc", dim=1),
    lambda L: L.linalg.vector_norm(L.ones(3, 4), "abc"),
])
def test_dist_and_norm_refusals_like_torch(torch, case):
    assert _outcome(lambda: case(mg)) == _outcome(lambda: case(torch))


def test_dist_of_order_zero_has_no_gradient_like_torch(torch):
    # the count of nonzeros: recorded; no gradient for input, and the backward refused (PyTorch's words) once
    # `other` wants one
    texts = []
    for L in (mg, torch):
        a, b = L.tensor([1.0, 0.0, 2.0], requires_grad=True), L.zeros(3)
        y = L.dist(a, b, 0)
        assert type(y.grad_fn).__name__ == "DistBackward0" and y.item() == 2.0
        y.backward()
        assert a.grad is None
        y = L.dist(a, b.requires_grad_(), 0)
        with pytest.raises(RuntimeError) as e:
            y.backward()
        texts.append(str(e.value))
    assert texts[0] == texts[1]
