"""Layers, containers and nn.init: gradcheck in float64, PyTorch parity in float32, input errors."""
import math

import numpy as np
import pytest

import minigrad
import nn
from minigrad.autograd import gradcheck

LAYERS = {
    "linear": lambda: nn.Linear(4, 3),
    "linear_nobias": lambda: nn.Linear(4, 3, bias=False),
    "layernorm": lambda: nn.LayerNorm(4),
    "layernorm_nobias": lambda: nn.LayerNorm(4, bias=False),
    "layernorm_2d": lambda: nn.LayerNorm((3, 4)),
    "layernorm_noaffine": lambda: nn.LayerNorm(4, elementwise_affine=False),
    "gelu": lambda: nn.GELU(),
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
    "relu": lambda: nn.ReLU(),
    "tanh": lambda: nn.Tanh(),
    "identity": lambda: nn.Identity(),
    "mlp": lambda: nn.Sequential(nn.Linear(4, 5), nn.GELU(), nn.Linear(5, 4), nn.LayerNorm(4)),
}


def _perturbed(module):
    """Parameters moved off their init values, so ones/zeros LayerNorm weights test something."""
    for p in module.parameters():
        p.array += minigrad.randn(*p.shape, dtype=p.dtype).array * 0.5
    return module


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_gradcheck_float64(name):
    minigrad.manual_seed(0)
    m = _perturbed(LAYERS[name]().double())
    x = minigrad.randn(2, 3, 4, dtype=minigrad.float64, requires_grad=True)
    if name == "relu":  # keep inputs away from the kink, where finite differences are meaningless
        x.array[np.abs(x.array) < 0.1] = 0.5
    params = list(m.parameters())
    assert gradcheck(lambda x, *ps: m(x), (x, *params))


def test_gradcheck_embedding():
    minigrad.manual_seed(0)
    m = nn.Embedding(6, 3).double()  # (padding_idx deliberately has no gradient, so no gradcheck)
    ids = minigrad.tensor([[0, 2, 2], [5, 1, 0]])
    assert gradcheck(lambda w: m(ids) * minigrad.arange(3, dtype=minigrad.float64), (m.weight,))


def test_gradcheck_dropout():
    m = nn.Dropout(0.4).double()
    x = minigrad.randn(3, 5, dtype=minigrad.float64, requires_grad=True)

    def f(x):
        minigrad.manual_seed(1)  # the same mask on every evaluation
        return m(x)

    assert gradcheck(f, (x,))


# ---- PyTorch parity (float32) ---------------------------------------------------------------
def _torch_twin(torch, ours, theirs):
    """Copy our parameters into the PyTorch module by name."""
    with torch.no_grad():
        for name, p in ours.named_parameters():
            theirs.get_parameter(name).copy_(torch.from_numpy(p.array.copy()))
    return theirs


def _compare(torch, ours, theirs, x):
    xo = minigrad.tensor(x, requires_grad=x.dtype.kind == "f")
    xt = torch.from_numpy(x.copy()).requires_grad_(x.dtype.kind == "f")
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.array, yt.detach().numpy(), atol=1e-5, rtol=1e-4)
    g = np.random.default_rng(1).standard_normal(yt.shape).astype(np.float32)
    yo.backward(minigrad.tensor(g))
    yt.backward(torch.from_numpy(g))
    if xo.requires_grad:
        np.testing.assert_allclose(xo.grad.array, xt.grad.numpy(), atol=1e-5, rtol=1e-4)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.array, theirs.get_parameter(name).grad.numpy(), atol=1e-5, rtol=1e-4,
                                   err_msg=name)


def test_torch_parity(torch):
    tnn = torch.nn
    pairs = [
        (nn.Linear(8, 5), tnn.Linear(8, 5)),
        (nn.Linear(8, 5, bias=False), tnn.Linear(8, 5, bias=False)),
        (nn.LayerNorm(8), tnn.LayerNorm(8)),
        (nn.LayerNorm(8, bias=False), tnn.LayerNorm(8, bias=False)),
        (nn.GELU(), tnn.GELU()),
        (nn.GELU(approximate="tanh"), tnn.GELU(approximate="tanh")),
        (nn.ReLU(), tnn.ReLU()),
        (nn.Tanh(), tnn.Tanh()),
        (nn.Dropout(0.3).eval(), tnn.Dropout(0.3).eval()),
        (nn.Identity(), tnn.Identity()),
        (nn.Sequential(nn.Linear(8, 6), nn.GELU(), nn.Linear(6, 8), nn.LayerNorm(8)),
         tnn.Sequential(tnn.Linear(8, 6), tnn.GELU(), tnn.Linear(6, 8), tnn.LayerNorm(8))),
    ]
    x = np.random.default_rng(0).standard_normal((3, 4, 8)).astype(np.float32)
    for ours, theirs in pairs:
        _compare(torch, _perturbed(ours), _torch_twin(torch, ours, theirs), x)


def test_torch_parity_embedding(torch):
    ours = nn.Embedding(10, 4, padding_idx=3)
    theirs = _torch_twin(torch, ours, torch.nn.Embedding(10, 4, padding_idx=3))
    _compare(torch, ours, theirs, np.array([[1, 3, 9], [3, 0, 1]], dtype=np.int64))


def test_default_init_matches_pytorch_rule():
    minigrad.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)  # kaiming_uniform_(a=sqrt(5)) on fan_in 100, and the bias rule
    for p in (lin.weight, lin.bias):
        assert p.array.min() >= -bound and p.array.max() <= bound and p.array.max() > 0.9 * bound
    assert lin.weight.shape == (50, 100) and lin.weight.dtype == minigrad.float32
    emb = nn.Embedding(200, 50)
    assert abs(emb.weight.array.mean()) < 0.05 and abs(emb.weight.array.std() - 1) < 0.05
    ln = nn.LayerNorm(6)
    assert (ln.weight.array == 1).all() and (ln.bias.array == 0).all()
    assert nn.LayerNorm(6, bias=False).bias is None
    minigrad.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(100, 50).weight.array, lin.weight.array)  # seeded: reproducible
    assert nn.Linear(3, 2, dtype=minigrad.float64).weight.dtype == minigrad.float64


def test_init_functions():
    minigrad.manual_seed(0)
    w = nn.Parameter(minigrad.empty(300, 200))
    version = w._version
    assert nn.init.normal_(w, mean=1.0, std=2.0) is w
    assert w._version > version and w.is_leaf and w.grad_fn is None
    assert abs(w.array.mean() - 1) < 0.02 and abs(w.array.std() - 2) < 0.02
    nn.init.uniform_(w, -0.5, 0.25)
    assert w.array.min() >= -0.5 and w.array.max() <= 0.25
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 500)
    assert np.abs(w.array).max() <= bound and np.abs(w.array).max() > 0.95 * bound
    nn.init.kaiming_uniform_(w, a=0, nonlinearity="relu")
    assert np.abs(w.array).max() <= math.sqrt(6 / 200)
    nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert w.array.min() >= -0.5 and w.array.max() <= 0.5
    nn.init.constant_(w, 0.3)
    assert (w.array == np.float32(0.3)).all()
    nn.init.zeros_(w)
    assert not w.array.any()
    nn.init.ones_(w)
    assert (w.array == 1).all() and w.dtype == minigrad.float32
    h = nn.init.normal_(minigrad.empty(4, dtype=minigrad.float16))
    assert h.dtype == minigrad.float16
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(minigrad.empty(3))


# ---- errors on bad input --------------------------------------------------------------------
def test_linear_bad_input_names_module_and_shapes():
    lin = nn.Linear(4, 3)
    with pytest.raises(RuntimeError) as err:
        lin(minigrad.zeros(2, 5))
    assert str(err.value) == "mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)"
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 must have the same dtype, but got Double and Float$"):
        lin(minigrad.zeros(2, 4, dtype=minigrad.float64))
    with pytest.raises(TypeError, match=r"^linear\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        lin([[1.0, 2.0, 3.0, 4.0]])


@pytest.mark.parametrize("call", [
    "nn.LayerNorm(4)(t.zeros(2, 3))", "nn.LayerNorm((3, 4))(t.zeros(4, 3))", "nn.LayerNorm(4)(t.tensor(1.0))",
    "nn.LayerNorm(4)([1.0, 2.0, 3.0, 4.0])", "nn.LayerNorm(4)(t.zeros(2, 4, dtype=t.float64))",
    "nn.LayerNorm(4)(t.zeros(2, 4, dtype=t.float16))", "nn.LayerNorm(4, bias=False)(t.zeros(2, 4, dtype=t.float16))",
    "nn.LayerNorm(4)(t.zeros(2, 4, dtype=t.long))",
    "nn.LayerNorm(4, elementwise_affine=False)(t.zeros(2, 4, dtype=t.float64))",
    "F.layer_norm(t.zeros(2, 4, dtype=t.long), (4,))",
    "F.layer_norm(t.zeros(2, 4, dtype=t.float16), (4,), t.ones(4), t.ones(4, dtype=t.float16))",
    "F.layer_norm(t.zeros(2, 4), (4,), t.ones(4, dtype=t.float64))",
    "F.layer_norm(t.zeros(2, 4, dtype=t.float64), (4,), None, t.ones(4))",
    "F.layer_norm(t.zeros(2, 4), (4,), t.ones(3))",
    "F.layer_norm(t.zeros(2, 4), (4,), None, t.ones(3))", "F.layer_norm(t.zeros(2, 4), ())",
    "F.rms_norm(t.zeros(2, 3), (4,))", "nn.RMSNorm(4)(t.zeros(2, 3))",
])
def test_layernorm_bad_input_as_pytorch(call):
    # PyTorch's checks and texts; a float16 input takes float32 parameters (its CPU kernels' mixed type)
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (minigrad, torch):
        try:
            r = eval(call, {"t": lib, "nn": lib.nn, "F": lib.nn.functional})
            seen.append(str(r.dtype).split(".")[1])
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1]


def test_embedding_bad_input():
    emb = nn.Embedding(10, 4)
    with pytest.raises(RuntimeError, match=r"'indices' to have one of the following scalar types: Long, Int; but got "
                                           r"minigrad.FloatTensor instead"):
        emb(minigrad.tensor([1.0, 2.0]))
    for ids, bad in (([[1, 12], [3, 4]], 12), ([-1], -1)):
        with pytest.raises(IndexError) as err:
            emb(minigrad.tensor(ids))
        assert str(err.value) == "index out of range in self"  # (PyTorch's; the id is in a note)
        assert err.value.__notes__ == [f"embedding id {bad} is not in [0, 10) (the weight has 10 rows)"]
    assert emb(minigrad.tensor([], dtype=minigrad.int64)).shape == (0, 4)
    assert emb(minigrad.tensor([1, 2], dtype=minigrad.int32)).shape == (2, 4)


# ---- behaviour ------------------------------------------------------------------------------
def test_dropout_modes():
    minigrad.manual_seed(0)
    m = nn.Dropout(0.25)
    x = minigrad.ones(100, 100)
    y = m(x).array
    assert abs((y == 0).mean() - 0.25) < 0.02 and np.allclose(y[y != 0], 1 / 0.75)
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    gelu = nn.GELU(approximate="fast")  # PyTorch checks it at the call, not at construction
    with pytest.raises(RuntimeError, match="none or tanh"):
        gelu(x)


def test_sequential():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert list(seq[1:]) == [b, c] and isinstance(seq[1:], nn.Sequential)
    assert seq(minigrad.zeros(5, 2)).shape == (5, 1)
    seq.append(nn.Tanh())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"] and seq[1] is c
    named = nn.Sequential(__import__("collections").OrderedDict(first=a, second=c))
    assert named.first is a and [n for n, _ in named.named_parameters()][0] == "first.weight"
    with pytest.raises(IndexError):
        seq[5]


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
    layers.append(nn.Linear(2, 3))
    layers.extend([nn.ReLU()])
    layers.insert(0, nn.Tanh())
    assert len(layers) == 5 and isinstance(layers[0], nn.Tanh) and isinstance(layers[-1], nn.ReLU)
    assert len(list(layers.parameters())) == 6
    layers[0] = nn.Identity()
    assert isinstance(layers[0], nn.Identity)
    layers += [nn.GELU()]
    assert len(layers) == 6 and isinstance(layers[1:3], nn.ModuleList)
    del layers[0]
    assert [n for n, _ in layers.named_children()] == ["0", "1", "2", "3", "4"]
    with pytest.raises(IndexError):
        layers[10]

    d = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.ReLU()})
    d["dec"] = nn.Linear(2, 1)
    assert list(d.keys()) == ["enc", "act", "dec"] and "act" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert isinstance(d.pop("act"), nn.ReLU) and "act" not in d
    d.update([("act", nn.GELU())])
    assert list(d) == ["enc", "dec", "act"] and dict(d.items())["act"] is d["act"]


# ---- nn.init: orthogonal_, dirac_, sparse_ (their properties, not PyTorch's random values) ------------------
@pytest.mark.parametrize("shape", [(4, 10), (10, 4), (7, 7), (8, 3, 3, 3), (1, 5)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal_init(shape, gain):
    minigrad.manual_seed(0)
    w = nn.Parameter(minigrad.empty(*shape, dtype=minigrad.float64))
    version = w._version
    assert nn.init.orthogonal_(w, gain=gain) is w
    assert w._version > version and w.is_leaf and w.shape == shape
    flat = w.array.reshape(shape[0], -1)
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat  # the shorter side's vectors are orthonormal
    np.testing.assert_allclose(gram, gain**2 * np.eye(min(rows, cols)), atol=1e-12)
    if rows == cols:
        np.testing.assert_allclose(abs(np.linalg.det(flat / gain)), 1.0, rtol=1e-10)
    first = w.array.copy()
    nn.init.orthogonal_(w, gain=gain)
    assert not np.allclose(w.array, first)  # a new random matrix each call
    minigrad.manual_seed(0)
    np.testing.assert_array_equal(nn.init.orthogonal_(minigrad.empty(*shape, dtype=minigrad.float64), gain).array,
                                  first)  # seeded: reproducible


def test_orthogonal_init_dtypes_and_errors():
    w = nn.init.orthogonal_(minigrad.empty(30, 50))
    assert w.dtype == minigrad.float32
    np.testing.assert_allclose(w.array @ w.array.T, np.eye(30), atol=1e-5)
    h = nn.init.orthogonal_(minigrad.empty(6, 6, dtype=minigrad.float16))
    assert h.dtype == minigrad.float16
    np.testing.assert_allclose(h.array.astype(np.float32) @ h.array.T.astype(np.float32), np.eye(6), atol=1e-2)
    assert nn.init.orthogonal_(minigrad.empty(0, 3)).shape == (0, 3)  # empty: nothing to do
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        nn.init.orthogonal_(minigrad.empty(5))
    # many draws of a 2x2: a uniform (Haar) rotation's angle is uniform, so cos is centred (the sign fix at work)
    minigrad.manual_seed(1)
    cosines = [nn.init.orthogonal_(minigrad.empty(2, 2, dtype=minigrad.float64)).array[0, 0] for _ in range(2000)]
    assert abs(np.mean(cosines)) < 0.05 and abs(np.mean(np.square(cosines)) - 0.5) < 0.05


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 6, 3, 3), 1), ((4, 4, 3, 3), 2), ((6, 3, 4, 2), 2),
                                          ((3, 3, 3, 3, 3), 1)])
def test_dirac_init(shape, groups):
    """A convolution with a Dirac weight copies its input channels: exactly, with 'same' padding."""
    w = nn.Parameter(minigrad.randn(*shape))
    assert nn.init.dirac_(w, groups=groups) is w
    arr = w.array
    out_per_group, n = shape[0] // groups, min(shape[0] // groups, shape[1])
    assert arr.sum() == groups * n and set(np.unique(arr)) <= {0.0, 1.0}
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(n):
            assert arr[(g * out_per_group + d, d) + centre] == 1
    x = minigrad.randn(2, shape[1] * groups, *[7] * (len(shape) - 2))
    if len(shape) == 4 and all(k % 2 == 1 for k in shape[2:]):
        y = nn.functional.conv2d(x, w, padding=shape[2] // 2, groups=groups)
        for g in range(groups):  # output channel g * out_per_group + d is input channel g * in_per_group + d
            for d in range(out_per_group):
                got = y.array[:, g * out_per_group + d]
                want = x.array[:, g * shape[1] + d] if d < shape[1] else np.zeros_like(got)
                np.testing.assert_array_equal(got, want)
    if len(shape) == 3:
        y = nn.functional.conv1d(x, w, padding=1)
        np.testing.assert_array_equal(y.array, x.array)


def test_dirac_init_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        nn.init.dirac_(minigrad.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(minigrad.empty(5, 2, 3), groups=2)


def test_sparse_init():
    minigrad.manual_seed(0)
    w = nn.Parameter(minigrad.empty(200, 300))
    assert nn.init.sparse_(w, sparsity=0.15, std=0.02) is w
    zeros = (w.array == 0).sum(axis=0)
    assert (zeros == 30).all()  # ceil(0.15 * 200) in every column
    nonzero = w.array[w.array != 0]
    assert abs(nonzero.std() - 0.02) < 0.001 and abs(nonzero.mean()) < 0.001
    rows_hit = (w.array == 0).sum(axis=1)
    assert rows_hit.min() > 10 and rows_hit.max() < 90  # the zero rows differ from column to column
    assert ((nn.init.sparse_(minigrad.empty(7, 5), 0.3).array == 0).sum(axis=0) == 3).all()  # ceil(2.1)
    assert not nn.init.sparse_(minigrad.empty(4, 6), 1.0).array.any()
    assert (nn.init.sparse_(minigrad.empty(4, 6), 0.0).array != 0).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(minigrad.empty(2, 3, 4), 0.1)


def test_init_functions_exist_with_pytorchs_names(torch):
    """Every public in-place nn.init function of PyTorch's (its deprecated aliases, `normal` etc., lack the _)."""
    import inspect

    names = [n for n, f in vars(torch.nn.init).items()
             if n.endswith("_") and not n.startswith("_") and inspect.isfunction(f)]
    assert {"orthogonal_", "dirac_", "sparse_", "eye_", "trunc_normal_", "kaiming_normal_"} <= set(names)
    missing = [n for n in names if not hasattr(nn.init, n)]
    assert not missing, missing


# ---- Embedding's max_norm, norm_type, scale_grad_by_freq and sparse ---------------------------------------------------
@pytest.mark.parametrize("kw", [
    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}, {"max_norm": 2.0, "norm_type": float("inf")},
    {"scale_grad_by_freq": True}, {"max_norm": 1.5, "scale_grad_by_freq": True, "padding_idx": 0},
])
def test_embedding_options_vs_torch(torch, kw):
    w = np.random.default_rng(5).standard_normal((7, 4)) * 2
    ours = nn.Embedding(7, 4, _weight=minigrad.tensor(w.copy()), **kw)
    theirs = torch.nn.Embedding(7, 4, _weight=torch.tensor(w.copy()), **kw)
    assert repr(ours) == repr(theirs)
    ids = np.array([[1, 2, 2, 6], [0, 2, 5, 1]])
    y, ty = ours(minigrad.tensor(ids)), theirs(torch.tensor(ids))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    # max_norm renormalised the looked-up rows in the weight itself, as PyTorch's
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(6).standard_normal(y.shape)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_functional_embedding_max_norm_vs_torch(torch):
    w = np.random.default_rng(2).standard_normal((5, 3)) * 3
    ours, theirs = minigrad.tensor(w.copy()), torch.tensor(w.copy())
    ids = np.array([4, 1, 4])
    y = nn.functional.embedding(minigrad.tensor(ids), ours, max_norm=1.0)
    ty = torch.nn.functional.embedding(torch.tensor(ids), theirs, max_norm=1.0)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)  # rows 1 and 4 only


def test_embedding_repr_and_sparse(torch):
    assert repr(nn.Embedding(5, 3, norm_type=1.0)) == repr(torch.nn.Embedding(5, 3, norm_type=1.0))
    assert repr(nn.Embedding(5, 3, sparse=True)) == repr(torch.nn.Embedding(5, 3, sparse=True))


def test_embedding_scale_grad_by_freq_means_repeated_ids():
    # (not a true gradient, so no gradcheck: the values are the plain lookup's, the gradient is rescaled)
    w = minigrad.tensor(np.random.default_rng(1).standard_normal((4, 2)), requires_grad=True)
    ids = minigrad.tensor([[0, 3, 3], [3, 1, 0]])
    y = nn.functional.embedding(ids, w, scale_grad_by_freq=True)
    np.testing.assert_array_equal(y.detach().numpy(), w.detach().numpy()[ids.numpy()])
    y.sum().backward()
    # each looked-up row's gradient is the mean over its occurrences: ones
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [1, 1], [0, 0], [1, 1]])
