"""What the recommender / graph scripts of test_dl_scripts30.py found: a sparse COO tensor's power (an adjacency's
entries raised elementwise) and torch.stack / unsqueeze of sparse COO tensors (a batch of adjacencies), as PyTorch."""
import numpy as np
import pytest

import minigrad

INDICES = np.array([[0, 1, 2, 1], [1, 2, 0, 1]])  # (1, 2) and (1, 1) once, (1, 1)... repeated below
VALUES = np.array([1.0, 2.0, 3.0, 4.0])


def adjacency(lib, values=VALUES, indices=INDICES, size=(3, 3)):
    return lib.sparse_coo_tensor(lib.tensor(indices), values if hasattr(values, "grad") else lib.tensor(values), size)


def error_of(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the type and first line are what is compared)
        return type(e).__name__, str(e).split("\n")[0][:120]
    return None


def layout(s):
    """A sparse result's parts: shape, indices, values, coalesced flag."""
    return (tuple(s.shape), s._indices().tolist(), s._values().detach().numpy().tolist(), s.is_coalesced())


@pytest.mark.parametrize("how", ["method", "function", "operator"])
@pytest.mark.parametrize("exponent", [2, -1, 0.5, 3])
def test_sparse_pow_as_pytorch(torch, how, exponent):
    indices = np.array([[0, 1, 2, 1], [1, 1, 0, 1]])  # (1, 1) twice: summed before the power
    results = []
    for lib in (torch, minigrad):
        v = lib.tensor(VALUES, requires_grad=True)
        a = adjacency(lib, v, indices)
        p = a.pow(exponent) if how == "method" else lib.pow(a, exponent) if how == "function" else a ** exponent
        lib.sparse.sum(p * 1.5).backward()
        results.append((layout(p), p.to_dense().detach().numpy(), v.grad.numpy()))
    (t_lay, t_dense, t_grad), (m_lay, m_dense, m_grad) = results
    assert m_lay[0] == t_lay[0] and m_lay[1] == t_lay[1] and m_lay[3] == t_lay[3]
    np.testing.assert_allclose(m_lay[2], t_lay[2], rtol=1e-12)
    np.testing.assert_allclose(m_dense, t_dense, rtol=1e-12)
    np.testing.assert_allclose(m_grad, t_grad, rtol=1e-12)


@pytest.mark.parametrize("call", [lambda L, a: a.pow(0), lambda L, a: a.pow(L.tensor(2.0)), lambda L, a: 2 ** a,
                                  lambda L, a: L.pow(a, 0)])
def test_sparse_pow_refusals_as_pytorch(torch, call):
    theirs = error_of(lambda: call(torch, adjacency(torch)))
    assert theirs is not None
    assert error_of(lambda: call(minigrad, adjacency(minigrad))) == theirs


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_sparse_stack_as_pytorch(torch, dim):
    results = []
    for lib in (torch, minigrad):
        v = lib.tensor(VALUES, requires_grad=True)
        a, b = adjacency(lib, v), adjacency(lib, VALUES[::-1].copy()).coalesce()
        s = lib.stack([a, b, a], dim)
        (lib.sparse.sum(s * 2.0) + (s.to_dense() ** 2).sum()).backward()
        results.append((layout(s), s.to_dense().detach().numpy(), v.grad.numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-12)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_sparse_unsqueeze_as_pytorch(torch, dim):
    for values, indices, size in [(VALUES, INDICES, (3, 3)), (np.arange(6.0).reshape(2, 3), np.array([[0, 2]]), (3, 3))]:
        theirs = adjacency(torch, values, indices, size).unsqueeze(dim)
        ours = adjacency(minigrad, values, indices, size).unsqueeze(dim)
        assert layout(ours) == layout(theirs)
        assert (ours.sparse_dim(), ours.dense_dim()) == (theirs.sparse_dim(), theirs.dense_dim())


@pytest.mark.parametrize("call", [lambda L, a: L.stack([a, a.to_dense()]), lambda L, a: L.stack([a.to_dense(), a]),
                                  lambda L, a: L.stack([a, L.sparse_coo_tensor(L.tensor([[0, 1]]),
                                                                               L.tensor([1.0, 2.0]), (3,))]),
                                  lambda L, a: L.stack([a, a], 3), lambda L, a: a.unsqueeze(-4)])
def test_sparse_stack_refusals_as_pytorch(torch, call):
    theirs = error_of(lambda: call(torch, adjacency(torch)))
    assert theirs is not None
    ours = error_of(lambda: call(minigrad, adjacency(minigrad)))
    assert ours[0] == theirs[0] and theirs[1].startswith(ours[1][:60]), (ours, theirs)
