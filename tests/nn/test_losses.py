"""The losses beyond cross_entropy (l1, smooth_l1, nll, binary_cross_entropy(_with_logits), kl_div, mse_loss),
one_hot, and the loss modules, against PyTorch: values, gradients for input and target, node names, dtypes,
finite differences (first and second), and bad input."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)
REDUCTIONS = ["mean", "sum", "none"]


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def prob(*shape, dtype=np.float64):
    return RNG.uniform(0.05, 0.95, shape).astype(dtype)


def log_prob(*shape, dtype=np.float64):
    x = arr(*shape, dtype=dtype)
    return (x - np.log(np.exp(x).sum(axis=1, keepdims=True))).astype(dtype)


def vs_torch(torch, name, arrays, dtype, grads=None, node=True, **kw):
    """F.<name>(*arrays, **kw) against PyTorch's; `grads`: which arrays are differentiable (default: floats)."""
    grads = grads or [a is not None and a.dtype.kind == "f" for a in arrays]
    ours = [None if a is None else minigrad.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    theirs = [None if a is None else torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning (both warn)
        y, ty = getattr(F, name)(*ours, **kw), getattr(torch.nn.functional, name)(*theirs, **kw)
    assert y.shape == tuple(ty.shape) and y.dtype == ours[0].dtype
    if node:
        assert y.grad_fn.name() == ty.grad_fn.name()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    g = arr(*y.shape, dtype=dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    for o, t, need in zip(ours, theirs, grads):
        if need:
            assert o.grad.dtype == o.dtype
            np.testing.assert_allclose(o.grad.array, t.grad.numpy(), **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["l1_loss", "mse_loss"])
def test_l1_and_mse(torch, name, reduction, dtype):
    vs_torch(torch, name, [arr(3, 4, dtype=dtype), arr(3, 4, dtype=dtype)], dtype, reduction=reduction)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_losses_of_empty_inputs(torch, name):
    # the mean of nothing is nan, without numpy's warning; the gradient is empty (mse_loss's backward divided
    # by 0; the others' warned of 1 / 0)
    for reduction in REDUCTIONS:
        x, tx = minigrad.zeros(0, 3, requires_grad=True), torch.zeros(0, 3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = getattr(F, name)(x, minigrad.zeros(0, 3), reduction=reduction)
            y.sum().backward()
        ty = getattr(torch.nn.functional, name)(tx, torch.zeros(0, 3), reduction=reduction)
        ty.sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
        assert x.grad.shape == tx.grad.shape


@pytest.mark.parametrize("name", ["l1_loss", "mse_loss"])
def test_l1_and_mse_weighted(torch, name):
    x, t, w = arr(3, 4), arr(3, 4), prob(3, 4)
    for reduction in REDUCTIONS:
        y = getattr(F, name)(minigrad.tensor(x), minigrad.tensor(t), reduction=reduction, weight=minigrad.tensor(w))
        ty = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t), reduction=reduction,
                                                weight=torch.tensor(w))
        np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.3, 0.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_smooth_l1(torch, reduction, beta, dtype):
    vs_torch(torch, "smooth_l1_loss", [arr(4, 5, dtype=dtype), arr(4, 5, dtype=dtype)], dtype, node=beta == 0,
             reduction=reduction, beta=beta)


def test_smooth_l1_node(torch):
    y = F.smooth_l1_loss(minigrad.tensor(arr(3), requires_grad=True), minigrad.tensor(arr(3)))
    assert y.grad_fn.name() == "SmoothL1LossBackward0"  # after the difference's SubBackward0 (PyTorch: its inputs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [1.0, 0.3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huber(torch, reduction, delta, dtype):
    # a DQN script's print(loss) shows the node: HuberLossBackward0, as PyTorch's
    vs_torch(torch, "huber_loss", [arr(4, 5, dtype=dtype), arr(4, 5, dtype=dtype)], dtype, reduction=reduction,
             delta=delta)


def test_huber_weighted(torch):
    x, t, w = arr(3, 4), arr(3, 4), prob(3, 4)
    for reduction in REDUCTIONS:
        y = F.huber_loss(minigrad.tensor(x), minigrad.tensor(t), reduction=reduction, delta=0.5, weight=minigrad.tensor(w))
        ty = torch.nn.functional.huber_loss(torch.tensor(x), torch.tensor(t), reduction=reduction, delta=0.5,
                                            weight=torch.tensor(w))
        np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-12)


NLL = [((5, 4), (5,)), ((4,), ()), ((2, 4, 3, 2), (2, 3, 2))]


@pytest.mark.parametrize("xs,ts", NLL)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_loss(torch, xs, ts, reduction, weighted, dtype):
    C = xs[1] if len(xs) > 1 else xs[0]
    t = RNG.integers(0, C, ts)
    if t.ndim:
        t.reshape(-1)[0] = -100  # one ignored target
    w = prob(C, dtype=dtype) if weighted else None
    x = log_prob(*xs, dtype=dtype) if len(xs) > 1 else arr(*xs, dtype=dtype)
    vs_torch(torch, "nll_loss", [x, t, w], dtype, grads=[True, False, False], reduction=reduction)


@pytest.mark.parametrize("xs,ts", NLL + [((1, 4), (1,))])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_loss_with_every_target_kept_is_the_masked_paths_bits(torch, xs, ts, reduction, dtype):
    # no weights and no ignored target (the usual) skips the masks; an ignore_index in range that no
    # target has takes the masked path: the two must agree bit for bit, and with PyTorch
    C = xs[1] if len(xs) > 1 else xs[0]
    t = RNG.integers(0, C - 1, ts)
    x = log_prob(*xs, dtype=dtype) if len(xs) > 1 else arr(*xs, dtype=dtype)
    out = []
    for ignore_index in (-100, C - 1):
        xt = minigrad.tensor(x, requires_grad=True)
        loss = F.nll_loss(xt, minigrad.tensor(t), ignore_index=ignore_index, reduction=reduction)
        loss.sum().backward()
        out.append((loss.detach().numpy(), xt.grad.numpy()))
    (l1, g1), (l2, g2) = out
    assert l1.dtype == dtype and l1.tobytes() == l2.tobytes() and g1.tobytes() == g2.tobytes()
    vs_torch(torch, "nll_loss", [x, t, None], dtype, grads=[True, False, False], reduction=reduction)


@pytest.mark.parametrize("xs,t,w", [((3, 5), [2, 2, 2], None), ((5,), 2, None), ((2, 5, 2), [[2, 2], [2, 2]], None),
                                     ((3, 5), [2, 1, 2], [0.0] * 5)])
def test_nll_loss_mean_of_nothing_weighed(torch, xs, t, w):
    # every target ignored (or weighed 0): the loss is 0 / 0, nan; the gradient is nan on the kept rows only,
    # 0 on the ignored ones (they were nan at column 0)
    x = arr(*xs, dtype=np.float32)
    grads = []
    for lib, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        xt = lib.tensor(x, requires_grad=True)
        loss = Fn.nll_loss(xt, lib.tensor(t), None if w is None else lib.tensor(w), ignore_index=2)
        loss.backward()
        assert np.isnan(loss.item())
        grads.append(xt.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("xs, ts, wdt", [((3, 4), [0, 1, 2], "float64"),
                                         ((3, 4, 2), [[0, 1], [1, 1], [2, 2]], "float16"), ((4,), 1, "int64")])
def test_class_weight_of_another_dtype_raises(torch, name, xs, ts, wdt):
    # PyTorch does not promote the weight (it was, a float32 loss from a float64 weight)
    def call(L):
        return getattr(L.nn.functional, name)(L.zeros(xs), L.tensor(ts), weight=L.ones(4, dtype=getattr(L, wdt)))

    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(minigrad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("xs, ts", [((2, 3, 4, 4), (2, 4, 5)), ((2, 3, 4, 4), (2, 16)), ((2, 3, 4, 4), (2, 4, 4, 4)),
                                    ((2, 3, 4), (2, 5)), ((2, 3, 4, 4, 4), (2, 4, 4, 5))])
def test_spatial_target_of_the_wrong_shape_raises_as_torch(torch, name, xs, ts):
    # a segmentation mask that does not fit the (N, C, H, W) logits: PyTorch's image kernel has its own words
    def call(L):
        return getattr(L.nn.functional, name)(L.zeros(xs), L.zeros(ts, dtype=L.int64))

    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(minigrad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda F, L, w: F.binary_cross_entropy(L.full((3,), 0.5), L.ones(3), weight=w),
    lambda F, L, w: F.binary_cross_entropy_with_logits(L.zeros(3), L.ones(3), weight=w),
    lambda F, L, w: F.binary_cross_entropy_with_logits(L.zeros(3), L.ones(3), pos_weight=w),
    lambda F, L, w: F.cross_entropy(L.zeros(2, 3), L.tensor([0, 2]), weight=w),
    lambda F, L, w: F.nll_loss(L.zeros(2, 3), L.tensor([0, 2]), weight=w),
    lambda F, L, w: F.nll_loss(L.zeros(2, 3, 4), L.zeros(2, 4, dtype=L.int64), weight=w),
    lambda F, L, w: F.multi_margin_loss(L.zeros(2, 3), L.tensor([0, 2]), weight=w),
])
def test_weights_that_require_grad_raise_as_torch(torch, call):
    # PyTorch gives these weights no gradient and refuses one that asks for it (they got None, or a gradient)
    with pytest.raises(RuntimeError) as theirs:
        call(torch.nn.functional, torch, torch.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        call(F, minigrad, minigrad.ones(3, requires_grad=True))
    assert str(ours.value) == str(theirs.value)
    with minigrad.no_grad():  # (nothing recorded: no error, as PyTorch)
        call(F, minigrad, minigrad.ones(3, requires_grad=True))


@pytest.mark.parametrize("shape, target", [((2, 4), [2, 1]), ((4,), 2), ((4,), [2])])
def test_nll_loss_of_an_ignored_target_is_plus_zero_as_torch(torch, shape, target):
    # reduction='none' prints an ignored row's loss: PyTorch writes 0, minigrad's -0 * x gave -0. ('tensor([-0., -5.])')
    seen = []
    for L, Fn in ((torch, torch.nn.functional), (minigrad, F)):
        x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        loss = Fn.nll_loss(x, L.tensor(target), reduction="none", ignore_index=2)
        seen.append((np.signbit(loss.numpy()).tolist(), loss.tolist(), str(loss).replace("minigrad", "torch")))
    assert seen[1] == seen[0]


def test_nll_loss_ignore_index_and_log_softmax_is_cross_entropy(torch):
    x, t = arr(6, 5), RNG.integers(0, 5, 6)
    t[2] = 3
    a = F.nll_loss(F.log_softmax(minigrad.tensor(x), 1), minigrad.tensor(t), ignore_index=3)
    b = F.cross_entropy(minigrad.tensor(x), minigrad.tensor(t), ignore_index=3)
    np.testing.assert_allclose(a.array, b.array, rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_cross_entropy(torch, reduction, weighted, dtype):
    vs_torch(torch, "binary_cross_entropy", [prob(3, 4, dtype=dtype), prob(3, 4, dtype=dtype),
                                             prob(4, dtype=dtype) if weighted else None], dtype,
             grads=[True, True, False], reduction=reduction)


def test_binary_cross_entropy_clamps_the_logs(torch):
    x, t = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5])
    y = F.binary_cross_entropy(minigrad.tensor(x), minigrad.tensor(t), reduction="none")
    ty = torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(t), reduction="none")
    np.testing.assert_allclose(y.array, ty.numpy())
    assert y.array[0] == 100.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_cross_entropy_with_logits(torch, reduction, weights, dtype):
    x = arr(3, 4, dtype=dtype) * 5
    x[0, 0], x[0, 1] = 60.0, -60.0  # no overflow either way
    vs_torch(torch, "binary_cross_entropy_with_logits",
             [x, prob(3, 4, dtype=dtype), prob(3, 4, dtype=dtype) if weights[0] else None],
             dtype, grads=[True, True, False], reduction=reduction)
    if weights[1]:  # pos_weight (C,), keyword
        pw = prob(4, dtype=dtype) * 3
        xs, ts = minigrad.tensor(x, requires_grad=True), minigrad.tensor(prob(3, 4, dtype=dtype), requires_grad=True)
        tx, tt = torch.tensor(x, requires_grad=True), torch.tensor(ts.array, requires_grad=True)
        y = F.binary_cross_entropy_with_logits(xs, ts, reduction=reduction, pos_weight=minigrad.tensor(pw))
        ty = torch.nn.functional.binary_cross_entropy_with_logits(tx, tt, reduction=reduction,
                                                                  pos_weight=torch.tensor(pw))
        tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
        g = arr(*y.shape, dtype=dtype)
        y.backward(minigrad.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(xs.grad.array, tx.grad.numpy(), **tol)
        np.testing.assert_allclose(ts.grad.array, tt.grad.numpy(), **tol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kl_div(torch, reduction, log_target, dtype):
    t = log_prob(4, 5, dtype=dtype) if log_target else np.exp(log_prob(4, 5)).astype(dtype)
    vs_torch(torch, "kl_div", [log_prob(4, 5, dtype=dtype), t], dtype, node=False, reduction=reduction,
             log_target=log_target)


def test_kl_div_negative_target_is_nan(torch):
    # PyTorch's xlogy(t, t) of a negative t is nan (it was taken as 0 log 0, a finite loss)
    x, t = [-1.0, -2.0, -0.5], [-0.5, 0.0, 0.7]
    ours = F.kl_div(minigrad.tensor(x), minigrad.tensor(t), reduction="none").numpy()
    theirs = torch.nn.functional.kl_div(torch.tensor(x), torch.tensor(t), reduction="none").numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)  # (nan where theirs is)


def test_kl_div_zero_target(torch):
    # 0 log 0 = 0 in value; the target's gradient there is finite (PyTorch's is NaN: d/dt t log t = log t + 1)
    x, t = log_prob(2, 3), np.exp(log_prob(2, 3))
    t[0, 0] = 0.0
    ours, ot = minigrad.tensor(x, requires_grad=True), minigrad.tensor(t, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y = F.kl_div(ours, ot, reduction="sum")
    ty = torch.nn.functional.kl_div(theirs, torch.tensor(t), reduction="sum")
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-12)
    y.backward()
    ty.backward()
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), rtol=1e-12)
    assert np.isfinite(ot.grad.array).all()


def test_kl_div_mean_warns_like_torch():
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(minigrad.tensor(log_prob(2, 3)), minigrad.tensor(prob(2, 3)))


@pytest.mark.parametrize("fn", [
    lambda x, t: F.l1_loss(x, t),
    lambda x, t: F.smooth_l1_loss(x, t, beta=0.7, reduction="sum"),
    lambda x, t: F.binary_cross_entropy(minigrad.sigmoid(x), minigrad.sigmoid(t)),
    lambda x, t: F.binary_cross_entropy_with_logits(x, minigrad.sigmoid(t), pos_weight=minigrad.tensor([2.0, 0.5, 1.0])),
    lambda x, t: F.kl_div(x, minigrad.sigmoid(t), reduction="batchmean"),
    lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
    lambda x, t: F.nll_loss(x, minigrad.tensor([0, 2, 1, -100])) * x.sum(),
])
def test_gradcheck_and_gradgradcheck(fn):
    x, t = minigrad.tensor(arr(4, 3), requires_grad=True), minigrad.tensor(arr(4, 3), requires_grad=True)
    x.array[np.abs(x.array - t.array) < 0.05] += 0.1  # away from smooth_l1's kink
    assert gradcheck(fn, (x, t))
    assert gradgradcheck(fn, (x, t))


@pytest.mark.parametrize("call", [
    lambda t, F: F.mse_loss(t.randn(3), t.randn(3), reduction="bad"),
    lambda t, F: F.l1_loss(t.randn(3), t.randn(2)),
    lambda t, F: F.l1_loss(t.randn(3), t.randn(3), reduction="avg"),
    lambda t, F: F.smooth_l1_loss(t.randn(3), t.randn(3), beta=-1),
    lambda t, F: F.nll_loss(t.randn(3, 4), t.tensor([0, 1])),
    lambda t, F: F.nll_loss(t.randn(3, 4), t.tensor([0, 1, 4])),
    lambda t, F: F.nll_loss(t.randn(3, 4), t.tensor([0.0, 1.0, 2.0])),
    lambda t, F: F.nll_loss(t.randn(3, 4, 5), t.tensor([0, 1, 2])),
    lambda t, F: F.nll_loss(t.randn(3, 4), t.tensor([0, 1, 2]), weight=t.ones(3)),
    lambda t, F: F.nll_loss(t.randn(()), t.tensor(1)),
    lambda t, F: F.nll_loss(t.randn(3, 4), t.tensor([0, 1, 2]), reduction="x"),
    lambda t, F: F.binary_cross_entropy(t.rand(3), t.rand(2)),
    lambda t, F: F.binary_cross_entropy(t.rand(3) + 1, t.rand(3)),
    lambda t, F: F.binary_cross_entropy_with_logits(t.rand(3), t.rand(2)),
    lambda t, F: F.kl_div(t.rand(3), t.rand(2)),
    lambda t, F: F.kl_div(t.rand(3), t.rand(3), reduction="x"),
    lambda t, F: F.one_hot(t.tensor([1.0])),
    lambda t, F: F.one_hot(t.tensor([-1])),
    lambda t, F: F.one_hot(t.tensor([3]), 3),
    lambda t, F: F.one_hot(t.tensor([], dtype=t.int64)),
    lambda t, F: F.l1_loss(t.randn(3), t.randn(3), weight=t.rand(1)),
])
def test_errors_match_torch_types(torch, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(torch, torch.nn.functional)
        with pytest.raises(type(theirs.value)) as ours:
            call(minigrad, F)
    assert len(str(ours.value)) > 15 and "\n" not in str(ours.value)


@pytest.mark.parametrize("x, t", [([0.5], [2.0]), ([0.5], [float("nan")]), ([float("nan")], [0.5]),
                                  ([0.5, 2.0], [-1.0, 0.5]), ([2.0, 0.5], [0.5, -1.0]), ([0.5], [-1e-7])])
def test_binary_cross_entropy_refuses_what_is_not_a_probability(torch, x, t):
    # a target outside [0, 1] (or NaN) was taken and gave a loss; PyTorch names the first bad element's side
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(t))
    with pytest.raises(RuntimeError) as ours:
        F.binary_cross_entropy(minigrad.tensor(x), minigrad.tensor(t))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda t, F: F.one_hot(t.tensor([1.0])),
    lambda t, F: F.one_hot(t.tensor([1], dtype=t.int32), 3),
    lambda t, F: F.one_hot(t.tensor([-1])),
    lambda t, F: F.one_hot(t.tensor([3]), 3),
    lambda t, F: F.one_hot(t.tensor([1, 2]), -3),
])
def test_one_hot_error_texts_are_torchs(torch, call):
    # (they named num_classes and the dtype besides)
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.nn.functional)
    with pytest.raises(RuntimeError) as ours:
        call(minigrad, F)
    assert str(ours.value) == str(theirs.value)


def test_one_hot_vs_torch(torch):
    for ids, n in (([0, 2, 1], -1), ([[1, 0], [3, 3]], 5), ([], 3)):
        ours = F.one_hot(minigrad.tensor(ids, dtype=minigrad.int64), n)
        theirs = torch.nn.functional.one_hot(torch.tensor(ids, dtype=torch.int64), n)
        assert ours.dtype == minigrad.int64 and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.array, theirs.numpy())


MODULES = [
    ("L1Loss", {}, "real"), ("MSELoss", {"reduction": "sum"}, "real"), ("SmoothL1Loss", {"beta": 0.5}, "real"),
    ("NLLLoss", {"ignore_index": 1}, "class"), ("CrossEntropyLoss", {"label_smoothing": 0.1}, "class"),
    ("BCELoss", {"reduction": "none"}, "prob"), ("BCEWithLogitsLoss", {}, "logit"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, "real"),
    ("MSELoss", {"size_average": False}, "real"),
]


@pytest.mark.parametrize("cls,kw,kind", MODULES)
def test_loss_modules_match_torch(torch, cls, kw, kind):
    x = log_prob(4, 3) if kind == "class" else prob(4, 3) if kind == "prob" else arr(4, 3)
    t = RNG.integers(0, 3, 4) if kind == "class" else prob(4, 3) if kind in ("prob", "logit") else arr(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # size_average's deprecation warning
        m, tm = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert m.reduction == tm.reduction and repr(m) == repr(tm)
    np.testing.assert_allclose(m(minigrad.tensor(x), minigrad.tensor(t)).array,
                               tm(torch.tensor(x), torch.tensor(t)).numpy(), rtol=1e-12, atol=1e-12)


def test_weights_are_buffers_in_the_state_dict(torch):
    w = prob(3)
    for cls, kw in (("CrossEntropyLoss", {"weight": w}), ("NLLLoss", {"weight": w}), ("BCELoss", {"weight": w}),
                    ("BCEWithLogitsLoss", {"weight": w, "pos_weight": w})):
        m = getattr(nn, cls)(**{k: minigrad.tensor(v) for k, v in kw.items()})
        tm = getattr(torch.nn, cls)(**{k: torch.tensor(v) for k, v in kw.items()})
        assert list(m.state_dict()) == list(tm.state_dict())
    x, t = arr(5, 3), RNG.integers(0, 3, 5)
    np.testing.assert_allclose(
        nn.CrossEntropyLoss(weight=minigrad.tensor(w))(minigrad.tensor(x), minigrad.tensor(t)).array,
        torch.nn.CrossEntropyLoss(weight=torch.tensor(w))(torch.tensor(x), torch.tensor(t)).numpy(), rtol=1e-12)


def test_bad_reduction_in_a_module():
    m = nn.L1Loss(reduction="avg")  # built as PyTorch's is: the call names the bad reduction
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        m(minigrad.zeros(2), minigrad.zeros(2))


# ---- cross_entropy with class-probability targets (a float target of input's shape) ----------------------
SOFT_SHAPES = [(5,), (4, 3), (2, 4, 3), (2, 3, 2, 2)]


def soft_vs_torch(torch, xs, dtype, reduction="mean", weighted=False, label_smoothing=0.0, target_dtype=None):
    """F.cross_entropy(input, probabilities) against PyTorch's: value, dtype, shape, and the gradients of
    input and target (both require grad)."""
    x, t = arr(*xs, dtype=dtype), prob(*xs, dtype=target_dtype or dtype)
    C = xs[0] if len(xs) == 1 else xs[1]
    w = prob(C, dtype=dtype) if weighted else None
    ours = [minigrad.tensor(x, requires_grad=True), minigrad.tensor(t, requires_grad=True)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(t, requires_grad=True)]
    kw = dict(reduction=reduction, label_smoothing=label_smoothing)
    y = F.cross_entropy(*ours, weight=None if w is None else minigrad.tensor(w), **kw)
    ty = torch.nn.functional.cross_entropy(*theirs, weight=None if w is None else torch.tensor(w), **kw)
    assert y.shape == tuple(ty.shape) and str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    low = np.float32 in (dtype, target_dtype)
    tol = dict(rtol=2e-5, atol=1e-6) if low else dict(rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    g = arr(*y.shape, dtype=y.array.dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    for o, th in zip(ours, theirs):
        assert o.grad.dtype == o.dtype and o.grad.shape == o.shape
        np.testing.assert_allclose(o.grad.array, th.grad.numpy(), **tol)


@pytest.mark.parametrize("xs", SOFT_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_probability_targets(torch, xs, reduction, dtype):
    soft_vs_torch(torch, xs, dtype, reduction)


@pytest.mark.parametrize("xs", [(4, 3), (2, 4, 3)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,label_smoothing", [(True, 0.0), (False, 0.25), (True, 0.1), (True, 1.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_probability_targets_weight_and_smoothing(torch, xs, reduction, weighted, label_smoothing,
                                                                dtype):
    soft_vs_torch(torch, xs, dtype, reduction, weighted, label_smoothing)


def test_cross_entropy_probability_targets_promote_like_torch(torch):
    soft_vs_torch(torch, (4, 3), np.float32, target_dtype=np.float64)  # float64 loss, as PyTorch
    soft_vs_torch(torch, (4, 3), np.float64, "sum", target_dtype=np.float32)


def test_cross_entropy_probability_targets_module_and_reference_kernels(torch):
    x, t, w = arr(6, 4), prob(6, 4), prob(4)
    want = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.2)(torch.tensor(x), torch.tensor(t))
    m = nn.CrossEntropyLoss(weight=minigrad.tensor(w), label_smoothing=0.2)
    np.testing.assert_allclose(m(minigrad.tensor(x), minigrad.tensor(t)).array, want.numpy(), rtol=1e-12)
    from minigrad import backends

    with backends.kernels("reference"):  # the reference cross_entropy takes class ids; these stay as they are
        np.testing.assert_allclose(m(minigrad.tensor(x), minigrad.tensor(t)).array, want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda F, L: F.cross_entropy(L.zeros(3, 4), L.ones(3, 4), ignore_index=1),
    lambda F, L: F.cross_entropy(L.zeros(3, 4), L.ones(3, 4), weight=L.ones(3)),
    lambda F, L: F.cross_entropy(L.zeros(3, 4), L.ones(3, 4), label_smoothing=1.5),
    lambda F, L: F.cross_entropy(L.zeros(3, 4), L.tensor([0, 1, 2]), label_smoothing=1.5),  # class ids: RuntimeError
    lambda F, L: F.cross_entropy(L.tensor(1.0), L.tensor(1.0)),
])
def test_cross_entropy_probability_target_errors_like_torch(torch, call):
    with pytest.raises(Exception) as want:
        call(torch.nn.functional, torch)
    with pytest.raises(want.type, match=None) as got:
        call(F, minigrad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("call", [
    lambda F, L: F.cross_entropy(L.zeros(4, 3), L.tensor([0, 1, 2, 3])),
    lambda F, L: F.nll_loss(L.zeros(4, 3), L.tensor([0, 9, 7, 1]), ignore_index=9),
    lambda F, L: F.nll_loss(L.zeros(2, 3, 2, 2), L.full((2, 2, 2), -2)),
    lambda F, L: F.cross_entropy(L.zeros(3), L.tensor(4)),
    lambda F, L: F.cross_entropy(L.zeros(2, 3), L.tensor([0, 7]), weight=L.ones(3), label_smoothing=0.1),
])
def test_class_id_out_of_range_is_pytorchs_text(torch, call):
    # a translation script's NLLLoss over a vocabulary one id too small: PyTorch's words, nothing added
    with pytest.raises(IndexError) as want:
        call(torch.nn.functional, torch)
    with pytest.raises(IndexError) as got:
        call(F, minigrad)
    assert str(got.value) == str(want.value)


def test_cross_entropy_probability_targets_without_torch():
    x = minigrad.tensor(arr(5, 4), requires_grad=True)
    ids = minigrad.tensor(RNG.integers(0, 4, 5))
    onehot = F.one_hot(ids, 4).to(minigrad.float64)
    for reduction in REDUCTIONS:  # one-hot probabilities are the class ids
        np.testing.assert_allclose(F.cross_entropy(x, onehot, reduction=reduction).array,
                                   F.cross_entropy(x, ids, reduction=reduction).array, rtol=1e-12)
    # a uniform target: log-sum-exp minus the mean logit, per sample
    u = minigrad.full((5, 4), 0.25, dtype=minigrad.float64)
    want = minigrad.logsumexp(x, 1) - x.mean(1)
    np.testing.assert_allclose(F.cross_entropy(x, u, reduction="none").array, want.array, rtol=1e-12)
    # (N, C, d) 'mean' divides by N*d, whatever the weights
    x3, t3, w = arr(2, 3, 4), prob(2, 3, 4), prob(3)
    per = F.cross_entropy(minigrad.tensor(x3), minigrad.tensor(t3), weight=minigrad.tensor(w), reduction="none")
    assert per.shape == (2, 4)
    mean = F.cross_entropy(minigrad.tensor(x3), minigrad.tensor(t3), weight=minigrad.tensor(w))
    np.testing.assert_allclose(mean.array, per.array.sum() / 8, rtol=1e-12)
    # finite differences for the input and the target, and for the smoothed, weighted form
    xg, tg = minigrad.tensor(x3, requires_grad=True), minigrad.tensor(t3, requires_grad=True)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, weight=minigrad.tensor(w), label_smoothing=0.3), (xg, tg))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_loss_of_one_sample_a_letter_at_a_time(torch, dtype):
    # a sample at a time (the char-RNN tutorials' loop): one row, one target, summed over the letters
    # into a running loss; its value and gradient as PyTorch's, and an id outside the classes refused
    # as PyTorch refuses it, whichever path the checks take
    xs = [log_prob(1, 6, dtype=dtype) for _ in range(4)]
    ts = [RNG.integers(0, 6, (1,)) for _ in range(4)]
    sums = []
    for lib in (minigrad, torch):
        ins = [lib.tensor(x, requires_grad=True) for x in xs]
        total = lib.zeros(1, dtype=ins[0].dtype)
        for x, t in zip(ins, ts):
            total += (F if lib is minigrad else torch.nn.functional).nll_loss(x, lib.tensor(t))
        total.backward()
        sums.append((total.detach().numpy(), [x.grad.numpy() for x in ins]))
        if lib is minigrad:
            assert total.grad_fn.name() == "AddBackward0" and total._version == 4
    np.testing.assert_array_equal(sums[0][0], sums[1][0])
    for ours, theirs in zip(sums[0][1], sums[1][1]):
        np.testing.assert_array_equal(ours, theirs)
    for bad in (6, -1):
        with pytest.raises(IndexError) as ours:
            F.nll_loss(minigrad.tensor(xs[0]), minigrad.tensor([bad]))
        with pytest.raises(IndexError) as theirs:
            torch.nn.functional.nll_loss(torch.tensor(xs[0]), torch.tensor([bad]))
        assert str(ours.value).startswith(str(theirs.value)[:-1])  # (ours goes on to name the range and where)


def test_nllloss2d_is_nllloss_under_its_deprecated_name():
    torch = pytest.importorskip("torch")
    with pytest.warns(FutureWarning) as ours:
        loss = nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning) as theirs:
        tloss = torch.nn.NLLLoss2d(ignore_index=1)
    assert str(ours[0].message) == str(theirs[0].message)
    assert isinstance(loss, nn.NLLLoss) and repr(loss) == repr(tloss)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    t = np.random.default_rng(1).integers(0, 3, (2, 4, 5))
    np.testing.assert_allclose(loss(minigrad.tensor(x), minigrad.tensor(t)).item(),
                               tloss(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-12)


def multilabel_targets(N, C):
    """Each row: some distinct ids (a repeat in row 0), then -1, then ids past the -1 that must not count."""
    t = np.stack([RNG.permutation(C) for _ in range(N)])
    for n in range(N):
        t[n, n % (C - 1) + 1] = -1
    t[0, 1:3] = [t[0, 0], -1]  # a repeated target counts twice, as in PyTorch
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multilabel_margin_loss(torch, reduction, dtype):
    x = arr(5, 6, dtype=dtype) * 0.5
    vs_torch(torch, "multilabel_margin_loss", [x, multilabel_targets(5, 6)], dtype, grads=[True, False],
             reduction=reduction)
    vs_torch(torch, "multilabel_margin_loss", [x[1], multilabel_targets(5, 6)[1]], dtype, grads=[True, False],
             reduction=reduction)
    m, tm = nn.MultiLabelMarginLoss(reduction=reduction), torch.nn.MultiLabelMarginLoss(reduction=reduction)
    t = multilabel_targets(5, 6)
    np.testing.assert_allclose(m(minigrad.tensor(x), minigrad.tensor(t)).numpy(),
                               tm(torch.tensor(x), torch.tensor(t)).numpy(), rtol=1e-5)


def test_multilabel_margin_loss_errors(torch):
    x, t = arr(2, 4), np.array([[3, 0, -1, 1], [1, 1, 2, -1]])
    for a, b in [(x, t[:, :3]), (x, t.astype(np.float32)), (x, np.array([[4, 0, -1, 1], [1, 1, 2, -1]])),
                 (x[None], t[None])]:
        msgs = []
        for lib in (minigrad, torch):
            with pytest.raises(RuntimeError) as e:
                lib.nn.functional.multilabel_margin_loss(lib.tensor(a), lib.tensor(b))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_the_one_id_of_a_1d_input_given_as_a_1d_target(torch, name, reduction):
    # a CBOW's `sum(self.embeddings(inputs))` without .view(1, -1) gives (C,) scores for the target [id]: PyTorch's
    # forward takes it (a 0-d loss; it raised here) and its backward refuses; [i, j] is refused at once
    x = arr(5, dtype=np.float32)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y = getattr(F, name)(ours, minigrad.tensor([3]), reduction=reduction)
    ty = getattr(torch.nn.functional, name)(theirs, torch.tensor([3]), reduction=reduction)
    assert y.shape == tuple(ty.shape) == ()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError) as theirs_err:
        ty.backward()
    with pytest.raises(RuntimeError) as ours_err:
        y.backward()
    assert str(ours_err.value) == str(theirs_err.value)
    for lib, f in ((minigrad, F), (torch, torch.nn.functional)):
        with pytest.raises(ValueError, match=r"^For 1D input, 1D target must have size 1, but got target size: 2$"):
            getattr(f, name)(lib.tensor(x), lib.tensor([3, 1]), reduction=reduction)
    with pytest.raises(RuntimeError) as theirs_err:
        torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor([3]), label_smoothing=0.1)
    with pytest.raises(RuntimeError) as ours_err:
        F.cross_entropy(minigrad.tensor(x), minigrad.tensor([3]), label_smoothing=0.1)
    assert str(ours_err.value) == str(theirs_err.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_smooth_l1_terms_have_torchs_bits_and_the_reductions_sum_them(dtype, beta):
    # beta 1 skips its division (x / 1 is x, bit for bit): the terms are PyTorch's whatever beta, infinities,
    # NaN and -0.0 included; 'mean' is their numpy sum divided by their number, in the input's dtype
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    for shape in [(), (32, 1), (7, 5)]:
        x, y = ((rng.standard_normal(shape) * 2).astype(dtype) for _ in range(2))
        if x.size > 1:
            x.reshape(-1)[:5], y.reshape(-1)[:5] = [np.nan, -np.inf, -0.0, 0.0, 1.0], [0.0, 1.0, 0.0, -0.0, 1.5]
        want = torch.nn.functional.smooth_l1_loss(torch.tensor(x), torch.tensor(y), reduction="none", beta=beta).numpy()
        terms = F.smooth_l1_loss(minigrad.tensor(x), minigrad.tensor(y), reduction="none", beta=beta).numpy()
        assert terms.dtype == want.dtype
        np.testing.assert_array_equal(terms, want)
        assert np.signbit(terms).tolist() == np.signbit(want).tolist()
        mean = F.smooth_l1_loss(minigrad.tensor(x), minigrad.tensor(y), beta=beta)
        assert mean.dtype == minigrad.tensor(x).dtype and mean.shape == ()
        np.testing.assert_array_equal(mean.numpy(), np.asarray(terms.sum() / terms.size, dtype=dtype))
