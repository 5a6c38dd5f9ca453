"""Known differences from PyTorch 2.13, closed (or pinned with a strict xfail and why): linalg.vector_norm's
orders that are no number, circular padding's graph, ... Each test runs the same call in both libraries."""
import math

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


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
