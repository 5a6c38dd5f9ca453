"""Tensor.dim_order, Tensor.smm / torch.smm and Tensor.sspaddmm / torch.sspaddmm against PyTorch."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def _views(lib):
    """The same views built in both libraries (their strides are compared too)."""
    x = lib.arange(120.).reshape(2, 3, 4, 5)
    return [x, x.transpose(1, 2), x.permute(0, 2, 3, 1), x.permute(3, 1, 0, 2), x[:, ::2], x[..., 1:3],
            lib.arange(60.).reshape(2, 5, 6, 1).permute(0, 3, 1, 2),  # channels_last strides
            lib.arange(3.).reshape(3, 1).expand(3, 4), lib.arange(4.).reshape(1, 4).expand(3, 4),
            lib.arange(6.).reshape(2, 1, 3), lib.arange(6.).reshape(2, 3, 1, 1), lib.arange(6.).reshape(2, 3)[:, 0:1],
            lib.arange(6.).reshape(2, 3).t(), lib.arange(720.).reshape(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1),
            lib.arange(5.), lib.tensor(1.), lib.zeros(0, 3)]


CHECKS = [False, True, [], ["contiguous_format"], ["contiguous_format", "channels_last"], ["channels_last"],
          ["channels_last_3d", "contiguous_format"]]


def _run(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e), str(e)


@pytest.mark.parametrize("check", CHECKS, ids=str)
def test_dim_order_matches_torch(check):
    for i, (a, b) in enumerate(zip(_views(minigrad), _views(torch))):
        assert a.stride() == b.stride(), i
        arg = [getattr(minigrad, f) for f in check] if isinstance(check, list) else check
        targ = [getattr(torch, f) for f in check] if isinstance(check, list) else check
        assert _run(a.dim_order, ambiguity_check=arg) == _run(b.dim_order, ambiguity_check=targ), i


def test_dim_order_known_answers():
    x = minigrad.zeros(2, 3, 5, 7)
    assert x.dim_order() == (0, 1, 2, 3) and x.transpose(1, 2).dim_order() == (0, 2, 1, 3)
    with pytest.raises(RuntimeError, match=r"^The tensor does not have unique dim order, or cannot map to exact one"):
        minigrad.zeros(2, 1, 3).dim_order(ambiguity_check=True)
    assert minigrad.zeros(2, 1, 3).dim_order(ambiguity_check=[minigrad.contiguous_format, minigrad.channels_last]) \
        == (0, 1, 2)
    with pytest.raises(RuntimeError, match="cannot map to exact one of the given memory formats"):
        minigrad.zeros(2, 3, 1, 1).dim_order(ambiguity_check=[minigrad.contiguous_format, minigrad.channels_last])


@pytest.mark.parametrize("bad", [1, None, "ILLEGAL", ("contiguous_format",), ["contiguous_format", 1]], ids=str)
def test_dim_order_refuses_other_arguments(bad):
    tb = tuple(getattr(torch, f) for f in bad) if isinstance(bad, tuple) else bad
    msg = "The ambiguity_check argument must be a bool or a list of memory formats."
    with pytest.raises(TypeError) as t:
        torch.zeros(2).dim_order(ambiguity_check=tb if not isinstance(bad, list) else [torch.contiguous_format, 1])
    assert str(t.value) == msg
    mb = tuple(getattr(minigrad, f) for f in bad) if isinstance(bad, tuple) else bad
    with pytest.raises(TypeError) as m:
        minigrad.zeros(2).dim_order(ambiguity_check=mb if not isinstance(bad, list) else [minigrad.contiguous_format, 1])
    assert str(m.value) == msg
    with pytest.raises(TypeError):  # (keyword-only, as PyTorch's)
        minigrad.zeros(2).dim_order(True)


def test_dim_order_of_a_sparse_tensor_refuses():
    s = minigrad.zeros(2, 2).to_sparse()
    with pytest.raises(AttributeError) as m:
        s.dim_order()
    with pytest.raises(AttributeError) as t:
        torch.zeros(2, 2).to_sparse().dim_order()
    assert str(m.value) == str(t.value).replace("torch.", "minigrad.")


IDX, VAL = [[1, 0, 1, 2, 0], [2, 0, 2, 1, 3]], [1., 2., 3., 4., -1.]
TIDX, TVAL = [[2, 0, 2], [1, 1, 1]], [10., 20., 5.]


def _operands(lib, n=4, dtype=None):
    dtype = dtype or lib.float32
    s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VAL, dtype=dtype), (n, 4))
    t = lib.sparse_coo_tensor(lib.tensor(TIDX), lib.tensor(TVAL, dtype=dtype), (n, 2))
    return s, lib.arange(8).reshape(4, 2).to(dtype), t


def _same_sparse(a, b):
    assert a.layout is minigrad.sparse_coo and a.is_coalesced() == b.is_coalesced() is False
    assert a.shape == tuple(b.shape) and a.dtype.name == str(b.dtype).split(".")[-1]
    assert a._indices().tolist() == b._indices().tolist()  # (PyTorch's order of elements, uncoalesced)
    np.testing.assert_allclose(a._values().detach().numpy(), b._values().detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.coalesce().to_dense().detach().numpy(), b.coalesce().to_dense().detach().numpy(),
                               rtol=1e-6)


def test_smm_matches_torch():
    (s, m, _), (ts, tm, _) = _operands(minigrad), _operands(torch)
    _same_sparse(s.smm(m), ts.smm(tm))
    _same_sparse(minigrad.smm(s, m), torch.smm(ts, tm))
    _same_sparse(s.smm(m.t().contiguous().t()), ts.smm(tm.t().contiguous().t()))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (2, 3), (0.5, -2.0), (0, 1)])
def test_sspaddmm_matches_torch(beta, alpha):
    (s, m, t), (ts, tm, tt) = _operands(minigrad), _operands(torch)
    _same_sparse(t.sspaddmm(s, m, beta=beta, alpha=alpha), tt.sspaddmm(ts, tm, beta=beta, alpha=alpha))
    _same_sparse(minigrad.sspaddmm(t, s, m, beta=beta, alpha=alpha), torch.sspaddmm(tt, ts, tm, beta=beta, alpha=alpha))


def test_smm_skips_empty_rows_and_keeps_integers():
    (s, m, _), (ts, tm, _) = _operands(minigrad, 6), _operands(torch, 6)
    _same_sparse(s.smm(m.view(4, 2)), ts.smm(tm))
    (s, m, t), (ts, tm, tt) = _operands(minigrad, dtype=minigrad.long), _operands(torch, dtype=torch.long)
    _same_sparse(t.sspaddmm(s, m, beta=2, alpha=3), tt.sspaddmm(ts, tm, beta=2, alpha=3))


def test_smm_and_sspaddmm_record_no_derivative():
    for lib in (minigrad, torch):
        s, m, t = _operands(lib)
        for r in (s.requires_grad_().smm(m), t.requires_grad_().sspaddmm(s.detach(), m),
                  s.detach().smm(m.requires_grad_())):
            assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
            with pytest.raises(RuntimeError, match=r"^derivative for aten::sspaddmm is not implemented$"):
                r.to_dense().sum().backward()
        assert s.detach().smm(m.detach()).grad_fn is None


def _errors(lib):
    s, m, t = _operands(lib)
    s3 = lib.sparse_coo_tensor(lib.zeros(3, 1, dtype=lib.long), lib.tensor([1.]), (3, 3, 3))
    hybrid = lib.sparse_coo_tensor(lib.tensor([[0], [0]]), lib.tensor([[1., 2.]]), (4, 4, 2))
    return [lambda: m.smm(m), lambda: m.sspaddmm(m, m), lambda: s.smm(s), lambda: t.sspaddmm(s, s),
            lambda: t.sspaddmm(m, m), lambda: t.sspaddmm(m, s), lambda: m.smm(s), lambda: m.sspaddmm(s, s),
            lambda: s.sum(1).to_sparse().smm(m), lambda: s3.smm(m),
            lambda: hybrid.smm(m), lambda: s.smm(lib.ones(4)), lambda: s.smm(lib.ones(3, 2)),
            lambda: t.sspaddmm(s, lib.ones(4, 3)), lambda: s3.sspaddmm(s, m), lambda: s.smm(m.double()),
            lambda: t.double().sspaddmm(s, m), lambda: s.smm(m.long()), lambda: s.smm(2)]


def test_smm_and_sspaddmm_errors_match_torch():
    for i, (f, g) in enumerate(zip(_errors(minigrad), _errors(torch))):
        got, want = _run(f), _run(g)
        assert isinstance(want, tuple), i
        assert (got[0].__name__, got[1]) == (want[0].__name__, want[1]), i


def test_sspaddmm_of_a_dense_self_refuses_in_one_line():
    # PyTorch fails an internal assert there (its text names its build's source path): minigrad says what is wrong
    s, m, _ = _operands(minigrad)
    with pytest.raises(RuntimeError, match=r"^sspaddmm: expected 'self' to have sparse layout, got 'self' with layout "
                                           r"Strided$"):
        m.new_zeros(4, 2).sspaddmm(s, m)
    ts, tm, _ = _operands(torch)
    with pytest.raises(RuntimeError):
        tm.new_zeros(4, 2).sspaddmm(ts, tm)
