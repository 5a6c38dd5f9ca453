"""Embedding(sparse=True): the weight's gradient a sparse COO tensor as PyTorch's, and the optimizers that step
it (SparseAdam, SGD, Adagrad) or refuse it (Adam, AdamW), against PyTorch."""
import functools

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

IDS = [[1, 2, 4], [4, 0, 2]]


def _table(L, w, padding_idx=None):
    return L.nn.Embedding.from_pretrained(L.tensor(w), freeze=False, padding_idx=padding_idx, sparse=True)


def test_sparse_gradient_layout_as_pytorch(torch):
    w = np.random.default_rng(0).standard_normal((6, 3))
    seen = {}
    for L in (minigrad, torch):
        e = _table(L, w, padding_idx=2)
        out = e(L.tensor(IDS))
        (out * L.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
        g = e.weight.grad
        first = (out.grad_fn.name(), g.is_sparse, g.is_coalesced(), g._indices().numpy().tolist(),
                 g._values().numpy(), g.coalesce().indices().numpy().tolist(), g.to_dense().numpy())
        e(L.tensor([3, 1])).sum().backward()  # accumulated: sparse + sparse
        acc = (e.weight.grad.is_sparse, e.weight.grad.coalesce().values().numpy(), e.weight.grad.to_dense().numpy())
        e.weight.grad = None
        (e(L.tensor(IDS)).sum() + e(L.tensor([5])).sum()).backward()  # two lookups in one graph: one buffer
        both = e.weight.grad._indices().numpy().tolist()
        (e(L.tensor([0])).sum() + e.weight.sum()).backward()  # with a dense gradient: dense
        mixed = (e.weight.grad.is_sparse, e.weight.grad.numpy())
        e.weight.grad = None
        e(L.tensor(IDS)).sum().backward()
        e.zero_grad(set_to_none=False)
        zeroed = (e.weight.grad.is_sparse, e.weight.grad._nnz(), tuple(e.weight.grad.shape))
        seen[L.__name__] = first, acc, both, mixed, zeroed
    ours, theirs = seen["minigrad"], seen["torch"]
    assert ours[0][:4] == theirs[0][:4] == ("EmbeddingBackward0", True, False, [[1, 4, 4, 0]])
    np.testing.assert_array_equal(ours[0][4], theirs[0][4])
    assert ours[0][5] == theirs[0][5]
    np.testing.assert_array_equal(ours[0][6], theirs[0][6])
    assert ours[1][0] is theirs[1][0] is True
    np.testing.assert_array_equal(ours[1][1], theirs[1][1])
    np.testing.assert_array_equal(ours[1][2], theirs[1][2])
    assert ours[2] == theirs[2] == [[1, 4, 4, 0, 5]]
    assert ours[3][0] is theirs[3][0] is False
    np.testing.assert_array_equal(ours[3][1], theirs[3][1])
    assert ours[4] == theirs[4] == (True, 0, (6, 3))


def test_functional_sparse_embedding_with_max_norm_as_pytorch(torch):
    w = np.random.default_rng(1).standard_normal((5, 4)) * 3
    got = []
    for L in (minigrad, torch):
        weight = L.tensor(w.copy(), requires_grad=True)
        y = L.nn.functional.embedding(L.tensor([[0, 3], [3, 4]]), weight, max_norm=1.0, sparse=True)
        y.pow(2).sum().backward()
        got.append((weight.detach().numpy(), weight.grad._indices().numpy(), weight.grad._values().numpy()))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _skipgram_steps(L, w_in, w_out, make_opt, centers, contexts, negatives):
    """A word2vec skip-gram with negative sampling: two sparse tables, bmm scores, logsigmoid loss."""
    emb_in, emb_out = _table(L, w_in), _table(L, w_out)
    opt = make_opt(L, list(emb_in.parameters()) + list(emb_out.parameters()))
    for c, ctx, neg in zip(centers, contexts, negatives):
        v = emb_in(L.tensor(c))  # (B, D)
        u = emb_out(L.tensor(ctx))  # (B, D)
        n = emb_out(L.tensor(neg))  # (B, K, D)
        pos = L.nn.functional.logsigmoid((v * u).sum(1))
        negs = L.nn.functional.logsigmoid(-L.bmm(n, v.unsqueeze(2)).squeeze(2)).sum(1)
        loss = -(pos + negs).mean()
        opt.zero_grad()
        loss.backward()
        assert emb_in.weight.grad.is_sparse and emb_out.weight.grad.is_sparse
        opt.step()
    return emb_in.weight.detach().numpy(), emb_out.weight.detach().numpy(), opt


@pytest.mark.parametrize("name, make_opt", [
    ("SparseAdam", lambda L, ps: L.optim.SparseAdam(ps, lr=0.05)),
    ("SGD", lambda L, ps: L.optim.SGD(ps, lr=0.5)),
    ("SGD momentum", lambda L, ps: L.optim.SGD(ps, lr=0.5, momentum=0.9, dampening=0.1)),
    ("SGD nesterov", lambda L, ps: L.optim.SGD(ps, lr=0.5, momentum=0.9, nesterov=True, maximize=True)),
    ("Adagrad", lambda L, ps: L.optim.Adagrad(ps, lr=0.3, lr_decay=0.01)),
])
def test_skipgram_steps_as_pytorch(torch, name, make_opt):
    rng = np.random.default_rng(2)
    V, D, B, K = 12, 5, 4, 3
    w_in, w_out = rng.standard_normal((V, D)).astype(np.float32), rng.standard_normal((V, D)).astype(np.float32)
    batches = [rng.integers(0, V, size=s).tolist() for s in [(5, B), (5, B), (5, B, K)]]
    ours = _skipgram_steps(minigrad, w_in, w_out, make_opt, *batches)
    theirs = _skipgram_steps(torch, w_in, w_out, make_opt, *batches)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours[0], w_in)  # (the steps moved it)
    state, tstate = ours[2].state, theirs[2].state
    for p, tp in zip(ours[2].param_groups[0]["params"], theirs[2].param_groups[0]["params"]):
        assert sorted(state[p]) == sorted(tstate[tp])
        for k, v in state[p].items():
            tv = tstate[tp][k]
            if k == "step":
                assert int(v) == int(tv)
            elif tv.is_sparse:  # SGD's momentum buffer: sparse as PyTorch's
                assert v.is_sparse
                np.testing.assert_allclose(v.to_dense().numpy(), tv.to_dense().numpy(), rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make_opt", [
    lambda L, ps: L.optim.Adam(ps), lambda L, ps: L.optim.AdamW(ps), lambda L, ps: L.optim.SGD(ps, weight_decay=0.1),
    lambda L, ps: L.optim.Adagrad(ps, weight_decay=0.1),
    *[functools.partial(lambda name, L, ps: getattr(L.optim, name)(ps), name)
      for name in ("RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop")],
])
def test_sparse_gradient_refusals_as_pytorch(torch, make_opt):
    w = np.random.default_rng(3).standard_normal((6, 3))
    texts = []
    for L in (minigrad, torch):
        e = _table(L, w)
        e(L.tensor(IDS)).sum().backward()
        with pytest.raises(RuntimeError) as err:
            make_opt(L, e.parameters()).step()
        texts.append(str(err.value))
    assert texts[0] == texts[1]


def test_sparse_adam_refuses_dense_and_clip_grad_norm_refuses_sparse_as_pytorch(torch):
    w = np.random.default_rng(4).standard_normal((6, 3)).astype(np.float32)
    texts = []
    for L in (minigrad, torch):
        e = _table(L, w)
        lin = L.nn.Linear(3, 1)
        lin(e(L.tensor(IDS))).sum().backward()
        with pytest.raises(RuntimeError) as err:
            L.optim.SparseAdam(list(e.parameters()) + list(lin.parameters())).step()
        texts.append(str(err.value))
        with pytest.raises(NotImplementedError) as err:
            L.nn.utils.clip_grad_norm_(e.parameters(), 1.0)
        texts.append(str(err.value).split(" This could be")[0])
    assert texts[:2] == texts[2:]
    assert "SparseCPU" in texts[1]


def test_sparse_flag_keeps_dense_default():
    e = nn.Embedding(4, 2)
    e(minigrad.tensor([1, 1])).sum().backward()
    assert not e.weight.grad.is_sparse
    y = F.embedding(minigrad.tensor([1]), minigrad.randn(4, 2, requires_grad=True), sparse=True)
    assert y.grad_fn.name() == "EmbeddingBackward0"


# ---- EmbeddingBag(sparse=True) ----------------------------------------------------------------------------
BAG_IDS, BAG_OFFSETS = [1, 2, 4, 5, 4, 3, 2, 0, 5], [0, 2, 2, 5]
BAG_CASES = {
    "sum": dict(mode="sum"),
    "mean": dict(mode="mean"),
    "sum padding_idx": dict(mode="sum", padding_idx=2),
    "mean padding_idx": dict(mode="mean", padding_idx=4),
    "per_sample_weights": dict(mode="sum", per_sample_weights=True),
    "include_last_offset": dict(mode="mean", include_last_offset=True),
    "last offset before the end": dict(mode="sum", per_sample_weights=True, include_last_offset=True, last_offset=7),
    "2d mean": dict(mode="mean", two_d=True),
}


def _bag_grad(L, w, mode, padding_idx=None, per_sample_weights=False, include_last_offset=False, two_d=False,
              last_offset=9):
    weight = L.tensor(w.copy(), requires_grad=True)
    psw = L.tensor(np.linspace(-1.0, 2.0, 9), requires_grad=True) if per_sample_weights else None
    offsets = BAG_OFFSETS + [last_offset] if include_last_offset else BAG_OFFSETS
    ids, offsets = (L.tensor(BAG_IDS).reshape(3, 3), None) if two_d else (L.tensor(BAG_IDS), L.tensor(offsets))
    if two_d and psw is not None:
        psw = psw.reshape(3, 3)
    out = L.nn.functional.embedding_bag(ids, weight, offsets, mode=mode, sparse=True, per_sample_weights=psw,
                                        include_last_offset=include_last_offset, padding_idx=padding_idx)
    (out * L.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape) - 3)).sum().backward()
    g = weight.grad
    return (g.is_sparse, g.is_coalesced(), g._indices().numpy().tolist(), g._values().numpy(),
            g.coalesce().indices().numpy().tolist(), g.coalesce().values().numpy(), g.to_dense().numpy(),
            out.detach().numpy(), None if psw is None else psw.grad.numpy())


@pytest.mark.parametrize("case", list(BAG_CASES))
def test_embedding_bag_sparse_gradient_as_pytorch(torch, case):
    w = np.random.default_rng(4).standard_normal((6, 3))
    ours, theirs = _bag_grad(minigrad, w, **BAG_CASES[case]), _bag_grad(torch, w, **BAG_CASES[case])
    assert ours[:3] == theirs[:3] and ours[0] is True and ours[1] is False
    assert ours[4] == theirs[4]
    for a, b in zip(ours[3:], theirs[3:]):
        if b is not None and not isinstance(b, list):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_embedding_bag_sparse_refusals_as_pytorch(torch):
    w = np.random.default_rng(5).standard_normal((6, 3))
    texts = []
    for L in (minigrad, torch):
        with pytest.raises(ValueError) as err:
            L.nn.functional.embedding_bag(L.tensor(BAG_IDS), L.tensor(w), L.tensor(BAG_OFFSETS), mode="max",
                                          sparse=True)
        m = L.nn.EmbeddingBag.from_pretrained(L.tensor(w), freeze=False, mode="sum", sparse=True,
                                              scale_grad_by_freq=True)
        out = m(L.tensor(BAG_IDS), L.tensor(BAG_OFFSETS))  # (refused at the backward, as PyTorch)
        with pytest.raises(RuntimeError) as err2:
            out.sum().backward()
        texts.append((str(err.value), str(err2.value), repr(L.nn.EmbeddingBag(6, 3, mode="max", sparse=True))))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("name, make_opt", [
    ("SGD momentum", lambda L, ps: L.optim.SGD(ps, lr=0.5, momentum=0.9)),
    ("SparseAdam", lambda L, ps: L.optim.SparseAdam(ps, lr=0.05)),
    ("Adagrad", lambda L, ps: L.optim.Adagrad(ps, lr=0.3)),
])
def test_embedding_bag_sparse_steps_as_pytorch(torch, name, make_opt):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((10, 4)).astype(np.float32)
    batches = [(rng.integers(0, 10, size=8).tolist(), [0, 3, 3, 6], rng.standard_normal(8).astype(np.float32))
               for _ in range(4)]
    got = []
    for L in (minigrad, torch):
        m = L.nn.EmbeddingBag.from_pretrained(L.tensor(w), freeze=False, mode="sum", sparse=True, padding_idx=1)
        opt = make_opt(L, m.parameters())
        for ids, offsets, psw in batches:
            opt.zero_grad()
            out = m(L.tensor(ids), L.tensor(offsets), per_sample_weights=L.tensor(psw))
            out.tanh().pow(2).sum().backward()
            assert m.weight.grad.is_sparse
            opt.step()
        got.append(m.weight.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)
    assert not np.allclose(got[0], w)


def test_sparse_embedding_refuses_scale_grad_by_freq_at_backward_as_pytorch(torch):
    texts = []
    for L in (minigrad, torch):
        weight = L.tensor(np.ones((4, 2)), requires_grad=True)
        out = L.nn.functional.embedding(L.tensor([1, 1, 2]), weight, scale_grad_by_freq=True, sparse=True)
        with pytest.raises(RuntimeError) as err:
            out.sum().backward()
        texts.append(str(err.value))
    assert texts[0] == texts[1]


def test_lbfgs_steps_a_sparse_gradient_as_pytorch(torch):
    w = np.random.default_rng(7).standard_normal((6, 3))
    got = []
    for L in (minigrad, torch):
        e = _table(L, w)
        opt = L.optim.LBFGS(e.parameters(), lr=0.5, max_iter=4)

        def closure(L=L, e=e, opt=opt):
            opt.zero_grad()
            loss = (e(L.tensor(IDS)) - 1.0).pow(2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        got.append((e.weight.grad.is_sparse, e.weight.detach().numpy()))
    assert got[0][0] is got[1][0] is True
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-10, atol=1e-12)
    assert not np.allclose(got[0][1], w)
