"""The index ops' fast paths (a flat index for scatter_add's np.add.at, index_add_ into self, index_copy's
rows at dim 0) give PyTorch's values, grads and errors."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _pair(a):
    return minigrad.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_large_index_matches_torch(dim):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    ids = rng.integers(0, (64, 32)[dim], (64, 32))
    src = rng.standard_normal((64, 32)).astype(np.float32)
    (mx, tx), (mi, ti), (ms, ts) = _pair(x), _pair(ids), _pair(src)
    np.testing.assert_array_equal(mx.scatter_add(dim, mi, ms).numpy(), tx.scatter_add(dim, ti, ts).numpy())
    mz, tz = minigrad.zeros(64, 32), torch.zeros(64, 32)
    mz.scatter_add_(dim, mi, ms)
    tz.scatter_add_(dim, ti, ts)
    np.testing.assert_array_equal(mz.numpy(), tz.numpy())


def test_scatter_add_large_index_bad_id_is_refused():
    ids = np.zeros((64, 32), np.int64)
    ids[5, 7] = 64
    with pytest.raises(RuntimeError, match="index 64 is out of bounds for dimension 0 with size 64"):
        minigrad.zeros(64, 32).scatter_add_(0, minigrad.tensor(ids), minigrad.ones(64, 32))


@pytest.mark.parametrize("dim,alpha", [(0, 1), (1, 1), (0, 2.5)])
def test_index_add_inplace_matches_torch(dim, alpha):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    ids = np.array([1, 3, 1, 0, 7 if dim == 0 else 5])
    shape = (5, 6) if dim == 0 else (8, 5)
    src = rng.standard_normal(shape).astype(np.float32)
    (mx, tx), (mi, ti), (ms, ts) = _pair(x), _pair(ids), _pair(src)
    v = mx._version
    expected = mx.index_add(dim, mi, ms, alpha=alpha).numpy()
    out = mx.index_add_(dim, mi, ms, alpha=alpha)
    tx.index_add_(dim, ti, ts, alpha=alpha)
    assert out is mx and mx._version == v + 1
    np.testing.assert_array_equal(mx.numpy(), expected)  # in place: the out-of-place op's bits
    # (an alpha other than 1: PyTorch's kernel rounds alpha * source + self its own way, within an ulp)
    np.testing.assert_allclose(mx.numpy(), tx.numpy(), rtol=1e-6 if alpha != 1 else 0, atol=1e-6 if alpha != 1 else 0)


def test_index_add_inplace_errors_match_torch():
    mx, tx = _pair(np.zeros((4, 3), np.float32))
    for args in [(0, np.array([4]), np.ones((1, 3), np.float32)), (0, np.array([0, 1]), np.ones((1, 3), np.float32))]:
        with pytest.raises((RuntimeError, IndexError)) as te:
            tx.index_add_(args[0], torch.tensor(args[1]), torch.tensor(args[2]))
        with pytest.raises(type(te.value)) as me:
            mx.index_add_(args[0], minigrad.tensor(args[1]), minigrad.tensor(args[2]))
        assert str(me.value) == str(te.value)
    with pytest.raises(TypeError, match="index_add"):
        mx.index_add_(0, minigrad.tensor([0]))


def test_index_add_inplace_source_is_self():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    mx, tx = _pair(x)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):  # (as PyTorch: clone() it)
        tx.index_add_(0, torch.tensor([3, 2, 1, 0]), tx)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        mx.index_add_(0, minigrad.tensor([3, 2, 1, 0]), mx)
    mx.index_add_(0, minigrad.tensor([3, 2, 1, 0]), mx.clone())
    tx.index_add_(0, torch.tensor([3, 2, 1, 0]), tx.clone())
    np.testing.assert_array_equal(mx.numpy(), tx.numpy())


@pytest.mark.parametrize("dim", [0, 1])
def test_index_copy_grads_match_torch(dim):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    ids = np.array([4, 0, 2])
    src = rng.standard_normal((3, 5) if dim == 0 else (6, 3)).astype(np.float32)
    mx, tx = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ms, ts = minigrad.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
    mo, to = mx.index_copy(dim, minigrad.tensor(ids), ms), tx.index_copy(dim, torch.tensor(ids), ts)
    np.testing.assert_array_equal(mo.detach().numpy(), to.detach().numpy())
    assert type(mo.grad_fn).__name__ == type(to.grad_fn).__name__
    w = rng.standard_normal(mo.shape).astype(np.float32)
    (mo * minigrad.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(mx.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(ms.grad.numpy(), ts.grad.numpy())
