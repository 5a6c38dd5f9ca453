"""The top-level elementwise functions given something other than a dense tensor: a sparse COO tensor runs its
method of the same name (minigrad/sparse.py's _ELEMENTWISE table), from the function's own first look at its
input (no wrapper in front of the dense call); anything else is refused with PyTorch's parser text."""
import numpy as np
import pytest

import minigrad
from minigrad import sparse

torch = pytest.importorskip("torch")

_TABLE = sorted(sparse._ELEMENTWISE)
# (an alias is its target's function object, so its refusal names the target: asin(), not arcsin())
_ALIASES = {"negative", "absolute", "fix", "arcsin", "arctan", "arcsinh", "arctanh"}
_NOT_IN_TABLE = ["exp", "cos", "log", "sigmoid", "rsqrt", "reciprocal", "exp2", "lgamma"]


def _coo(L):  # ((0, 2) twice: uncoalesced)
    return L.sparse_coo_tensor(L.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), L.tensor([0.5, -1.5, 2.0, 0.25]), (2, 3))


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", _TABLE)
def test_the_function_runs_the_sparse_method(name):
    mine, method = getattr(minigrad, name)(_coo(minigrad)), getattr(_coo(minigrad), name)()
    assert mine.is_sparse and mine.is_coalesced() == method.is_coalesced()
    assert mine._indices().tolist() == method._indices().tolist()
    np.testing.assert_array_equal(mine._values().numpy(), method._values().numpy())
    theirs = getattr(torch, name)(_coo(torch)).to_dense().numpy()
    np.testing.assert_allclose(mine.to_dense().numpy().astype(float), theirs.astype(float), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", _TABLE)
def test_no_wrapper_in_front_of_the_dense_function(name):
    top = getattr(minigrad, name)
    inner = getattr(top, "__wrapped__", top)  # (out=, ops/out.py's with_out, the one wrapper kept)
    assert inner is getattr(minigrad.ops, name)
    assert top.__name__ == inner.__name__ and top.__doc__ == inner.__doc__


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason="an alias is its target's function: the refusal names the target")) if n in _ALIASES else n
    for n in _TABLE + _NOT_IN_TABLE])
@pytest.mark.parametrize("arg", [1.0, [1], None], ids=["float", "list", "None"])
def test_a_non_tensor_is_refused_as_pytorch_does(name, arg):
    mine = _error(lambda: getattr(minigrad, name)(arg))
    assert mine == _error(lambda: getattr(torch, name)(arg))
    assert mine[0] == "TypeError"


@pytest.mark.parametrize("L", [minigrad, torch], ids=["minigrad", "torch"])
def test_a_non_tensor_is_refused_with_out_too(L):
    assert _error(lambda: L.tanh(1.0, out=L.zeros(1))) == (
        "TypeError", "tanh(): argument 'input' (position 1) must be Tensor, not float")


@pytest.mark.parametrize("name", _NOT_IN_TABLE)
def test_a_sparse_input_to_an_op_sparse_tensors_lack(name):
    (kind, text), (want_kind, want_text) = _error(lambda: getattr(minigrad, name)(_coo(minigrad))), _error(
        lambda: getattr(torch, name)(_coo(torch)))
    assert kind == want_kind == "NotImplementedError"
    assert want_text.startswith(text) and text.endswith("(if using custom build).")  # (PyTorch lists its backends)


@pytest.mark.parametrize("layout", ["to_sparse_csr", "to_sparse_csc"])
@pytest.mark.parametrize("name", ["neg", "tanh", "relu", "isnan", "abs", "sgn", "signbit", "round", "positive"])
def test_a_compressed_input_runs_the_op_on_its_values(name, layout):
    dense = [[0.0, 1.5], [-2.0, 0.0]]
    mine = getattr(minigrad, name)(getattr(minigrad.tensor(dense), layout)())
    theirs = getattr(torch, name)(getattr(torch.tensor(dense), layout)())
    assert str(mine.layout).split(".")[1] == str(theirs.layout).split(".")[1]
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(np.array(mine.values().tolist(), float), np.array(theirs.values().tolist(), float),
                               rtol=1e-6)
    np.testing.assert_allclose(np.array(mine.to_dense().tolist(), float), np.array(theirs.to_dense().tolist(), float),
                               rtol=1e-6)


@pytest.mark.parametrize("layout", ["to_sparse_csr", "to_sparse_csc"])
@pytest.mark.parametrize("call", [lambda L, c: L.exp(c), lambda L, c: L.square(c), lambda L, c: L.cos(c),
                                  lambda L, c: L.round(c, decimals=1)])
def test_a_compressed_input_to_an_op_its_layout_lacks(call, layout):
    dense = [[0.0, 1.5], [-2.0, 0.0]]
    mine = _error(lambda: call(minigrad, getattr(minigrad.tensor(dense), layout)()))
    assert mine == _error(lambda: call(torch, getattr(torch.tensor(dense), layout)()))
    assert mine[0] == "RuntimeError"
