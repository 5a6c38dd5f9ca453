"""The rest of torch.nn.functional's names (nn/_functional/composed*.py) against PyTorch: values and float64
gradients from the same inputs, PyTorch's errors, and the random ones by what their draws must satisfy."""
import re
import warnings

import numpy as np
import pytest

import minigrad
import nn.functional as F

RNG = np.random.default_rng(0)


def arr(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


class A:
    """A tensor argument passed by keyword: its shape (the values are drawn per test)."""

    def __init__(self, *shape):
        self.shape = shape


# losses whose targets (the argument at this index and after) PyTorch does not differentiate
TARGETS = {"soft_margin_loss": 1, "poisson_nll_loss": 1, "multilabel_soft_margin_loss": 1, "margin_ranking_loss": 2,
           "hinge_embedding_loss": 1, "cosine_embedding_loss": 2, "multi_margin_loss": 1}


def compare(torch, name, arrays, *args, grad=True, rtol=1e-6, atol=1e-9, **kwargs):
    """F.name(*tensors, *args, **kwargs) in both, float64: the outputs and (grad) each input's gradient."""
    outs = []
    kw_arrays = {k: arr(*v.shape) for k, v in kwargs.items() if isinstance(v, A)}
    first_target = TARGETS.get(name, len(arrays))
    for lib, fn in ((minigrad, getattr(F, name)), (torch, getattr(torch.nn.functional, name))):
        ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f" and i < first_target)
              if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
        kw = {k: lib.tensor(a, requires_grad=grad and not (k == "weight" and name in TARGETS))
              for k, a in kw_arrays.items()}
        y = fn(*ts, *args, **{**kwargs, **kw})
        ts += list(kw.values())
        ys = y if isinstance(y, tuple) else (y,)
        grads = []
        if grad:
            total = sum((t.double() * lib.tensor(np.cos(np.arange(t.numel())).reshape(tuple(t.shape)))).sum()
                        for t in ys if t.is_floating_point())
            total.backward()
            grads = [t.grad for t in ts if hasattr(t, "grad") and getattr(t, "requires_grad", False)]
        outs.append(([t.detach().numpy() for t in ys], [g.numpy() for g in grads]))
    (ours, our_grads), (theirs, their_grads) = outs
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=name)
    assert len(our_grads) == len(their_grads)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{name} gradient")


@pytest.mark.parametrize("name, shapes, kwargs", [
    ("sigmoid", [(3, 4)], {}), ("tanh", [(3, 4)], {}), ("glu", [(3, 4)], {}), ("glu", [(4, 6, 2)], {"dim": 1}),
    ("threshold", [(3, 4)], {"threshold": 0.3, "value": -5.0}), ("hardshrink", [(3, 4)], {}),
    ("hardshrink", [(3, 4)], {"lambd": 1.2}), ("softshrink", [(3, 4)], {"lambd": 0.7}), ("tanhshrink", [(3, 4)], {}),
    ("prelu", [(2, 3, 4), (3,)], {}), ("prelu", [(2, 3), (1,)], {}), ("prelu", [(5,), (1,)], {}),
    ("rrelu", [(3, 4)], {}), ("rrelu", [(3, 4)], {"lower": 0.2, "upper": 0.5}),
    ("normalize", [(3, 4)], {}), ("normalize", [(3, 4, 2)], {"p": 1.0, "dim": -1}),
    ("cosine_similarity", [(3, 4), (3, 4)], {}), ("cosine_similarity", [(3, 4), (1, 4)], {"dim": -1}),
    ("pairwise_distance", [(3, 4), (3, 4)], {}), ("pairwise_distance", [(3, 4), (3, 4)], {"p": 1.0, "keepdim": True}),
    ("pairwise_distance", [(4,), (4,)], {}), ("pdist", [(5, 3)], {}), ("pdist", [(4, 3)], {"p": 3.0}),
    ("bilinear", [(3, 4), (3, 5), (2, 4, 5), (2,)], {}), ("bilinear", [(2, 3, 4), (2, 3, 5), (6, 4, 5)], {}),
    ("pixel_shuffle", [(2, 8, 3, 3)], {"upscale_factor": 2}), ("pixel_unshuffle", [(2, 2, 6, 4)], {"downscale_factor": 2}),
    ("channel_shuffle", [(2, 6, 3)], {"groups": 3}),
    ("group_norm", [(2, 6, 5)], {"num_groups": 3, "weight": A(6), "bias": A(6)}),
    ("group_norm", [(2, 4, 3, 3)], {"num_groups": 2}),
    ("instance_norm", [(2, 3, 5)], {}), ("instance_norm", [(2, 3, 4, 4)], {"weight": A(3), "bias": A(3)}),
    ("rms_norm", [(3, 4)], {"normalized_shape": (4,)}),
    ("rms_norm", [(2, 3, 4)], {"normalized_shape": (3, 4), "weight": A(3, 4)}),
    ("max_pool1d", [(2, 3, 9)], {"kernel_size": 3}), ("max_pool1d", [(3, 10)], {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool1d", [(2, 3, 9)], {"kernel_size": 3, "stride": 2}), ("adaptive_avg_pool1d", [(2, 3, 10)], {"output_size": 4}),
    ("huber_loss", [(3, 4), (3, 4)], {}), ("huber_loss", [(3, 4), (3, 4)], {"delta": 0.5, "reduction": "none"}),
    ("soft_margin_loss", [(3, 4), (3, 4)], {}), ("poisson_nll_loss", [(3, 4), (3, 4)], {}),
    ("poisson_nll_loss", [(3, 4), (3, 4)], {"full": True, "reduction": "sum"}),
    ("multilabel_soft_margin_loss", [(3, 4), (3, 4)], {}),
    ("multilabel_soft_margin_loss", [(3, 4), (3, 4)], {"weight": A(4), "reduction": "none"}),
])
def test_values_and_gradients(torch, name, shapes, kwargs):
    arrays = [arr(*s) for s in shapes]
    if name in ("poisson_nll_loss",):
        arrays[1] = RNG.integers(0, 5, shapes[1]).astype(np.float64)
    if name in ("soft_margin_loss",):
        arrays[1] = RNG.choice([-1.0, 1.0], shapes[1])
    if name == "multilabel_soft_margin_loss":
        arrays[1] = RNG.integers(0, 2, shapes[1]).astype(np.float64)
    compare(torch, name, arrays, **kwargs)


def test_losses_with_class_or_sign_targets(torch):
    x1, x2, y = arr(6), arr(6), RNG.choice([-1.0, 1.0], 6)
    for reduction in ("mean", "sum", "none"):
        compare(torch, "margin_ranking_loss", [x1, x2, y], margin=0.3, reduction=reduction)
        compare(torch, "hinge_embedding_loss", [np.abs(x1), y], margin=1.5, reduction=reduction)
        compare(torch, "cosine_embedding_loss", [arr(6, 4), arr(6, 4), y], margin=0.2, reduction=reduction)
        compare(torch, "triplet_margin_loss", [arr(5, 3), arr(5, 3), arr(5, 3)], reduction=reduction)
        compare(torch, "triplet_margin_loss", [arr(5, 3), arr(5, 3), arr(5, 3)], swap=True, p=1.0, reduction=reduction)
        target = RNG.integers(0, 4, 5)
        compare(torch, "multi_margin_loss", [arr(5, 4), target], reduction=reduction)
        compare(torch, "multi_margin_loss", [arr(5, 4), target], p=2, margin=0.5, weight=A(4), reduction=reduction)
    compare(torch, "cosine_embedding_loss", [arr(4), arr(4), np.array(1.0)])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 1)), ((4,), (4,), (1,)), ((3, 4), (3, 4), ()),
                                    ((3, 4), (3, 4), (2,)), ((3, 4), (3, 5), (3,))])
def test_cosine_embedding_loss_target_dims_like_torch(torch, shapes):
    # the target's dims fix the inputs': a (3, 1) target gave a (3, 3) loss, a (1,) one took 1-D inputs
    def call(L):
        return L.nn.functional.cosine_embedding_loss(*(L.ones(s) for s in shapes), reduction="none")

    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError, match="^" + re.escape(str(want.value))):
        call(minigrad)


def test_cosine_embedding_loss_inputs_broadcast(torch):
    compare(torch, "cosine_embedding_loss", [arr(3, 4), arr(1, 4), np.array([1.0, -1.0, 1.0])], reduction="none")


@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(torch, var_shape, full):
    var = arr(*var_shape, lo=-0.5, hi=2.0).clip(1e-8, None)
    var.flat[0] = 1e-9  # below eps: the clamp passes the gradient through unchanged, as PyTorch's
    compare(torch, "gaussian_nll_loss", [arr(4, 3), arr(4, 3), var], full=full)


def test_gaussian_nll_loss_checks_var(torch):
    for var in (np.full(2, 0.5), np.full((4, 2), 0.5), np.full((1, 1), 0.5), 0.5, -0.5):
        ours, theirs = errors(torch, "gaussian_nll_loss", arr(4, 3), arr(4, 3), var)
        assert ours == theirs


def test_in_place_forms(torch):
    for name, kwargs in (("relu_", {}), ("elu_", {"alpha": 0.5}), ("leaky_relu_", {"negative_slope": 0.2}),
                         ("hardtanh_", {"min_val": -0.5, "max_val": 0.5}), ("selu_", {}), ("celu_", {"alpha": 2.0}),
                         ("threshold_", {"threshold": 0.1, "value": 7.0})):
        a = arr(3, 4)
        ours, theirs = minigrad.tensor(a), torch.tensor(a)
        assert getattr(F, name)(ours, **kwargs) is ours
        getattr(torch.nn.functional, name)(theirs, **kwargs)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7, err_msg=name)
        x = minigrad.tensor(a, requires_grad=True)
        y = x * 1.0
        getattr(F, name)(y, **kwargs).sum().backward()  # recorded on a clone: the gradient flows to x
        tx = torch.tensor(a, requires_grad=True)
        getattr(torch.nn.functional, name)(tx * 1.0, **kwargs).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7, err_msg=name)


def errors(torch, fn_name, *arrays, **kwargs):
    caught = []
    for lib, F_ in ((minigrad, F), (torch, torch.nn.functional)):
        try:
            getattr(F_, fn_name)(*[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays], **kwargs)
            caught.append(None)
        except Exception as e:  # noqa: BLE001 - type and text are compared
            caught.append((type(e), str(e).replace("torch.", "").replace("minigrad.", "")))
    return caught


@pytest.mark.parametrize("name, shapes, kwargs", [
    ("glu", [(3, 5)], {}), ("softshrink", [(3,)], {"lambd": -1.0}), ("prelu", [(2, 3, 4), (2,)], {}),
    ("pdist", [(2, 3, 4)], {}), ("pixel_shuffle", [(2, 5, 3, 3)], {"upscale_factor": 2}),
    ("pixel_unshuffle", [(2, 2, 5, 4)], {"downscale_factor": 2}), ("channel_shuffle", [(2, 5, 3)], {"groups": 2}),
    ("group_norm", [(2, 5, 3)], {"num_groups": 2}), ("dropout1d", [(2, 3, 4, 5)], {}),
    ("margin_ranking_loss", [(3,), (3,), (3, 1)], {}), ("gaussian_nll_loss", [(4, 3), (4, 3), (4, 3)], {}),
    ("multi_margin_loss", [(2, 3), (3,)], {"p": 3}), ("huber_loss", [(3,), (3,)], {"delta": 0.0}),
    ("huber_loss", [(3,), (3,)], {"delta": -1.0}), ("triplet_margin_loss", [(3, 2), (3, 2), (3, 2)], {"margin": 0.0}),
    ("triplet_margin_loss", [(3, 2), (3, 2), (3, 2)], {"margin": -1.5}),
])
def test_errors_as_pytorch(torch, name, shapes, kwargs):
    arrays = [arr(*s) if name not in ("multi_margin_loss",) or i == 0 else np.zeros(s, dtype=np.int64)
              for i, s in enumerate(shapes)]
    ours, theirs = errors(torch, name, *arrays, **kwargs)
    assert ours is not None and theirs is not None, (ours, theirs)
    assert issubclass(ours[0], theirs[0]) or issubclass(theirs[0], ours[0]), (ours, theirs)
    if name not in ("margin_ranking_loss", "pdist", "multi_margin_loss"):  # (shape reprs differ there)
        assert ours[1] == theirs[1]


# ---- the random ones: what their draws must satisfy ----------------------------------------------------
def test_rrelu_in_training_draws_slopes_in_range():
    x = minigrad.tensor(-np.ones((200, 50)))
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert ((-y >= 0.1) & (-y <= 0.3)).all() and 0.18 < -y.mean() < 0.22 and np.unique(y).size > 1000
    assert (F.rrelu(minigrad.ones(3), training=True).numpy() == 1).all()


@pytest.mark.parametrize("name, shape, batched", [("dropout1d", (4, 8, 20), True), ("dropout1d", (64, 20), False),
                                                  ("dropout2d", (4, 8, 5, 5), True), ("dropout3d", (64, 3, 4, 4), False),
                                                  ("dropout3d", (2, 8, 3, 4, 4), True)])
def test_channel_dropouts_drop_whole_channels(name, shape, batched):
    minigrad.manual_seed(0)
    x = minigrad.ones(*shape)
    y = getattr(F, name)(x, p=0.5, training=True).numpy()
    lead = 2 if batched else 1
    per_channel = y.reshape(*shape[:lead], -1)
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (per_channel == per_channel[..., :1]).all()  # a channel is kept or dropped whole
    assert 0.2 < (per_channel[..., 0] == 0).mean() < 0.8
    # as PyTorch: the input itself in eval mode, but an unbatched one comes back through unsqueeze and squeeze
    assert (getattr(F, name)(x, p=0.5, training=False) is x) == batched


def test_dropout2d_warns_as_pytorch_for_3d_input(torch):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        F.dropout2d(minigrad.ones(2, 3, 4))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nn.functional.dropout2d(torch.ones(2, 3, 4))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropouts_keep_selu_statistics(name):
    minigrad.manual_seed(0)
    x = minigrad.randn(400, 500, dtype=minigrad.float64)
    y = getattr(F, name)(x, p=0.3, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    dropped = -1.7580993408473766 * ((1 - 0.3) * (1 + 0.3 * 1.7580993408473766 ** 2)) ** -0.5 * (1 - 0.3)
    assert np.isclose(y, dropped).mean() > 0.25
    assert getattr(F, name)(x, p=0.3, training=False) is x


def test_gumbel_softmax():
    minigrad.manual_seed(0)
    logits = minigrad.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    np.testing.assert_allclose(h.mean(0), [0.7, 0.2, 0.1], atol=0.03)  # Gumbel-max samples the softmax
    (hard * minigrad.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all() and logits.grad.abs().sum() > 0


def test_upsample_aliases_warn_and_interpolate(torch):
    x = arr(1, 2, 3, 3)
    for name, kwargs in (("upsample", {"scale_factor": 2}), ("upsample_nearest", {"scale_factor": 2}),
                         ("upsample_bilinear", {"size": (5, 5)})):
        outs, said = [], []
        for lib, t in ((F, minigrad.tensor(x)), (torch.nn.functional, torch.tensor(x))):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                outs.append(getattr(lib, name)(t, **kwargs))
            said.append([(w.category, str(w.message)) for w in caught])
        ours, theirs = outs
        assert said[0] == said[1] == [(UserWarning, f"`nn.functional.{name}` is deprecated. Use "
                                                    "`nn.functional.interpolate` instead.")]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_triplet_margin_loss_module_refuses_a_margin_not_above_0(torch):
    with pytest.raises(ValueError) as theirs:
        torch.nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ValueError, match=f"^{re.escape(str(theirs.value))}$"):
        minigrad.nn.TripletMarginLoss(margin=0.0)


@pytest.mark.parametrize("x_dtype,w_dtype", [("float16", "float32"), ("float64", "float32"), ("float32", "float64")])
def test_rms_norm_returns_the_inputs_dtype_as_torch(torch, x_dtype, w_dtype):
    # nn.RMSNorm(d) (float32 weight) on a half activation: PyTorch's output stays half, whatever the weight's dtype
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    w = np.linspace(0.5, 1.5, 8)
    want = torch.nn.functional.rms_norm(torch.tensor(x).to(getattr(torch, x_dtype)), (8,),
                                        torch.tensor(w).to(getattr(torch, w_dtype)), 1e-6)
    got = F.rms_norm(minigrad.tensor(x).to(getattr(minigrad, x_dtype)), (8,),
                     minigrad.tensor(w).to(getattr(minigrad, w_dtype)), 1e-6)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=4e-3 if x_dtype == "float16" else 1e-6)


@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
def test_shrinks_are_one_node_differentiable_twice_as_torch(torch, name):
    # at the thresholds, between, beyond, and NaN: values (signed zeros too), node names, and a gradient that is
    # itself a node (PyTorch's <Name>BackwardBackward0) whose own gradient in x is 0, not None
    x = np.array([-1.0, -0.5, -0.2, 0.0, 0.5, 1.0, np.nan])
    got = []
    for lib, fn in ((minigrad, getattr(F, name)), (torch, getattr(torch.nn.functional, name))):
        t = lib.tensor(x, requires_grad=True)
        y = fn(t, 0.5)
        g, = lib.autograd.grad(y.sum(), t, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), t, allow_unused=True)
        got.append((y.detach().numpy(), np.signbit(y.detach().numpy()), type(y.grad_fn).__name__, g.detach().numpy(),
                    type(g.grad_fn).__name__, None if gg is None else gg.numpy()))
    ours, theirs = got
    assert ours[2] == theirs[2] and ours[4] == theirs[4]
    for a, b in zip(ours[:2] + ours[3:4] + ours[5:], theirs[:2] + theirs[3:4] + theirs[5:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,kernel", [("hardshrink", "hardshrink_cpu"), ("softshrink", "softshrink_check")])
def test_shrinks_refuse_integer_input_as_torch(torch, name, kernel):
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch.nn.functional, name)(torch.tensor([1, -2, 0]))
    with pytest.raises(NotImplementedError, match=f"^{re.escape(str(theirs.value))}$"):
        getattr(F, name)(minigrad.tensor([1, -2, 0]))


def test_group_norm_empty_batch_and_integer_input_as_torch(torch):
    # an empty batch gives an empty output and gradient; an integer input is refused with PyTorch's text
    got = minigrad.zeros(0, 4, 3, requires_grad=True)
    want = torch.zeros(0, 4, 3, requires_grad=True)
    y, y_ref = F.group_norm(got, 2), torch.nn.functional.group_norm(want, 2)
    assert tuple(y.shape) == tuple(y_ref.shape)
    y.sum().backward()
    y_ref.sum().backward()
    assert tuple(got.grad.shape) == tuple(want.grad.shape)
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.functional.group_norm(torch.ones(2, 4, 3, dtype=torch.int64), 2)
    with pytest.raises(NotImplementedError) as ours:
        F.group_norm(minigrad.ones(2, 4, 3, dtype=minigrad.int64), 2)
    assert str(ours.value) == str(theirs.value)
