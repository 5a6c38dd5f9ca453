"""The node an op records, as PyTorch records it (grad_fn's name and next_functions one level down): an in-place
op on a view (CopySlices holding the op's own node, its edges the base's and the op's other inputs'), with values,
gradients, hooks, version checks and double backward alongside."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

rng = np.random.default_rng(282)
A = rng.standard_normal((3, 4))
W = rng.standard_normal((3, 4))


def _name(f):
    return None if f is None else f.name().removeprefix("torch::autograd::")


def _node(t):
    g = t.grad_fn
    return _name(g), tuple(_name(f) for f, _ in g.next_functions)


VIEWS = {
    "select": lambda b: b[1],
    "slice": lambda b: b[:, 1:3],
    "narrow": lambda b: b.narrow(1, 0, 2),
    "diagonal": lambda b: b.diagonal(),
    "transpose": lambda b: b.t(),
    "view": lambda b: b.view(12),
    "unsqueeze": lambda b: b.unsqueeze(0),
    "as_strided": lambda b: b.as_strided((2, 2), (4, 1), 1),
    "view of a view": lambda b: b[1:][0],
}


def _mask(L, v):
    return L.tensor((np.arange(v.numel()) % 2 == 0).reshape(tuple(v.shape)))


def _setitem(v, value):
    v[...] = value


OPS = {
    "mul_ number": lambda L, v, o: v.mul_(2),
    "mul_ tensor": lambda L, v, o: v.mul_(o),
    "add_ alpha": lambda L, v, o: v.add_(o, alpha=2),
    "sub_": lambda L, v, o: v.sub_(o),
    "div_": lambda L, v, o: v.div_(o),
    "clamp_": lambda L, v, o: v.clamp_(-0.5, 0.5),
    "clamp_ tensor": lambda L, v, o: v.clamp_(o),
    "relu_": lambda L, v, o: v.relu_(),
    "sigmoid_": lambda L, v, o: v.sigmoid_(),
    "tanh_": lambda L, v, o: v.tanh_(),
    "zero_": lambda L, v, o: v.zero_(),
    "fill_": lambda L, v, o: v.fill_(1.5),
    "copy_": lambda L, v, o: v.copy_(o),
    "masked_fill_": lambda L, v, o: v.masked_fill_(_mask(L, v), 0.3),
    "index_add_": lambda L, v, o: v.index_add_(0, L.tensor([0]), o.expand(1, *v.shape[1:])),
    "setitem tensor": lambda L, v, o: _setitem(v, o),
    "setitem number": lambda L, v, o: _setitem(v, 0.25),
}


def _run(L, op, view):
    a = L.tensor(A, requires_grad=True)
    o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
    b = a.clone()
    v = VIEWS[view](b)
    OPS[op](L, v, o)
    node = _node(b)
    ((b * L.tensor(W)).sum() + (v * v).sum()).backward()
    return node, b.detach().numpy(), a.grad.numpy(), None if o.grad is None else o.grad.numpy()


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_on_view_node_values_and_grads(op, view):
    got, want = _run(minigrad, op, view), _run(torch, op, view)
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["mul_ tensor", "div_", "sigmoid_", "tanh_", "add_ alpha", "copy_"])
def test_inplace_on_view_double_backward(op):
    def run(L):
        a = L.tensor(A, requires_grad=True)
        o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
        b = a.clone()
        OPS[op](L, b[1:], o)
        ga, = L.autograd.grad((b * b * L.tensor(W)).sum(), a, create_graph=True)
        (ga * ga).sum().backward()
        return a.grad.numpy(), None if o.grad is None else o.grad.numpy()
    for g, w in zip(run(minigrad), run(torch)):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_inplace_on_view_hooks_and_retain_grad():
    def run(L):
        a = L.tensor(A, requires_grad=True)
        o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
        b = a.clone()
        v = b[1]
        v.retain_grad()
        seen, counts = [], []
        b.register_hook(lambda g: seen.append(g.numpy().copy()))
        v.mul_(o)
        b.grad_fn.register_hook(lambda gi, go: counts.append((len(gi), len(go))))
        ((b * L.tensor(W)).sum() + (v * v).sum()).backward()
        return seen, counts, v.grad.numpy()
    (seen, counts, gv), (want_seen, want_counts, wv) = run(minigrad), run(torch)
    assert counts == want_counts == [(2, 1)]
    assert len(seen) == len(want_seen) == 1
    np.testing.assert_allclose(seen[0], want_seen[0])
    np.testing.assert_allclose(gv, wv)


@pytest.mark.parametrize("op", ["sigmoid_", "mul_ tensor"])
def test_inplace_on_view_freed_graph(op):
    for L in (minigrad, torch):
        a = L.tensor(A, requires_grad=True)
        o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
        b = a.clone()
        OPS[op](L, b[1], o)
        loss = (b * b).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_inplace_on_view_version_check():
    for L in (minigrad, torch):  # sigmoid_ saved its result, the view's values: written since
        b = L.tensor(A, requires_grad=True).clone()
        v = b[1]
        v.sigmoid_()
        loss = (b * b).sum()
        v.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


ROUNDS = {
    "round": lambda L, a: L.round(a),
    "round decimals=0": lambda L, a: L.round(a, decimals=0),
    "round decimals=1": lambda L, a: L.round(a, decimals=1),
    "special.round": lambda L, a: L.special.round(a),
    "special.round decimals=0": lambda L, a: L.special.round(a, decimals=0),
    "special.round decimals=2": lambda L, a: L.special.round(a, decimals=2),
    "Tensor.round": lambda L, a: a.round(),
    "Tensor.round decimals=0": lambda L, a: a.round(decimals=0),
    "round_": lambda L, a: a.clone().round_(),
    "round_ decimals=0": lambda L, a: a.clone().round_(decimals=0),
}


def _rounded(L, op, dtype):
    a = L.tensor(np.array([1.25, -2.5, 3.5, 0.55]).astype(dtype))
    if dtype == "float32":
        a.requires_grad_()
    try:
        r = ROUNDS[op](L, a)
    except (RuntimeError, NotImplementedError) as e:
        return type(e).__name__, str(e)
    return _name(r.grad_fn), str(r.dtype).split(".")[-1], r.detach().numpy().tolist()


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("op", list(ROUNDS))
def test_round_node_and_refusals(op, dtype):  # decimals given, even 0: RoundBackward1, and integers refused
    assert _rounded(minigrad, op, dtype) == _rounded(torch, op, dtype)


def test_resolve_conj_of_conj_is_a_clone():
    def run(L):
        c = L.tensor(np.array([1 + 2j, -0.5j]), requires_grad=True)
        x = c.conj()
        r = x.resolve_conj()
        (r.real * 2 + r.imag * 3).sum().backward()
        return (_node(r), _node(L.resolve_conj(c * 2)), c.resolve_conj() is c, x.resolve_neg() is x,
                r.detach().numpy().tolist(), c.grad.resolve_conj().numpy().tolist())
    assert run(minigrad) == run(torch)


def _real_part_mul(L, o):
    a = L.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    c = a.clone()
    c.real.mul_(o)
    return a, c, c.abs().sum()


def _zero_dim_base_mul(L, o):
    a = L.tensor(1.5, dtype=L.float64, requires_grad=True)
    d = a.clone()
    d.view(1).mul_(o)
    return a, d, d * d


def _no_grad_base_mul(L, o):
    b = L.zeros(2, 3, dtype=L.float64)
    b[0].mul_(o)
    return None, b, (b * b).sum()


@pytest.mark.parametrize("case", [_real_part_mul, _zero_dim_base_mul, _no_grad_base_mul])
def test_inplace_on_other_views_node_and_grads(case):  # a complex base's real part, a 0-d base, a base without grad
    def run(L):
        o = L.tensor(0.7, dtype=L.float64, requires_grad=True)
        a, b, loss = case(L, o)
        node = _node(b)
        loss.backward()
        return node, None if a is None else a.grad.resolve_conj().numpy().tolist(), o.grad.item()
    got, want = run(minigrad), run(torch)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1] or 0, want[1] or 0)
    np.testing.assert_allclose(got[2], want[2])
