"""cdist against PyTorch: its argument checks and their texts, both compute modes (the matrix-product
form for p = 2 and the direct form), gradients at the edges (zero distances, zero differences for p < 1,
ties for p = inf), the graph's nodes, and the double backward PyTorch refuses."""
import numpy as np
import pytest

import minigrad as mg

MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]
rng = np.random.default_rng(0)


def _mm_atol(a):
    """How far the matrix-product form's distances may be off: sqrt(|a|^2 + |b|^2 - 2 a.b) loses a few ulps of
    |a|^2 to cancellation, which the square root turns into sqrt(ulps); PyTorch's own values are off as much."""
    return float(np.sqrt(16 * np.finfo(np.float32).eps * max(1.0, (a * a).sum(-1).max(initial=0))))


def _both(torch, f):
    """f run with each library: (kind of result, result or error text)."""
    out = []
    for L in (torch, mg):
        try:
            out.append(("ok", f(L)))
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("case", [
    lambda L: L.cdist(L.ones(3, 4), L.ones(5, 4), p=-1),
    lambda L: L.cdist(L.ones(3, 4), L.ones(5, 4), p=float("nan")),
    lambda L: L.cdist(L.ones(4), L.ones(5, 4)),
    lambda L: L.cdist(L.ones(3, 4), L.ones(4)),
    lambda L: L.cdist(L.ones(3, 4), L.ones(5, 3)),
    lambda L: L.cdist(L.ones(3, 4, dtype=L.int64), L.ones(5, 2), p=-1),
    lambda L: L.cdist(L.ones(3, 4, dtype=L.int64), L.ones(5, 4), p=-1),
    lambda L: L.cdist(L.ones(3, 4), L.ones(5, 4, dtype=L.int64)),
    lambda L: L.cdist(L.ones(2, 3, 4), L.ones(3, 5, 4), p=-1),
    lambda L: L.cdist(L.ones(2, 3, 4), L.ones(3, 5, 4)),
    lambda L: L.cdist(L.ones(3, 4), L.ones(5, 4), compute_mode="x"),
    lambda L: L.cdist(L.ones(3), L.ones(5, 4), compute_mode=None),
    lambda L: L.cdist(L.ones(3, 4, dtype=L.float64), L.ones(5, 4)),
    lambda L: L.cdist(L.ones(30, 4, dtype=L.float64), L.ones(5, 4)),
    lambda L: L.cdist(L.ones(3, 4, dtype=L.float16), L.ones(5, 4, dtype=L.float16)),
])
def test_cdist_errors_as_torch(torch, case):
    (kt, t), (km, m) = _both(torch, case)
    assert kt != "ok"
    assert (km, m) == (kt, t)


@pytest.mark.parametrize("shapes", [((3, 4), (5, 4)), ((30, 4), (5, 4)), ((2, 1, 3, 4), (3, 5, 4)),
                                    ((1, 30, 4), (2, 5, 4)), ((0, 4), (5, 4)), ((3, 0), (5, 0)),
                                    ((0, 3, 4), (0, 5, 4))])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("mode", MODES)
def test_cdist_values_and_grads(torch, shapes, p, mode):
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    a.reshape(-1)[:2] = 0.0  # zero differences against the row of b made equal below
    if a.size and b.size:
        b[..., 0, :] = a.reshape((-1,) + a.shape[-2:])[0, 0]
    w = rng.standard_normal(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-2]))
    res = []
    for L in (torch, mg):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        d = L.cdist(x, y, p=p, compute_mode=mode)
        gx, gy = L.autograd.grad((d * L.tensor(w, dtype=L.float32)).sum(), (x, y), allow_unused=True)
        gx, gy = (L.zeros_like(x) if gx is None else gx), (L.zeros_like(y) if gy is None else gy)
        res.append((d.detach().numpy(), gx.numpy(), gy.numpy(), d.dtype, d.grad_fn.name()))
    (dt, gxt, gyt, tt, nt), (dm, gxm, gym, tm, nm) = res
    assert dm.shape == dt.shape and str(tm).split(".")[1] == str(tt).split(".")[1] and nm == nt
    np.testing.assert_allclose(dm, dt, rtol=1e-5, atol=_mm_atol(a) if p == 2 else 1e-5)
    np.testing.assert_allclose(gxm, gxt, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gym, gyt, rtol=1e-4, atol=1e-4)


def test_cdist_self_distances_of_the_mm_form(torch):
    """The matrix-product form: a row's distance to itself is 0 up to rounding, and its gradient 0 where it is 0."""
    a = rng.standard_normal((40, 8)).astype(np.float32) * 10
    out = []
    for L in (torch, mg):
        x = L.tensor(a, requires_grad=True)
        d = L.cdist(x, x)
        (g,) = L.autograd.grad(d.sum(), x)
        out.append((d.detach().numpy(), g.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=_mm_atol(a))
    assert np.isfinite(out[1][1]).all()


def test_cdist_inf_ties_each_get_the_whole_gradient(torch):
    grads = []
    for L in (torch, mg):
        x = L.tensor([[0.0, 0.0, 0.5]], requires_grad=True)
        d = L.cdist(x, L.tensor([[1.0, -1.0, 0.0]]), p=float("inf"))
        grads.append(L.autograd.grad(d.sum(), x)[0].numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_cdist_graph_nodes(torch):
    for shapes, mode in [(((3, 4), (5, 4)), MODES[0]), (((30, 4), (5, 4)), MODES[0]), (((3, 4), (5, 4)), MODES[1])]:
        names = []
        for L in (torch, mg):
            x = L.ones(*shapes[0], requires_grad=True)
            node = L.cdist(x, L.ones(*shapes[1]), compute_mode=mode).grad_fn
            names.append([node.name()] + [n.name().split(":")[-1] for n, _ in node.next_functions if n is not None][:1])
        assert names[1] == names[0]


@pytest.mark.parametrize("p", [1.0, 2.0, float("inf")])
def test_cdist_double_backward_refused_as_torch(torch, p):
    """PyTorch's direct form has no second derivative: the gradient's own backward raises."""
    def f(L):
        x = L.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        d = L.cdist(x, L.tensor(rng.standard_normal((5, 3))), p=p)
        (g,) = L.autograd.grad(d.sum(), x, create_graph=True)
        L.autograd.grad((g * g).sum(), x)
    (kt, t), (km, m) = _both(torch, f)
    assert kt == "NotImplementedError" and (km, m) == (kt, t)


def test_cdist_mm_form_double_backward_as_torch(torch):
    a, b = rng.standard_normal((30, 3)), rng.standard_normal((6, 3))
    out = []
    for L in (torch, mg):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        (g,) = L.autograd.grad(L.cdist(x, y).sum(), x, create_graph=True)
        out.append([t.numpy() for t in L.autograd.grad((g * g).sum(), (x, y))])
    for m, t in zip(out[1], out[0]):
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [lambda L, x: L.linalg.vector_norm(x, 0.5, dim=1).sum(),
                               lambda L, x: x.norm(0.5),
                               lambda L, x: L.nn.functional.normalize(x, p=0.5, dim=1)[:, 1].sum()])
def test_norm_below_1_zero_element_grad_as_torch(torch, f):
    """|x|^p with 0 < p < 1 has an infinite slope at x = 0: PyTorch's gradient there is 0, not nan."""
    grads = []
    for L in (torch, mg):
        x = L.tensor([[0.0, 2.0, -1.0], [3.0, 0.0, 0.5]], requires_grad=True)
        grads.append(L.autograd.grad(f(L, x), x)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)
