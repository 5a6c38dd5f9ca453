"""Third review of day 28: clone()'s preserve_format on a tensor that is not dense (expanded, sliced) lays
its copy out as PyTorch's does."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _pair(shape, expand_to=None, perm=None, narrow=None):
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t, m = torch.from_numpy(base.copy()), mg.tensor(base.copy())
    if perm is not None:
        t, m = t.permute(perm), m.permute(perm)
    if narrow is not None:
        t, m = t.narrow(*narrow), m.narrow(*narrow)
    if expand_to is not None:
        t, m = t.expand(*expand_to), m.expand(*expand_to)
    assert t.stride() == m.stride()  # (the same input layout, so that the copies can be compared)
    return t, m


@pytest.mark.parametrize("shape, expand_to, perm, narrow", [
    ((1, 3, 1, 1), (2, 3, 4, 5), None, None),  # a per-channel bias broadcast to a batch
    ((3, 1), (3, 4), None, None),
    ((4, 1, 3), (3, 4, 5), (2, 0, 1), None),  # permuted, then expanded
    ((3, 4, 2), (2, 3, 4), (2, 0, 1), None),
    ((4, 6), None, (1, 0), (1, 0, 2)),  # transposed and sliced: not dense
    ((2, 3, 4), None, (0, 2, 1), (2, 1, 2)),
])
def test_clone_of_an_expanded_or_sliced_tensor_keeps_pytorchs_layout(shape, expand_to, perm, narrow):
    t, m = _pair(shape, expand_to, perm, narrow)
    for a, b in ((t.clone(), m.clone()), (t.clone(memory_format=torch.preserve_format),
                                          m.clone(memory_format=mg.preserve_format))):
        assert b.stride() == a.stride()
        np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_clone_of_an_expanded_tensor_records_clone_backward():
    t, m = _pair((1, 3, 1, 1), (2, 3, 4, 5))
    tr, mr = t.detach().requires_grad_(), m.detach().requires_grad_()
    a, b = tr.expand(2, 3, 4, 5).clone(), mr.expand(2, 3, 4, 5).clone()
    assert b.grad_fn.name() == a.grad_fn.name()
    g = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    a.backward(torch.from_numpy(g)), b.backward(mg.tensor(g))
    np.testing.assert_allclose(mr.grad.numpy(), tr.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("cast", ["double", "half", "int", "copy", "to_float64"])
@pytest.mark.parametrize("shape, expand_to, perm", [
    ((1, 3, 1, 1), (2, 3, 4, 5), None),
    ((3, 1), (3, 4), None),
    ((4, 1, 3), (3, 4, 5), (2, 0, 1)),
])
def test_a_cast_of_an_expanded_tensor_keeps_pytorchs_layout(cast, shape, expand_to, perm):
    t, m = _pair(shape, expand_to, perm)
    if cast == "copy":
        a, b = t.to(copy=True), m.to(copy=True)
    elif cast == "to_float64":
        a, b = t.to(torch.float64), m.to(mg.float64)
    else:
        a, b = getattr(t, cast)(), getattr(m, cast)()
    assert b.stride() == a.stride()
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def _refusal(fn):
    try:
        fn()
    except TypeError as e:
        return str(e).replace("torch.", "minigrad.")
    return "accepted"


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3).softmax(1.0),
    lambda L: L.ones(2, 3).log_softmax(1.5),
    lambda L: L.softmax(L.ones(2, 3), 1.0),
    lambda L: L.log_softmax(L.ones(2, 3), "a"),
    lambda L: L.ones(2, 3).softmax(dim=1.0),
    lambda L: L.ones(2, 3).softmax(1.0, dtype=L.float64),
], ids=["method", "log_method", "function", "log_function_str", "keyword", "with_dtype"])
def test_softmax_refuses_a_dim_that_is_no_int_as_pytorch(call):
    theirs = _refusal(lambda: call(torch))
    assert theirs != "accepted"
    assert _refusal(lambda: call(mg)) == theirs
