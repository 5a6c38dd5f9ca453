"""The modules of nn/_functional/composed*.py against PyTorch's: the same repr, state-dict keys and shapes,
and the same outputs and gradients from the same weights and inputs."""
import numpy as np
import pytest

import minigrad
import nn

RNG = np.random.default_rng(0)

# (class name, constructor args, input shapes); inputs are drawn in [-2, 2], except where noted in INPUTS
CASES = [
    ("Sigmoid", (), [(3, 4)]), ("Tanhshrink", (), [(3, 4)]), ("GLU", (), [(3, 4)]), ("GLU", (1,), [(2, 4, 3)]),
    ("Softmax", (1,), [(3, 4)]), ("LogSoftmax", (-1,), [(3, 4)]), ("Softmax2d", (), [(2, 3, 4, 4)]),
    ("Hardshrink", (), [(3, 4)]), ("Softshrink", (0.7,), [(3, 4)]), ("Threshold", (0.1, 20.0), [(3, 4)]),
    ("RReLU", (0.1, 0.3), [(3, 4)]), ("PReLU", (), [(2, 3, 4)]), ("PReLU", (3, 0.1), [(2, 3, 4)]),
    ("CosineSimilarity", (), [(3, 4), (3, 4)]), ("PairwiseDistance", (1.0,), [(3, 4), (3, 4)]),
    ("PixelShuffle", (2,), [(1, 8, 2, 3)]), ("PixelUnshuffle", (2,), [(1, 2, 4, 6)]), ("ChannelShuffle", (2,), [(2, 4, 3)]),
    ("Dropout1d", (0.3,), [(2, 3, 4)]), ("Dropout2d", (), [(2, 3, 4, 4)]), ("Dropout3d", (), [(2, 3, 2, 2, 2)]),
    ("AlphaDropout", (0.2,), [(3, 4)]), ("FeatureAlphaDropout", (0.2,), [(2, 3, 4)]), ("Unflatten", (1, (2, 3)), [(4, 6)]),
    ("MaxPool1d", (3,), [(2, 3, 9)]), ("MaxPool1d", (3, 2, 1), [(3, 10)]), ("AvgPool1d", (3, 2), [(2, 3, 9)]),
    ("AdaptiveAvgPool1d", (4,), [(2, 3, 10)]),
    ("InstanceNorm1d", (3,), [(2, 3, 5)]), ("InstanceNorm2d", (3,), [(3, 4, 4)]),
    ("InstanceNorm1d", (3, 1e-5, 0.1, True, True), [(2, 3, 5)]), ("GroupNorm", (2, 4), [(2, 4, 3)]),
    ("GroupNorm", (3, 6, 1e-3, False), [(2, 6, 2, 2)]), ("RMSNorm", (4,), [(3, 4)]), ("RMSNorm", ((2, 4), 1e-6), [(3, 2, 4)]),
    ("Bilinear", (3, 4, 2), [(5, 3), (5, 4)]), ("Bilinear", (3, 4, 2, False), [(5, 3), (5, 4)]),
    ("HuberLoss", (), [(3, 4), (3, 4)]), ("SoftMarginLoss", (), [(3, 4), "sign"]),
    ("MarginRankingLoss", (0.2,), [(5,), (5,), "sign"]), ("HingeEmbeddingLoss", (), [(5,), "sign"]),
    ("CosineEmbeddingLoss", (0.1,), [(5, 3), (5, 3), "sign5"]), ("TripletMarginLoss", (), [(5, 3), (5, 3), (5, 3)]),
    ("PoissonNLLLoss", (), [(3, 4), "counts"]), ("GaussianNLLLoss", (), [(3, 4), (3, 4), "positive"]),
    ("MultiLabelSoftMarginLoss", (), [(3, 4), "labels"]), ("MultiMarginLoss", (), [(5, 4), "classes"]),
]


def draw(spec, shapes):
    if spec == "sign":
        return RNG.choice([-1.0, 1.0], shapes[0])
    if spec == "sign5":
        return RNG.choice([-1.0, 1.0], 5)
    if spec == "counts":
        return RNG.integers(0, 5, shapes[0]).astype(np.float64)
    if spec == "positive":
        return RNG.uniform(0.1, 2.0, shapes[0])
    if spec == "labels":
        return RNG.integers(0, 2, shapes[0]).astype(np.float64)
    if spec == "classes":
        return RNG.integers(0, shapes[0][1], shapes[0][0])
    return RNG.uniform(-2, 2, spec)


@pytest.mark.parametrize("name, args, shapes", CASES)
def test_as_pytorch(torch, name, args, shapes):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, v), v2 in zip(ours.state_dict().items(), theirs.state_dict().values()):
        assert tuple(v.shape) == tuple(v2.shape), k
        if v.is_floating_point() and name not in ("Bilinear",):  # (Bilinear's init is random: bounds checked below)
            np.testing.assert_allclose(v.numpy(), v2.numpy(), err_msg=k)
    theirs.double()
    ours.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    ours.double()
    ours.eval()
    theirs.eval()  # (the random ones are compared in eval; tests/nn/test_functional_composed.py draws their noise)
    arrays = [draw(s, shapes) for s in shapes]
    outs = []
    for lib, m in ((minigrad, ours), (torch, theirs)):
        ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f" and (i == 0 or isinstance(shapes[i], tuple)))
              for i, a in enumerate(arrays)]
        y = m(*ts)
        (y * y).sum().backward()
        grads = [t.grad.numpy() for t in ts if t.requires_grad]
        outs.append((y.detach().numpy(), grads, [p.grad.numpy() for p in m.parameters()]))
    (y, g, pg), (ty, tg, tpg) = outs
    np.testing.assert_allclose(y, ty, rtol=1e-6, atol=1e-10)
    for a, b in zip(g + pg, tg + tpg):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)
    assert len(pg) == len(tpg)


def test_running_statistics_of_instance_norm(torch):
    x = RNG.uniform(-2, 2, (4, 3, 6))
    ours, theirs = nn.InstanceNorm1d(3, track_running_stats=True), torch.nn.InstanceNorm1d(3, track_running_stats=True)
    for _ in range(3):
        ours(minigrad.tensor(x, dtype=minigrad.float32))
        theirs(torch.tensor(x, dtype=torch.float32))
    for k in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, k).numpy(), getattr(theirs, k).numpy(), rtol=1e-5)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(minigrad.tensor(x, dtype=minigrad.float32)).numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).numpy(), rtol=1e-5, atol=1e-6)


def test_inits_and_training_modes():
    minigrad.manual_seed(0)
    b = nn.Bilinear(16, 4, 8)
    bound = 1 / np.sqrt(16)
    for p in (b.weight, b.bias):
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 3
    assert nn.PReLU(3, 0.1).weight.tolist() == pytest.approx([0.1] * 3)
    rrelu = nn.RReLU(0.1, 0.3)
    x = -minigrad.ones(1000)
    slopes = -rrelu(x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and np.unique(slopes).size > 100
    rrelu.eval()
    assert np.allclose(-rrelu(x).numpy(), 0.2)
    drop = nn.Dropout2d(0.5)
    y = drop(minigrad.ones(4, 8, 3, 3)).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    drop.eval()
    x = minigrad.ones(4, 8, 3, 3)
    assert drop(x) is x


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax"])
def test_softmax_modules_as_pytorch(torch, name):
    # the module's forward with a dim is the functional's: its values, dtype, grad_fn, gradients, its dim read
    # at each call (set after construction) and its errors
    x = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    got, want = [], []
    for lib, out in ((minigrad, got), (torch, want)):
        m = getattr(lib.nn, name)(dim=1)
        for dim in (1, -1, 0):
            m.dim = dim
            t = lib.tensor(x, requires_grad=True)
            y = m(t)
            (y * lib.tensor(x)).sum().backward()
            out.append((y.detach().numpy(), t.grad.numpy(), str(y.dtype).split(".")[-1], y.grad_fn.name(), repr(m)))
        m.dim = 3
        with pytest.raises(IndexError) as e:
            m(lib.tensor(x))
        out.append(str(e.value))
    for ours, theirs in zip(got, want):
        if isinstance(ours, str):
            assert ours == theirs
            continue
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-5)
        assert ours[2:] == theirs[2:]
