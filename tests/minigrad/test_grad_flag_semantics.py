"""Autograd-facing tensor flags compared with PyTorch's: `.data` assignment, `.grad` on a non-leaf,
views taken in no_grad mode of a tensor that requires grad."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _error(f, *args):
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("value", [np.ones(3), None, 3, [1.0, 2.0, 3.0]])
def test_data_assigned_something_not_a_tensor_is_refused_in_pytorch_words(value):
    outcomes = [_error(setattr, lib.ones(3), "data", value) for lib in (minigrad, torch)]
    assert outcomes[0] is not None and outcomes[0] == outcomes[1]


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_data_of_a_tensor_that_requires_grad_stays_floating(dtype):
    outcomes = []
    for lib in (minigrad, torch):
        x = lib.ones(3, requires_grad=True)
        outcomes.append((_error(setattr, x, "data", lib.ones(3, dtype=getattr(lib, dtype))),
                         str(x.dtype).split(".")[-1], x.requires_grad))
    assert outcomes[0][0] is not None and outcomes[0] == outcomes[1]


def test_data_of_a_tensor_without_grad_may_change_dtype_and_shape():
    for lib in (minigrad, torch):
        t = lib.ones(3)
        t.data = lib.arange(4)
        assert (str(t.dtype).split(".")[-1], tuple(t.shape)) == ("int64", (4,))
        z = lib.ones(3, requires_grad=True)
        z.data = lib.ones(2, dtype=lib.complex64)
        assert str(z.dtype).split(".")[-1] == "complex64" and z.requires_grad


def _grad_warnings(lib, assign):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    if assign:
        y.grad = lib.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = y.grad
    return [str(w.message)[:60] for w in caught], None if g is None else g.tolist()


@pytest.mark.parametrize("assign", [False, True])
def test_grad_of_a_non_leaf_warns_only_while_it_has_none(assign):
    ours, theirs = _grad_warnings(minigrad, assign), _grad_warnings(torch, assign)
    assert ours == theirs
    assert bool(ours[0]) != assign  # a warning without a gradient, none with one


def _no_grad_view(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    with lib.no_grad():
        v, w, d = x[0:2], h[1], x.detach()[0:1]
        u = v.view(2)
    return x, h, v, w, d, u


def test_a_view_taken_in_no_grad_mode_requires_grad_through_its_base():
    flags = []
    for lib in (minigrad, torch):
        x, h, v, w, d, u = _no_grad_view(lib)
        flags.append([(t.requires_grad, t.is_leaf, t.grad_fn is None, t._base is not None) for t in (v, w, d, u)]
                     + [u._base is x, w._base is h, "requires_grad=True" in repr(v)])
    assert flags[0] == flags[1]


def test_a_graph_through_a_no_grad_view_sends_its_gradient_nowhere():
    results = []
    for lib in (minigrad, torch):
        x, h, v, w, d, u = _no_grad_view(lib)
        y = v * 3
        out = [y.requires_grad, y.grad_fn.name(), [e[0] for e in y.grad_fn.next_functions]]
        y.sum().backward()
        (w * u).sum().backward()
        results.append(out + [x.grad, v.grad, w.grad, u.grad])
    assert results[0] == results[1]


def test_a_no_grad_view_is_written_in_place_under_no_grad_only():
    outcomes = []
    for lib in (minigrad, torch):
        x, h, v, w, d, u = _no_grad_view(lib)
        with lib.no_grad():
            d.add_(1)
        outcomes.append([_error(v.mul_, 2), _error(u.add_, 1), _error(v.retain_grad),
                         v.retains_grad, _error(v.detach_)[0], x.tolist()])
    assert outcomes[0][0] is not None and outcomes[0] == outcomes[1]
