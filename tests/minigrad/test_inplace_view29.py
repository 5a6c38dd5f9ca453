"""In-place writes into views and slices of a tensor, against PyTorch: values, gradients and node names for
the places a view can have in its base (slices, ints, new dims, steps, a transposed or reshaped view, a 0-d
base, no elements), and the overwritten region's gradient exactly zero where the output's is inf."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

rng = np.random.default_rng(29)
X = rng.standard_normal((4, 6, 5))

VIEWS = {  # name: how the view is taken of the (4, 6, 5) clone, and its shape
    "slice": (lambda t: t[1:3], (2, 6, 5)),
    "select then slice": (lambda t: t[:, 2, 1:4], (4, 3)),
    "steps": (lambda t: t[::2, 1::3], (2, 2, 5)),
    "narrow of select": (lambda t: t.narrow(0, 1, 2).select(2, 4), (2, 6)),
    "unsqueeze of a select": (lambda t: t[2].unsqueeze(1), (6, 1, 5)),
    "one element": (lambda t: t[3, 5, 4], ()),
    "transposed": (lambda t: t.transpose(0, 2)[1:4], (3, 6, 4)),
    "rows of a reshape": (lambda t: t.view(24, 5)[3:9], (6, 5)),
    "every third element": (lambda t: t.view(-1)[::3], (40,)),
    "no elements": (lambda t: t[:, 2:2], (4, 0, 5)),
}


def _run(L, view, op):
    x0 = L.tensor(X, requires_grad=True)
    x = x0.clone()
    take, shape = VIEWS[view]
    v = take(x)
    w = L.tensor(rng.standard_normal(shape) if shape else 0.5, requires_grad=True) if op != "mul_" else None
    old = take(x) * 1  # (a view taken before the write: its history is regrown after it)
    if op == "copy_":
        v.copy_(w)
    elif op == "add_":
        v.add_(w)
    else:
        v.mul_(3.0)
    later = take(x)
    (x * x).sum().backward(retain_graph=True)
    (later.sin().sum() + old.sum()).backward()
    grads = [x0.grad.numpy()] + ([w.grad.numpy()] if w is not None else [])
    return x.grad_fn.name().split("::")[-1], v.grad_fn.name(), x.detach().numpy(), grads


@pytest.mark.parametrize("op", ["copy_", "add_", "mul_"])
@pytest.mark.parametrize("view", list(VIEWS))
def test_write_into_a_view_as_pytorch(view, op):
    rng.bit_generator.state = np.random.default_rng(view.__len__()).bit_generator.state
    want = _run(torch, view, op)
    rng.bit_generator.state = np.random.default_rng(view.__len__()).bit_generator.state
    got = _run(minigrad, view, op)
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-14)
    for g, w in zip(got[3], want[3]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_write_into_a_view_of_a_0d_base_as_pytorch():
    def run(L):
        x0 = L.tensor(2.0, requires_grad=True)
        x = x0 * 1
        x.unsqueeze(0).unsqueeze(1).mul_(3.0)
        (x * x).backward()
        return x.grad_fn.name().split("::")[-1], x.item(), x0.grad.item()

    assert run(minigrad) == run(torch)


@pytest.mark.parametrize("write", ["slice", "select of a view", "ids"])
def test_overwritten_region_gets_zeros_where_the_gradient_is_inf(write):
    def run(L):
        x0 = L.tensor(np.ones((3, 4)), requires_grad=True)
        x = x0.clone()
        if write == "slice":
            x[:, 1:3] = L.tensor(np.ones((3, 2)))
        elif write == "select of a view":
            x[1:][:, 2].copy_(L.tensor(np.ones(2)))
        else:
            x[L.tensor([0, 2])] = L.tensor(np.ones(4))
        g = np.ones((3, 4))
        g[:, 2] = np.inf
        g[0] = np.inf
        x.backward(L.tensor(g))
        return x0.grad.numpy()

    np.testing.assert_array_equal(run(minigrad), run(torch))
