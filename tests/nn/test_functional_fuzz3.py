"""Empty tensors through nn.functional (a 0 in the batch, channel, normalized or spatial dims), each case
pinned against PyTorch: the same outcome (the same error type and text, or the same values, gradients,
dtype, shape and grad_fn), and the texts of a few refusals."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

torch = pytest.importorskip("torch")


from twins import fuzz_rand as rand, outcome, same  # noqa: E402,F401


# ---- normalizations -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, ns", [((1, 4, 0), (0,)), ((0,), (0,)), ((2, 3, 0), (3, 0)), ((0, 4), (4,)),
                                       ((2, 0, 3), (0, 3)), ((0, 3, 2), (3, 2))])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_empty(shape, ns, affine):
    if affine:
        same(lambda F, x, w, b: F.layer_norm(x, ns, w, b), rand(*shape), rand(*ns), rand(*ns))
    else:
        same(lambda F, x: F.layer_norm(x, ns), rand(*shape))


@pytest.mark.parametrize("shape, ns", [((1, 4, 0), (0,)), ((0, 4), (4,)), ((2, 0, 3), (0, 3))])
def test_rms_norm_empty(shape, ns):
    same(lambda F, x, w: F.rms_norm(x, ns, w), rand(*shape), rand(*ns))


def test_layer_norm_empty_rows_double_backward():
    for shape, ns in (((2, 3, 0), (0,)), ((0, 3), (3,))):
        x = minigrad.tensor(rand(*shape), requires_grad=True)
        w = minigrad.tensor(rand(*ns), requires_grad=True)
        gx, gw = minigrad.autograd.grad(F.layer_norm(x, ns, w).sum(), (x, w), create_graph=True)
        assert tuple(gx.shape) == shape and tuple(gw.shape) == ns and not gw.detach().numpy().any()


@pytest.mark.parametrize("shape, groups", [((2, 4, 0), 2), ((2, 4, 0, 3), 1), ((0, 4, 3), 2), ((0, 0, 3), 1),
                                           ((1, 2, 0), 2)])
def test_group_norm_empty(shape, groups):
    # (PyTorch's node is one NativeGroupNormBackward0; minigrad's group_norm is composed of layer_norm)
    same(lambda F, x: F.group_norm(x, groups), rand(*shape), grad_fn=False)
    if shape[0] == 0:  # (PyTorch's weight gradient over positions of nothing is nan: its statistics are 0/0)
        same(lambda F, x, w, b: F.group_norm(x, groups, w, b), rand(*shape), rand(shape[1]), rand(shape[1]),
             grad_fn=False)


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0), (1, 3, 0, 2), (2, 0, 3)])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_batch_norm_empty(shape, training, affine):
    C = shape[1]
    rm, rv = rand(C), np.abs(rand(C)) + 0.5

    def f(F, x, *wb):
        mod = torch if F is torch.nn.functional else minigrad
        m, v = mod.tensor(rm), mod.tensor(rv)
        y = F.batch_norm(x, m, v, *wb, training=training) if affine != "weight" else \
            F.batch_norm(x, m, v, wb[0], None, training=training)
        assert np.array_equal(m.numpy(), rm) and np.array_equal(v.numpy(), rv)  # untouched
        return y
    params = {"none": (), "weight": (rand(C),), "both": (rand(C), rand(C))}[affine]
    same(f, rand(*shape), *params)
    same(lambda F, x: F.batch_norm(x, None, None, training=True), rand(*shape))


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 3, 0), (1, 3, 0, 2), (2, 0, 3)])
def test_instance_norm_and_lrn_empty(shape):
    same(lambda F, x: F.instance_norm(x), rand(*shape))
    same(lambda F, x: F.instance_norm(x, use_input_stats=False, running_mean=x.new_zeros(shape[1]),
                                      running_var=x.new_ones(shape[1])), rand(*shape))
    same(lambda F, x: F.local_response_norm(x, 2), rand(*shape))
    if shape[0] * shape[1] == 0:  # PyTorch's refusal (its batch_norm of the (1, N C, *) view takes weight[0])
        same(lambda F, x, w: F.instance_norm(x, weight=w), rand(*shape), rand(shape[1]))


def test_batch_norm_one_value_check_counts_positions_not_channels():
    # a single value per channel when training: refused whatever the channels (also none)
    same(lambda F, x: F.batch_norm(x, None, None, training=True), rand(1, 0))
    same(lambda F, x: F.batch_norm(x, None, None, training=True), rand(1, 3, 1))


@pytest.mark.parametrize("shape", [(0, 4), (3, 0), (2, 3, 0), (0, 3, 2)])
def test_norm_modules_empty(shape):
    D = shape[-1]
    mods = [(nn.LayerNorm(D), torch.nn.LayerNorm(D)), (nn.RMSNorm(D), torch.nn.RMSNorm(D))]
    if len(shape) == 3 and shape[0] == 0:  # (see test_group_norm_empty: PyTorch's nan over no positions)
        mods.append((nn.GroupNorm(1, shape[1]), torch.nn.GroupNorm(1, shape[1])))
    if len(shape) == 3:
        mods.append((nn.BatchNorm1d(shape[1]), torch.nn.BatchNorm1d(shape[1])))
    for ours, theirs in mods:
        x, xt = minigrad.tensor(rand(*shape), requires_grad=True), torch.tensor(rand(*shape), requires_grad=True)
        y, yt = ours.double()(x), theirs.double()(xt)
        assert tuple(y.shape) == tuple(yt.shape) == shape
        y.sum().backward()
        yt.sum().backward()
        assert tuple(x.grad.shape) == shape
        for p, pt in zip(ours.parameters(), theirs.parameters()):
            np.testing.assert_array_equal(p.grad.numpy(), pt.grad.numpy())


# ---- the rest of nn.functional ------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dim", [((0,), 0), ((2, 0), -1), ((2, 3, 0), 2), ((0, 3), 1)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_over_empty_rows(shape, dim, op):
    same(lambda F, x: getattr(F, op)(x, dim), rand(*shape))


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_embedding_of_size_zero(causal):
    # every score an empty sum: uniform weights (causal: over the keys up to each query), not 1/sqrt(0)
    same(lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal), rand(2, 3, 0), rand(2, 3, 0),
         rand(2, 3, 5), grad_fn=False)


@pytest.mark.parametrize("shape, size", [((0, 2, 4), 0), ((1, 2, 3, 3), (0, 0)), ((1, 2, 3, 3), (2, 0)),
                                         ((1, 1, 2, 2, 2), (0, 0, 0)), ((1, 1, 2, 2, 2), (2, 0, 0))])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "area", "linear"])
def test_interpolate_to_size_zero(shape, size, mode):
    # area: adaptive average pooling to nothing, an empty tensor (whose backward PyTorch refuses: forward
    # only); the others refuse with PyTorch's text
    mode = {3: "linear", 4: "bilinear", 5: "trilinear"}[len(shape)] if mode == "linear" else mode
    same(lambda F, x: F.interpolate(x, size=size, mode=mode), rand(*shape), grad=mode != "area", grad_fn=False)


def test_interpolate_from_size_zero():
    same(lambda F, x: F.interpolate(x, size=3, mode="nearest"), rand(1, 2, 0))


@pytest.mark.parametrize("shape, pad", [((1, 2, 3), (-4, 1)), ((1, 2, 0), (-1, 0)), ((0, 2, 3), (-4, 1)),
                                        ((1, 2, 3), (-3, 0)), ((1, 2, 3), (-2, 1))])
def test_constant_pad_negative(shape, pad):
    # the negative pads are applied first (a narrow): a size that would go below 0 there is refused
    same(lambda F, x: F.pad(x, pad), rand(*shape), grad_fn=False)
