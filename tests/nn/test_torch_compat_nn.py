"""nn's warnings and error texts against PyTorch's: losses, softmax's implicit dim, init, utils, optim, Linear
and Embedding. Each compares with torch where it is installed (the texts below are torch 2.13's)."""
import re
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

BROADCAST = (r"Using a target size \({t}\) that is different to the input size \({i}\)\. This will likely lead to "
             r"incorrect results due to broadcasting\. Please ensure they have the same size\.")


def _torch():
    return pytest.importorskip("torch")


def _error(fn):
    """(type name, text) of what fn raises."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def _no_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


# ---- 1. the losses' broadcasting warning and error ------------------------------------------------------
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_loss_broadcast_warning_and_error(name):
    fn = getattr(F, name)
    x, y = minigrad.randn(4, 3), minigrad.randn(4, 1)
    with pytest.warns(UserWarning, match=BROADCAST.format(t=r".*Size\(\[4, 1\]\)", i=r".*Size\(\[4, 3\]\)")):
        fn(x, y)
    with pytest.warns(UserWarning, match="Using a target size"), \
            pytest.raises(RuntimeError, match=r"^The size of tensor a \(4\) must match the size of tensor b \(5\) "
                                              r"at non-singleton dimension 0"):
        fn(x, minigrad.randn(5, 3))
    _no_warning(lambda: fn(x, x))  # the same shapes: no warning


def test_mse_loss_broadcast_value_and_module():
    torch = _torch()
    rng = np.random.default_rng(50)  # its own data, not the global generator's state the tests before left
    x, y = rng.random((4, 3)).astype(np.float32), rng.random(3).astype(np.float32)
    with pytest.warns(UserWarning, match="Using a target size"):
        got = nn.MSELoss()(minigrad.tensor(x), minigrad.tensor(y))
    with pytest.warns(UserWarning, match="Using a target size"):
        want = torch.nn.MSELoss()(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)


def test_mse_loss_warning_points_at_the_caller():
    with pytest.warns(UserWarning, match="Using a target size") as record:
        F.mse_loss(minigrad.randn(3), minigrad.tensor(1.0))
    assert record[0].filename == __file__


# ---- 2. size_average / reduce --------------------------------------------------------------------------
@pytest.mark.parametrize("make, reduction", [
    (lambda m: m.MSELoss(size_average=False), "sum"),
    (lambda m: m.CrossEntropyLoss(reduce=False), "none"),
    (lambda m: m.NLLLoss(size_average=True), "mean"),
    (lambda m: m.L1Loss(reduce=True, size_average=False), "sum"),
    (lambda m: m.BCELoss(reduce=False, size_average=True), "none"),
    (lambda m: m.KLDivLoss(size_average=False), "sum"),
])
def test_deprecated_size_average_and_reduce(make, reduction):
    torch = _torch()
    text = f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead."
    with pytest.warns(UserWarning, match=f"^{text}$".replace("(", r"\(").replace(")", r"\)")):
        ours = make(nn)
    with pytest.warns(UserWarning, match="size_average and reduce args"):
        theirs = make(torch.nn)
    assert ours.reduction == theirs.reduction == reduction
    _no_warning(lambda: nn.MSELoss(reduction=reduction))


def test_deprecated_args_of_functional_losses():
    x, t = minigrad.randn(4, 3), minigrad.tensor([0, 1, 2, 0])
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        s = F.mse_loss(x, x + 1, size_average=False)
    assert s.item() == pytest.approx(12.0)
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.cross_entropy(x, t, reduce=False).shape == (4,)
    with pytest.warns(UserWarning, match=r"reduction='elementwise_mean' is deprecated\. Please use reduction='mean'"):
        assert F.mse_loss(x, x + 1, reduction="elementwise_mean").item() == pytest.approx(1.0)


def test_kl_div_with_the_deprecated_args():
    torch = _torch()
    rng = np.random.default_rng(97)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.random((4, 3)).astype(np.float32)
    for kw in ({"size_average": False, "reduction": "batchmean"}, {"reduce": False, "reduction": "batchmean"},
               {"size_average": True}):
        with pytest.warns(UserWarning, match="size_average and reduce args") as ours:
            got = F.kl_div(minigrad.tensor(x), minigrad.tensor(y), **kw)
        with pytest.warns(UserWarning) as theirs:
            want = torch.nn.functional.kl_div(torch.tensor(x), torch.tensor(y), **kw)
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]  # (no 'mean' warning)
        np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# ---- 3. cross_entropy's and nll_loss's targets --------------------------------------------------------
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("xs, t", [
    ((4, 3), lambda m: m.tensor([0.0, 1, 2, 0])),  # float ids
    ((4, 3), lambda m: m.tensor([0.0, 1, 2, 0], dtype=m.float64)),
    ((4, 3), lambda m: m.tensor([True, False, True, True])),
    ((2, 3, 4), lambda m: m.zeros(2, 4)),
    ((4, 3), lambda m: m.zeros(3)),  # the batch size first
    ((4, 3), lambda m: m.zeros(4, 2, dtype=m.int64)),  # then the shape
    ((4, 3), lambda m: m.zeros(4, 3, dtype=m.int64)),  # int ids of input's shape: probabilities for cross_entropy
    ((2, 3, 4), lambda m: m.zeros(2, 5)),
    ((3,), lambda m: m.tensor(1.0)),
    ((4, 3), lambda m: m.tensor(0)),
])
def test_class_target_errors(fn, xs, t):
    torch = _torch()
    x = np.random.default_rng(124).standard_normal(xs).astype(np.float32)
    want = _error(lambda: getattr(torch.nn.functional, fn)(torch.tensor(x), t(torch)))
    assert _error(lambda: getattr(F, fn)(minigrad.tensor(x), t(minigrad))) == want


def test_cross_entropy_float_target_of_input_shape_is_probabilities():
    x = minigrad.randn(4, 3)
    p = minigrad.softmax(minigrad.randn(4, 3), dim=1)
    np.testing.assert_allclose(F.cross_entropy(x, p).item(), -(F.log_softmax(x, 1) * p).sum(1).mean().item(),
                               rtol=1e-6)


# ---- 4. softmax's implicit dim -----------------------------------------------------------------------
IMPLICIT = r"^Implicit dimension choice for {} has been deprecated\. Change the call to include dim=X as an argument\.$"


@pytest.mark.parametrize("name, module", [("softmax", "Softmax"), ("log_softmax", "LogSoftmax"),
                                          ("softmin", "Softmin")])
def test_softmax_implicit_dim_warns(name, module):
    torch = _torch()
    x = np.random.default_rng(144).standard_normal((2, 3, 4, 5)).astype(np.float32)  # 4-d: dim 1, 3-d: dim 0
    for xs in (x, x[0]):
        with pytest.warns(UserWarning, match=IMPLICIT.format(name)) as record:
            got = getattr(F, name)(minigrad.tensor(xs))
        assert record[0].filename == __file__  # the user's line
        with pytest.warns(UserWarning, match=IMPLICIT.format(name)):
            want = getattr(torch.nn.functional, name)(torch.tensor(xs))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        with pytest.warns(UserWarning, match=IMPLICIT.format(name)):
            got = getattr(nn, module)()(minigrad.tensor(xs))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    _no_warning(lambda: getattr(F, name)(minigrad.tensor(x), 1))
    _no_warning(lambda: getattr(nn, module)(dim=-1)(minigrad.tensor(x)))


# ---- 5. nn.init: generator= and the deprecated names ----------------------------------------------------
INITS = [("uniform_", {}), ("normal_", {}), ("trunc_normal_", {}), ("xavier_uniform_", {}), ("xavier_normal_", {}),
         ("kaiming_uniform_", {}), ("kaiming_normal_", {}), ("orthogonal_", {}), ("sparse_", {"sparsity": 0.5})]


@pytest.mark.parametrize("name, kw", INITS)
def test_init_draws_from_the_given_generator(name, kw):
    fn = getattr(nn.init, name)
    before = minigrad.random.get_rng_state()
    a = fn(minigrad.empty(6, 5), generator=minigrad.Generator().manual_seed(7), **kw)
    b = fn(minigrad.empty(6, 5), generator=minigrad.Generator().manual_seed(7), **kw)
    c = fn(minigrad.empty(6, 5), generator=minigrad.Generator().manual_seed(8), **kw)
    assert minigrad.random.get_rng_state() == before  # the default stream is left alone
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_init_generator_keyword_as_pytorch():
    torch = _torch()
    import inspect

    for name, _ in INITS:
        ours, theirs = inspect.signature(getattr(nn.init, name)), inspect.signature(getattr(torch.nn.init, name))
        assert list(ours.parameters) == list(theirs.parameters), name


@pytest.mark.parametrize("name, kw", INITS + [("kaiming_uniform_", {"mode": "bad"})])
def test_init_of_empty_tensors_and_bad_modes_as_pytorch(name, kw):
    # a layer of width 0 (a sweep's edge case): PyTorch's kaiming functions say initialising it is a no-op
    torch = _torch()
    seen = []
    for lib in (minigrad, torch):
        t = lib.empty(0, 3) if "mode" not in kw else lib.empty(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = (getattr(lib.nn.init, name)(t, **kw) is t, list(t.shape))
            except Exception as e:  # noqa: BLE001 (the error is what is compared)
                out = (type(e).__name__, str(e))
        seen.append((out, [(w.category, str(w.message)) for w in caught]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("old, args", [("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("eye", ()),
                                       ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                                       ("kaiming_normal", ()), ("orthogonal", ()), ("sparse", (0.5,)),
                                       ("dirac", ())])
def test_init_deprecated_names_warn(old, args):
    torch = _torch()
    shape = (4, 4, 3) if old == "dirac" else (4, 6)
    text = f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."
    with pytest.warns(FutureWarning) as theirs:
        getattr(torch.nn.init, old)(torch.empty(*shape), *args)
    assert str(theirs[0].message) == text
    t = minigrad.empty(*shape)
    with pytest.warns(FutureWarning, match=f"^{text}$") as ours:
        assert getattr(nn.init, old)(t, *args) is t
    assert ours[0].filename == __file__
    if old == "constant":
        assert (t.numpy() == 0.5).all()


# ---- 6. nn.utils: clip_grad_norm, get_total_norm, clip_grads_with_norm_ -----------------------------------
def _with_grads(m, grads):
    params = []
    for g in grads:
        p = m.nn.Parameter(m.zeros(len(g)))
        p.grad = m.tensor(g)
        params.append(p)
    return params


class _Mg:  # minigrad under the names the tests give torch
    nn = nn
    zeros = staticmethod(minigrad.zeros)
    tensor = staticmethod(minigrad.tensor)


def test_clip_grad_norm_is_deprecated():
    torch = _torch()
    text = "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`."
    with pytest.warns(FutureWarning) as theirs:
        want = torch.nn.utils.clip_grad_norm(_with_grads(torch, [[3.0, 4.0]]), 1.0)
    assert str(theirs[0].message) == text
    params = _with_grads(_Mg, [[3.0, 4.0]])
    with pytest.warns(FutureWarning, match=f"^{text}$"):
        got = nn.utils.clip_grad_norm(params, 1.0, norm_type=2.0, error_if_nonfinite=False, foreach=None)
    assert got.item() == pytest.approx(want.item())
    np.testing.assert_allclose(params[0].grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_clip_grad_norm_of_an_empty_generator_warns():
    with pytest.warns(UserWarning, match=r"^`parameters` is an empty generator, no gradient clipping will occur\.$"):
        assert nn.utils.clip_grad_norm_((p for p in []), 1.0).item() == 0.0
    _no_warning(lambda: nn.utils.clip_grad_norm_([], 1.0))


@pytest.mark.parametrize("grads", [[[3.0, 4.0], [12.0]], [[0.1, 0.2]], [[1.0, np.inf]], [[1.0, np.nan]]])
@pytest.mark.parametrize("norm_type", [2.0, 1, "inf"])
def test_get_total_norm_and_clip_grads_with_norm(grads, norm_type):
    torch = _torch()
    ours, theirs = _with_grads(_Mg, grads), _with_grads(torch, grads)
    got = nn.utils.get_total_norm([p.grad for p in ours], norm_type, foreach=None)
    want = torch.nn.utils.get_total_norm([p.grad for p in theirs], norm_type)
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
    assert nn.utils.clip_grads_with_norm_(ours, 1.0, got, foreach=None) is None
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0, want)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5)
    if not np.isfinite(want.item()):
        assert _error(lambda: nn.utils.get_total_norm([p.grad for p in ours], norm_type, error_if_nonfinite=True)) == \
            _error(lambda: torch.nn.utils.get_total_norm([p.grad for p in theirs], norm_type, error_if_nonfinite=True))


def test_get_total_norm_of_one_tensor_and_of_none():
    assert nn.utils.get_total_norm(minigrad.tensor([3.0, 4.0])).item() == pytest.approx(5.0)
    assert nn.utils.get_total_norm([]).item() == 0.0
    p = _with_grads(_Mg, [[3.0, 4.0]])[0]
    nn.utils.clip_grads_with_norm_(p, 2.0, minigrad.tensor(5.0))
    np.testing.assert_allclose(p.grad.numpy(), [1.2, 1.6], rtol=1e-5)
    nn.utils.clip_grad_value_([p], 0.5, foreach=None)
    np.testing.assert_allclose(p.grad.numpy(), [0.5, 0.5])


# ---- 7. optimizers' repr and defaults; the schedulers' warnings ------------------------------------------
@pytest.mark.parametrize("name, kw", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                                      ("Adam", {"lr": 0.1}), ("AdamW", {}), ("RMSprop", {}), ("Adagrad", {})])
def test_optimizer_repr_and_group_defaults_as_pytorch(name, kw):
    torch = _torch()
    ours = getattr(nn.optim, name)([nn.Parameter(minigrad.ones(2))], **kw)
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **kw)
    ours.add_param_group({"params": [nn.Parameter(minigrad.ones(1))], "lr": 0.5})
    theirs.add_param_group({"params": [torch.nn.Parameter(torch.ones(1))], "lr": 0.5})
    assert repr(ours) == repr(theirs)
    got, want = ours.state_dict()["param_groups"], theirs.state_dict()["param_groups"]
    assert [{k: (type(v), v) for k, v in g.items()} for g in got] == \
           [{k: (type(v), v) for k, v in g.items()} for g in want]


def _scheduled(name, **kw):
    p = nn.Parameter(minigrad.ones(2))
    p.grad = minigrad.ones(2)
    opt = nn.optim.SGD([p], lr=0.1)
    return opt, getattr(nn.optim.lr_scheduler, name)(opt, **kw)


ORDER = r"^Detected call of `lr_scheduler\.step\(\)` before `optimizer\.step\(\)`\. In PyTorch 1\.1\.0 and later"
SCHEDULES = [("StepLR", {"step_size": 2}), ("ExponentialLR", {"gamma": 0.5}), ("LambdaLR", {"lr_lambda": lambda e: 1.0}),
             ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10}), ("CosineAnnealingLR", {"T_max": 4})]


@pytest.mark.parametrize("name, kw", SCHEDULES)
def test_scheduler_step_before_optimizer_step_warns(name, kw):
    torch = _torch()
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    sched = getattr(torch.optim.lr_scheduler, name)(opt, **kw)
    with pytest.warns(UserWarning) as theirs:
        sched.step()
    opt, sched = _scheduled(name, **kw)
    with pytest.warns(UserWarning, match=ORDER) as ours:
        sched.step()
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert ours[0].filename == __file__
    opt.step()
    _no_warning(sched.step)  # (only the first step is checked, as PyTorch)
    opt, sched = _scheduled(name, **kw)
    opt.step()
    _no_warning(sched.step)  # the right order


def test_scheduler_step_after_optimizer_step_was_replaced_warns():
    opt, sched = _scheduled("StepLR", step_size=2)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match=r"^Seems like `optimizer\.step\(\)` has been overridden after learning rate"):
        sched.step()


@pytest.mark.parametrize("name, kw", SCHEDULES)
def test_get_lr_outside_step_warns(name, kw):
    opt, sched = _scheduled(name, **kw)
    opt.step()
    sched.step()
    with pytest.warns(UserWarning, match=r"^To get the last learning rate computed by the scheduler, please use "
                                         r"`get_last_lr\(\)`\.$"):
        sched.get_lr()
    _no_warning(sched.get_last_lr)
    assert not sched.state_dict()["_get_lr_called_within_step"]


# ---- 8. Linear's and Embedding's errors -----------------------------------------------------------------
@pytest.mark.parametrize("xs, xd, wd, bias", [
    ((4, 4), "float32", "float32", True), ((2, 5, 4), "float32", "float32", True), ((4,), "float32", "float32", False),
    ((0, 4), "float32", "float32", True), ((), "float32", "float32", True),
    ((4, 3), "float64", "float32", True), ((2, 4, 3), "float64", "float32", False), ((3,), "int64", "float32", True),
    ((4, 4), "float64", "float32", False), ((4, 4), "float64", "float32", True), ((4, 3), "float32", "float64", True),
    ((4, 3), "float64", "float64", True),  # the bias float32: bias and weight differ
])
def test_linear_errors_as_pytorch(xs, xd, wd, bias):
    torch = _torch()

    def run(m):
        lin = m.nn.Linear(3, 2, bias=bias, dtype=getattr(m, wd))
        x = m.ones(xs, dtype=getattr(m, xd))
        if xd == wd == "float64":
            return m.nn.functional.linear(x, lin.weight, m.ones(2))
        return lin(x)

    want = _error(lambda: run(torch))
    assert _error(lambda: run(_MgNN)) == want


class _MgNN:  # minigrad under torch's names, for test_linear_errors_as_pytorch
    nn = nn
    ones = staticmethod(minigrad.ones)
    float32, float64, int64 = minigrad.float32, minigrad.float64, minigrad.int64


def test_linear_messages():
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(4x4 and 3x2\)$"):
        nn.Linear(3, 2)(minigrad.randn(4, 4))
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(10x4 and 3x2\)$"):
        nn.Linear(3, 2)(minigrad.randn(2, 5, 4))
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 must have the same dtype, but got Double and Float$"):
        nn.Linear(3, 4)(minigrad.randn(2, 3).double())
    with pytest.raises(TypeError, match=r"^linear\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        nn.Linear(3, 4)([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"^t\(\) expects a tensor with <= 2 dimensions, but self is 3D$"):
        F.linear(minigrad.randn(4, 3), minigrad.randn(2, 2, 3))
    x, w = minigrad.randn(4, 3), minigrad.randn(3)
    np.testing.assert_allclose(F.linear(x, w).numpy(), x.numpy() @ w.numpy(), rtol=1e-6)  # a vector weight


@pytest.mark.parametrize("ids", [[5], [-1], [[0, 7], [1, 2]], [-6]])
def test_embedding_index_out_of_range(ids):
    torch = _torch()
    want = _error(lambda: torch.nn.Embedding(5, 2)(torch.tensor(ids)))
    assert want == ("IndexError", "index out of range in self")
    assert _error(lambda: nn.Embedding(5, 2)(minigrad.tensor(ids))) == want
    assert _error(lambda: F.embedding(minigrad.tensor(ids), minigrad.randn(5, 2))) == want


@pytest.mark.parametrize("ids", [lambda m: m.tensor([1.0]), lambda m: m.tensor([True]), lambda m: [1]])
def test_embedding_bad_ids(ids):
    torch = _torch()
    kind, text = _error(lambda: torch.nn.Embedding(5, 2)(ids(torch)))
    assert _error(lambda: nn.Embedding(5, 2)(ids(minigrad))) == (kind, text.replace("torch.", "minigrad."))


def test_swalr_get_lr_outside_step_warns():
    p = nn.Parameter(minigrad.ones(2))
    p.grad = minigrad.ones(2)
    opt = nn.optim.SGD([p], lr=0.1)
    sched = nn.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
    opt.step()
    _no_warning(sched.step)
    with pytest.warns(UserWarning, match=r"^To get the last learning rate computed by the scheduler"):
        sched.get_lr()


def test_kl_div_loss_module_with_the_deprecated_args_as_pytorch():
    torch = pytest.importorskip("torch")
    for kwargs in ({"reduce": True, "reduction": "batchmean"}, {"size_average": False, "reduction": "batchmean"},
                   {"reduction": "batchmean"}):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            mine = nn.KLDivLoss(**kwargs).reduction
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            want = torch.nn.KLDivLoss(**kwargs).reduction
        assert mine == want and [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_a_deep_copy_of_a_scheduled_optimizer_steps_its_own_parameters():
    # the scheduler's step tracking wrapped the instance's step, bound to the original: a copy (an EMA or a
    # checkpointing helper's deepcopy) stepped the original's parameters
    import copy

    model = nn.Linear(2, 2)
    opt = nn.optim.SGD(model.parameters(), lr=0.1)
    nn.optim.lr_scheduler.StepLR(opt, 2)
    model(minigrad.ones(1, 2)).sum().backward()
    twin = copy.deepcopy(opt)
    for q in (q for g in twin.param_groups for q in g["params"]):
        assert q.grad is None  # (a Parameter's deepcopy leaves its gradient behind, as PyTorch's)
        q.grad = minigrad.ones_like(q)
    before = [p.array.copy() for p in model.parameters()]
    twin.step()
    assert all(np.array_equal(a, p.array) for a, p in zip(before, model.parameters()))
    assert not all(np.array_equal(a, p.array) for a, p in zip(before, (q for g in twin.param_groups for q in g["params"])))


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_kaiming_mode_error_as_pytorch(name):
    torch = _torch()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.nn.init, name)(torch.empty(3, 4), mode="fan_avg")
    with pytest.raises(ValueError, match=f"^{re.escape(str(theirs.value))}$"):
        getattr(nn.init, name)(minigrad.empty(3, 4), mode="fan_avg")


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_kaiming_of_zero_elements_warns_as_pytorch(name):
    torch = _torch()
    with pytest.warns(UserWarning) as theirs:
        getattr(torch.nn.init, name)(torch.empty(0, 4))
    with pytest.warns(UserWarning, match=f"^{re.escape(str(theirs[0].message))}$"):
        getattr(nn.init, name)(minigrad.empty(0, 4))


def test_trunc_normal_of_a_0d_tensor():
    # PyTorch fills it; the redraw of an out-of-range 0-d draw raised TypeError (a numpy scalar)
    g = minigrad.Generator().manual_seed(0)
    for _ in range(20):  # N(1, 2) in [-1, 3]: about a third of the first draws are redrawn
        assert -1 <= nn.init.trunc_normal_(minigrad.empty(()), mean=1, std=2, a=-1, b=3, generator=g).item() <= 3


@pytest.mark.parametrize("mean, a, b", [(5.0, -1.0, 1.0), (-12.0, -1.0, 1.0), (2.5, -2.0, 2.0)])
def test_trunc_normal_far_from_its_bounds_ends_and_warns_as_pytorch(mean, a, b):
    # redrawing until inside never ended for a mean 12 std from [a, b] (and took minutes at 5); PyTorch warns
    # past 2 std and fills: its moments, here from 20000 draws each
    torch = _torch()
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        t = torch.nn.init.trunc_normal_(torch.empty(20000), mean=mean, a=a, b=b).numpy()
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        m = nn.init.trunc_normal_(minigrad.empty(20000), mean=mean, a=a, b=b).numpy()
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert a <= m.min() and m.max() <= b
    assert abs(m.mean() - t.mean()) < 0.02 and abs(m.std() - t.std()) < 0.02


@pytest.mark.parametrize("dtype, a, b", [("int64", -2.0, 2.0), ("bool", -2.0, 2.0), ("int64", 2.0, -2.0)])
def test_trunc_normal_of_an_integer_tensor_raises_as_pytorch(dtype, a, b):
    torch = _torch()
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.init.trunc_normal_(torch.empty(3, dtype=getattr(torch, dtype)), a=a, b=b)
    with pytest.raises(NotImplementedError, match=f"^{re.escape(str(theirs.value))}$"):
        nn.init.trunc_normal_(minigrad.empty(3, dtype=getattr(minigrad, dtype)), a=a, b=b)


def test_trunc_normal_with_crossed_bounds_raises_as_pytorch():
    torch = _torch()
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.init.trunc_normal_(torch.empty(3), a=0.5, b=-0.5)
    with pytest.raises(RuntimeError, match=f"^{re.escape(str(theirs.value))}$"):
        nn.init.trunc_normal_(minigrad.empty(3), a=0.5, b=-0.5)
