"""F.batch_norm and nn.BatchNorm1d / BatchNorm2d against PyTorch: values, gradients, running statistics
(momentum, cumulative average, eval mode), affine and track_running_stats, buffers in state_dict, errors."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def arr(*shape, dtype=np.float64):
    return (RNG.standard_normal(shape) * 2 + 1).astype(dtype)


def copy_to_torch(torch, m, tm):
    with torch.no_grad():
        for name, p in tm.named_parameters():
            p.copy_(torch.tensor(np.array(getattr(m, name).array)))


@pytest.mark.parametrize("cls,shape", [("BatchNorm2d", (4, 3, 5, 5)), ("BatchNorm1d", (6, 3)),
                                       ("BatchNorm1d", (4, 3, 7))])
@pytest.mark.parametrize("kw", [{}, {"momentum": 0.3}, {"momentum": None}, {"affine": False},
                                {"track_running_stats": False}, {"eps": 1e-3}, {"bias": False}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_module_train_then_eval_vs_torch(torch, cls, shape, kw, dtype):
    m, tm = getattr(nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
    if dtype == np.float64:
        m, tm = m.double(), tm.double()
    for p in m.parameters():  # non-trivial affine parameters
        p.array[...] = arr(3, dtype=dtype)
    copy_to_torch(torch, m, tm)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)
    for step in range(3):
        x = arr(*shape, dtype=dtype) * (step + 1)
        ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = m(ours), tm(theirs)
        assert y.grad_fn.name() == ty.grad_fn.name() == "NativeBatchNormBackward0"
        assert y.dtype == ours.dtype
        np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
        g = arr(*shape, dtype=dtype)
        y.backward(minigrad.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **tol)
        for name, p in tm.named_parameters():
            np.testing.assert_allclose(getattr(m, name).grad.array, p.grad.numpy(), **tol)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(m.state_dict()[k].array, v.numpy(), **tol)
        assert m.state_dict()[k].dtype.itemsize == v.element_size()
    m.eval()
    tm.eval()
    x = arr(*shape, dtype=dtype)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = m(ours), tm(theirs)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    y.backward(minigrad.tensor(x))
    ty.backward(torch.tensor(x))
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **tol)
    if m.num_batches_tracked is not None:
        assert m.num_batches_tracked.item() == 3


@pytest.mark.parametrize("training", [True, False])
def test_gradcheck(training):
    x = minigrad.tensor(arr(3, 2, 2, 2), requires_grad=True)
    w, b = minigrad.tensor(arr(2), requires_grad=True), minigrad.tensor(arr(2), requires_grad=True)
    rm, rv = minigrad.tensor(arr(2)), minigrad.tensor(np.abs(arr(2)) + 0.5)
    # running statistics are updated in place when training: pass none then (the batch's statistics normalize)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None if training else rm, None if training else rv, w, b,
                                                  training=training), (x, w, b))


@pytest.mark.parametrize("training", [True, False])
def test_gradgradcheck_and_second_derivative_vs_torch(torch, training):
    x, w, b = arr(3, 2, 2, 2), arr(2), arr(2)
    rm, rv = arr(2), np.abs(arr(2)) + 0.5
    ours = [minigrad.tensor(a, requires_grad=True) for a in (x, w, b)]

    def f(x, w, b, mod=F, T=minigrad.tensor):
        stats = (None, None) if training else (T(rm), T(rv))
        return mod.batch_norm(x, *stats, w, b, training=training) ** 2

    assert gradgradcheck(f, ours)
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    g = minigrad.autograd.grad(f(*ours).sum(), ours, create_graph=True)
    sum((t ** 2).sum() for t in g).backward()
    tg = torch.autograd.grad(f(*theirs, mod=torch.nn.functional, T=torch.tensor).sum(), theirs, create_graph=True)
    sum((t ** 2).sum() for t in tg).backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.array, t.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3, 4), (7, 3), (4, 3, 5, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True), (True, False, False), (False, True, False)])
def test_backward_on_arrays_equals_the_recorded_one_and_torchs(torch, kernels, shape, training, needs):
    # a backward with no graph of its own runs on arrays (a training step: the CPU backend's loops,
    # under MINIGRAD_KERNELS=fast), from forward's mean and 1/std; create_graph=True records it as ops of x:
    # the two agree, for each set of inputs that need a gradient, and with PyTorch's
    x, w, b, g = arr(*shape), arr(3), arr(3), arr(*shape)
    rm, rv = arr(3), np.abs(arr(3)) + 0.5

    def grads(create_graph, mod=F, T=minigrad.tensor, lib=minigrad):
        ins = [T(a, requires_grad=n) for a, n in zip((x, w, b), needs)]
        y = mod.batch_norm(ins[0], T(rm.copy()), T(rv.copy()), ins[1], ins[2], training=training)
        wanted = [t for t in ins if t.requires_grad]
        return [t.detach() for t in lib.autograd.grad(y, wanted, T(g), create_graph=create_graph)]

    on_arrays, recorded = grads(False), grads(True)
    theirs = grads(False, torch.nn.functional, torch.tensor, torch)
    if kernels == "fast" and minigrad.backends._team.available() and training:
        from minigrad.backends.cpu import batch_norm as kernel

        assert F.batch_norm(minigrad.tensor(x, requires_grad=True), None, None, training=True).grad_fn.impl is kernel
    assert len(on_arrays) == len(recorded) == len(theirs) == sum(needs)
    for a, r, t in zip(on_arrays, recorded, theirs):
        np.testing.assert_allclose(a.array, r.array, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(a.array, t.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(64, 16, 4, 4), (8, 5, 3, 7, 2), (32, 6, 9)])
@pytest.mark.parametrize("affine", [True, False])
def test_training_step_in_float32_kernel_and_numpy_paths_match_torch(torch, kernels, shape, affine):
    # (N, C, *) input: the backend's plane loops (MINIGRAD_KERNELS=fast) or numpy's reductions; the batch
    # statistics, y, the running statistics and the gradients against PyTorch's at float32 tolerance
    x = (arr(*shape) * 3 + 10).astype(np.float32)  # (a mean far from 0: a one-pass variance would lose it)
    g = arr(*shape).astype(np.float32)
    C = shape[1]
    ours, theirs = nn.BatchNorm2d(C, affine=affine), torch.nn.BatchNorm2d(C, affine=affine)
    if affine:
        w, b = arr(C).astype(np.float32), arr(C).astype(np.float32)
        with minigrad.no_grad():
            ours.weight.copy_(minigrad.tensor(w))
            ours.bias.copy_(minigrad.tensor(b))
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(w))
            theirs.bias.copy_(torch.tensor(b))
    ours._check_input_dim = theirs._check_input_dim = lambda x: None  # (any rank: the op is the same)
    xm, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours(xm), theirs(xt)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    close = dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y.detach().array, ty.detach().numpy(), **close)
    np.testing.assert_allclose(xm.grad.array, xt.grad.numpy(), **close)
    np.testing.assert_allclose(ours.running_mean.array, theirs.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.running_var.array, theirs.running_var.numpy(), rtol=1e-4)
    if affine:
        np.testing.assert_allclose(ours.weight.grad.array, theirs.weight.grad.numpy(), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(ours.bias.grad.array, theirs.bias.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_state_dict_round_trip_and_eval_uses_running_stats():
    m = nn.BatchNorm2d(2)
    for _ in range(4):
        m(minigrad.tensor(arr(8, 2, 3, 3)))
    m2 = nn.BatchNorm2d(2)
    m2.load_state_dict(m.state_dict())
    assert m2.num_batches_tracked.item() == 4 and m2.num_batches_tracked.dtype == minigrad.int64
    m.eval()
    m2.eval()
    x = minigrad.tensor(arr(2, 2, 3, 3))
    np.testing.assert_array_equal(m(x).array, m2(x).array)
    mean, var = m.running_mean.array[None, :, None, None], m.running_var.array[None, :, None, None]
    np.testing.assert_allclose(m(x).array, (x.array - mean) / np.sqrt(var + 1e-5), rtol=1e-5, atol=1e-6)


def test_errors_match_torch(torch):
    cases = [
        (lambda t, n: n.BatchNorm2d(4)(t.randn(4, 5, 5)), ValueError, r"expected 4D input \(got 3D input\)"),
        (lambda t, n: n.BatchNorm1d(4)(t.randn(4, 5, 5, 5)), ValueError, r"expected 2D or 3D input \(got 4D input\)"),
        (lambda t, n: n.BatchNorm1d(4)(t.randn(1, 4)), ValueError, "Expected more than 1 value per channel"),
        (lambda t, n: n.BatchNorm2d(4)(t.randn(2, 3, 5, 5)), RuntimeError, "running_mean should contain 3 elements"),
    ]
    for call, kind, match in cases:
        with pytest.raises(kind, match=match):
            call(torch, torch.nn)
        with pytest.raises(kind, match=match):
            call(minigrad, nn)


@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d", "InstanceNorm1d"])
def test_a_state_dict_without_num_batches_tracked_loads_as_in_torch(torch, cls):
    kw = {"track_running_stats": True} if cls.startswith("Instance") else {}
    ours, theirs = getattr(nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
    assert ours.state_dict()._metadata[""] == theirs.state_dict()._metadata[""]  # (the class's version: 2)
    ours.num_batches_tracked.fill_(5)
    theirs.num_batches_tracked.fill_(5)
    # a plain dict (no version: older than num_batches_tracked) keeps the layer's count
    plain = {k: v for k, v in ours.state_dict().items() if k != "num_batches_tracked"}
    result = ours.load_state_dict(plain)
    expected = theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in plain.items()})
    assert (result.missing_keys, result.unexpected_keys) == (expected.missing_keys, expected.unexpected_keys) == ([], [])
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 5
    # in a model: under the layer's prefix
    model = nn.Sequential(nn.Linear(3, 3), getattr(nn, cls)(3, **kw))
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    assert model.load_state_dict(state).missing_keys == []
    # a version-2 state dict (its _metadata says so) without the entry: a missing key, as PyTorch's
    versioned = ours.state_dict()
    del versioned["num_batches_tracked"]
    theirs_versioned = theirs.state_dict()
    del theirs_versioned["num_batches_tracked"]
    with pytest.raises(RuntimeError) as ours_err:
        ours.load_state_dict(versioned)
    with pytest.raises(RuntimeError) as theirs_err:
        theirs.load_state_dict(theirs_versioned)
    assert str(ours_err.value).split("\n", 1)[1] == str(theirs_err.value).split("\n", 1)[1]


# ---- BatchNorm3d and SyncBatchNorm (one process: BatchNorm over any rank) -----------------------------------------------
@pytest.mark.parametrize("cls,shape", [("BatchNorm3d", (3, 4, 2, 3, 2)), ("SyncBatchNorm", (3, 4, 5)),
                                       ("SyncBatchNorm", (5, 4)), ("SyncBatchNorm", (2, 4, 2, 2, 2, 2))])
def test_batchnorm3d_and_syncbatchnorm_vs_torch(cls, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, cls)(4, momentum=0.3), getattr(torch.nn, cls)(4, momentum=0.3)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for mode in ("train", "eval"):
        getattr(ours, mode)(), getattr(theirs, mode)()
        x = arr(*shape, dtype=np.float32)
        xo, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = ours(xo), theirs(xt)
        np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        g = arr(*shape, dtype=np.float32)
        y.backward(minigrad.tensor(g)), ty.backward(torch.tensor(g))
        np.testing.assert_allclose(xo.grad.array, xt.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours.running_var.array, theirs.running_var.numpy(), rtol=1e-5)


@pytest.mark.parametrize("cls,shape", [("BatchNorm3d", (2, 4, 3)), ("SyncBatchNorm", (4,))])
def test_batchnorm3d_and_syncbatchnorm_rank_errors_vs_torch(cls, shape):
    torch = pytest.importorskip("torch")
    for mode in ("train", "eval"):
        with pytest.raises(ValueError) as theirs:
            getattr(getattr(torch.nn, cls)(4), mode)()(torch.zeros(shape))
        with pytest.raises(ValueError) as ours:
            getattr(getattr(nn, cls)(4), mode)()(minigrad.zeros(shape))
        assert str(ours.value) == str(theirs.value)


def test_convert_sync_batchnorm_shares_parameters_statistics_and_mode():
    torch = pytest.importorskip("torch")

    def build(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4),
                              lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False)), lib.nn.InstanceNorm2d(4))
        m[1].eval()
        return m

    ours, theirs = build(minigrad), build(torch)
    weight, mean = ours[1].weight, ours[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(ours)
    assert converted is ours and repr(converted) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs))
    assert type(converted[1]) is nn.SyncBatchNorm and converted[1].weight is weight
    assert converted[1].running_mean is mean and not converted[1].training and converted[2][0].training
    assert type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2))) is nn.SyncBatchNorm
