"""F.embedding_bag and nn.EmbeddingBag against PyTorch: outputs, weight and per_sample_weights gradients, errors."""
import re

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

NUM, DIM = 7, 4

# name -> (input, offsets or None, include_last_offset)
CASES = {
    "2d": ([[1, 2, 4], [0, 3, 3]], None, False),
    "1d_offsets": ([1, 2, 4, 0, 3, 3, 6], [0, 3, 4], False),
    "last_offset": ([1, 2, 4, 0, 3, 3, 6], [0, 3, 4, 7], True),
    # (PyTorch's last bag runs to the input's end whatever offsets[-1] is)
    "last_offset_short": ([1, 2, 4, 0, 3, 3, 6], [0, 3, 5], True),
    "last_offset_at_last_start": ([1, 2, 4, 0, 3, 3, 6], [0, 3, 3], True),
    "last_offset_empty_last": ([1, 2, 4, 0, 3, 3, 6], [0, 7, 7], True),
    "trailing_empty_bag": ([1, 2, 4, 0, 3, 3, 6], [0, 3, 7], False),
    "empty_bags": ([5, 1, 2, 2], [0, 0, 1, 1, 4, 4], False),
    "padding_entries": ([2, 2, 5, 1, 2], [0, 2, 3], False),
    "empty_input": ([], [0, 0], False),
}


def _pair(torch, seed=0, dtype=np.float64):
    w = np.random.default_rng(seed).standard_normal((NUM, DIM)).astype(dtype)
    return (minigrad.tensor(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True))


def _run(torch, case, mode, padding_idx=None, psw=False, **kw):
    ids, offsets, last = CASES[case]
    w_m, w_t = _pair(torch)
    ids = np.asarray(ids, dtype=np.int64)
    off = None if offsets is None else np.asarray(offsets, dtype=np.int64)
    ps = np.random.default_rng(1).standard_normal(ids.shape) if psw else None
    res = []
    for lib, w in ((minigrad, w_m), (torch, w_t)):
        fn = F.embedding_bag if lib is minigrad else torch.nn.functional.embedding_bag
        p = None if ps is None else lib.tensor(ps.copy(), requires_grad=True)
        out = fn(lib.tensor(ids), w, None if off is None else lib.tensor(off), mode=mode, per_sample_weights=p,
                 include_last_offset=last, padding_idx=padding_idx, **kw)
        g = np.random.default_rng(2).standard_normal(tuple(out.shape))
        (out * lib.tensor(g)).sum().backward()
        res.append((out.detach().numpy(), w.grad.numpy(), None if p is None else p.grad.numpy()))
    (o_m, gw_m, gp_m), (o_t, gw_t, gp_t) = res
    np.testing.assert_allclose(o_m, o_t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw_m, gw_t, rtol=1e-10, atol=1e-12)
    if psw:
        np.testing.assert_allclose(gp_m, gp_t, rtol=1e-10, atol=1e-12)
    return o_m


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_modes_match_torch(torch, case, mode):
    _run(torch, case, mode)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", ["2d", "1d_offsets", "padding_entries", "empty_bags"])
def test_padding_idx_left_out(torch, case, mode):
    out = _run(torch, case, mode, padding_idx=2)
    if case == "padding_entries":  # the first bag holds only padding entries: zeros
        assert not out[0].any()


def test_negative_padding_idx(torch):
    _run(torch, "padding_entries", "mean", padding_idx=2 - NUM)


@pytest.mark.parametrize("case", sorted(CASES))
def test_per_sample_weights_sum(torch, case):
    _run(torch, case, "sum", psw=True)


def test_per_sample_weights_with_padding(torch):
    _run(torch, "padding_entries", "sum", psw=True, padding_idx=2)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq(torch, mode):
    """Each row's gradient divided by its id's count in input, as F.embedding's. Checked against torch's
    F.embedding + per-bag sums: torch 2.13's CPU embedding_bag divides some rows by another id's count
    (pytorch/pytorch#190063, fixed in #190264)."""
    ids, off = [1, 2, 4, 0, 3, 3, 6, 4], [0, 3, 4]
    w_m, w_t = _pair(torch)
    out = F.embedding_bag(minigrad.tensor(ids), w_m, minigrad.tensor(off), mode=mode, scale_grad_by_freq=True)
    rows = torch.nn.functional.embedding(torch.tensor(ids), w_t, scale_grad_by_freq=True)
    bags = [rows[0:3], rows[3:4], rows[4:8]]
    ref = torch.stack([b.sum(0) if mode == "sum" else b.mean(0) for b in bags])
    g = np.random.default_rng(2).standard_normal(tuple(ref.shape))
    (out * minigrad.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w_m.grad.numpy(), w_t.grad.numpy(), rtol=1e-12)


def test_max_norm_renormalises_like_torch(torch):
    w_m, w_t = _pair(torch)
    ids, off = [1, 2, 4, 1], [0, 2]
    o_m = F.embedding_bag(minigrad.tensor(ids), w_m, minigrad.tensor(off), max_norm=1.0, mode="sum")
    o_t = torch.nn.functional.embedding_bag(torch.tensor(ids), w_t, torch.tensor(off), max_norm=1.0, mode="sum")
    np.testing.assert_allclose(o_m.detach().numpy(), o_t.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w_m.detach().numpy(), w_t.detach().numpy(), rtol=1e-6)


def test_duplicates_in_max_bag(torch):
    w_m, w_t = _pair(torch)
    for lib, w in ((minigrad, w_m), (torch, w_t)):
        fn = F.embedding_bag if lib is minigrad else torch.nn.functional.embedding_bag
        fn(lib.tensor([3, 3, 1]), w, lib.tensor([0]), mode="max").sum().backward()
    np.testing.assert_allclose(w_m.grad.numpy(), w_t.grad.numpy())


def test_float32_and_int32_ids(torch):
    w = np.random.default_rng(0).standard_normal((NUM, DIM)).astype(np.float32)
    ids = np.array([[1, 2], [3, 6]], dtype=np.int32)
    o_m = F.embedding_bag(minigrad.tensor(ids), minigrad.tensor(w))
    o_t = torch.nn.functional.embedding_bag(torch.tensor(ids), torch.tensor(w))
    assert o_m.dtype == minigrad.float32
    np.testing.assert_allclose(o_m.numpy(), o_t.numpy(), rtol=1e-6)


def _err(lib, **kw):
    fn = F.embedding_bag if lib is minigrad else lib.nn.functional.embedding_bag
    w = lib.zeros(NUM, DIM)
    args = dict(input=lib.tensor([1, 2, 3]), offsets=lib.tensor([0, 1]))
    args.update({k: (v(lib) if callable(v) else v) for k, v in kw.items()})
    with pytest.raises(Exception) as info:
        fn(args.pop("input"), w, **args)
    return info.type, str(info.value)


ERRORS = {
    "offsets_with_2d": dict(input=lambda t: t.tensor([[1, 2], [3, 4]])),
    "no_offsets": dict(offsets=None),
    "offsets_2d": dict(offsets=lambda t: t.tensor([[0, 1]])),
    "input_3d": dict(input=lambda t: t.tensor([[[1, 2]]]), offsets=None),
    "psw_mean": dict(per_sample_weights=lambda t: t.ones(3)),
    "psw_max": dict(per_sample_weights=lambda t: t.ones(3), mode="max"),
    "psw_shape": dict(per_sample_weights=lambda t: t.ones(2), mode="sum"),
    "bad_mode": dict(mode="median"),
    "max_freq": dict(mode="max", scale_grad_by_freq=True),
    "first_offset": dict(offsets=lambda t: t.tensor([1, 2])),
    "last_offset": dict(offsets=lambda t: t.tensor([0, 5])),
    "float_ids": dict(input=lambda t: t.tensor([1.0, 2.0])),
    "id_range": dict(input=lambda t: t.tensor([1, 2, NUM])),
    "padding_range": dict(padding_idx=NUM),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    t_m, msg_m = _err(minigrad, **ERRORS[name])
    t_t, msg_t = _err(torch, **ERRORS[name])
    assert issubclass(t_m, t_t) or t_m is t_t, (t_m, t_t)
    if name in ("offsets_with_2d", "psw_shape", "float_ids", "first_offset"):  # torch's own types in the text
        assert msg_m[:30] == msg_t[:30]
    elif name == "id_range":  # (torch's "Index i" is not the entry's position: not compared)
        assert msg_m.split(" of input")[1] == msg_t.split(" of input")[1]
    else:
        assert msg_m == msg_t


# ---- the module -----------------------------------------------------------------------------------------
def test_module_init_and_forward(torch):
    minigrad.manual_seed(0)
    m = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=4)
    assert m.weight.shape == (10, 3) and m.weight.requires_grad
    assert not m.weight.detach().numpy()[4].any() and m.weight.detach().numpy().std() > 0.3
    t = torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=4)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(m.weight.detach().numpy()))
    ids, off, ps = [1, 4, 9, 2, 2], [0, 2], np.linspace(0.5, 1.5, 5).astype(np.float32)
    o_m = m(minigrad.tensor(ids), minigrad.tensor(off), per_sample_weights=minigrad.tensor(ps))
    o_t = t(torch.tensor(ids), torch.tensor(off), per_sample_weights=torch.tensor(ps))
    np.testing.assert_allclose(o_m.detach().numpy(), o_t.detach().numpy(), rtol=1e-6)
    o_m.sum().backward()
    o_t.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-6)
    assert nn.EmbeddingBag(10, 3, padding_idx=-1).padding_idx == 9
    assert nn.EmbeddingBag(5, 2, dtype=minigrad.float64).weight.dtype == minigrad.float64


def test_module_include_last_offset(torch):
    w = np.random.default_rng(0).standard_normal((6, 2))
    m = nn.EmbeddingBag(6, 2, mode="max", include_last_offset=True, _weight=minigrad.tensor(w))
    t = torch.nn.EmbeddingBag(6, 2, mode="max", include_last_offset=True, _weight=torch.tensor(w))
    ids, off = [0, 5, 1, 3], [0, 1, 4]
    np.testing.assert_allclose(m(minigrad.tensor(ids), minigrad.tensor(off)).detach().numpy(),
                               t(torch.tensor(ids), torch.tensor(off)).detach().numpy())


@pytest.mark.parametrize("kw", [
    {}, dict(mode="sum"), dict(mode="max", padding_idx=2), dict(max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True),
    dict(include_last_offset=True, padding_idx=-1),
])
def test_repr_matches_torch(torch, kw):
    assert repr(nn.EmbeddingBag(10, 3, **kw)) == repr(torch.nn.EmbeddingBag(10, 3, **kw))


def test_from_pretrained(torch):
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    m = nn.EmbeddingBag.from_pretrained(minigrad.tensor(w), mode="sum", padding_idx=1)
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum", padding_idx=1)
    assert not m.weight.requires_grad and repr(m) == repr(t)
    x = [[0, 1, 3], [2, 2, 1]]
    np.testing.assert_array_equal(m(minigrad.tensor(x)).numpy(), t(torch.tensor(x)).numpy())
    assert nn.EmbeddingBag.from_pretrained(minigrad.tensor(w), freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):  # PyTorch's type
        nn.EmbeddingBag.from_pretrained(minigrad.tensor(w[0]))


def test_module_errors(torch):
    # PyTorch raises AssertionError for these (Embedding's too), with these texts
    for make in (lambda m, z: m.EmbeddingBag(5, 2, padding_idx=5), lambda m, z: m.Embedding(5, 2, padding_idx=-6),
                 lambda m, z: m.EmbeddingBag(5, 2, _weight=z(4, 2)), lambda m, z: m.Embedding(5, 2, _weight=z(4, 2)),
                 lambda m, z: m.Embedding.from_pretrained(z(4))):
        with pytest.raises(AssertionError) as theirs:
            make(torch.nn, torch.zeros)
        with pytest.raises(AssertionError, match=re.escape(str(theirs.value))):
            make(nn, minigrad.zeros)


def test_float_indices_message(torch):
    # PyTorch names the indices' type by its legacy name (torch.FloatTensor), as F.embedding does
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.EmbeddingBag(5, 2)(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([0]))
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value).replace("torch.", "minigrad."))):
        nn.EmbeddingBag(5, 2)(minigrad.tensor([1.0, 2.0], dtype=minigrad.float64), minigrad.tensor([0]))


@pytest.mark.parametrize("wdt, pdt", [("float32", "float64"), ("float64", "float32"), ("float64", "int64")])
def test_per_sample_weights_of_another_dtype_raise(torch, wdt, pdt):
    # PyTorch does not promote them (the output was float64)
    def call(L, N):
        m = N.EmbeddingBag(5, 2, mode="sum").to(getattr(L, wdt))
        return m(L.tensor([[1, 2], [3, 4]]), per_sample_weights=L.ones(2, 2, dtype=getattr(L, pdt)))

    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.nn)
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value).replace("torch.", "minigrad."))):
        call(minigrad, nn)


@pytest.mark.parametrize("mode, psw", [("sum", False), ("sum", True), ("mean", False), ("max", False)])
def test_one_node_named_as_torch(torch, mode, psw):
    """One EmbeddingBagBackward0 node, as PyTorch's, for every mode."""
    w_m, w_t = _pair(torch)
    names = []
    for lib, w in ((minigrad, w_m), (torch, w_t)):
        fn = F.embedding_bag if lib is minigrad else torch.nn.functional.embedding_bag
        p = lib.tensor(np.linspace(0.5, 2.0, 7), requires_grad=True) if psw else None
        out = fn(lib.tensor([1, 2, 4, 0, 3, 3, 6]), w, lib.tensor([0, 3, 4]), mode=mode, per_sample_weights=p)
        names.append(type(out.grad_fn).__name__)
    assert names[0] == names[1] == "EmbeddingBagBackward0"


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_create_graph_gives_the_gradients_and_refuses_their_derivative_as_torch(mode):
    # a gradient penalty or a meta-learning step through embedding_bag: the first gradients are there under
    # create_graph (hung from PyTorch's node), their own derivative is PyTorch's NotImplementedError
    torch = pytest.importorskip("torch")
    got = []
    for L in (minigrad, torch):
        w = L.tensor(np.random.default_rng(0).standard_normal((10, 3)), requires_grad=True)
        y = L.nn.functional.embedding_bag(L.tensor([1, 2, 3, 4, 1]), w, L.tensor([0, 2]), mode=mode)
        (gw,) = L.autograd.grad((y * y).sum(), [w], create_graph=True)
        with pytest.raises(NotImplementedError) as e:
            gw.sum().backward()
        got.append((type(gw.grad_fn).__name__, np.asarray(gw.detach()), str(e.value)))
    assert got[0][0] == got[1][0] and got[0][2] == got[1][2]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
