"""Focused tests for what the scripts of test_dl_scripts18.py found in minigrad."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_hardsigmoid_backward_scales_by_pytorchs_float32_one_sixth(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(18)
    xs, gs = rng.uniform(-4, 4, 200), rng.standard_normal(200)
    x = torch.tensor(xs).to(getattr(torch, dtype)).requires_grad_()
    torch.nn.functional.hardsigmoid(x).backward(torch.tensor(gs).to(x.dtype))
    ours = minigrad.tensor(xs).to(getattr(minigrad, dtype)).requires_grad_()
    F.hardsigmoid(ours).backward(minigrad.tensor(gs).to(ours.dtype))
    assert str(ours.grad.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(ours.grad.to(minigrad.float64).numpy(), x.grad.double().numpy())


def test_hardsigmoid_create_graph_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    xs, gs = np.array([-3.5, -1.0, 0.25, 2.0, 3.0]), np.array([0.3, -1.2, 2.0, 0.7, 1.1])
    x = torch.tensor(xs, requires_grad=True)
    g = torch.tensor(gs, requires_grad=True)
    (theirs,) = torch.autograd.grad(torch.nn.functional.hardsigmoid(x), x, g, create_graph=True)
    mx, mg = minigrad.tensor(xs, requires_grad=True), minigrad.tensor(gs, requires_grad=True)
    (ours,) = minigrad.autograd.grad(F.hardsigmoid(mx), mx, mg, create_graph=True)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def _error(fn, lib):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value).__name__, str(e.value).split("\n")[0].replace("torch.", "minigrad.")


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("values", [([1, 2], [1, 4]), ([True, False], [True, True]), ([1, 2], [True, False]),
                                    ([True, False], [1, 2])])
def test_regression_losses_on_integers_and_bools_as_pytorch(name, reduction, values):
    torch = pytest.importorskip("torch")
    outcomes = []
    for lib, funcs in ((torch, torch.nn.functional), (minigrad, F)):
        a, b = (lib.tensor(v) for v in values)
        try:
            r = getattr(funcs, name)(a, b, reduction=reduction)
            outcomes.append(("ok", str(r.dtype).split(".")[-1], r.numpy().tolist()))
        except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
            outcomes.append((type(e).__name__, str(e).split("\n")[0]))
    assert outcomes[1] == outcomes[0]


def test_meshgrid_refuses_mixed_dtypes_empty_lists_and_high_ranks_as_pytorch():
    torch = pytest.importorskip("torch")
    cases = [lambda T: T.meshgrid(T.ones(2), T.ones(2, dtype=T.float64), indexing="ij"),
             lambda T: T.meshgrid(T.ones(2, 2), T.ones(2, dtype=T.float64), indexing="foo"),
             lambda T: T.meshgrid(T.ones(2), T.ones(3, dtype=T.float64), indexing="foo"),
             lambda T: T.meshgrid([], indexing="ij"),
             lambda T: T.meshgrid(T.ones(2), 3, indexing="ij"),
             lambda T: T.meshgrid(T.ones(2, 2), indexing="foo")]
    for case in cases:
        assert _error(case, minigrad) == _error(case, torch)
    # (PyTorch prints the tensor after this in C++'s format: the words before it agree)
    ours, theirs = (_error(lambda T: T.meshgrid(T.ones(2), T.ones(1, 2), indexing="ij"), lib) for lib in (minigrad, torch))
    assert ours[0] == theirs[0] == "RuntimeError"
    assert ours[1].split(" got:")[0] == theirs[1].split(" got:")[0] == (
        "minigrad.meshgrid: Expected 0D or 1D tensor in the tensor list but")
