"""Autograd semantics against PyTorch, second round: the fuzzer's minimal programs (inference tensors, the
version of summed gradients, detach_ under views, a view's history read after its base's write, views taken
in no_grad mode, 0-d indexing), each run step by step on both libraries and compared after every step
(test_autograd_semantics_fuzz's runner)."""
import pytest

import minigrad as mg
from tests.minigrad.test_autograd_semantics_fuzz import _in, leaf, run_both

torch = pytest.importorskip("torch")


def inference_zeros(L, e):
    with L.inference_mode():
        return L.zeros(3, dtype=L.float64) + 0.5


@pytest.mark.parametrize("write", [
    lambda L, e: e["y"].add_(e["x"].sum()),  # (a tensor requiring grad: what would record the write)
    lambda L, e: e["y"].__iadd__(e["x"]),
    lambda L, e: e["y"].add_(1.0),
    lambda L, e: e["y"][1:].add_(e["x"][1:]),
], ids=["add_-requiring-grad", "iadd", "add_-number", "view-add_"])
def test_inference_tensor_written_outside_inference_mode(write):
    # PyTorch refuses at the version bump, after the write: the values change, no history is recorded
    run_both([
        ("x", leaf(10, (3,))),
        ("y", inference_zeros),
        (None, write),
        (None, lambda L, e: e["y"].mul_(2)),
        ("z", lambda L, e: e["y"] * e["x"]),
        (None, lambda L, e: e["z"].sum().backward()),
    ])


def test_backward_inside_inference_mode():
    # the graph was recorded outside: backward runs as usual, the leaf's gradient made an inference tensor
    run_both([
        ("x", leaf(11, (3,))),
        ("y", lambda L, e: (e["x"] * e["x"]).sum()),
        (None, lambda L, e: _in(L.inference_mode(), lambda: e["y"].backward(retain_graph=True))),
        ("g", lambda L, e: _in(L.inference_mode(), lambda: L.autograd.grad(e["y"], e["x"])[0])),
        ("inference", lambda L, e: L.tensor(float(e["x"].grad.is_inference()))),
        (None, lambda L, e: _in(L.inference_mode(), lambda: L.autograd.grad((e["x"] * 3).sum(), e["x"]))),
    ])


def test_version_of_gradients_summed_in_place():
    # two gradients on one edge are summed into the first (x * x's, a leaf's .grad across backwards): the sum's
    # version counts the write, as PyTorch's add_ into its input buffer
    run_both([
        ("x", leaf(12, (3,))),
        ("g2", lambda L, e: L.autograd.grad((e["x"] * e["x"]).sum(), e["x"])[0]),
        ("g1", lambda L, e: L.autograd.grad((e["x"] * 2).sum(), e["x"])[0]),
        ("g3", lambda L, e: L.autograd.grad((e["x"] * 2 + e["x"] * 3 + e["x"] * 4).sum(), e["x"])[0]),
        (None, lambda L, e: (e["x"] * e["x"]).sum().backward()),
        ("grad1", lambda L, e: e["x"].grad),
        (None, lambda L, e: (e["x"] * 2).sum().backward()),
        ("y", lambda L, e: e["x"] * 1),
        ("gy", lambda L, e: L.autograd.grad((e["y"] * e["y"]).sum(), [e["x"], e["y"]])[1]),
    ])


def test_view_of_a_leaf_detached_in_place_refuses_writes():
    # the view keeps its history (SliceBackward0) while its base is a leaf now: PyTorch's refusal
    run_both([
        ("x", leaf(13, (3,))),
        ("v", lambda L, e: e["x"][1:]),
        (None, lambda L, e: e["x"].detach_()),
        (None, lambda L, e: e["v"].add_(1)),
        (None, lambda L, e: (e["v"] * 2).sum().backward()),  # reaches x, which no longer requires grad
        (None, lambda L, e: e["x"].add_(1)),
    ])


def test_leaf_that_stopped_requiring_grad_gets_no_gradient():
    seen = {torch: [], mg: []}
    run_both([
        ("x", leaf(14, (3,))),
        ("y", lambda L, e: e["x"] * 2),
        (None, lambda L, e: e["x"].register_post_accumulate_grad_hook(lambda t: seen[L].append(t.grad is None))),
        (None, lambda L, e: e["x"].requires_grad_(False)),
        (None, lambda L, e: e["y"].sum().backward(retain_graph=True)),
        (None, lambda L, e: e["x"].mul_(L.ones(3, dtype=L.float64, requires_grad=True))),
        (None, lambda L, e: e["y"].sum().backward()),  # x's node has moved into the graph's interior
    ])
    assert seen[mg] == seen[torch] == [True]


@pytest.mark.parametrize("index", [(), Ellipsis, slice(None), (Ellipsis, None)], ids=["()", "...", ":", "...,None"])
@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("number", [True, False])
def test_setitem_writing_all_of_a_tensor(index, shape, number):
    # all of it written: PyTorch's copy_ (CopyBackwards) or, a number into a tensor of dims, fill_ (FillBackward3)
    if index == (Ellipsis, None) and not number and shape:
        pytest.skip("the value does not broadcast to the indexed shape")
    run_both([
        ("x", leaf(15, shape)),
        ("y", lambda L, e: e["x"] * 2),
        ("r", lambda L, e: e["y"].__setitem__(index, 3.0 if number else e["x"] * 3)),  # None, as PyTorch's
        (None, lambda L, e: (e["y"] * e["y"]).sum().backward()),
    ])


@pytest.mark.parametrize("op", [
    lambda t: t.split(1), lambda t: t.split(1, 1), lambda t: t.split([1]), lambda t: t.chunk(0),
    lambda t: t.tensor_split(1), lambda t: t.unbind(), lambda t: t.unbind(-1), lambda t: t.unbind(1),
    lambda t: t.diagonal(), lambda t: t.diagonal(0, 0, -1), lambda t: t.select(0, 0), lambda t: t.select(1, 0),
    lambda t: t[0], lambda t: t[-1], lambda t: t[1:], lambda t: t[None, 0],
    lambda t: t.__setitem__(0, 1.0), lambda t: t.__setitem__(-1, 1.0), lambda t: t.__setitem__(slice(1, None), 1.0),
])
def test_0d_tensor_refusals(op):
    run_both([("x", leaf(16, ())), ("y", lambda L, e: e["x"] * 2), (None, lambda L, e: op(e["y"]))])


def test_diagonal_of_a_vector_is_refused():
    run_both([("x", leaf(17, (3,))), (None, lambda L, e: e["x"].diagonal())])
