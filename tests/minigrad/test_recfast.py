"""Issue 29: the recorded paths of makemore's MLP step (an embedding table indexed by an id tensor, its
backward's gradient rows added on arrays where nothing records) give PyTorch's values, gradients and nodes."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import indexing

torch = pytest.importorskip("torch")


def _table(seed=0, shape=(27, 10)):
    data = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)


IDS = np.array([[1, 5, 5], [26, 0, -1], [5, 5, 3]], dtype=np.int64)  # repeats and an id from the end


@pytest.mark.parametrize("pick", ["getitem", "index_select"])
def test_index_backward_adds_rows_on_arrays_without_a_node(pick, monkeypatch):
    C, tC = _table()
    w = np.random.RandomState(1).randn(*IDS.shape, 10).astype(np.float32)
    calls = []
    real = indexing.IndexPutAdd.apply
    monkeypatch.setattr(indexing.IndexPutAdd, "apply", lambda *a: calls.append(a) or real(*a))
    if pick == "getitem":
        out, tout = C[mg.tensor(IDS)], tC[torch.tensor(IDS)]
    else:
        ids = IDS.reshape(-1) % 27
        out = C.index_select(0, mg.tensor(ids)).view(*IDS.shape, 10)
        tout = tC.index_select(0, torch.tensor(ids)).view(*IDS.shape, 10)
    assert out.grad_fn.name() == tout.grad_fn.name()
    (out * mg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(C.grad.numpy(), tC.grad.numpy())
    assert C.grad.dtype == mg.float32
    assert calls == []  # nothing recorded: no IndexBackwardBackward0 node made and dropped


@pytest.mark.parametrize("index", [(slice(1, 4),), (2,), (Ellipsis, [0, 2])])
def test_index_backward_under_create_graph_is_recorded_as_torch(index):
    C, tC = _table(shape=(5, 4))
    out, tout = C[index], tC[index]
    g, = mg.autograd.grad(out.sum() * 1, C, create_graph=True)
    tg, = torch.autograd.grad(tout.sum() * 1, tC, create_graph=True)
    assert (g.grad_fn is None) == (tg.grad_fn is None)
    np.testing.assert_array_equal(g.detach().numpy(), tg.detach().numpy())
    gw = mg.tensor(np.arange(5 * 4, dtype=np.float32).reshape(5, 4))
    tgw = torch.tensor(gw.numpy())
    g2, = mg.autograd.grad((out * out).sum(), C, create_graph=True)
    tg2, = torch.autograd.grad((tout * tout).sum(), tC, create_graph=True)
    assert g2.grad_fn is not None and tg2.grad_fn is not None
    (g2 * gw).sum().backward()
    (tg2 * tgw).sum().backward()
    np.testing.assert_allclose(C.grad.numpy(), tC.grad.numpy(), rtol=1e-6)


def test_embedding_step_compiled_matches_eager():
    C, _ = _table()
    C2 = mg.tensor(C.detach().numpy(), requires_grad=True)
    ids = mg.tensor(IDS % 27)
    w = mg.tensor(np.random.RandomState(2).randn(*IDS.shape, 10).astype(np.float32))

    def step(table):
        table.grad = None
        (table[ids] * w).sum().backward()
        return table.grad

    compiled = mg.compile(step)
    for _ in range(3):
        got = compiled(C2)
    np.testing.assert_array_equal(got.numpy(), step(C).numpy())


def test_recorded_view_shares_the_version_counter_as_torch():
    C, tC = _table()
    emb, temb = C[mg.tensor(IDS % 27)], tC[torch.tensor(IDS % 27)]
    v, tv = emb.view(-1, 30), temb.view(-1, 30)
    assert v.grad_fn.name() == tv.grad_fn.name() and v._base is emb and v._version == tv._version
    emb.mul_(2)
    temb.mul_(2)
    assert v._version == tv._version == 1
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    v.sum().backward()
    tv.sum().backward()
    np.testing.assert_array_equal(C.grad.numpy(), tC.grad.numpy())


@pytest.mark.parametrize("other", [(64,), (1, 64), (), (32, 1), (5,), (2, 32, 64)])
def test_recorded_bias_add_matches_torch(other):
    x, tx = _table(shape=(32, 64))
    data = np.asarray(np.random.RandomState(3).randn(*other), dtype=np.float32)
    b, tb = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    try:
        want = tx + tb
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            x + b
        assert str(ours.value) == str(e)
        return
    got = x + b
    assert got.grad_fn.name() == want.grad_fn.name()
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    w = np.random.RandomState(4).randn(*want.shape).astype(np.float32)
    (got * mg.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target_shape", [(32,), (4, 8)])
def test_cross_entropy_targets_of_one_and_more_dims_match_torch(reduction, target_shape):
    n = int(np.prod(target_shape))
    rs = np.random.RandomState(5)
    x = rs.randn(n, 27).astype(np.float32) if len(target_shape) == 1 else rs.randn(4, 27, 8).astype(np.float32)
    t = rs.randint(0, 27, target_shape).astype(np.int64)
    a, ta = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F, tF = mg.nn.functional, torch.nn.functional
    out, tout = F.cross_entropy(a, mg.tensor(t), reduction=reduction), tF.cross_entropy(ta, torch.tensor(t), reduction=reduction)
    assert out.grad_fn.name() == tout.grad_fn.name() and out.shape == tout.shape and out.dtype == mg.float32
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-7)
    t[0 if len(target_shape) == 1 else (0, 0)] = 27
    with pytest.raises(IndexError) as ours:
        F.cross_entropy(a, mg.tensor(t), reduction=reduction)
    with pytest.raises(IndexError) as theirs:
        tF.cross_entropy(ta, torch.tensor(t), reduction=reduction)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]
