"""Today's second review: an in-place op on a view under grad (CopySlices holding the op's node) against
PyTorch 2.13: no reference cycle through the saved view, a second backward refused, double backward with the
view kept or dropped."""
import gc
import weakref

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

A = np.arange(1.0, 7.0).reshape(3, 2) / 7


@pytest.mark.parametrize("op", ["exp_", "tanh_", "sigmoid_"])
def test_inplace_on_view_saved_result_is_freed_without_gc(op):
    # the op saves its result, the view: CopySlices -> op's node -> saved view -> view's node -> CopySlices
    # must not be a cycle (PyTorch holds the view's node weakly), or an eval loop under grad grows until gc runs
    # (PyTorch's nodes take no weak reference: its side is its C++ SavedVariable's weak_grad_fn)
    a = minigrad.tensor(A, requires_grad=True)
    enabled = gc.isenabled()
    gc.disable()
    try:
        b = a * 1.0
        getattr(b[1:], op)()
        assert b.grad_fn.name() == "CopySlices"
        ref = weakref.ref(b.grad_fn)
        del b
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("op", ["add_", "mul_", "exp_"])
def test_copyslices_second_backward_refused(op):
    def run(L):
        a = L.tensor(A, requires_grad=True)
        b = a.clone()
        v = b[1:]
        getattr(v, op)(*(() if op == "exp_" else (2.0,)))
        b.sum().backward()
        with pytest.raises(RuntimeError) as e:
            b.sum().backward()
        return str(e.value).split(" Saved intermediate")[0]
    assert run(minigrad) == run(torch).replace("torch", "minigrad")


@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "mul_"])
def test_inplace_on_view_double_backward_view_kept(op):
    # the view lives on and is used after the write: its node is the saved result's history on unpack
    def run(L):
        a = L.tensor(A, requires_grad=True)
        o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
        b = a.clone()
        v = b[1:]
        getattr(v, op)(*((o,) if op == "mul_" else ()))
        loss = (b * b).sum() + (v * 3).sum()
        ga, = L.autograd.grad(loss, a, create_graph=True)
        (ga * ga).sum().backward()
        return a.grad.numpy(), None if o.grad is None else o.grad.numpy()
    for g, w in zip(run(minigrad), run(torch)):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
