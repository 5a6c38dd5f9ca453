"""Gradients of the linalg ops on complex inputs against PyTorch's (the conjugate Wirtinger convention): a real
loss of each op's outputs, square, batched and rectangular, complex128 and complex64."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _input(shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if shape[-1] == shape[-2]:
        a = a + 3 * np.eye(shape[-1])  # (well conditioned, distinct eigen and singular values)
    return a


def _hpd(T, a):
    return a @ a.mH + T.eye(a.shape[-1], dtype=a.dtype)


def _rhs(T, a, cols=2):
    rng = np.random.default_rng(1)
    b = rng.standard_normal(a.shape[:-1] + (cols,)) + 1j * rng.standard_normal(a.shape[:-1] + (cols,))
    return T.tensor(b.astype(np.complex64 if a.dtype in (torch.complex64, minigrad.complex64) else np.complex128))


def _rhs_left(T, a):  # (B for X A = B: rows x n)
    rng = np.random.default_rng(2)
    b = rng.standard_normal(a.shape[:-2] + (2, a.shape[-1])) + 1j * rng.standard_normal(a.shape[:-2] + (2, a.shape[-1]))
    return T.tensor(b.astype(np.complex64 if a.dtype in (torch.complex64, minigrad.complex64) else np.complex128))


def _gauge_free(u):  # a loss of singular/eigen vectors that does not depend on their phases: |u_ij|^2 weighted
    w = u.real * 0 + 1
    return ((u.abs() ** 2) * (w.cumsum(-1) * w.cumsum(-2))).sum()


SQUARE = {
    "det": lambda T, a: T.linalg.det(a).abs().sum(),
    "det_real_part": lambda T, a: T.linalg.det(a).real.sum(),
    "slogdet_logabs": lambda T, a: T.linalg.slogdet(a)[1].sum(),
    "slogdet_sign": lambda T, a: T.linalg.slogdet(a)[0].imag.sum(),
    "slogdet_both": lambda T, a: (lambda s: (s[0].real * s[1]).sum())(T.linalg.slogdet(a)),
    "logdet": lambda T, a: T.logdet(a).imag.sum() + T.logdet(a).real.sum(),
    "matrix_exp": lambda T, a: T.linalg.matrix_exp(a * 0.3).abs().sum(),
    "cholesky": lambda T, a: T.linalg.cholesky(_hpd(T, a)).abs().sum(),
    "cholesky_direct": lambda T, a: T.linalg.cholesky(_hpd(T, a).detach().requires_grad_() * 0 + _hpd(T, a)).real.sum(),
    "cholesky_upper": lambda T, a: T.linalg.cholesky(_hpd(T, a), upper=True).imag.sum(),
    "cholesky_ex": lambda T, a: T.linalg.cholesky_ex(_hpd(T, a))[0].abs().sum(),
    "cholesky_inverse": lambda T, a: T.cholesky_inverse(T.linalg.cholesky(_hpd(T, a))).abs().sum(),
    "cholesky_solve": lambda T, a: T.cholesky_solve(_rhs(T, a), T.linalg.cholesky(_hpd(T, a))).abs().sum(),
    "eigh": lambda T, a: (lambda e: e[0].sum() + _gauge_free(e[1]))(T.linalg.eigh(a + a.mH)),
    "eigh_upper": lambda T, a: (lambda e: (e[0] ** 2).sum() + _gauge_free(e[1]))(T.linalg.eigh(a + a.mH, UPLO="U")),
    "eigvalsh": lambda T, a: (T.linalg.eigvalsh(a + a.mH) ** 2).sum(),
    "pinv_hermitian": lambda T, a: T.linalg.pinv(a + a.mH, hermitian=True).abs().sum(),
    "eig_vectors": lambda T, a: _gauge_free(T.linalg.eig(a)[1]),
    "svd_U": lambda T, a: _gauge_free(T.linalg.svd(a)[0]),
    "svd_Vh": lambda T, a: _gauge_free(T.linalg.svd(a)[2]),
    "svd_all": lambda T, a: (lambda u: (u[0] * u[2].mT).abs().sum() + u[1].sum())(T.linalg.svd(a)),
    "qr_R": lambda T, a: T.linalg.qr(a)[1].abs().sum(),
    "qr_Q": lambda T, a: T.linalg.qr(a)[0].real.sum(),
    "qr_complete": lambda T, a: (lambda q: q[0].imag.sum() + q[1].abs().sum())(T.linalg.qr(a, mode="complete")),
    "lu_factor": lambda T, a: T.linalg.lu_factor(a)[0].abs().sum(),
    "lu_factor_ex": lambda T, a: T.linalg.lu_factor_ex(a)[0].real.sum(),
    "lu": lambda T, a: (lambda p: p[1].abs().sum() + p[2].imag.sum())(T.linalg.lu(a)),
    "lu_solve": lambda T, a: (lambda lu: T.linalg.lu_solve(lu[0], lu[1], _rhs(T, a)).abs().sum())(T.linalg.lu_factor(a)),
    "lu_solve_adjoint": lambda T, a: (lambda lu: T.linalg.lu_solve(lu[0], lu[1], _rhs(T, a), adjoint=True).abs().sum())(
        T.linalg.lu_factor(a)),
    "solve_left_false": lambda T, a: T.linalg.solve(a, _rhs_left(T, a), left=False).abs().sum(),
    "tensorinv": lambda T, a: T.linalg.tensorinv(a.reshape(a.shape[-2:]).reshape(3, 1, 3), ind=2).abs().sum(),
    "tensorsolve": lambda T, a: T.linalg.tensorsolve(a.reshape(a.shape[-2:]), _rhs(T, a, 1).reshape(3)).abs().sum(),
}

RECT = {
    "svd_reduced": lambda T, a: (lambda u: _gauge_free(u[0]) + _gauge_free(u[2]) + u[1].sum())(
        T.linalg.svd(a, full_matrices=False)),
    "svd_full_S": lambda T, a: (lambda u: _gauge_free(u[0][..., :, :2]) + u[1].sum())(T.linalg.svd(a)),
    "qr_reduced": lambda T, a: (lambda q: q[0].abs().sum() + q[1].abs().sum())(T.linalg.qr(a)),
    "lu_factor": lambda T, a: T.linalg.lu_factor(a)[0].abs().sum(),
    "lu": lambda T, a: (lambda p: p[1].abs().sum() + p[2].imag.sum())(T.linalg.lu(a)),
}

_SQUARE_ONLY_2D = ("tensorinv", "tensorsolve")


def _grads(f, a, dtype):
    out = []
    for T in (torch, minigrad):
        x = T.tensor(a.astype(dtype), requires_grad=True)
        f(T, x).backward()
        out.append(np.asarray(x.grad.numpy()))
    return out


def _close(tg, mg, dtype):
    atol = 1e-8 if dtype == np.complex128 else 2e-3
    assert mg.dtype == tg.dtype
    np.testing.assert_allclose(mg.real, tg.real, atol=atol, rtol=atol)
    np.testing.assert_allclose(mg.imag, tg.imag, atol=atol, rtol=atol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
@pytest.mark.parametrize("name", sorted(SQUARE))
def test_square_grad_matches_torch(name, shape, dtype):
    if name in _SQUARE_ONLY_2D and len(shape) > 2:
        pytest.skip("2-D only")
    tg, mg = _grads(SQUARE[name], _input(shape), dtype)
    _close(tg, mg, dtype)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 4, 3), (2, 3, 4)])
@pytest.mark.parametrize("name", sorted(RECT))
def test_rectangular_grad_matches_torch(name, shape, dtype):
    tg, mg = _grads(RECT[name], _input(shape), dtype)
    _close(tg, mg, dtype)


@pytest.mark.parametrize("case", ["eigh", "svd_U", "svd_Vh", "eig"])
def test_phase_dependent_loss_refused_as_torch(case):
    def f(T, a):
        if case == "eigh":
            return T.linalg.eigh(a + a.mH)[1].sum().abs()
        if case == "eig":
            return T.linalg.eig(a)[1].sum().abs()
        return T.linalg.svd(a)[0 if case == "svd_U" else 2].sum().abs()

    errors = []
    for T in (torch, minigrad):
        x = T.tensor(_input((3, 3)), requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            f(T, x).backward()
        errors.append(str(e.value))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("shape", [(4, 2), (5, 3), (6, 6), (2, 4)])
def test_lu_factor_complex_pivots_match_torch(shape):
    rng = np.random.default_rng(3)
    for _ in range(20):  # (pivots are chosen by |re| + |im|, as LAPACK's: the modulus picks other rows at times)
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        t, m = torch.linalg.lu_factor(torch.tensor(a)), minigrad.linalg.lu_factor(minigrad.tensor(a))
        np.testing.assert_array_equal(m[1].numpy(), t[1].numpy())
        np.testing.assert_allclose(m[0].numpy(), t[0].numpy(), atol=1e-12)


@pytest.mark.parametrize("eps", [1e-4, 1e-1])
@pytest.mark.parametrize("case", ["eigh", "svd", "eig"])
def test_phase_check_tolerance_as_torch(case, eps):
    # PyTorch's check is lax (rtol = atol = 1e-2): a faint dependence on the phases passes, a clear one raises
    def f(T, a):
        if case == "eigh":
            V = T.linalg.eigh(a + a.mH)[1]
        else:
            V = (T.linalg.eig(a) if case == "eig" else T.linalg.svd(a))[1 if case == "eig" else 0]
        return V.abs().sum() + eps * V.real.sum()

    outcome = []
    for T in (torch, minigrad):
        x = T.tensor(_input((3, 3)), requires_grad=True)
        try:
            f(T, x).backward()
            outcome.append(np.asarray(x.grad.numpy()))
        except RuntimeError as e:
            outcome.append(str(e))
    if isinstance(outcome[0], str):
        assert outcome[1] == outcome[0]
    else:  # (the faint phase term's share of the gradient rests on the phases each library picked: up to ~eps)
        assert not isinstance(outcome[1], str), outcome[1]
        np.testing.assert_allclose(outcome[1], outcome[0], atol=10 * eps)
