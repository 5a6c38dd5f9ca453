"""Focused tests for what the scripts of test_dl_scripts12.py found minigrad doing unlike PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad
import nn as mnn
import nn.functional as MF


def _buffer_dtypes(lib, nn, cast):
    m = nn.Linear(2, 2)
    angles = lib.ones(3, dtype=lib.float64)
    m.register_buffer("rot", lib.polar(lib.ones_like(angles), angles), persistent=False)
    m.register_buffer("steps", lib.zeros(2, dtype=lib.long))
    getattr(m, cast)()
    return [str(t.dtype).split(".")[-1] for t in (m.weight, m.rot, m.steps)]


@pytest.mark.parametrize("cast", ["double", "float", "half"])
def test_module_float_casts_leave_complex_buffers_alone(torch, cast):
    assert _buffer_dtypes(minigrad, mnn, cast) == _buffer_dtypes(torch, torch.nn, cast)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_backward_of_an_impossible_sample_warns_not(torch, zero_infinity):
    lp = np.log(np.full((3, 2, 3), 1 / 3))
    targets, lengths = [[1, 2, 1, 2], [1, 0, 0, 0]], ((3, 3), (4, 1))  # the first needs more frames than it has
    results = []
    for lib, F in ((torch, torch.nn.functional), (minigrad, MF)):
        x = lib.tensor(lp, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            loss = F.ctc_loss(x, lib.tensor(targets), *lengths, reduction="sum", zero_infinity=zero_infinity)
            loss.backward()
        results.append((loss.item(), x.grad.numpy()))
    (t_loss, t_grad), (m_loss, m_grad) = results
    np.testing.assert_allclose(m_loss, t_loss, rtol=1e-12)
    np.testing.assert_allclose(m_grad, t_grad, rtol=1e-12, atol=1e-14)  # (nan where PyTorch's is nan)


def _error(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("case", [
    dict(q=1.5), dict(q=-0.25, nan=True), dict(q=0.5, interpolation="cubic"), dict(q=1.5, interpolation="cubic"),
    dict(q=0.5, x=[]), dict(q=[[0.5]]), dict(q=[[0.5]], x=[]), dict(q=[1.5]), dict(q=[0.5], q_dtype="float32"),
    dict(q=0.5, x=[1, 2]), dict(q=0.5, x=[1, 2], interpolation="cubic"),
])
def test_quantile_checks_its_arguments_as_pytorch(torch, case):
    def call(lib):
        x = lib.tensor(case.get("x", [1.0, 4.0, 2.0]), dtype=lib.float64 if case.get("x", 0) == [] else None)
        x = x.double() if x.is_floating_point() else x
        q = case["q"]
        if isinstance(q, list):
            q = lib.tensor(q, dtype=getattr(lib, case.get("q_dtype", "float64")))
        fn = lib.nanquantile if case.get("nan") else lib.quantile
        return _error(fn, x, q, interpolation=case.get("interpolation", "linear"))
    theirs = call(torch)
    assert theirs is not None
    assert call(minigrad) == theirs


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad"])
@pytest.mark.parametrize("foreach", [None, True])
def test_fused_optimizer_refuses_differentiable(torch, name, foreach):
    def make(lib):
        p = lib.nn.Parameter(lib.ones(2)) if lib is torch else mnn.Parameter(minigrad.ones(2))
        optim = torch.optim if lib is torch else mnn.optim
        return _error(getattr(optim, name), [p], lr=0.1, fused=True, foreach=foreach, differentiable=True)
    theirs = make(torch)
    assert theirs is not None
    assert make(minigrad) == theirs


@pytest.mark.parametrize("shapes", [((2, 2), (2,)), ((2,), (2, 2)), ((), (2,)), ((2,), ())])
def test_outer_rank_error_names_the_argument(torch, shapes):
    def call(lib):
        a, b = (lib.ones(s, dtype=lib.float64) for s in shapes)
        return [_error(lib.outer, a, b), _error(lib.ger, a, b), _error(a.outer, b)]
    theirs = call(torch)
    assert None not in theirs
    assert call(minigrad) == theirs


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "float16", "bfloat16"])
@pytest.mark.parametrize("enabled", [True, False])
def test_cpu_autocast_disables_itself_for_a_dtype_it_lacks(torch, dtype, enabled):
    def call(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=getattr(lib, dtype), enabled=enabled):
                inside = lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")).split(".")[-1]
        texts = [str(w.message).replace("torch.", "minigrad.") for w in caught if w.category is UserWarning]
        return inside, texts
    assert call(minigrad) == call(torch)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_view_as_complex_shape_errors(torch, shape):
    theirs = _error(torch.view_as_complex, torch.ones(shape))
    assert theirs is not None
    assert _error(minigrad.view_as_complex, minigrad.ones(shape)) == theirs
