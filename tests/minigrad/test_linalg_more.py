"""cholesky, qr, eigh/eigvalsh, svd/svdvals, lstsq, matrix_rank and the svd matrix norms, against PyTorch."""
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _spd(n, seed=0, batch=()):
    a = _rand(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _pair(arr, torch):
    return mg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def _close(a, b, tol=1e-8):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol, atol=tol)


def test_cholesky_values_grad_and_upper(torch):
    a = _spd(4, batch=(2,))
    x, tx = _pair(a, torch)
    L, tL = mg.linalg.cholesky(x), torch.linalg.cholesky(tx)
    _close(L, tL)
    _close(mg.linalg.cholesky(x, upper=True), torch.linalg.cholesky(tx, upper=True))
    _close(mg.cholesky(x), torch.linalg.cholesky(tx))
    _close(mg.cholesky(x, True), torch.linalg.cholesky(tx, upper=True))
    # log det via cholesky, and a loss on L itself
    (2 * mg.log(mg.linalg.diagonal(L)).sum() + (L ** 3).sum()).backward()
    (2 * torch.log(torch.linalg.diagonal(tL)).sum() + (tL ** 3).sum()).backward()
    _close(x.grad, tx.grad)


def test_cholesky_gradcheck_and_double_backward():
    a = mg.tensor(_rand(3, 3, seed=1), requires_grad=True)
    assert gradcheck(lambda m: mg.linalg.cholesky(m @ m.mT + 3 * mg.eye(3, dtype=mg.float64)), (a,))
    assert mg.autograd.gradgradcheck(lambda m: mg.linalg.cholesky(m @ m.mT + 3 * mg.eye(3, dtype=mg.float64)), (a,))


def test_cholesky_errors(torch):
    for arr in (np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[[1.0, 0], [0, 1]], [[1.0, 2.0], [2.0, 1.0]]]),
                np.ones((2, 3)), np.ones((2, 2), dtype=np.int64)):
        with pytest.raises(RuntimeError) as want:
            torch.linalg.cholesky(torch.tensor(arr))
        with pytest.raises(RuntimeError) as got:
            mg.linalg.cholesky(mg.tensor(arr))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 6, 4)])
def test_qr_reconstruction_and_grad(torch, shape):
    x, tx = _pair(_rand(*shape, seed=2), torch)
    Q, R = mg.linalg.qr(x)
    tQ, tR = torch.linalg.qr(tx)
    assert type(mg.linalg.qr(x)).__name__ == "linalg_qr" and mg.linalg.qr(x)._fields == ("Q", "R")
    assert Q.shape == tuple(tQ.shape) and R.shape == tuple(tR.shape)
    _close(Q @ R, tQ @ tR)
    _close(Q.mT @ Q, torch.eye(shape[-1], dtype=torch.float64).expand(tQ.mT.shape[:-1] + (shape[-1],)))
    _close(R, R.triu())
    # a loss on the factors, invariant to the column signs (LAPACK's convention is the same in both, also checked)
    _close(R.abs(), tR.abs())
    ((Q @ R) ** 3).sum().backward()
    ((tQ @ tR) ** 3).sum().backward()
    _close(x.grad, tx.grad)
    x.grad = None
    tx.grad = None
    (Q, R), (tQ, tR) = mg.linalg.qr(x), torch.linalg.qr(tx)
    ((Q * R.diagonal(0, -2, -1).sign().unsqueeze(-2)) ** 3).sum().backward()  # sign-fixed Q
    ((tQ * tR.diagonal(0, -2, -1).sign().unsqueeze(-2)) ** 3).sum().backward()
    _close(x.grad, tx.grad)


def test_qr_modes_gradcheck_and_errors(torch):
    a = _rand(5, 3, seed=3)
    x, tx = _pair(a, torch)
    Q, R = mg.linalg.qr(x, mode="complete")
    assert Q.shape == (5, 5) and R.shape == (5, 3)
    _close(Q @ R, tx)
    Q, R = mg.linalg.qr(x, mode="r")
    assert Q.shape == (0,) and R.shape == (3, 3)
    with pytest.raises(RuntimeError, match="mode='r'"):
        R.sum().backward()
    Q, R = mg.linalg.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="nrows > ncols"):
        (Q.sum() + R.sum()).backward()
    assert gradcheck(lambda w: mg.linalg.qr(w), (mg.tensor(_rand(3, 5), requires_grad=True),))  # wide: m < n
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        mg.linalg.qr(x, mode="x")
    for arr in (np.ones(3), np.ones((2, 2), dtype=np.int64)):
        with pytest.raises(RuntimeError) as want:
            torch.linalg.qr(torch.tensor(arr))
        with pytest.raises(RuntimeError) as got:
            mg.linalg.qr(mg.tensor(arr))
        assert str(got.value) == str(want.value)
    y = mg.tensor(_rand(4, 3, seed=4), requires_grad=True)
    assert gradcheck(lambda m: tuple(mg.linalg.qr(m)), (y,))
    assert mg.autograd.gradgradcheck(lambda m: tuple(mg.linalg.qr(m)), (y,))
    assert gradcheck(lambda m: tuple(mg.qr(m)), (y,))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_values_reconstruction_and_grad(torch, uplo):
    a = _rand(2, 4, 4, seed=5)
    a = a + np.swapaxes(a, -1, -2)
    x, tx = _pair(a, torch)
    w, V = mg.linalg.eigh(x, UPLO=uplo)
    tw, tV = torch.linalg.eigh(tx, UPLO=uplo)
    assert type(mg.linalg.eigh(x)).__name__ == "linalg_eigh"
    _close(w, tw)
    _close(mg.linalg.eigvalsh(x, UPLO=uplo), tw)
    _close((V * w.unsqueeze(-2)) @ V.mT, tx)
    ((w ** 2).sum() + (V[..., 0, :] * V[..., 1, :]).sum()).backward()  # (the product is sign-invariant)
    ((tw ** 2).sum() + (tV[..., 0, :] * tV[..., 1, :]).sum()).backward()
    _close(x.grad, tx.grad)


def test_eigh_gradcheck_and_errors(torch):
    b = mg.tensor(_rand(4, 4, seed=6), requires_grad=True)
    sym = lambda m: m + m.mT  # noqa: E731 (eigh reads one triangle: check on symmetric inputs)
    assert gradcheck(lambda m: mg.linalg.eigh(sym(m)).eigenvalues, (b,))
    assert gradcheck(lambda m: (mg.linalg.eigh(sym(m)).eigenvectors ** 2), (b,))
    assert gradcheck(lambda m: mg.linalg.eigvalsh(sym(m)), (b,))
    assert mg.autograd.gradgradcheck(lambda m: mg.linalg.eigvalsh(sym(m)), (b,))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        mg.linalg.eigh(b, UPLO="X")
    with pytest.raises(RuntimeError) as want:
        torch.linalg.eigh(torch.ones(2, 3))
    with pytest.raises(RuntimeError) as got:
        mg.linalg.eigh(mg.ones(2, 3))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_values_and_grads(torch, shape):
    x, tx = _pair(_rand(*shape, seed=7), torch)
    for full in (True, False):
        U, S, Vh = mg.linalg.svd(x, full_matrices=full)
        tU, tS, tVh = torch.linalg.svd(tx, full_matrices=full)
        assert (U.shape, S.shape, Vh.shape) == (tuple(tU.shape), tuple(tS.shape), tuple(tVh.shape))
        assert mg.linalg.svd(x)._fields == ("U", "S", "Vh")
        _close(S, tS)
        k = S.shape[-1]
        _close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], tx)
    _close(mg.linalg.svdvals(x), torch.linalg.svdvals(tx))
    # nuclear norm via svdvals
    mg.linalg.svdvals(x).sum().backward()
    torch.linalg.svdvals(tx).sum().backward()
    _close(x.grad, tx.grad)
    x.grad, tx.grad = None, None
    # a sign-invariant loss on U and Vh, reduced and full
    for full in (False, True):
        U, S, Vh = mg.linalg.svd(x, full_matrices=full)
        tU, tS, tVh = torch.linalg.svd(tx, full_matrices=full)
        k = S.shape[-1]
        ((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]).pow(3).sum().backward()
        ((tU[..., :k] * tS.unsqueeze(-2)) @ tVh[..., :k, :]).pow(3).sum().backward()
        _close(x.grad, tx.grad)
        x.grad, tx.grad = None, None
        (U, S, Vh), (tU, tS, tVh) = mg.linalg.svd(x, full_matrices=full), torch.linalg.svd(tx, full_matrices=full)
        ((U[..., 0, :k] * Vh[..., :k, 0]).sum() + (S ** 2).sum()).backward()
        ((tU[..., 0, :k] * tVh[..., :k, 0]).sum() + (tS ** 2).sum()).backward()
        _close(x.grad, tx.grad)
        x.grad, tx.grad = None, None


def test_svd_legacy_gradcheck_and_errors(torch):
    a = _rand(4, 3, seed=8)
    x, tx = _pair(a, torch)
    r, tr = mg.svd(x), torch.svd(tx)
    assert type(r).__name__ == "svd" and r.V.shape == tuple(tr.V.shape) == (3, 3)
    _close((r.U * r.S) @ r.V.mT, tx)
    r, tr = mg.svd(x, some=False), torch.svd(tx, some=False)
    assert r.U.shape == tuple(tr.U.shape) == (4, 4)
    r, tr = mg.svd(x, compute_uv=False), torch.svd(tx, compute_uv=False)
    assert r.U.shape == tuple(tr.U.shape) and r.V.shape == tuple(tr.V.shape) and float(r.U.abs().sum()) == 0
    _close(r.S, tr.S)
    for shape in ((4, 3), (3, 4)):
        y = mg.tensor(_rand(*shape, seed=9), requires_grad=True)
        assert gradcheck(lambda m: mg.linalg.svdvals(m), (y,))
        assert gradcheck(lambda m: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(*mg.linalg.svd(m, False)), (y,))
        assert gradcheck(lambda m: (lambda u, s, vh: u[0] * vh[:, 0])(*mg.linalg.svd(m, False)), (y,))
        assert mg.autograd.gradgradcheck(lambda m: mg.linalg.svdvals(m), (y,))
    for arr in (np.ones(3), np.ones((2, 2), dtype=np.int64)):
        with pytest.raises(RuntimeError) as got:
            mg.linalg.svd(mg.tensor(arr))
        assert str(got.value).startswith("linalg.svd: ")


@pytest.mark.parametrize("driver", [None, "gelsy", "gels", "gelsd", "gelss"])
def test_lstsq_fields_and_grad(torch, driver):
    a, b = _rand(2, 5, 3, seed=10), _rand(2, 5, 2, seed=11)
    x, tx = _pair(a, torch)
    y, ty = _pair(b, torch)
    r, tr = mg.linalg.lstsq(x, y, driver=driver), torch.linalg.lstsq(tx, ty, driver=driver)
    assert type(r).__name__ == "linalg_lstsq" and r._fields == ("solution", "residuals", "rank", "singular_values")
    for f, tf in zip(r, tr):
        assert f.shape == tuple(tf.shape), (f.shape, tf.shape)
        assert str(f.dtype).split(".")[-1] == str(tf.dtype).split(".")[-1]
        _close(f.to(mg.float64), tf.to(torch.float64))
    (r.solution ** 2).sum().backward()
    (tr.solution ** 2).sum().backward()
    _close(x.grad, tx.grad)
    _close(y.grad, ty.grad)


def test_lstsq_errors_and_gradcheck():
    a = mg.tensor(_rand(5, 3, seed=12), requires_grad=True)
    b = mg.tensor(_rand(5, 2, seed=13), requires_grad=True)
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        mg.linalg.lstsq(a, b, driver="foo")
    with pytest.raises(RuntimeError, match="same dtype"):
        mg.linalg.lstsq(a, b.float())
    assert gradcheck(lambda m, n: mg.linalg.lstsq(m, n).solution, (a, b))


def test_matrix_rank_and_norms(torch):
    a = _rand(5, 2, seed=14) @ _rand(2, 4, seed=15)  # rank 2
    for kw in ({}, {"atol": 1e-3}, {"rtol": 0.5}, {"atol": 0.1, "rtol": 0.01}):
        got, want = mg.linalg.matrix_rank(mg.tensor(a), **kw), torch.linalg.matrix_rank(torch.tensor(a), **kw)
        assert int(got) == int(want) and str(got.dtype) == "minigrad.int64"
    assert int(mg.linalg.matrix_rank(mg.tensor(a)) ) == 2
    s = a[:4] @ a[:4].T
    assert int(mg.linalg.matrix_rank(mg.tensor(s), hermitian=True)) == int(
        torch.linalg.matrix_rank(torch.tensor(s), hermitian=True))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        mg.linalg.matrix_rank(mg.ones(3))
    x, tx = _pair(_rand(2, 4, 3, seed=16), torch)
    for ord in ("nuc", 2, -2):
        _close(mg.linalg.matrix_norm(x, ord), torch.linalg.matrix_norm(tx, ord))
        _close(mg.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True),
               torch.linalg.matrix_norm(tx, ord, dim=(0, 2), keepdim=True))
        _close(mg.linalg.norm(x[0], ord), torch.linalg.norm(tx[0], ord))
    mg.linalg.matrix_norm(x, "nuc").sum().backward()
    torch.linalg.matrix_norm(tx, "nuc").sum().backward()
    _close(x.grad, tx.grad)


# ---- matrix_exp, the _ex forms (info instead of raising), linalg.vander ------------------------------------
@pytest.mark.parametrize("shape, scale", [((3, 3), 0.3), ((2, 4, 4), 1.0), ((5, 5), 6.0), ((1, 1), 2.0), ((2, 0, 0), 1.0),
                                          ((3, 2, 2), 40.0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_exp_values_and_grad(torch, shape, scale, dtype):
    a = (_rand(*shape, seed=1) * scale).astype(dtype)
    x, tx = _pair(a, torch)
    y, ty = mg.matrix_exp(x), torch.matrix_exp(tx)
    assert y.dtype == getattr(mg, dtype) and y.shape == ty.shape and y.grad_fn.name() == ty.grad_fn.name()
    tol = 1e-10 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol * np.abs(ty.detach().numpy()).max(initial=1))
    w = _rand(*shape, seed=2).astype(dtype)
    (y * mg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10 * np.abs(tx.grad.numpy()).max(initial=1))
    _close(mg.linalg.matrix_exp(x), torch.linalg.matrix_exp(tx), tol)
    _close(x.matrix_exp(), tx.matrix_exp(), tol)


def test_matrix_exp_gradcheck_and_errors(torch):
    a = mg.tensor(_rand(3, 3, seed=4), requires_grad=True)
    assert gradcheck(mg.matrix_exp, (a,)) and mg.autograd.gradgradcheck(mg.matrix_exp, (a,))
    for bad in (np.ones((2, 3)), np.ones(3), np.ones((2, 2), np.int64)):
        with pytest.raises(RuntimeError) as t:
            torch.matrix_exp(torch.tensor(bad))
        with pytest.raises(RuntimeError, match=f"^{str(t.value)}$"):
            mg.matrix_exp(mg.tensor(bad))


SINGULAR = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]])  # the first singular (and not definite)
NOT_PD = np.array([[[4.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 3.0]], [[4.0, 2.0, 1.0], [2.0, 5.0, 0.0], [1.0, 0.0, 3.0]]])


@pytest.mark.parametrize("name, args, kw", [
    ("inv_ex", (SINGULAR,), {}), ("inv_ex", (_spd(3, batch=(2,)),), {}), ("inv_ex", (_rand(4, 4),), {}),
    ("cholesky_ex", (SINGULAR,), {}), ("cholesky_ex", (NOT_PD,), {"upper": True}), ("cholesky_ex", (NOT_PD[0],), {}),
    ("cholesky_ex", (_spd(3, batch=(2,)),), {"upper": True}),
    ("solve_ex", (SINGULAR, np.ones((2, 2, 3))), {}), ("solve_ex", (SINGULAR, np.ones((2, 2))), {}),
    ("solve_ex", (_rand(3, 3), _rand(3, seed=1)), {}), ("solve_ex", (_rand(2, 3, 3), _rand(4, 3, seed=1)), {"left": False}),
])
def test_ex_forms_as_torch(torch, name, args, kw):
    ours = getattr(mg.linalg, name)(*(mg.tensor(a, requires_grad=i == 0) for i, a in enumerate(args)), **kw)
    theirs = getattr(torch.linalg, name)(*(torch.tensor(a, requires_grad=i == 0) for i, a in enumerate(args)), **kw)
    assert type(ours).__name__ == type(theirs).__name__ and ours[1] is ours.info and len(ours) == len(theirs) == 2
    assert ours.info.dtype == mg.int32 and ours.info.tolist() == theirs.info.tolist()
    # where the input is singular, what LAPACK's solve leaves: the inf of a zero pivot's row, and nan (its finite
    # values are rounding's); cholesky_ex's partial factor is PyTorch's
    ok = theirs.info.numpy() == 0 if name != "cholesky_ex" else np.ones(theirs.info.shape, bool)
    value, tvalue = ours[0].detach().numpy(), theirs[0].detach().numpy()
    assert value.shape == tvalue.shape
    mask = ok.reshape(ok.shape + (1,) * (value.ndim - ok.ndim)) & np.ones(value.shape, bool)
    np.testing.assert_allclose(value[mask], tvalue[mask], rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(np.isinf(value[~mask]), np.isinf(tvalue[~mask]))
    np.testing.assert_array_equal(np.isnan(value[~mask]), np.isnan(tvalue[~mask]))


@pytest.mark.parametrize("name, args", [("inv_ex", (SINGULAR,)), ("inv_ex", (SINGULAR[0],)),
                                        ("cholesky_ex", (NOT_PD,)), ("cholesky_ex", (SINGULAR[0],)),
                                        ("solve_ex", (SINGULAR, np.ones((2, 2)))), ("solve_ex", (SINGULAR[0], np.ones(2)))])
def test_ex_forms_check_errors_as_torch(torch, name, args):
    with pytest.raises(torch.linalg.LinAlgError) as t:
        getattr(torch.linalg, name)(*map(torch.tensor, args), check_errors=True)
    with pytest.raises(mg.linalg.LinAlgError) as e:
        getattr(mg.linalg, name)(*map(mg.tensor, args), check_errors=True)
    assert str(e.value) == str(t.value) and isinstance(e.value, RuntimeError)


@pytest.mark.parametrize("A, B, kw", [(SINGULAR[0], np.ones(2), {}), (SINGULAR, np.ones((2, 2, 1)), {}),
                                     (SINGULAR[::-1].copy(), np.ones((2, 3, 2)), {"left": False})])
def test_solve_of_a_singular_matrix_raises_the_solvers_error_as_torch(torch, A, B, kw):
    with pytest.raises(torch.linalg.LinAlgError) as t:
        torch.linalg.solve(torch.tensor(A), torch.tensor(B), **kw)
    with pytest.raises(mg.linalg.LinAlgError) as e:
        mg.linalg.solve(mg.tensor(A), mg.tensor(B), **kw)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("name", ["inv_ex", "cholesky_ex", "solve_ex"])
def test_ex_forms_gradients_as_torch(torch, name):
    a, b = _spd(3, batch=(2,)), _rand(2, 3, 2, seed=3)
    grads = []
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        args = (x, lib.tensor(b)) if name == "solve_ex" else (x,)
        (getattr(lib.linalg, name)(*args)[0] ** 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("x, N", [([1.0, 2.0, 0.0], None), ([1.0, 2.0, 0.0], 2), ([1.0, -2.0, 3.0], 5), ([1, 2, 3], None),
                                  (_rand(2, 3).tolist(), 4), ([[0.5]], 3)])
def test_linalg_vander_as_torch(torch, x, N):
    ours, theirs = mg.linalg.vander(mg.tensor(x), N=N), torch.linalg.vander(torch.tensor(x), N=N)
    assert ours.dtype == getattr(mg, str(theirs.dtype)[6:])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    if ours.dtype.is_floating_point:
        xs, txs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        mg.linalg.vander(xs, N=N).sum().backward()
        torch.linalg.vander(txs, N=N).sum().backward()
        np.testing.assert_allclose(xs.grad.numpy(), txs.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("x, N", [([1.0, 2.0], 1), ([1.0], None), (2.0, None), ([True], None)])
def test_linalg_vander_errors_as_torch(torch, x, N):
    with pytest.raises(RuntimeError) as t:
        torch.linalg.vander(torch.tensor(x), N=N)
    with pytest.raises(RuntimeError) as e:
        mg.linalg.vander(mg.tensor(x), N=N)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("which", ["linalg", "top"])
def test_slogdet_sign_is_an_output_of_the_node_as_torch(torch, which):
    # PyTorch's sign carries the node (printed with it, requires_grad) though its own gradient gives A none
    a = _rand(2, 3, 3, seed=3)
    seen = []
    for lib in (mg, torch):
        f = lib.linalg.slogdet if which == "linalg" else lib.slogdet
        A = lib.tensor(a, requires_grad=True)
        sign, logabs = f(A)
        both = (sign * 2.0 + logabs).sum()
        g, = lib.autograd.grad(both, A)
        sign, _ = f(A)
        alone = lib.autograd.grad(sign.sum(), A, allow_unused=True)
        seen.append((sign.requires_grad, type(sign.grad_fn).__name__, repr(sign).split("grad_fn=")[-1], g, alone))
    (ours, theirs) = seen
    assert ours[:3] == theirs[:3]
    _close(ours[3], theirs[3])
    assert ours[4] == theirs[4] == (None,)


def _low_rank(m, n, k, seed=0, batch=()):
    return _rand(*batch, m, k, seed=seed) @ _rand(*batch, k, n, seed=seed + 1)


def _projector(V):
    V = np.asarray(V.detach().numpy())
    return V @ np.swapaxes(V, -1, -2)


@pytest.mark.parametrize("shape, k, q", [((30, 10), 3, 3), ((8, 20), 2, 4), ((2, 12, 6), 2, 2), ((6, 4), 4, 7)])
@pytest.mark.parametrize("name", ["svd_lowrank", "pca_lowrank"])
def test_lowrank_finds_torchs_subspace(torch, shape, k, q, name):
    # the random sketches differ by design: singular values and the spanned subspaces must not
    a = _low_rank(*shape[-2:], k, batch=shape[:-2])
    kw = dict(q=min(q, *shape[-2:])) if name == "pca_lowrank" else dict(q=q)
    mg.manual_seed(0)
    U, S, V = getattr(mg, name)(mg.tensor(a, requires_grad=True), **kw)
    tU, tS, tV = getattr(torch, name)(torch.tensor(a, requires_grad=True), **kw)
    assert [tuple(t.shape) for t in (U, S, V)] == [tuple(t.shape) for t in (tU, tS, tV)]
    if len(shape) == 2:  # (a batched matmul is one node here, several in PyTorch: docs/api.md)
        assert [t.grad_fn.name() for t in (U, S, V)] == [t.grad_fn.name() for t in (tU, tS, tV)]
    np.testing.assert_allclose(S.detach().numpy()[..., :k], tS.detach().numpy()[..., :k], rtol=1e-9, atol=1e-9)
    for ours, theirs in ((U, tU), (V, tV)):
        np.testing.assert_allclose(_projector(ours[..., :k]), _projector(theirs[..., :k]), atol=1e-9)


def test_svd_lowrank_gradient_as_torch(torch):
    # q = n on a tall full-rank A: the basis spans A's whole range, so the result (and its gradient) is exact
    a, w = _rand(9, 4), _rand(9, 4, seed=5)
    x, tx = _pair(a, torch)
    outs = []
    for lib, t in ((mg, x), (torch, tx)):
        U, S, V = lib.svd_lowrank(t, q=4, niter=1)
        ((S ** 3).sum() + ((U * S) @ V.T * lib.tensor(w)).sum() + (U @ U.T).pow(2).sum()).backward()
        outs.append(t.grad)
    _close(*outs)


@pytest.mark.parametrize("kw", [dict(q=5), dict(q=-1), dict(niter=-1)])
def test_pca_lowrank_bad_q_or_niter_errors_as_torch(torch, kw):
    a = _rand(6, 4)
    with pytest.raises(ValueError) as theirs:
        torch.pca_lowrank(torch.tensor(a), **kw)
    with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
        mg.pca_lowrank(mg.tensor(a), **kw)
