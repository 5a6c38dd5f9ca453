"""Linear algebra records PyTorch's node: cholesky(upper=True), cholesky_solve, cholesky_inverse, triangular_solve
and householder_product end in their own node (not the Transpose/Mm of their last step), einsum's output is named
after the last op of PyTorch's decomposition; linalg.cholesky_ex on a matrix that is not positive-definite gives
LAPACK's partial factor, as PyTorch. Values and gradients stay PyTorch's."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _spd(r, n=3, batch=()):
    a = r.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _n(*shape):
    return lambda r: r.standard_normal(shape)


def _lower(r):
    return np.linalg.cholesky(_spd(r))


def _upper(r):
    return np.linalg.cholesky(_spd(r)).T


def _triu(r):
    return np.triu(r.standard_normal((3, 3))) + 3 * np.eye(3)


def _lopsided(r):  # symmetric positive-definite in its upper triangle only: cholesky(upper=True) must read that one
    a = _spd(r)
    a[np.tril_indices(3, -1)] = r.standard_normal(3) * 5
    return a


# (id, fn(L, *tensors) -> output, [input makers]); every output's grad_fn and its next_functions are PyTorch's
CASES = [
    ("linalg.cholesky upper", lambda L, a: L.linalg.cholesky(a, upper=True), [_lopsided]),
    ("linalg.cholesky batched upper", lambda L, a: L.linalg.cholesky(a, upper=True), [lambda r: _spd(r, 3, (2,))]),
    ("cholesky upper", lambda L, a: L.cholesky(a, upper=True), [_spd]),
    ("linalg.cholesky_ex upper", lambda L, a: L.linalg.cholesky_ex(a, upper=True).L, [_lopsided]),
    ("cholesky_solve", lambda L, b, u: L.cholesky_solve(b, u), [_n(3, 2), _lower]),
    ("cholesky_solve upper", lambda L, b, u: L.cholesky_solve(b, u, upper=True), [_n(3, 2), _upper]),
    ("cholesky_inverse", lambda L, u: L.cholesky_inverse(u), [_lower]),
    ("cholesky_inverse upper", lambda L, u: L.cholesky_inverse(u, True), [_upper]),
    ("triangular_solve", lambda L, b, a: L.triangular_solve(b, a), [_n(3, 2), _triu]),
    ("triangular_solve transpose", lambda L, b, a: L.triangular_solve(b, a, transpose=True), [_n(3, 2), _triu]),
    ("linalg.householder_product", lambda L, a, t: L.linalg.householder_product(a, t), [_n(4, 3), _n(3)]),
    ("orgqr", lambda L, a, t: L.orgqr(a, t), [_n(4, 3), _n(3)]),
]

# einsum: the output's node only (PyTorch's inner nodes are its decomposition's permutes, bmm and views)
EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("i,i->", [(4,), (4,)]), ("ij->ji", [(3, 4)]),
    ("ii->i", [(3, 3)]), ("bi,bi->b", [(3, 4), (3, 4)]), ("ii", [(3, 3)]), ("ij->i", [(3, 4)]), ("ij", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij,k->k", [(3, 4), (5,)]),
    ("ij,jk,kl->il", [(3, 4), (4, 2), (2, 5)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
]


def _name(node):
    return None if node is None else node.name().removeprefix("torch::autograd::")


def _nodes(out):
    return _name(out.grad_fn), tuple(_name(f) for f, _ in out.grad_fn.next_functions)


def _run(L, fn, arrays):
    ts = [L.tensor(a, requires_grad=True) for a in arrays]
    out = fn(L, *ts)
    out = out[0] if isinstance(out, tuple) else out
    return ts, out


def _grads(L, ts, outs, weights):
    loss = sum((o * L.tensor(w)).sum() for o, w in zip(outs, weights))
    return [g.detach().numpy() for g in L.autograd.grad(loss, ts)]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_value_and_gradient_as_torch(case):
    _, fn, makers = case
    r = np.random.default_rng(27)
    arrays = [m(r) for m in makers]
    tt, tout = _run(torch, fn, arrays)
    mt, mout = _run(minigrad, fn, arrays)
    assert _nodes(mout) == _nodes(tout)
    np.testing.assert_allclose(mout.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = r.standard_normal(tout.shape)
    for g, e in zip(_grads(minigrad, mt, [mout], [w]), _grads(torch, tt, [tout], [w])):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_triangular_solve_both_outputs_record_its_node_and_carry_gradient():
    r = np.random.default_rng(5)
    arrays = [r.standard_normal((2, 3, 2)), _triu(r)]
    res = {}
    for L in (torch, minigrad):
        b, a = (L.tensor(x, requires_grad=True) for x in arrays)
        out = L.triangular_solve(b, a, upper=True)
        res[L.__name__] = ([_nodes(o) for o in out], _grads(L, [b, a], list(out), [np.ones((2, 3, 2)), arrays[1]]))
    assert res["minigrad"][0] == res["torch"][0]
    for g, e in zip(res["minigrad"][1], res["torch"][1]):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("equation,shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_output_node_as_torch(equation, shapes):
    r = np.random.default_rng(3)
    arrays = [r.standard_normal(s) for s in shapes]
    tt, tout = _run(torch, lambda L, *ts: L.einsum(equation, *ts), arrays)
    mt, mout = _run(minigrad, lambda L, *ts: L.einsum(equation, *ts), arrays)
    assert _name(mout.grad_fn) == _name(tout.grad_fn)
    np.testing.assert_allclose(mout.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = r.standard_normal(tout.shape)
    for g, e in zip(_grads(minigrad, mt, [mout], [w]), _grads(torch, tt, [tout], [w])):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _not_pd(n, j, batch=(), complex_=False, seed=0):
    """A Hermitian positive-definite matrix whose pivot j is made negative, its upper corner then edited (so that
    which triangle is read shows)."""
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n)) + (1j * r.standard_normal(batch + (n, n)) if complex_ else 0)
    A = a @ np.swapaxes(a.conj(), -1, -2) + np.eye(n)
    A[..., j, j] = -3.0
    A[..., 0, n - 1] += 7.0
    return A


# (id, matrix, upper): cholesky_ex's L where factorization fails is what LAPACK's potrf leaves there
PARTIAL = [
    ("first pivot", _not_pd(4, 0), False), ("second pivot", _not_pd(4, 1), False),
    ("last pivot upper", _not_pd(5, 4), True), ("zero pivot", np.array([[4., 2, 1, 0], [2, 1, 3, 1], [1, 3, 2, 0],
                                                                         [0, 1, 0, 5]]), False),
    ("batched, one fails", np.stack([_not_pd(3, 1), _spd(np.random.default_rng(1))]), False),
    ("complex upper", _not_pd(4, 2, complex_=True), True), ("batched complex", _not_pd(3, 2, (2,), True), False),
    ("nan", np.array([[np.nan, 0.0], [0.0, 1.0]]), False), ("order 40", _not_pd(40, 25), False),
]


@pytest.mark.parametrize("A,upper", [c[1:] for c in PARTIAL], ids=[c[0] for c in PARTIAL])
def test_cholesky_ex_partial_factor_as_torch(A, upper):
    t = torch.linalg.cholesky_ex(torch.tensor(A), upper=upper)
    m = minigrad.linalg.cholesky_ex(minigrad.tensor(A), upper=upper)
    np.testing.assert_array_equal(m.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(m.L.numpy(), t.L.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_failed_factor_records_its_node_and_gradient(upper):
    A = _not_pd(4, 2)
    w = np.random.default_rng(2).standard_normal((4, 4))
    res = {}
    for L in (torch, minigrad):
        a = L.tensor(A, requires_grad=True)
        out = L.linalg.cholesky_ex(a, upper=upper).L
        res[L.__name__] = _nodes(out), _grads(L, [a], [out], [w])[0]
    assert res["minigrad"][0] == res["torch"][0]
    np.testing.assert_allclose(res["minigrad"][1], res["torch"][1], rtol=1e-10, atol=1e-12)
