"""Gaps against PyTorch closed: torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve (LAPACK's Bunch-Kaufman
sytrf/hetrf as PyTorch's CPU gives it: the compact LD, 1-based pivots negative for 2x2 blocks)."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _symmetric(shape, dtype, hermitian, seed, small_diagonal=False):
    """A random indefinite symmetric (or Hermitian) matrix; a small diagonal makes Bunch-Kaufman take 2x2 blocks."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    if small_diagonal:
        a[..., np.arange(shape[-1]), np.arange(shape[-1])] *= 0.01
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    return a.astype(dtype)


def _close(m, t, dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-11
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 6, 6), (2, 2, 9, 9)])
@pytest.mark.parametrize("small_diagonal", [False, True])
def test_ldl_factor_matches_torch(dtype, hermitian, shape, small_diagonal):
    a = _symmetric(shape, dtype, hermitian, seed=sum(shape), small_diagonal=small_diagonal)
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=hermitian)
    m = minigrad.linalg.ldl_factor_ex(minigrad.tensor(a), hermitian=hermitian)
    assert type(m).__name__ == type(t).__name__ == "linalg_ldl_factor_ex"
    assert m.pivots.dtype == minigrad.int32 and m.info.dtype == minigrad.int32
    np.testing.assert_array_equal(m.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(m.info.numpy(), t.info.numpy())
    assert m.LD.dtype == getattr(minigrad, str(t.LD.dtype)[6:])
    _close(m.LD, t.LD, dtype)
    LD, piv = minigrad.linalg.ldl_factor(minigrad.tensor(a), hermitian=hermitian)
    np.testing.assert_array_equal(piv.numpy(), t.pivots.numpy())


def test_ldl_factor_takes_2x2_blocks_as_torch():
    a = np.array([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]])
    t = torch.linalg.ldl_factor(torch.from_numpy(a))
    m = minigrad.linalg.ldl_factor(minigrad.tensor(a))
    assert (t.pivots < 0).any()
    np.testing.assert_array_equal(m.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_allclose(m.LD.numpy(), t.LD.numpy(), rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("batches", [((), ()), ((3,), (3,)), ((2,), ()), ((), (4,))])  # (not an LD batch of 1 against
# a larger B batch: torch 2.13 crashes on it)
def test_ldl_solve_matches_torch_on_torchs_factors(dtype, hermitian, batches):
    ld_batch, b_batch = batches
    a = _symmetric(ld_batch + (6, 6), dtype, hermitian, seed=7, small_diagonal=True)
    b = _symmetric(b_batch + (6, 6), dtype, False, seed=8)[..., :3]
    LD, piv = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
    t = torch.linalg.ldl_solve(LD, piv, torch.from_numpy(b), hermitian=hermitian)
    m = minigrad.linalg.ldl_solve(minigrad.tensor(LD.numpy()), minigrad.tensor(piv.numpy()), minigrad.tensor(b),
                                  hermitian=hermitian)
    assert m.shape == tuple(t.shape)
    _close(m, t, dtype)


def test_ldl_solve_of_ldl_factor_solves():
    a = _symmetric((2, 7, 7), np.float64, False, seed=3, small_diagonal=True)
    b = np.random.default_rng(4).standard_normal((2, 7, 2))
    LD, piv = minigrad.linalg.ldl_factor(minigrad.tensor(a))
    x = minigrad.linalg.ldl_solve(LD, piv, minigrad.tensor(b))
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-10)


def _outcome(T, f):
    try:
        r = f(T)
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e).split("please report a bug to PyTorch. ")[-1]
    parts = r if isinstance(r, tuple) else (r,)
    return [(tuple(p.shape), str(p.dtype).split(".")[-1]) for p in parts]


def _factors(T):
    return T.linalg.ldl_factor(T.tensor(np.eye(4)))


CALLS = {
    "not square": lambda T: T.linalg.ldl_factor(T.zeros(3, 4)),
    "a vector": lambda T: T.linalg.ldl_factor(T.zeros(4)),
    "integers": lambda T: T.linalg.ldl_factor(T.zeros(3, 3, dtype=T.int64)),
    "half": lambda T: T.linalg.ldl_factor(T.zeros(3, 3, dtype=T.float16)),
    "singular": lambda T: T.linalg.ldl_factor(T.zeros(3, 3)),
    "singular, _ex": lambda T: T.linalg.ldl_factor_ex(T.zeros(3, 3)),
    "singular, check_errors": lambda T: T.linalg.ldl_factor_ex(T.zeros(2, 3, 3), check_errors=True),
    "empty batch": lambda T: T.linalg.ldl_factor(T.zeros(0, 3, 3)),
    "0 x 0": lambda T: T.linalg.ldl_factor(T.zeros(0, 0)),
    "solve: LD a vector": lambda T: T.linalg.ldl_solve(_factors(T)[0][0], _factors(T)[1], T.ones(4, 2)),
    "solve: LD not square": lambda T: T.linalg.ldl_solve(_factors(T)[0][:3], _factors(T)[1], T.ones(4, 2)),
    "solve: integer LD": lambda T: T.linalg.ldl_solve(_factors(T)[0].int(), _factors(T)[1], T.ones(4, 2)),
    "solve: dtypes differ": lambda T: T.linalg.ldl_solve(*_factors(T), T.ones(4, 2)),
    "solve: B a vector": lambda T: T.linalg.ldl_solve(*_factors(T), T.ones(4, dtype=T.float64)),
    "solve: B rows": lambda T: T.linalg.ldl_solve(*_factors(T), T.ones(3, 2, dtype=T.float64)),
    "solve: pivots short": lambda T: T.linalg.ldl_solve(_factors(T)[0], _factors(T)[1][:3],
                                                        T.ones(4, 2, dtype=T.float64)),
    "solve: float pivots": lambda T: T.linalg.ldl_solve(_factors(T)[0], _factors(T)[1].float(),
                                                        T.ones(4, 2, dtype=T.float64)),
    "solve: int64 pivots": lambda T: T.linalg.ldl_solve(_factors(T)[0], _factors(T)[1].long(),
                                                        T.ones(4, 2, dtype=T.float64)),
    "solve: half": lambda T: T.linalg.ldl_solve(_factors(T)[0].half(), _factors(T)[1], T.ones(4, 2).half()),
    "solve: batches differ": lambda T: T.linalg.ldl_solve(_factors(T)[0].expand(2, 4, 4), _factors(T)[1].expand(2, 4),
                                                          T.ones(3, 4, 2, dtype=T.float64)),
    "out: pivots' dtype": lambda T: T.linalg.ldl_factor(T.tensor(np.eye(4)), out=(T.empty(0, dtype=T.float64),
                                                                                  T.empty(0))),
    "out: LD's dtype": lambda T: T.linalg.ldl_factor(T.tensor(np.eye(4)), out=(T.empty(0), T.empty(0))),
    "out": lambda T: T.linalg.ldl_factor_ex(T.tensor(np.eye(4)), out=(T.empty(0, dtype=T.float64),
                                                                     T.empty(0, dtype=T.int32),
                                                                     T.empty(0, dtype=T.int32))),
    "solve: out": lambda T: T.linalg.ldl_solve(*_factors(T), T.ones(4, 2, dtype=T.float64),
                                               out=T.empty(0, dtype=T.float64)),
    "backward through ldl_factor": lambda T: T.linalg.ldl_factor(
        T.tensor(np.eye(3)).requires_grad_())[0].sum().backward(),
    "backward through ldl_solve": lambda T: T.linalg.ldl_solve(
        *_factors(T), T.ones(4, 2, dtype=T.float64).requires_grad_()).sum().backward(),
}


@pytest.mark.parametrize("call", CALLS)
def test_ldl_outcomes_as_torch(call):
    assert _outcome(minigrad, CALLS[call]) == _outcome(torch, CALLS[call])


def test_ldl_results_record_no_derivative():
    a = _symmetric((4, 4), np.float64, False, seed=1)
    t = torch.linalg.ldl_factor(torch.from_numpy(a).requires_grad_())
    m = minigrad.linalg.ldl_factor(minigrad.tensor(a).requires_grad_())
    assert m.LD.requires_grad == t.LD.requires_grad and not m.pivots.requires_grad
    assert type(m.LD.grad_fn).__name__ == type(t.LD.grad_fn).__name__


# ---- public torch names minigrad lacked: view_as_real_copy, view_as_complex_copy, torch.resize_as_, conj_physical_
def test_view_as_real_copy_as_torch():
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, -2]], dtype=np.complex64)
    t_in, m_in = torch.tensor(z, requires_grad=True), minigrad.tensor(z, requires_grad=True)
    t, m = torch.view_as_real_copy(t_in), minigrad.view_as_real_copy(m_in)
    assert m.shape == tuple(t.shape) and m.dtype == minigrad.float32
    np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())
    assert not np.shares_memory(m.detach().numpy(), m_in.detach().numpy())
    w = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    (t * torch.tensor(w)).sum().backward()
    (m * minigrad.tensor(w)).sum().backward()
    np.testing.assert_array_equal(m_in.grad.numpy(), t_in.grad.numpy())


def test_view_as_complex_copy_as_torch():
    r = np.arange(8, dtype=np.float64).reshape(2, 2, 2)
    t, m = torch.view_as_complex_copy(torch.tensor(r)), minigrad.view_as_complex_copy(minigrad.tensor(r))
    assert m.dtype == minigrad.complex128
    np.testing.assert_array_equal(m.numpy(), t.numpy())
    with pytest.raises(RuntimeError) as te:
        torch.view_as_complex_copy(torch.tensor(r, requires_grad=True))
    with pytest.raises(RuntimeError) as me:
        minigrad.view_as_complex_copy(minigrad.tensor(r, requires_grad=True))
    assert str(me.value) == str(te.value)


def test_top_level_resize_as_and_conj_physical_as_torch():
    t, m = torch.zeros(2, 3), minigrad.zeros(2, 3)
    assert torch.resize_as_(t, torch.zeros(4)) is t and minigrad.resize_as_(m, minigrad.zeros(4)) is m
    assert m.shape == tuple(t.shape) == (4,)
    z = np.array([1 + 2j, -3j], dtype=np.complex64)
    t, m = torch.tensor(z), minigrad.tensor(z)
    assert torch.conj_physical_(t) is t and minigrad.conj_physical_(m) is m
    np.testing.assert_array_equal(m.numpy(), t.numpy())
