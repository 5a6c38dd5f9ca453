"""Function.fp_arithmetic: ops that only move values (views, cat, embedding's lookup) run their forward
without numpy's quiet floating-point state; every other op still computes inf and nan without warnings."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
from minigrad.autograd import Function


class _Reciprocal(Function):
    @staticmethod
    def forward(ctx, a):
        return 1.0 / a.array

    @staticmethod
    def backward(ctx, g):
        return g


class _ReciprocalUnquieted(_Reciprocal):
    fp_arithmetic = False


@pytest.mark.parametrize("requires_grad", [False, True])
def test_fp_arithmetic_false_leaves_numpy_state_alone(requires_grad):
    x = minigrad.tensor([0.0, 1.0], requires_grad=requires_grad)
    with np.errstate(divide="raise"):
        assert _Reciprocal.apply(x).tolist() == [float("inf"), 1.0]  # quieted: PyTorch's inf
        with pytest.raises(FloatingPointError):
            _ReciprocalUnquieted.apply(x)  # declared free of arithmetic: apply does not quiet it


def test_value_moving_ops_match_torch_under_raise():
    torch = pytest.importorskip("torch")
    data = np.array([[np.inf, -np.inf, np.nan], [1e38, -0.0, 3.0]], dtype=np.float32)
    ids = np.array([1, 0, 1])

    def run(lib, F):
        x = lib.tensor(data, requires_grad=True)
        outs = [x.view(3, 2), x.t(), x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(0), x.unsqueeze(0).squeeze(0),
                x[:, :1].expand(2, 3), lib.cat([x, x], 0), F.embedding(lib.tensor(ids), x)]
        sum(o.sum() for o in outs[:-1]).backward()
        return [o.detach().numpy() for o in outs], x.grad.numpy()

    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        got, got_grad = run(minigrad, nn.functional)
    want, want_grad = run(torch, torch.nn.functional)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_grad, want_grad)


def test_cat_and_embedding_gradients_and_names():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (4, 3), (5, 3)))
    ids = np.array([[4, 0], [4, 2]])
    grads = {}
    for name, lib, F in (("mg", minigrad, nn.functional), ("torch", torch, torch.nn.functional)):
        ta, tb, tw = (lib.tensor(v, requires_grad=True) for v in (a, b, w))
        c, e = lib.cat([ta, tb], 0), F.embedding(lib.tensor(ids), tw, padding_idx=2)
        (c * lib.arange(18.).reshape(6, 3)).sum().backward()
        (e * lib.arange(12.).reshape(2, 2, 3)).sum().backward()
        grads[name] = [t.grad.numpy() for t in (ta, tb, tw)] + [c.grad_fn.name(), e.grad_fn.name()]
    for g, want in zip(grads["mg"], grads["torch"]):
        np.testing.assert_array_equal(g, want)
