"""What the second round of longer, newly seeded fuzzer runs found, reduced and compared with PyTorch."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _floor_divide_half(L, a, b, n):
    return L.floor_divide(L.tensor(np.full(n, a, np.float16)), L.tensor(np.full(n, b, np.float16))).tolist()


@pytest.mark.parametrize("a, b", [(-13.03, 0.00655), (10.46, 0.005512)])
def test_floor_divide_half_is_the_floor_of_the_quotient(a, b):
    # the floor of the exact quotient, rounded to float16: PyTorch's one-element result
    floor = float(np.float16(np.floor(np.float64(np.float16(a)) / np.float64(np.float16(b)))))
    assert _floor_divide_half(mg, a, b, 4) == [floor] * 4
    assert _floor_divide_half(torch, a, b, 1) == [floor]


@pytest.mark.xfail(strict=True, reason="PyTorch's vectorized float16 floor_divide (two or more elements) gives a "
                   "quotient one past the floor of the exact one, where its one-element path gives the floor")
def test_floor_divide_half_vectorized_in_torch():
    assert _floor_divide_half(torch, -13.03, 0.00655, 4) == _floor_divide_half(mg, -13.03, 0.00655, 4)


_HALF_VECTOR = np.random.default_rng(3).standard_normal(16).astype(np.float16)  # its sum of squares rounds off in half


@pytest.mark.parametrize("p", [2, 1, 3, float("inf")])
def test_norm_of_half_sums_in_float32_and_rounds_once(p):
    # PyTorch's half norm accumulates in float32: the exact norm rounded to float16 once, and the backward,
    # which reads it, the same bits
    def run(L):
        x = L.tensor(_HALF_VECTOR, requires_grad=True)
        n = x.norm(p=p)
        n.backward(L.tensor(np.float16(0.7)))
        return n.item(), x.grad.tolist()
    exact = np.sum(np.abs(_HALF_VECTOR.astype(np.float64)) ** p) ** (1 / p) if p != float("inf") else None
    (n, g), (tn, tg) = run(mg), run(torch)
    assert n == tn and g == tg
    if exact is not None:
        assert n == float(np.float16(exact))


def test_dist_of_half_sums_in_float32_and_rounds_once():
    y = _HALF_VECTOR[::-1].copy()
    got, want = (L.dist(L.tensor(_HALF_VECTOR), L.tensor(y)).item() for L in (mg, torch))
    d = (_HALF_VECTOR - y).astype(np.float64)  # (the difference is a float16 tensor first, in both)
    assert got == want == float(np.float16(np.sqrt(np.sum(d ** 2))))


@pytest.mark.parametrize("scale", [1e-3, 1.0])
def test_rms_norm_of_half_in_float32_with_its_eps(scale):
    # PyTorch's half rms_norm computes in float32, with float32's machine epsilon as the default
    # eps (not float16's, which outweighs mean(x^2) of small inputs), and rounds once; the gradients read it
    import nn.functional as F
    import torch.nn.functional as TF

    x = np.random.default_rng(0).standard_normal((3, 8)) * scale
    w = np.random.default_rng(1).standard_normal(8)
    g = np.random.default_rng(2).standard_normal((3, 8))

    def run(L, f):
        dt = L.float16
        xt, wt = L.tensor(x, dtype=dt, requires_grad=True), L.tensor(w, dtype=dt, requires_grad=True)
        y = f.rms_norm(xt, (8,), wt)
        y.backward(L.tensor(g, dtype=dt))
        return [t.detach().float().numpy().astype(np.float64) for t in (y, xt.grad, wt.grad)] + [str(y.dtype)]

    *ours, our_dtype = run(mg, F)
    *theirs, their_dtype = run(torch, TF)
    assert our_dtype.split(".")[-1] == their_dtype.split(".")[-1]
    for a, b in zip(ours, theirs):  # within an ulp of the float16 value (the order of float32 sums)
        np.testing.assert_allclose(a, b, rtol=2.0 ** -10, atol=1e-6)


def _index_fill_grads(L, shape, index):
    x0 = L.zeros(shape, dtype=L.float64, requires_grad=True)
    v = L.tensor(3.0, dtype=L.float64, requires_grad=True)
    x0.clone().index_fill_(0, L.tensor(index), v).sum().backward()
    return v.grad.item(), x0.grad.tolist()


@pytest.mark.parametrize("shape, index", [((), -1), ((3,), [-1, 0])])
def test_index_fill_negative_index_backward(shape, index):
    # the forward takes a negative index as PyTorch's does; the gradients are those of its wrapped index
    wrapped = [i % (shape[0] if shape else 1) for i in np.atleast_1d(index)]
    assert _index_fill_grads(mg, shape, index) == _index_fill_grads(torch, shape, wrapped if shape else 0)


@pytest.mark.xfail(strict=True, raises=IndexError, reason="PyTorch's index_fill_ backward (a tensor value) takes "
                   "index_select of the gradient at the index unwrapped: its forward takes a negative index, its "
                   "backward refuses it ('index out of range in self')")
def test_index_fill_negative_index_backward_in_torch():
    assert _index_fill_grads(torch, (3,), [-1, 0]) == _index_fill_grads(mg, (3,), [-1, 0])
