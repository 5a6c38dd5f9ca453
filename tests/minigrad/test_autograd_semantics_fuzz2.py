"""Autograd semantics against PyTorch, second round: the fuzzer's minimal programs (inference tensors, the
version of summed gradients, detach_ under views, a view's history read after its base's write, views taken
in no_grad mode, 0-d indexing), each run step by step on both libraries and compared after every step
(test_autograd_semantics_fuzz's runner)."""
import pytest

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
