"""PyTorch's out= on the top-level functions (minigrad/ops/out.py), against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def pair(a):
    return minigrad.tensor(np.array(a, dtype=np.float32)), torch.tensor(np.array(a, dtype=np.float32))


@pytest.mark.parametrize("call", [
    lambda t, x, o: t.add(x, x, out=o), lambda t, x, o: t.mul(x, 2.0, out=o), lambda t, x, o: t.exp(x, out=o),
    lambda t, x, o: t.tanh(x, out=o), lambda t, x, o: t.matmul(x, x.T, out=o), lambda t, x, o: t.sum(x, 1, out=o),
    lambda t, x, o: t.sub(x, 1.5, out=o), lambda t, x, o: t.sqrt(x, out=o), lambda t, x, o: t.mean(x, 0, out=o),
    lambda t, x, o: t.addcmul(x, x, x, value=0.5, out=o), lambda t, x, o: t.cumsum(x, 0, out=o),
])
def test_out_gets_the_result_and_is_returned(call):
    (x, tx) = pair([[1.0, 2.0], [3.0, 0.5]])
    o, to = minigrad.empty(0), torch.empty(0)
    r, tr = call(minigrad, x, o), call(torch, tx, to)
    assert r is o and tr is to
    np.testing.assert_allclose(o.numpy(), to.numpy(), rtol=1e-6)


def test_out_of_the_right_shape_is_written_in_place():
    base = minigrad.zeros(4)
    view = base[:2]
    minigrad.add(minigrad.ones(2), 1, out=view)
    assert base.tolist() == [2.0, 2.0, 0.0, 0.0]
    t = minigrad.zeros(3)
    assert minigrad.add(t, 1, out=t) is t and t.tolist() == [1.0, 1.0, 1.0]


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    messages = []
    for lib in (minigrad, torch):
        o = lib.empty(5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.add(lib.ones(2, 3), 1, out=o)
        assert tuple(o.shape) == (2, 3)
        messages.append(str(w[0].message).split(" (Triggered")[0])
    assert messages[0] == messages[1]


def test_out_errors_as_pytorch():
    for lib in (minigrad, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments don't support automatic "
                                               r"differentiation, but one of the arguments requires grad\."):
            lib.add(x, x, out=lib.empty(2))
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            lib.add(lib.ones(2), 1.5, out=lib.empty(2, dtype=lib.long))
        with lib.no_grad():
            lib.add(x, x, out=lib.empty(2))  # (no graph wanted: allowed)
    o = minigrad.empty(2, dtype=minigrad.float64)
    minigrad.add(minigrad.ones(2), 1, out=o)  # float32 into float64: cast, as PyTorch
    assert o.dtype == minigrad.float64 and o.tolist() == [2.0, 2.0]


def test_out_pair_of_values_and_indices():
    x, tx = pair([[1.0, 3.0], [4.0, 2.0]])
    v, i = minigrad.empty(2), minigrad.empty(2, dtype=minigrad.long)
    r = minigrad.max(x, 1, out=(v, i))
    tv, ti = torch.empty(2), torch.empty(2, dtype=torch.long)
    torch.max(tx, 1, out=(tv, ti))
    assert r.values is v and r.indices is i
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


def test_methods_take_no_out():
    with pytest.raises(TypeError):
        minigrad.ones(2).add(1, out=minigrad.empty(2))
