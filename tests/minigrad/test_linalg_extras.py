"""solve_triangular/triangular_solve, cholesky_solve/cholesky_inverse, lu_factor/lu/lu_unpack/lu_solve,
multi_dot/chain_matmul, cond, tensorsolve/tensorinv and einsum's sublist form: values, gradients and
error texts against PyTorch, and gradcheck in float64."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tri(n, upper=False, seed=0, batch=()):
    """A well-conditioned triangular matrix (or a batch of them)."""
    a = _rand(*batch, n, n, seed=seed) * 0.3 + 2 * np.eye(n)
    return np.triu(a) if upper else np.tril(a)


def _np(t):
    return np.asarray(t.detach().numpy())


def _close(a, b, tol=1e-9):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=tol, atol=tol)


def _both(fn, *arrays, torch, grad=True):
    """fn(framework, *tensors) run in minigrad and PyTorch on the same float64 arrays; with grad, the gradients of
    sum(out * W) for a fixed random W are compared too. Returns minigrad's output."""
    ms = [mg.tensor(a, requires_grad=grad) for a in arrays]
    ts = [torch.tensor(a, requires_grad=grad) for a in arrays]
    out, tout = fn(mg, *ms), fn(torch, *ts)
    _close(out, tout)
    if grad:
        w = _rand(*tout.shape, seed=99)
        (out * mg.tensor(w)).sum().backward()
        (tout * torch.tensor(w)).sum().backward()
        for m, t in zip(ms, ts):  # (no gradient and a zero one are the same here)
            if t.grad is None or m.grad is None:
                assert not any(np.any(_np(g) if g is m.grad else g.numpy()) for g in (m.grad, t.grad) if g is not None)
            else:
                _close(m.grad, t.grad, tol=1e-8)
    return out


def _same_error(fn, torch):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(want.type) as got:
        fn(mg)
    assert str(got.value) == str(want.value)


# ---- solve_triangular / triangular_solve ---------------------------------------------------------------------
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_values_and_grads(torch, upper, left, unitriangular):
    A = _rand(2, 4, 4, seed=1) * 0.3 + 2 * np.eye(4)  # a full matrix: only its triangle is read (and differentiated)
    B = _rand(3, 1, 4, 2, seed=2) if left else _rand(3, 1, 2, 4, seed=2)  # batch dims broadcast
    out = _both(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular),
                A, B, torch=torch)
    assert tuple(out.shape) == ((3, 2, 4, 2) if left else (3, 2, 2, 4))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("upper", [True, False])
def test_triangular_solve_result_and_grads(torch, upper, transpose):
    A, b = _rand(4, 4, seed=3) + 3 * np.eye(4), _rand(2, 4, 3, seed=4)
    _both(lambda L, x, a: L.triangular_solve(x, a, upper, transpose).solution, b, A, torch=torch)
    _both(lambda L, x, a: L.triangular_solve(x, a, upper=upper, transpose=transpose, unitriangular=True).solution,
          b, A, torch=torch)
    r = mg.triangular_solve(mg.tensor(b), mg.tensor(A), upper=upper, transpose=transpose)
    assert type(r).__name__ == "triangular_solve" and r._fields == ("solution", "cloned_coefficient")
    t = torch.triangular_solve(torch.tensor(b), torch.tensor(A), upper=upper, transpose=transpose)
    _close(r.cloned_coefficient, t.cloned_coefficient)  # A itself, broadcast to b's batch
    _both(lambda L, x, a: L.triangular_solve(x, a, upper).cloned_coefficient * 2, b, A, torch=torch)
    _close(mg.tensor(b).triangular_solve(mg.tensor(A), upper)[0], torch.tensor(b).triangular_solve(torch.tensor(A),
                                                                                                     upper)[0])


def test_triangular_solves_gradcheck():
    A = mg.tensor(_tri(3, seed=5), requires_grad=True)
    B = mg.tensor(_rand(2, 3, 2, seed=6), requires_grad=True)
    assert gradcheck(lambda a, b: mg.linalg.solve_triangular(a, b, upper=False), (A, B))
    assert gradcheck(lambda a, b: mg.linalg.solve_triangular(a, b.mT, upper=True, left=False, unitriangular=True),
                     (A, B))
    assert gradcheck(lambda a, b: mg.triangular_solve(b, a, upper=False, transpose=True), (A, B))
    assert gradgradcheck(lambda a, b: mg.linalg.solve_triangular(a, b, upper=False), (A, B))


# ---- cholesky_solve / cholesky_inverse -------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_values_and_grads(torch, upper):
    F = _tri(4, upper=upper, seed=7, batch=(2,))
    B = _rand(3, 1, 4, 2, seed=8)
    out = _both(lambda L, b, f: L.cholesky_solve(b, f, upper), B, F, torch=torch)
    assert tuple(out.shape) == (3, 2, 4, 2)
    _both(lambda L, b, f: L.cholesky_solve(b, f, upper=upper), B[0, 0], F[0], torch=torch)
    _both(lambda L, f: L.cholesky_inverse(f, upper), F, torch=torch)
    _both(lambda L, f: L.cholesky_inverse(f, upper=upper), F[1], torch=torch)
    _both(lambda L, b, f: b.cholesky_solve(f, upper), B[0, 0], F[0], torch=torch)  # the Tensor methods
    _both(lambda L, f: f.cholesky_inverse(upper), F[0], torch=torch)


def test_cholesky_solve_reads_one_triangle(torch):
    """Only the factor's triangle is read for the value; the gradient is PyTorch's (the whole factor's)."""
    L = _tri(3, seed=9)
    full = L + np.triu(_rand(3, 3, seed=10), 1)
    B = _rand(3, 2, seed=11)
    _close(mg.cholesky_solve(mg.tensor(B), mg.tensor(full)), torch.cholesky_solve(torch.tensor(B), torch.tensor(L)))
    _close(mg.cholesky_inverse(mg.tensor(full)), torch.cholesky_inverse(torch.tensor(L)))


def test_cholesky_solve_gradcheck():
    # (through the factor's triangle: the value reads only that, while the gradient, as PyTorch's, has the others too)
    L = mg.tensor(_tri(3, seed=12), requires_grad=True)
    B = mg.tensor(_rand(3, 2, seed=13), requires_grad=True)
    assert gradcheck(lambda b, f: mg.cholesky_solve(b, f.tril()), (B, L))
    assert gradcheck(lambda f: mg.cholesky_inverse(f.tril().mT, upper=True), (L,))
    assert gradgradcheck(lambda b, f: mg.cholesky_solve(b, f.tril()), (B, L))


# ---- lu_factor / lu / lu_unpack / lu_solve ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5), (2, 2, 4, 3)])
def test_lu_factor_values_pivots_and_grads(torch, shape):
    A = _rand(*shape, seed=14)
    LU, piv = mg.linalg.lu_factor(mg.tensor(A))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(A))
    assert piv.dtype == mg.int32 and tuple(piv.shape) == tuple(tpiv.shape)
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    assert type(mg.linalg.lu_factor(mg.tensor(A))).__name__ == "linalg_lu_factor"
    _both(lambda L, a: L.linalg.lu_factor(a).LU, A, torch=torch)
    P, Lo, U = mg.linalg.lu(mg.tensor(A))
    for ours, theirs in zip((P, Lo, U), torch.linalg.lu(torch.tensor(A))):
        _close(ours, theirs)
    _both(lambda L, a: L.cat([L.linalg.lu(a).L.flatten(-2), L.linalg.lu(a).U.flatten(-2)], -1), A, torch=torch)
    for ours, theirs in zip(mg.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv)):
        _close(ours, theirs)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_lu_factor_gradcheck(shape):
    A = mg.tensor(_rand(*shape, seed=15), requires_grad=True)
    assert gradcheck(lambda a: mg.linalg.lu_factor(a).LU, (A,))
    assert gradgradcheck(lambda a: mg.linalg.lu_factor(a).LU, (A,))


def test_lu_factor_of_empty_matrices(torch):
    for shape in [(0, 0), (0, 3, 3), (2, 0, 3)]:
        LU, piv = mg.linalg.lu_factor(mg.zeros(*shape))
        tLU, tpiv = torch.linalg.lu_factor(torch.zeros(*shape))
        assert tuple(LU.shape) == tuple(tLU.shape) and tuple(piv.shape) == tuple(tpiv.shape)


def test_lu_factor_ex_and_torch_lu(torch):
    sing = np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])
    r, t = mg.linalg.lu_factor_ex(mg.tensor(sing)), torch.linalg.lu_factor_ex(torch.tensor(sing))
    _close(r.LU, t.LU)
    np.testing.assert_array_equal(r.pivots.numpy(), t.pivots.numpy())
    assert int(r.info) == int(t.info) == 3 and r.info.dtype == mg.int32
    A = _rand(2, 3, 3, seed=16)
    ours, theirs = mg.lu(mg.tensor(A), get_infos=True), torch.lu(torch.tensor(A), get_infos=True)
    assert isinstance(ours, tuple) and len(ours) == 3
    _close(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[2].numpy(), theirs[2].numpy())
    _close(mg.tensor(A).lu()[0], torch.tensor(A).lu()[0])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_values_and_grads(torch, left, adjoint):
    A = _rand(2, 4, 4, seed=17)
    B = _rand(3, 1, 4, 2, seed=18) if left else _rand(3, 1, 2, 4, seed=18)
    LU, piv = mg.linalg.lu_factor(mg.tensor(A))

    def fn(L, lu, b):
        return L.linalg.lu_solve(lu, L.tensor(piv.numpy()), b, left=left, adjoint=adjoint)

    out = _both(fn, LU.numpy(), B, torch=torch)
    assert tuple(out.shape) == ((3, 2, 4, 2) if left else (3, 2, 2, 4))
    # end to end: through lu_factor, as a solve
    _both(lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=left, adjoint=adjoint), A, B,
          torch=torch)


def test_lu_solve_legacy_and_gradcheck(torch):
    A, B = _rand(3, 3, seed=19), _rand(3, 2, seed=20)
    _both(lambda L, b, a: L.lu_solve(b, *L.linalg.lu_factor(a)), B, A, torch=torch)
    _both(lambda L, b, a: b.lu_solve(*L.linalg.lu_factor(a)), B, A, torch=torch)
    a, b = mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)
    assert gradcheck(lambda a, b: mg.linalg.lu_solve(*mg.linalg.lu_factor(a), b), (a, b))
    assert gradcheck(lambda a, b: mg.linalg.lu_solve(*mg.linalg.lu_factor(a), b.mT, left=False, adjoint=True),
                     (a, b))


# ---- multi_dot / chain_matmul ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [[(3, 5), (5, 2)], [(3, 5), (5, 2), (2, 6), (6, 4)], [(5,), (5, 2), (2, 6)],
                                    [(3, 5), (5, 2), (2,)], [(5,), (5, 2), (2, 6), (6,)], [(4,), (4,)],
                                    [(10, 2), (2, 10), (10, 3)]])
def test_multi_dot_values_and_grads(torch, shapes):
    arrays = [_rand(*s, seed=21 + i) for i, s in enumerate(shapes)]
    _both(lambda L, *ts: L.linalg.multi_dot(list(ts)), *arrays, torch=torch)
    if all(len(s) == 2 for s in shapes):
        _both(lambda L, *ts: L.chain_matmul(*ts), *arrays, torch=torch)


def test_chain_matmul_one_matrix_and_gradcheck(torch):
    _both(lambda L, a: L.chain_matmul(a), _rand(3, 2, seed=30), torch=torch)
    ts = [mg.tensor(_rand(*s, seed=31 + i), requires_grad=True) for i, s in enumerate([(2, 3), (3, 4), (4, 2)])]
    assert gradcheck(lambda *xs: mg.linalg.multi_dot(xs), ts)


# ---- cond, tensorsolve, tensorinv ------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf")])
def test_cond_values_and_grads(torch, p):
    A = _rand(2, 4, 4, seed=40)
    # (PyTorch 2.13's backward of the norm*inverse-norm orders raises, an in-place write to inv_ex's output:
    # their gradients are checked by gradcheck below)
    _both(lambda L, a: L.linalg.cond(a, p), A, torch=torch, grad=p in (None, 2, -2))
    if p in (None, 2, -2):  # from the singular values: any shape
        _both(lambda L, a: L.linalg.cond(a, p), _rand(3, 5, seed=41), torch=torch)
    else:  # exactly singular: inf per batch element ('nuc': from the singular values, nan for a zero matrix)
        S = np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])
        Z = np.stack([np.eye(3) + 0.1 * _rand(3, 3, seed=41), np.zeros((3, 3))] + ([S] if p != "nuc" else []))
        ours, theirs = mg.linalg.cond(mg.tensor(Z), p), torch.linalg.cond(torch.tensor(Z), p)
        np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-9)


def test_cond_gradcheck():
    a = mg.tensor(_rand(3, 3, seed=42), requires_grad=True)
    for p in (None, -2, "fro", 1, float("inf")):
        assert gradcheck(lambda m, p=p: mg.linalg.cond(m, p), (a,))


def test_tensorsolve_and_tensorinv(torch):
    _both(lambda L, a, b: L.linalg.tensorsolve(a, b), _rand(6, 2, 3, seed=43), _rand(6, seed=44), torch=torch)
    _both(lambda L, a, b: L.linalg.tensorsolve(a, b), _rand(2, 3, 3, 2, seed=45), _rand(2, 3, seed=46), torch=torch)
    _both(lambda L, a, b: L.linalg.tensorsolve(a, b, dims=(0, 1)), _rand(2, 3, 6, seed=47), _rand(6, seed=48),
          torch=torch)
    _both(lambda L, a: L.linalg.tensorinv(a), _rand(4, 6, 8, 3, seed=49), torch=torch)
    _both(lambda L, a: L.linalg.tensorinv(a, ind=1), _rand(4, 2, 2, seed=50), torch=torch)
    a = mg.tensor(_rand(4, 2, 2, seed=51), requires_grad=True)
    assert gradcheck(lambda m: mg.linalg.tensorinv(m, ind=1), (a,))
    assert gradcheck(lambda m, b: mg.linalg.tensorsolve(m, b), (a, mg.tensor(_rand(4, seed=52), requires_grad=True)))


# ---- einsum's sublist form -------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    (((2, 3, 4), [0, 1, 2]), ((4, 5), [2, 3]), [0, 1, 3]),  # the brief's example: a batched matmul
    (((2, 3), [0, 1]), ((3, 4), [1, 2])),  # implicit output
    (((2, 3), [0, 1]), ((3, 4), [1, 2]), [2, 0]),
    (((3, 3), [5, 5]), []),  # the trace
    (((3, 3), [7, 7]),),  # implicit: the trace too
    (((2, 3, 4), [Ellipsis, 1]), ((4, 5), [1, 2])),  # ellipsis, implicit output
    (((2, 3, 4), [Ellipsis, 0, 1]), ((2, 4, 5), [Ellipsis, 1, 2]), [Ellipsis, 0, 2]),
    (((2, 3), [30, 2]),),  # 30 is 'e', 2 is 'C': the implicit output orders them C, e, as PyTorch
    (((3,), [51]), ((4,), [0]), [0, 51]),  # the outer product, with the last and first subscripts
])
def test_einsum_sublist_values_and_grads(torch, case):
    *pairs, out = case if isinstance(case[-1], list) else (*case, None)
    arrays = [_rand(*shape, seed=60 + i) for i, (shape, _) in enumerate(pairs)]
    subs = [s for _, s in pairs]

    def fn(L, *ts):
        args = [x for t, s in zip(ts, subs) for x in (t, s)]
        return L.einsum(*args) if out is None else L.einsum(*args, out)

    _both(fn, *arrays, torch=torch)


def test_einsum_sublist_gradcheck_and_string_form_unchanged():
    a = mg.tensor(_rand(2, 3, seed=70), requires_grad=True)
    b = mg.tensor(_rand(3, 4, seed=71), requires_grad=True)
    assert gradcheck(lambda x, y: mg.einsum(x, [0, 1], y, [1, 2], [2, 0]), (a, b))
    np.testing.assert_allclose(_np(mg.einsum(a, [0, 1], b, [1, 2])), _np(mg.einsum("ij,jk->ik", a, b)))
    np.testing.assert_allclose(_np(mg.einsum("ij,jk", [a, b])), _np(a @ b))


# ---- errors, against PyTorch's texts --------------------------------------------------------------------------
def _f64(L, *shape):
    return L.ones(*shape, dtype=L.float64)


ERRORS = {
    "st_B_1d": lambda L: L.linalg.solve_triangular(_f64(L, 3, 3), _f64(L, 3), upper=True),
    "st_shapes": lambda L: L.linalg.solve_triangular(_f64(L, 3, 3), _f64(L, 2, 3), upper=True),
    "st_shapes_right": lambda L: L.linalg.solve_triangular(_f64(L, 3, 3), _f64(L, 3, 2), upper=True, left=False),
    "st_not_square": lambda L: L.linalg.solve_triangular(_f64(L, 2, 3), _f64(L, 2, 3), upper=True),
    "st_int": lambda L: L.linalg.solve_triangular(L.ones(3, 3, dtype=L.int64), L.ones(3, 2, dtype=L.int64),
                                                  upper=False),
    "ts_b_1d": lambda L: L.triangular_solve(_f64(L, 3), _f64(L, 3, 3)),
    "ts_sizes": lambda L: L.triangular_solve(_f64(L, 2, 2), _f64(L, 3, 3)),
    "ts_not_square": lambda L: L.triangular_solve(_f64(L, 2, 2), _f64(L, 2, 3)),
    "cs_1d": lambda L: L.cholesky_solve(_f64(L, 3), _f64(L, 3, 3)),
    "cs_L_1d": lambda L: L.cholesky_solve(_f64(L, 3, 2), _f64(L, 3)),
    "cs_sizes": lambda L: L.cholesky_solve(_f64(L, 3, 2), _f64(L, 2, 2)),
    "cs_dtype": lambda L: L.cholesky_solve(L.ones(3, 2), _f64(L, 3, 3)),
    "cs_int": lambda L: L.cholesky_solve(L.ones(3, 2, dtype=L.int64), L.ones(3, 3, dtype=L.int64)),
    "ci_1d": lambda L: L.cholesky_inverse(_f64(L, 3)),
    "ci_not_square": lambda L: L.cholesky_inverse(_f64(L, 2, 3)),
    "ci_int": lambda L: L.cholesky_inverse(L.ones(3, 3, dtype=L.int64)),
    "lu_singular": lambda L: L.linalg.lu_factor(L.zeros(3, 3)),
    "lu_singular_batch": lambda L: L.linalg.lu_factor(L.stack([L.eye(3), L.zeros(3, 3)])),
    "lu_singular_last": lambda L: L.linalg.lu_factor(L.tensor([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])),
    "lu_no_pivot": lambda L: L.linalg.lu_factor(L.eye(3), pivot=False),
    "lu_1d": lambda L: L.linalg.lu_factor(L.ones(3)),
    "lu_int": lambda L: L.linalg.lu_factor(L.ones(3, 3, dtype=L.int64)),
    "lus_dtype": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_f64(L, 3, 3) + L.eye(3)), L.ones(3, 2)),
    "lus_B_1d": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_f64(L, 3, 3) + L.eye(3)), _f64(L, 3)),
    "lus_shapes": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_f64(L, 3, 3) + L.eye(3)), _f64(L, 2, 2)),
    "lus_shapes_right": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_f64(L, 3, 3) + L.eye(3)), _f64(L, 2, 2),
                                                    left=False),
    "lus_not_square": lambda L: L.linalg.lu_solve(_f64(L, 2, 3), L.ones(2, dtype=L.int32), _f64(L, 2, 2)),
    "lus_pivot_dtype": lambda L: L.linalg.lu_solve(L.eye(3, dtype=L.float64), L.ones(3, dtype=L.int64),
                                                   _f64(L, 3, 2)),
    "lus_pivot_count": lambda L: L.linalg.lu_solve(L.eye(3, dtype=L.float64), L.ones(2, dtype=L.int32),
                                                   _f64(L, 3, 2)),
    "md_one": lambda L: L.linalg.multi_dot([_f64(L, 2, 2)]),
    "md_none": lambda L: L.linalg.multi_dot([]),
    "md_first_0d": lambda L: L.linalg.multi_dot([L.tensor(1.0), _f64(L, 2, 2)]),
    "md_last_3d": lambda L: L.linalg.multi_dot([_f64(L, 2, 2), _f64(L, 2, 2, 2)]),
    "md_middle_1d": lambda L: L.linalg.multi_dot([_f64(L, 2, 2), _f64(L, 2), _f64(L, 2, 2)]),
    "md_dtype": lambda L: L.linalg.multi_dot([_f64(L, 2, 2), L.ones(2, 2)]),
    "md_shapes": lambda L: L.linalg.multi_dot([_f64(L, 3, 3), _f64(L, 2, 2)]),
    "md_shapes_vector": lambda L: L.linalg.multi_dot([_f64(L, 2, 2), _f64(L, 2, 2), _f64(L, 3)]),
    "cm_none": lambda L: L.chain_matmul(),
    "cm_1d": lambda L: L.chain_matmul(_f64(L, 3), _f64(L, 3, 3)),
    "cond_1d": lambda L: L.linalg.cond(_f64(L, 3)),
    "cond_bad_p": lambda L: L.linalg.cond(_f64(L, 3, 3), 3),
    "cond_bad_str": lambda L: L.linalg.cond(_f64(L, 3, 3), "foo"),
    "cond_not_square": lambda L: L.linalg.cond(_f64(L, 2, 3), 1),
    "cond_not_square_inf": lambda L: L.linalg.cond(_f64(L, 2, 3), float("inf")),
    "cond_int": lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.int64)),
    "cond_int_1": lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.int64), 1),
    "tsolve_sizes": lambda L: L.linalg.tensorsolve(_f64(L, 2, 3, 6), _f64(L, 4)),
    "tinv_sizes": lambda L: L.linalg.tensorinv(_f64(L, 2, 3, 4), ind=1),
    "tinv_ind": lambda L: L.linalg.tensorinv(_f64(L, 2, 3, 6), ind=0),
    "einsum_range": lambda L: L.einsum(_f64(L, 2, 3), [0, 52]),
    "einsum_negative": lambda L: L.einsum(_f64(L, 2, 3), [0, -1]),
    "einsum_no_sublist": lambda L: L.einsum(_f64(L, 2, 3)),
    "einsum_float": lambda L: L.einsum(_f64(L, 2, 3), [0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(torch, name):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's deprecation warnings for triangular_solve, chain_matmul)
        _same_error(ERRORS[name], torch)


def test_deprecated_linalg_names_warn_once_as_pytorch(torch, monkeypatch):
    # PyTorch's C++ side says each once a process, so its texts are read in a fresh one
    import importlib
    import subprocess
    import sys
    import warnings

    util = importlib.import_module("minigrad._warn_once")

    calls = ["L.lu(L.eye(2))", "L.eye(2).lu()", "L.lu_solve(L.ones(2, 1), *L.linalg.lu_factor(L.eye(2)))",
             "L.chain_matmul(L.eye(2), L.eye(2))", "L.qr(L.eye(2))", "L.eye(2).qr()", "L.eye(2).cholesky()",
             "L.cholesky(L.eye(2))", "L.triangular_solve(L.eye(2), L.eye(2))", "L.eye(2).triangular_solve(L.eye(2))",
             "L.svd(L.eye(2))", "L.eye(2).svd()"]
    script = ("import warnings, torch as L\nwarnings.simplefilter('always')\nwith warnings.catch_warnings(record=True)"
              f" as c:\n    warnings.simplefilter('always')\n    {'; '.join(calls)}\n"
              "print(repr([(w.category.__name__, str(w.message).split(' (Triggered internally')[0]) for w in c]))")
    theirs = eval(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)
    monkeypatch.setattr(util, "_said_once", set())  # (as in a process that has not warned yet)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            for call in calls:
                eval(call, {"L": mg})
    assert [(w.category.__name__, str(w.message)) for w in caught] == theirs and len(theirs) == 6
    assert all(w.filename == "<string>" for w in caught)  # the caller's line (here eval's), not linalg.py
