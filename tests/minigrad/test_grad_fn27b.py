"""Ops record PyTorch's node (grad_fn and next_functions one level down): multi_dot and chain_matmul end in a view
of the mm, matrix_norm(ord=±1, ±inf) is an amax/amin of vector norms, cond a squeeze of a ratio or a nan_to_num of a
product, outer/ger multiply a view of the first vector by the second, inner of vectors views a dot, sum/mean
with dtype= are one node, nansum and median/nanmedian(dim) have their own node, narrow is always a slice, flatten
of nothing is the input itself, atleast_2d/3d unsqueeze, Dirichlet.mode writes in place, and Embedding's gradient
under create_graph is EmbeddingDenseBackwardBackward0; an optional tensor argument not given (layer_norm's weight,
a conv's bias, clamp's bound, embedding_bag's per_sample_weights) is a None edge, and batch_norm's running
statistics are no edge; rrelu is RreluWithNoiseBackward0 and lstsq's empty residuals an output of its node. Values and gradients stay PyTorch's."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _n(*shape):
    return lambda r: r.standard_normal(shape)


def _f32(*shape):  # (cast up by dtype=: the sum's rounding is not in question here)
    return lambda r: r.standard_normal(shape).astype(np.float32)


# PyTorch's cond for these ords edits its saved inverse in place (masked_fill_): its backward refuses to run
NO_TORCH_GRAD = "no torch gradient"
# gelsy's empty residuals: PyTorch's gradient through them is None, minigrad's composite node gives zeros (left)
NODES_ONLY = "nodes and values only"

# (id, fn(L, *tensors) -> output (the first of a tuple is checked), [input makers][, NO_TORCH_GRAD])
CASES = [
    ("linalg.multi_dot 2", lambda L, a, b: L.linalg.multi_dot([a, b]), [_n(3, 4), _n(4, 2)]),
    ("linalg.multi_dot 3", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [_n(3, 4), _n(4, 2), _n(2, 5)]),
    ("linalg.multi_dot row", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [_n(4), _n(4, 2), _n(2, 5)]),
    ("linalg.multi_dot column", lambda L, a, b: L.linalg.multi_dot([a, b]), [_n(3, 4), _n(4)]),
    ("linalg.multi_dot vectors", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [_n(4), _n(4, 2), _n(2)]),
    ("chain_matmul", lambda L, a, b, c: L.chain_matmul(a, b, c), [_n(3, 4), _n(4, 2), _n(2, 5)]),
    ("matrix_norm 1", lambda L, a: L.linalg.matrix_norm(a, 1), [_n(3, 4)]),
    ("matrix_norm -1 keepdim", lambda L, a: L.linalg.matrix_norm(a, -1, keepdim=True), [_n(2, 3, 4)]),
    ("matrix_norm inf", lambda L, a: L.linalg.matrix_norm(a, float("inf")), [_n(3, 4)]),
    ("matrix_norm -inf dims", lambda L, a: L.linalg.matrix_norm(a, float("-inf"), dim=(0, 2)), [_n(3, 2, 4)]),
    ("matrix_norm inf dims reversed", lambda L, a: L.linalg.matrix_norm(a, float("inf"), dim=(2, 0)), [_n(3, 2, 4)]),
    ("linalg.norm 1", lambda L, a: L.linalg.norm(a, 1), [_n(3, 4)]),
    ("cond", lambda L, a: L.linalg.cond(a), [_n(3, 3)]),
    ("cond -2 batched", lambda L, a: L.linalg.cond(a, -2), [_n(2, 3, 3)]),
    ("cond fro", lambda L, a: L.linalg.cond(a, "fro"), [_n(3, 3)], NO_TORCH_GRAD),
    ("cond 1", lambda L, a: L.linalg.cond(a, 1), [_n(3, 3)], NO_TORCH_GRAD),
    ("cond -inf batched", lambda L, a: L.linalg.cond(a, float("-inf")), [_n(2, 3, 3)], NO_TORCH_GRAD),
    # an optional tensor argument not given is a None edge; batch_norm's running statistics are no edge
    ("layer_norm no affine", lambda L, a: L.nn.functional.layer_norm(a, (4,)), [_n(3, 4)]),
    ("layer_norm no bias", lambda L, a, w: L.nn.functional.layer_norm(a, (4,), w), [_n(3, 4), _n(4)]),
    ("batch_norm running stats", lambda L, a, w, b: L.nn.functional.batch_norm(
        a, L.zeros(3, dtype=a.dtype), L.ones(3, dtype=a.dtype), w, b, training=True), [_n(4, 3, 2), _n(3), _n(3)]),
    ("batch_norm eval", lambda L, a, w, b: L.nn.functional.batch_norm(
        a, L.zeros(3, dtype=a.dtype), L.ones(3, dtype=a.dtype), w, b), [_n(4, 3, 2), _n(3), _n(3)]),
    ("batch_norm eval no bias", lambda L, a, w: L.nn.functional.batch_norm(
        a, L.zeros(3, dtype=a.dtype), L.ones(3, dtype=a.dtype), w), [_n(4, 3, 2), _n(3)]),
    ("conv1d no bias", lambda L, a, w: L.nn.functional.conv1d(a, w), [_n(2, 3, 6), _n(4, 3, 2)]),
    ("conv2d no bias", lambda L, a, w: L.nn.functional.conv2d(a, w, padding=1), [_n(2, 3, 5, 5), _n(4, 3, 3, 3)]),
    ("conv_transpose2d no bias", lambda L, a, w: L.nn.functional.conv_transpose2d(a, w), [_n(2, 3, 4, 4), _n(3, 4, 3, 3)]),
    ("clamp tensor min", lambda L, a, lo: a.clamp(min=lo), [_n(3, 4), _n(3, 4)]),
    ("clamp tensor max", lambda L, a, hi: L.clamp(a, max=hi), [_n(3, 4), _n(3, 4)]),
    ("embedding_bag", lambda L, w: L.nn.functional.embedding_bag(L.tensor([[0, 1], [2, 4]]), w), [_n(5, 3)]),
    ("lstsq empty residuals", lambda L, a, b: L.linalg.lstsq(a, b).residuals, [_n(4, 3), _n(4, 2)], NODES_ONLY),
    ("lstsq gelsd residuals", lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd").residuals, [_n(4, 3), _n(4, 2)]),
    ("rrelu eval", lambda L, a: L.nn.functional.rrelu(a), [lambda r: np.array([-1.5, 0.0, 2.0, -0.3])]),
    ("outer", lambda L, a, b: L.outer(a, b), [_n(3), _n(4)]),
    ("ger", lambda L, a, b: L.ger(a, b), [_n(3), _n(4)]),
    ("inner vectors", lambda L, a, b: L.inner(a, b), [_n(4), _n(4)]),
    ("sum dtype", lambda L, a: a.sum(dtype=L.float64), [_f32(3, 4)]),
    ("sum dim dtype", lambda L, a: a.sum(1, dtype=L.float64), [_f32(3, 4)]),
    ("sum keepdim dtype", lambda L, a: L.sum(a, (0, 1), keepdim=True, dtype=L.float64), [_f32(3, 4)]),
    ("mean dtype", lambda L, a: a.mean(dtype=L.float64), [_f32(3, 4)]),
    ("mean dim dtype", lambda L, a: a.mean(-1, dtype=L.float64), [_f32(3, 4)]),
    ("nansum", lambda L, a: a.nansum(), [_n(3, 4)]),
    ("nansum dim", lambda L, a: a.nansum(1), [_n(3, 4)]),
    ("nanmean dim", lambda L, a: a.nanmean(1), [_n(3, 4)]),
    ("median dim", lambda L, a: a.median(1), [_n(3, 4)]),
    ("median dim keepdim", lambda L, a: a.median(0, keepdim=True), [_n(3, 4)]),
    ("nanmedian dim", lambda L, a: a.nanmedian(1), [_n(3, 4)]),
    ("narrow all", lambda L, a: a.narrow(0, 0, 3), [_n(3, 4)]),
    ("narrow all dim 1", lambda L, a: L.narrow(a, 1, 0, 4), [_n(3, 4)]),
    ("atleast_2d", lambda L, a: L.atleast_2d(a), [_n(4)]),
    ("atleast_3d", lambda L, a: L.atleast_3d(a), [_n(4)]),
    ("vstack", lambda L, a, b: L.vstack([a, b]), [_n(4), _n(4)]),
    ("dirichlet mode", lambda L, c: L.distributions.Dirichlet(c).mode, [lambda r: r.random(3) + 1.5]),
    ("dirichlet mode vertex", lambda L, c: L.distributions.Dirichlet(c).mode,
     [lambda r: np.array([[0.5, 0.3, 0.2], [2.0, 3.0, 4.0]])]),
]


def _name(node):
    return None if node is None else node.name().removeprefix("torch::autograd::")


def _nodes(out):
    if out.grad_fn is None:
        return None
    return _name(out.grad_fn), tuple(_name(f) for f, _ in out.grad_fn.next_functions)


def _run(L, fn, arrays):
    ts = [L.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (chain_matmul's deprecation)
        out = fn(L, *ts)
    return ts, out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_value_and_gradient_as_torch(case):
    _, fn, makers = case[:3]
    r = np.random.default_rng(27)
    arrays = [m(r) for m in makers]
    tt, tout = _run(torch, fn, arrays)
    mt, mout = _run(minigrad, fn, arrays)
    assert _nodes(mout) == _nodes(tout)
    assert str(mout.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1] and tuple(mout.shape) == tuple(tout.shape)
    np.testing.assert_allclose(mout.detach().numpy(), tout.detach().numpy(), rtol=1e-6, atol=1e-7)
    if case[3:] in ((NO_TORCH_GRAD,), (NODES_ONLY,)):
        return
    w = r.standard_normal(tuple(tout.shape))
    grads = [L.autograd.grad((out * L.tensor(w, dtype=out.dtype)).sum(), ts, allow_unused=True)
             for L, ts, out in ((minigrad, mt, mout), (torch, tt, tout))]
    for g, e in zip(*grads):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6, atol=1e-7)


# flatten that merges nothing gives the input itself (no node); a 0-d input becomes a view
FLATTEN = [("1-d", (4,), 0, -1), ("one dim of 2-d", (3, 4), 1, 1), ("first dim", (3, 4), 0, 0), ("0-d", (), 0, -1)]


@pytest.mark.parametrize("shape,start,end", [c[1:] for c in FLATTEN], ids=[c[0] for c in FLATTEN])
def test_flatten_of_nothing_is_the_input_as_torch(shape, start, end):
    a = np.random.default_rng(1).standard_normal(shape)
    outs = {}
    for L in (torch, minigrad):
        t = L.tensor(a, requires_grad=True)
        out = t.flatten(start, end)
        outs[L.__name__] = (out is t, _nodes(out), tuple(out.shape))
    assert outs["minigrad"] == outs["torch"]


@pytest.mark.parametrize("padding_idx", [None, 0], ids=["plain", "padding_idx"])
def test_embedding_gradient_under_create_graph_records_torchs_node(padding_idx):
    r = np.random.default_rng(3)
    w, g, ids = r.standard_normal((5, 3)), r.standard_normal((2, 3, 3)), np.array([[0, 2, 4], [1, 1, 0]])
    res = {}
    for L in (torch, minigrad):
        wt, gt = L.tensor(w, requires_grad=True), L.tensor(g, requires_grad=True)
        out = L.nn.functional.embedding(L.tensor(ids), wt, padding_idx=padding_idx)
        gw, = L.autograd.grad(out, wt, gt, create_graph=True)
        ggt, = L.autograd.grad((gw * gw).sum(), gt)  # (the recorded gradient is differentiable in its turn)
        res[L.__name__] = (_nodes(gw), gw.detach().numpy(), ggt.numpy())
    assert res["minigrad"][0] == res["torch"][0]
    np.testing.assert_allclose(res["minigrad"][1], res["torch"][1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res["minigrad"][2], res["torch"][2], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("training", [False, True], ids=["eval", "training"])
def test_rrelu_records_rrelu_with_noise_and_its_double_backward_node(training):
    a = np.array([-1.5, 0.0, 2.0, -0.3])
    res = {}
    for L in (torch, minigrad):
        t = L.tensor(a, requires_grad=True)
        out = L.nn.functional.rrelu(t, training=training)
        g, = L.autograd.grad(out.sum(), t, create_graph=True)
        slope = (g.detach().numpy()[0] if training else None)  # (training's slopes are drawn: 0's gradient is one)
        res[L.__name__] = (_nodes(out), _nodes(g), slope is None or 1 / 8 <= slope <= 1 / 3,
                           None if training else g.detach().numpy())
    assert res["minigrad"][:3] == res["torch"][:3]
    if not training:
        np.testing.assert_array_equal(res["minigrad"][3], res["torch"][3])
