"""create_graph through ops whose gradient PyTorch keeps in a graph through their input with a zero second
derivative (pools, nll, prelu, max_unpool, area interpolation), or whose second derivative PyTorch refuses when
it runs (pdist, multi_margin, hardsigmoid, multilabel_margin, ctc, embedding_bag's per_sample_weights): the 1-D
and 3-D forms beside the 2-D ones of test_create_graph_constant_upstream.py, the names of PyTorch's nodes, and
the moment of a refusal (the second backward, not the first)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import minigrad  # noqa: E402

VOL = "x.reshape(1,1,3,2,2)"
CASES = {  # (a loss linear in the output: (y * w).sum())
 "max_pool2d_batched": "F.max_pool2d(x.reshape(1,1,3,4), 2)",
 "max_pool2d_idx": "F.max_pool2d(x[None,None], 2, 1, return_indices=True)[0]",
 "max_pool3d": f"F.max_pool3d({VOL}, 2, 1)",
 "avg_pool3d": f"F.avg_pool3d({VOL}, 2, 1)",
 "avg_pool2d_pad": "F.avg_pool2d(x[None,None], 2, 1, padding=1, count_include_pad=False)",
 "adaptive_avg3d": f"F.adaptive_avg_pool3d({VOL}, (2,1,2))",
 "adaptive_max3d": f"F.adaptive_max_pool3d({VOL}, (2,1,2))",
 "interp_area2d": "F.interpolate(x[None,None], size=(2,2), mode='area')",
 "interp_area3d": f"F.interpolate({VOL}, size=(2,1,1), mode='area')",
 "interp_nearest3d": f"F.interpolate({VOL}, scale_factor=2, mode='nearest')",
 "interp_bilinear": "F.interpolate(x[None,None], scale_factor=2, mode='bilinear')",
 "interp_bicubic": "F.interpolate(x[None,None], scale_factor=2, mode='bicubic')",
 "interp_trilinear": f"F.interpolate({VOL}, scale_factor=2, mode='trilinear')",
 "lp_pool1d": "F.lp_pool1d(x[None], 2, 2)",
 "lp_pool3d": f"F.lp_pool3d({VOL}, 2, 1)",
 "max_unpool2d": "F.max_unpool2d(*F.max_pool2d(x[None,None], 2, return_indices=True), 2)",
 "max_unpool3d": f"F.max_unpool3d(*F.max_pool3d({VOL}, (1,2,2), return_indices=True), (1,2,2))",
 "prelu_channels": "F.prelu(x[None], T.tensor([0.2,0.3,0.1],dtype=T.float64))",
 "prelu_weight_too": "F.prelu(x*x-1, x[0,:1]*x[0,:1])",
 "nll_2d": "F.nll_loss(x.reshape(1,4,3,1), T.tensor([[[0],[3],[1]]]), reduction='none')",
 "nll_mean": "F.nll_loss(x, T.tensor([0,3,1]))",
 "nll_ignore": "F.nll_loss(x, T.tensor([0,3,1]), ignore_index=3)",
 "nll_graph_upstream": "F.nll_loss(x, T.tensor([0,3,1]), reduction='none') * x[:, 0]",
 "max_pool_graph_upstream": "F.max_pool2d(x[None,None], 2) * x[:1, :2]",
 "avg_pool_graph_upstream": "F.avg_pool2d(x[None,None], 2) * x[:1, :2]",
}
REFUSED = {
 "multi_margin_p2": "F.multi_margin_loss(x, T.tensor([0,3,1]), p=2, reduction='none')",
 "multi_margin_w": "F.multi_margin_loss(x, T.tensor([0,3,1]), weight=T.tensor([1.,2.,3.,4.],dtype=T.float64))",
 "pdist_inf": "F.pdist(x, p=float('inf'))",
 "pdist_p3": "F.pdist(x, p=3)",
 "ctc_mean": "F.ctc_loss(x.reshape(3,1,4).log_softmax(2), T.tensor([[1,2]]), T.tensor([3]), T.tensor([2]))",
 "hardsigmoid_scaled": "F.hardsigmoid(x*2)",
 "hardsigmoid_graph_upstream": "F.hardsigmoid(x) * x",
 "embbag_psw_scaled": "F.embedding_bag(T.tensor([0,2,1,1]), x*x, T.tensor([0,2]), mode='sum', per_sample_weights=x[0]*1)",
 "multilabel_margin_mean": "F.multilabel_margin_loss(x, T.tensor([[0,3,-1,0],[1,-1,0,0],[2,1,0,-1]]))",
 "grid_sample_input": "F.grid_sample(x[None,None], T.tensor([[[[0.1,0.2],[-0.3,0.5]]]],dtype=T.float64))",
}


def _fn(src):
    return eval("lambda T, x: " + src.replace("F.", "T.nn.functional."))


def _first(T, f, x0):
    x = T.tensor(x0, requires_grad=True)
    y = f(T, x)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    g, = T.autograd.grad((y * w).sum(), x, create_graph=True)
    return x, g


def _second(T, f, x0):
    x, g = _first(T, f, x0)
    if not g.requires_grad:
        return g.detach().numpy(), None
    h, = T.autograd.grad((g * g).sum(), x)
    return g.detach().numpy(), (h.numpy(force=True) if T is torch else h.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_matches_torch(name):
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    for got, want in zip(_second(minigrad, _fn(CASES[name]), x0), _second(torch, _fn(CASES[name]), x0)):
        assert (got is None) == (want is None)  # a graph exactly where PyTorch's gradient has one
        if got is not None:
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_second_derivative_refused_when_it_runs(name):
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    errors = []
    for T in (minigrad, torch):
        x, g = _first(T, _fn(REFUSED[name]), x0)  # the first backward runs, and its gradient has a graph
        assert g.requires_grad
        with pytest.raises(Exception) as e:
            T.autograd.grad((g * g).sum(), x)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


NAMED = {  # the input's shape, the op: the first gradient's grad_fn is the op's double backward node
 "max_pool2d": ((1, 1, 4, 4), "F.max_pool2d(x, 2)"),
 "max_pool3d": ((1, 1, 2, 4, 4), "F.max_pool3d(x, 2)"),
 "avg_pool2d": ((1, 1, 4, 4), "F.avg_pool2d(x, 2)"),
 "avg_pool3d": ((1, 1, 2, 4, 4), "F.avg_pool3d(x, 2)"),
 "adaptive_avg2d": ((1, 1, 4, 4), "F.adaptive_avg_pool2d(x, 3)"),
 "adaptive_avg3d": ((1, 1, 2, 4, 4), "F.adaptive_avg_pool3d(x, 3)"),
 "adaptive_max2d": ((1, 1, 4, 4), "F.adaptive_max_pool2d(x, 3)"),
 "nll": ((3, 4), "F.nll_loss(x, T.tensor([0,3,1]))"),
 "prelu": ((3, 4), "F.prelu(x, T.tensor([0.2],dtype=T.float64))"),
 "hardsigmoid": ((3, 4), "F.hardsigmoid(x)"),
 "multi_margin": ((3, 4), "F.multi_margin_loss(x, T.tensor([0,3,1]))"),
 "multilabel_margin": ((3, 4), "F.multilabel_margin_loss(x, T.tensor([[0,3,-1,0],[1,-1,0,0],[2,1,0,-1]]))"),
 "pdist": ((3, 4), "F.pdist(x)"),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_double_backward_node_named_as_torch(name):
    shape, src = NAMED[name]
    x0 = np.random.default_rng(0).standard_normal(shape)
    names = [type(_first(T, _fn(src), x0)[1].grad_fn).__name__ for T in (minigrad, torch)]
    assert names[0] == names[1]


def test_first_order_gradient_keeps_no_graph():
    # without create_graph the gradients stay plain arrays: no node of the second order is made
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((1, 1, 4, 4)), requires_grad=True)
    for f in (lambda x: minigrad.nn.functional.max_pool2d(x, 2), lambda x: minigrad.nn.functional.avg_pool2d(x, 2),
              lambda x: minigrad.nn.functional.nll_loss(x.reshape(4, 4), minigrad.tensor([0, 1, 2, 3]))):
        g, = minigrad.autograd.grad(f(x).sum(), x)
        assert not g.requires_grad and g.grad_fn is None
