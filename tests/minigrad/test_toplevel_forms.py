"""torch.* names for nn.functional's ops (torch.selu, torch.embedding, torch.batch_norm, the losses with an int
reduction, ...) and Tensor.prelu / hardshrink, against PyTorch's: values, gradients, argument orders and errors."""
import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8)).astype(np.float32)


def run(lib, name, args, kwargs, grad=True):
    """lib.name(*args, **kwargs) with the arrays as lib's tensors (the first requiring grad), and the first
    input's gradient of the sum of the outputs."""
    tensors = [lib.tensor(a, requires_grad=grad and i == 0 and a.dtype.kind == "f") if isinstance(a, np.ndarray)
               else a for i, a in enumerate(args)]
    out = getattr(lib, name)(*tensors, **kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    g = None
    if grad and tensors[0].requires_grad:
        sum(o.sum() for o in outs if o.dtype.is_floating_point).backward()
        g = tensors[0].grad.numpy()
    return [o.detach().numpy() for o in outs], [str(o.dtype).split(".")[-1] for o in outs], g


w3 = RNG.standard_normal(3).astype(np.float32)
CASES = [
    ("selu", (X,), {}), ("celu", (X,), {}), ("celu", (X, 0.5), {}), ("threshold", (X, 0.1, 20.0), {}),
    ("prelu", (X, w3), {}), ("rrelu", (X,), {}), ("rrelu", (X, 0.1, 0.3), {}), ("hardshrink", (X, 0.7), {}),
    ("max_pool1d", (X, 3), {}), ("max_pool1d", (X, 2, 1, 1), {"ceil_mode": True}), ("max_pool2d", (X, 2), {}),
    ("avg_pool1d", (X, 3, 2, 1), {}), ("adaptive_avg_pool1d", (X, 3), {}), ("adaptive_max_pool1d", (X, 3), {}),
    ("pdist", (X[0],), {}), ("pdist", (X[0], 1.5), {}),
    ("bilinear", (X[0], X[1, :, :5], RNG.standard_normal((4, 8, 5)).astype(np.float32)), {}),
    ("group_norm", (X, 3, w3, w3, 1e-3, False), {}), ("rms_norm", (X, (8,)), {}),
    ("layer_norm", (X, (8,)), {}),
    ("embedding", (RNG.standard_normal((5, 3)).astype(np.float32), np.array([0, 4, 3, 4])), {}),
    ("embedding", (RNG.standard_normal((5, 3)).astype(np.float32), np.array([[0, 4], [3, 4]]), 4), {}),
    ("embedding", (RNG.standard_normal((5, 3)).astype(np.float32), np.array([0, 4, 3, 4]), -2), {}),
    ("embedding", (RNG.standard_normal((5, 3)).astype(np.float32), np.array([0, 4, 3, 4]), 7), {}),
    ("batch_norm", (X, w3, w3, np.zeros(3, np.float32), np.ones(3, np.float32), False, 0.1, 1e-5, False), {}),
    ("batch_norm", (X, None, None, None, None, True, 0.1, 1e-5, True), {}),
    ("instance_norm", (X, w3, w3, None, None, True, 0.1, 1e-5, False), {}),
    ("dropout", (X, 0.5, False), {}), ("alpha_dropout", (X, 0.5, False), {}),
    ("feature_alpha_dropout", (X, 0.5, False), {}), ("feature_dropout", (X, 0.5, False), {}),
]
T = RNG.random((2, 3, 8)).astype(np.float32)
S = np.sign(RNG.standard_normal((2, 3, 8))).astype(np.float32)
for _r in (0, 1, 2, 3, -1):
    CASES += [
        ("binary_cross_entropy_with_logits", (X, T), {"reduction": _r}),
        ("binary_cross_entropy_with_logits", (X, T, T, w3[:, None] ** 2, _r), {}),
        ("kl_div", (X, T, _r), {}), ("kl_div", (X, X * 0.5), {"reduction": _r, "log_target": True}),
        ("margin_ranking_loss", (X, T, S, 0.2, _r), {}), ("hinge_embedding_loss", (X, S, 0.5, _r), {}),
        ("cosine_embedding_loss", (X[0], T[0], S[0, :, 0], 0.1, _r), {}),
        ("triplet_margin_loss", (X[0], T[0], X[1], 0.5, 2.0, 1e-6, True, _r), {}),
        ("poisson_nll_loss", (X, T, True, True, 1e-8, _r), {}), ("poisson_nll_loss", (T, T, False, False, 1e-4, _r), {}),
    ]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=[c[0] for c in CASES])
def test_top_level_form_as_torch(torch, name, args, kwargs):
    ours, theirs = run(minigrad, name, args, kwargs), run(torch, name, args, kwargs)
    assert len(ours[0]) == len(theirs[0]) and ours[1] == theirs[1]
    for o, t in zip(ours[0], theirs[0]):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
    assert (ours[2] is None) == (theirs[2] is None)
    if ours[2] is not None:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["prelu", "hardshrink"])
def test_tensor_methods_as_torch(torch, name):
    args = (torch.tensor(w3),) if name == "prelu" else (0.3,)
    want = getattr(torch.tensor(X), name)(*args)
    got = getattr(minigrad.tensor(X), name)(*(minigrad.tensor(a.numpy()) if hasattr(a, "numpy") else a for a in args))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout", "feature_dropout"])
def test_dropouts_in_training(torch, name):
    x = np.ones((64, 32, 3), np.float32)
    found = []
    for lib in (minigrad, torch):
        y = getattr(lib, name)(lib.tensor(x), 0.25, True).numpy()
        values = np.unique(y)  # a kept value and a dropped one
        assert len(values) == 2
        if "feature" in name:  # whole (sample, channel) rows
            assert (y == y[:, :, :1]).all()
        found.append((values, (y == values[-1]).mean()))
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-6)
    assert abs(found[0][1] - found[1][1]) < 0.05
    with pytest.raises(RuntimeError) as t:
        torch.feature_dropout(torch.ones(4), 0.5, True)
    with pytest.raises(RuntimeError, match=f"^{str(t.value)}$"):
        minigrad.feature_dropout(minigrad.ones(4), 0.5, True)


@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_"])
def test_in_place_dropouts(torch, name):
    for lib in (minigrad, torch):
        x = lib.ones(8, 4, 2)
        before = x._version
        assert getattr(lib, name)(x, 0.5, True) is x and x._version > before
        assert len(np.unique(x.numpy())) == 2
        leaf = lib.ones(8, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            getattr(lib, name)(leaf, 0.5, True)


def test_rrelu_generator(torch):
    g = minigrad.Generator().manual_seed(3)
    x = minigrad.tensor(-np.ones(1000, np.float32))
    a = minigrad.rrelu(x, 0.1, 0.3, True, g)
    b = minigrad.rrelu(x, 0.1, 0.3, True, minigrad.Generator().manual_seed(3))
    assert (a.numpy() == b.numpy()).all() and -0.3 <= a.min().item() < -0.28 and -0.12 < a.max().item() <= -0.1


@pytest.mark.parametrize("bad", [True, 1.0, "mean"])
def test_reduction_must_be_an_int(torch, bad):  # (given by keyword: PyTorch's text then names no position)
    with pytest.raises(TypeError) as t:
        torch.kl_div(torch.ones(2), torch.ones(2), reduction=bad)
    with pytest.raises(TypeError) as e:
        minigrad.kl_div(minigrad.ones(2), minigrad.ones(2), reduction=bad)
    assert str(e.value) == str(t.value)


def test_required_arguments(torch):
    for lib in (minigrad, torch):
        with pytest.raises(TypeError):
            lib.alpha_dropout(lib.ones(2), 0.5)
        with pytest.raises(TypeError):
            lib.batch_norm(lib.ones(2, 3), None, None, None, None, True, 0.1, 1e-5)


@pytest.mark.parametrize("args", [((3, 2), 1.5, True), ((3, 2), -0.5, False), ((3,), 0.5, False), ((3,), 0.5, True)])
def test_feature_dropout_checks_p_first_and_the_rank_only_when_training(torch, args):
    shape, p, train = args
    outcomes = []
    for L in (minigrad, torch):
        try:
            outcomes.append(("ok", L.feature_dropout(L.ones(*shape), p, train).tolist()))
        except RuntimeError as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]
