"""The nodes an op records, as PyTorch records them (grad_fn's name and next_functions, down the chain of first
edges), with the values and gradients alongside: an advanced index with basic parts mixed in, fill_ with a tensor."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2830)
A = rng.standard_normal((3, 4, 5))
IDS = np.array([0, 2])
ROWS = np.array([True, False, True])
COLS = np.array([True, False, True, True])


def _name(f):
    return None if f is None else f.name().removeprefix("torch::autograd::")


def _chain(t):
    """(name, next names) of each node from t's grad_fn down its first edges to the leaf."""
    out, g = [], t.grad_fn
    while g is not None and _name(g) != "AccumulateGrad":
        out.append((_name(g), tuple(_name(f) for f, _ in g.next_functions)))
        g = g.next_functions[0][0] if g.next_functions else None
    return out


GETITEM = {
    "a[x, 1]": lambda L, a: a[L.tensor(IDS), 1],
    "a[0, x]": lambda L, a: a[0, L.tensor(IDS)],
    "a[:, x, 1]": lambda L, a: a[:, L.tensor(IDS), 1],
    "a[1, :, x]": lambda L, a: a[1, :, L.tensor(IDS)],
    "a[x, ..., 1]": lambda L, a: a[L.tensor(IDS), ..., 1],
    "a[x, ::2, 1]": lambda L, a: a[L.tensor(IDS), ::2, 1],
    "a[x, 1:3]": lambda L, a: a[L.tensor(IDS), 1:3],
    "a[1:, x]": lambda L, a: a[1:, L.tensor(IDS)],
    "a[1:, None, x]": lambda L, a: a[1:, None, L.tensor(IDS)],
    "a[x, None]": lambda L, a: a[L.tensor(IDS), None],
    "a[None, x]": lambda L, a: a[None, L.tensor(IDS)],
    "a[True]": lambda L, a: a[True],
    "a[False]": lambda L, a: a[False],
    "a[True, x]": lambda L, a: a[True, L.tensor(IDS)],
    "a[True, 1]": lambda L, a: a[True, 1],
    "a[True, 1:]": lambda L, a: a[True, 1:],
    "a[tensor(True), 1]": lambda L, a: a[L.tensor(True), 1],
    "a[tensor(1), x]": lambda L, a: a[L.tensor(1), L.tensor(IDS)],
    "a[mask, 0]": lambda L, a: a[L.tensor(ROWS), 0],
    "a[0, mask]": lambda L, a: a[0, L.tensor(COLS)],
    "a[1, [0, 1]]": lambda L, a: a[1, [0, 1]],
    "a[[0, 1], 1]": lambda L, a: a[[0, 1], 1],
    # unchanged: no basic part, or only whole slices and Ellipsis
    "a[x]": lambda L, a: a[L.tensor(IDS)],
    "a[mask]": lambda L, a: a[L.tensor(ROWS)],
    "a[:, x]": lambda L, a: a[:, L.tensor(IDS)],
    "a[..., x]": lambda L, a: a[..., L.tensor(IDS)],
    "a[x, x]": lambda L, a: a[L.tensor(IDS), L.tensor(IDS)],
}


def _getitem(L, case):
    a = L.tensor(A, requires_grad=True)
    out = GETITEM[case](L, a)
    w = L.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
    (out * w).sum().backward()
    return _chain(out), tuple(out.shape), out.detach().numpy(), a.grad.numpy()


@pytest.mark.parametrize("case", list(GETITEM))
def test_getitem_basic_parts_before_the_index(case):
    want, got = _getitem(torch, case), _getitem(minigrad, case)
    assert got[0] == want[0]
    assert got[1] == want[1]
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])


BAD = {
    "[x, 5]": lambda L, a: a[L.tensor(IDS), 5],
    "[1, :, y]": lambda L, a: a[1, :, L.tensor([0, 7])],
    "[1:, None, y]": lambda L, a: a[1:, None, L.tensor([0, 7])],
    "[y, 1]": lambda L, a: a[L.tensor([0, 7]), 1],
    "[False, x]": lambda L, a: a[False, L.tensor(IDS)],
}


@pytest.mark.parametrize("index", list(BAD))
def test_getitem_basic_parts_errors_unchanged(index):
    def err(L):
        with pytest.raises(Exception) as e:
            BAD[index](L, L.tensor(A, requires_grad=True))
        return type(e.value), str(e.value)
    assert err(minigrad) == err(torch)


def _node(t):
    g = t.grad_fn
    return _name(g), tuple(_name(f) for f, _ in g.next_functions)


FILL = {  # (self's dtype, the value's dtype, whether the value requires grad, whether self does, on a view)
    "plain": ("float64", "float64", True, True, False),
    "on a view": ("float64", "float64", True, True, True),
    "value without grad": ("float64", "float64", False, True, False),
    "self without grad": ("float64", "float64", True, False, False),
    "self without grad, on a view": ("float64", "float64", True, False, True),
    "float32 self, float64 value": ("float32", "float64", True, True, False),
    "int value": ("float64", "int64", False, True, False),
    "int value, on a view": ("float64", "int64", False, True, True),
}


def _fill(L, case):
    self_dtype, value_dtype, value_grad, self_grad, view = FILL[case]
    a = L.tensor(A[0], dtype=getattr(L, self_dtype), requires_grad=self_grad)
    v = L.tensor(3 if value_dtype == "int64" else 0.5, dtype=getattr(L, value_dtype), requires_grad=value_grad)
    b = a.clone()
    (b[1] if view else b).fill_(v)
    node = _node(b)
    (b * L.tensor(A[1], dtype=b.dtype)).sum().backward()
    grads = [None if t.grad is None else (t.grad.numpy(), str(t.grad.dtype).split(".")[1]) for t in (a, v)]
    return node, b.detach().numpy(), str(b.dtype).split(".")[1], grads


@pytest.mark.parametrize("case", list(FILL))
def test_fill_with_a_tensor_records_fill_backward3(case):
    want, got = _fill(torch, case), _fill(minigrad, case)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] == want[2]
    for g, w in zip(got[3], want[3]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g[0], w[0], rtol=1e-6)
            assert g[1] == w[1]


def _spd(n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


OPS = {  # name: (op, its float64 inputs, whether each requires grad)
    "take_along_dim": (lambda L, a: L.take_along_dim(a, L.tensor(np.array([[0], [3], [2]])), 1), [A[0, :3, :4]]),
    "take_along_dim broadcast": (lambda L, a: L.take_along_dim(a, L.tensor(np.array([[2, 0, 1, 1]])), 0), [A[0, :3, :4]]),
    "take_along_dim flat": (lambda L, a: L.take_along_dim(a, L.tensor(np.array([0, 5]))), [A[0, :3, :4]]),
    "pairwise_distance": (lambda L, a, b: L.nn.functional.pairwise_distance(a, b), [A[0], A[1]]),
    "pairwise_distance p=1 keepdim": (lambda L, a, b: L.nn.functional.pairwise_distance(a, b, 1.0, keepdim=True),
                                      [A[0], A[1]]),
    "logdet": (lambda L, a: L.logdet(a), [_spd(3)]),
    "logdet negative det": (lambda L, a: L.logdet(a), [np.array([[1.0, 2.0], [3.0, 4.0]])]),
    "logdet batch": (lambda L, a: L.logdet(a), [np.stack([_spd(3), -_spd(3)])]),
}


def _op(L, case):
    op, inputs = OPS[case]
    ts = [L.tensor(x, requires_grad=True) for x in inputs]
    out = op(L, *ts)
    out.sum().backward()
    return _chain(out), out.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("case", list(OPS))
def test_composite_ops_inner_nodes(case):
    want, got = _op(torch, case), _op(minigrad, case)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, equal_nan=True)
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)

