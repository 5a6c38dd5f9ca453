"""Known differences from PyTorch 2.13, closed (or pinned with a strict xfail and why): linalg.vector_norm's
orders that are no number, circular padding's graph, ... Each test runs the same call in both libraries."""
import math

import numpy as np
import pytest

import minigrad
import nn.functional as MF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _outcome(call):
    """("ok", value) or (exception type name, its text)."""
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 (any refusal is compared)
        return type(e).__name__, str(e)


# ---- linalg.vector_norm's ord: a Number (a 0-d tensor too), not None, a string or a list ---------------------
_X = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]
_ORDERS = {"None": None, "fro": "fro", "list": [2], "tuple": (2,), "1-d tensor": "tensor([2.])", "complex": 2j,
           "complex tensor": "tensor(2j)"}


def _order(L, key):
    o = _ORDERS[key]
    return L.tensor([2.0]) if o == "tensor([2.])" else L.tensor(2j) if o == "tensor(2j)" else o


@pytest.mark.parametrize("key", sorted(_ORDERS))
@pytest.mark.parametrize("form", ["keyword", "position", "position with dim", "keyword with dim"])
def test_vector_norm_refuses_an_order_that_is_no_number_as_pytorch(key, form):
    def call(L):
        x, o = L.tensor(_X), _order(L, key)
        return {"keyword": lambda: L.linalg.vector_norm(x, ord=o), "position": lambda: L.linalg.vector_norm(x, o),
                "position with dim": lambda: L.linalg.vector_norm(x, o, 1, True),
                "keyword with dim": lambda: L.linalg.vector_norm(x, dim=1, ord=o)}[form]()
    mine, theirs = _outcome(lambda: call(minigrad)), _outcome(lambda: call(torch))
    assert mine == theirs and mine[0] in ("TypeError", "RuntimeError")


@pytest.mark.parametrize("args,kwargs", [((2, 1, False, 0), {}), ((2,), {"ord": 1}), ((2, 1), {"dim": 0}),
                                         ((), {"p": 2}), ((None,), {"dim": "a"})])
def test_vector_norm_argument_slips_as_pytorch(args, kwargs):
    mine = _outcome(lambda: minigrad.linalg.vector_norm(minigrad.tensor(_X), *args, **kwargs))
    assert mine == _outcome(lambda: torch.linalg.vector_norm(torch.tensor(_X), *args, **kwargs))
    assert mine[0] == "TypeError"


@pytest.mark.parametrize("call", [
    lambda L: L.linalg.vector_norm(L.tensor(_X), 3, dim=1), lambda L: L.linalg.vector_norm(L.tensor(_X), ord=True),
    lambda L: L.linalg.vector_norm(L.tensor(_X), L.tensor(1.0), 0, True), lambda L: L.linalg.vector_norm(
        L.tensor(_X), np.float32(math.inf)), lambda L: L.linalg.vector_norm(x=L.tensor(_X), dtype=L.float64),
    lambda L: L.norm(L.tensor(_X), p=None), lambda L: L.norm(L.tensor(_X), p=None, dim=1, keepdim=True),
    lambda L: L.tensor(_X).norm(None, 1), lambda L: L.linalg.norm(L.tensor(_X), ord=None, dim=1)])
def test_the_orders_both_take_give_pytorchs_values(call):
    mine, theirs = call(minigrad), call(torch)
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(np.array(mine.tolist()), np.array(theirs.tolist()), rtol=1e-6)


# ---- circular F.pad: PyTorch's composite (copies into slices of a new tensor), node for node ------------------
def _tree(node, depth=8):
    """The node's name (C++ namespace dropped, as minigrad's names are) and its edges' trees, `depth` deep."""
    if node is None:
        return None
    name = node.name().removeprefix("torch::autograd::")
    if depth == 0 or name == "AccumulateGrad":
        return name
    return name, tuple((_tree(n, depth - 1), nr) for n, nr in node.next_functions)


_CIRCULAR = [((1, 2, 12), (2, 3)), ((2, 5), (1, 0)), ((2, 3, 4), (0, 4)), ((1, 2, 4, 6), (1, 2, 2, 1)),
             ((1, 2, 4, 6), (-1, 2, 0, 1)), ((2, 4, 5), (3, -2, 1, 1)), ((1, 2, 3, 4, 5), (1, 2, 0, 1, 2, 0)),
             ((1, 2, 3), (-4, 1)), ((1, 2, 0, 3), (1, 0, 0, 0))]


@pytest.mark.parametrize("shape,pad", _CIRCULAR)
def test_circular_pad_records_pytorchs_graph_and_bits(shape, pad):
    a = np.random.default_rng(len(pad) + shape[-1]).standard_normal(shape).astype(np.float32)
    got = {}
    for L, F in ((minigrad, MF), (torch, TF)):
        x = L.tensor(a, requires_grad=True)
        y = F.pad(x * 2, pad, mode="circular")
        g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32) * np.logspace(
            -4, 4, y.shape[-1], dtype=np.float32)
        y.backward(L.tensor(g))
        got[L] = (_tree(y.grad_fn), np.array(y.tolist(), np.float32), np.array(x.grad.tolist(), np.float32))
    assert got[minigrad][0] == got[torch][0]
    for mine, theirs in zip(got[minigrad][1:], got[torch][1:]):  # (the gradient's sums in PyTorch's order)
        assert mine.shape == theirs.shape and (mine.view(np.uint32) == theirs.view(np.uint32)).all()


def test_circular_pad_module_and_double_backward_as_pytorch():
    a = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    got = {}
    for L in (minigrad, torch):
        x = L.tensor(a, requires_grad=True)
        y = L.nn.CircularPad2d((1, 2, 2, 0))(x)
        (gx,) = L.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (ggx,) = L.autograd.grad(gx.sum(), x)
        got[L] = _tree(y.grad_fn, 3), np.array(gx.tolist()), np.array(ggx.tolist())
    assert got[minigrad][0] == got[torch][0]
    np.testing.assert_allclose(got[minigrad][1], got[torch][1], rtol=1e-12)
    np.testing.assert_allclose(got[minigrad][2], got[torch][2], rtol=1e-12)
