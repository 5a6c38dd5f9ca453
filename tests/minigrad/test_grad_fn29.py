"""The node an op records, as PyTorch records it (grad_fn's name and next_functions one level down), with the
values and gradients alongside: the *_copy ops, the *_scatter ops, tensorinv, margin_ranking_loss"""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2900)
A = rng.standard_normal((3, 4))
C = rng.standard_normal(3) + 1j * rng.standard_normal(3)


def _name(f):
    return None if f is None else f.name().removeprefix("torch::autograd::")


def _node(t):
    g = t.grad_fn
    return None if g is None else (_name(g), tuple(_name(f) for f, _ in g.next_functions))


OPS = {  # name: (op, its inputs (float64 or complex128, each requiring grad))
    "t_copy": (lambda L, a: L.t_copy(a), [A]),
    "transpose_copy": (lambda L, a: L.transpose_copy(a, 0, 1), [A]),
    "permute_copy": (lambda L, a: L.permute_copy(a, (1, 0)), [A]),
    "view_copy": (lambda L, a: L.view_copy(a, (12,)), [A]),
    "view_copy of a transpose": (lambda L, a: L.view_copy(a.t(), (12,)), [A]),
    "expand_copy": (lambda L, a: L.expand_copy(a, (2, 3, 4)), [A]),
    "diagonal_copy": (lambda L, a: L.diagonal_copy(a, 1), [A]),
    "select_copy": (lambda L, a: L.select_copy(a, 1, -1), [A]),
    "slice_copy": (lambda L, a: L.slice_copy(a, 1, 1, 3), [A]),
    "narrow_copy": (lambda L, a: L.narrow_copy(a, 1, 1, 2), [A]),
    "squeeze_copy": (lambda L, a: L.squeeze_copy(a[:, None]), [A]),
    "squeeze_copy dim": (lambda L, a: L.squeeze_copy(a[:, None], 1), [A]),
    "squeeze_copy dims": (lambda L, a: L.squeeze_copy(a[:, None], (1,)), [A]),
    "unsqueeze_copy": (lambda L, a: L.unsqueeze_copy(a, 0), [A]),
    "unbind_copy": (lambda L, a: L.unbind_copy(a, 1), [A]),
    "split_copy": (lambda L, a: L.split_copy(a, 2), [A]),
    "split_with_sizes_copy": (lambda L, a: L.split_with_sizes_copy(a, [1, 3], 1), [A]),
    "alias_copy": (lambda L, a: L.alias_copy(a), [A]),
    "unfold_copy": (lambda L, a: L.unfold_copy(a, 1, 2, 1), [A]),
    "as_strided_copy": (lambda L, a: L.as_strided_copy(a, (2, 2), (4, 1)), [A]),
    "view_as_real_copy": (lambda L, a: L.view_as_real_copy(a), [C]),
    "select_scatter": (lambda L, a, v: L.select_scatter(a, v, 1, -1), [A, A[:, 0]]),
    "slice_scatter": (lambda L, a, v: L.slice_scatter(a, v, 1, 1, 4, 2), [A, A[:, :2]]),
    "diagonal_scatter": (lambda L, a, v: L.diagonal_scatter(a, v, 1), [A, A[0, :3]]),
    "diagonal_scatter dims": (lambda L, a, v: L.diagonal_scatter(a, v, 0, 1, 0), [A, A[0, :3]]),
    "margin_ranking_loss none": (lambda L, a, b: L.nn.functional.margin_ranking_loss(
        a, b, L.tensor([1.0, -1.0, 1.0, -1.0]), 0.5, reduction="none"), [A[0], A[1]]),
    "margin_ranking_loss none, no margin": (lambda L, a, b: L.nn.functional.margin_ranking_loss(
        a, b, L.tensor([1.0, -1.0, 1.0, -1.0]), reduction="none"), [A[0], A[1]]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, 1), [rng.standard_normal((4, 2, 2)) + 3 * np.eye(4).reshape(4, 2, 2)]),
    "tensorinv ind=2": (lambda L, a: L.linalg.tensorinv(a, 2),
                        [rng.standard_normal((2, 2, 2, 2)) + 3 * np.eye(4).reshape(2, 2, 2, 2)]),
}


def _run(L, case):
    op, inputs = OPS[case]
    ts = [L.tensor(x, requires_grad=True) for x in inputs]
    out = op(L, *ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = sum(((k + 1) * o * o).sum() for k, o in enumerate(outs))
    total.backward()
    return [_node(o) for o in outs], [o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("case", list(OPS))
def test_node_values_and_gradients_as_pytorch(case):
    want, got = _run(torch, case), _run(minigrad, case)
    assert got[0] == want[0]
    for g, w in zip(got[1] + got[2], want[1] + want[2]):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
