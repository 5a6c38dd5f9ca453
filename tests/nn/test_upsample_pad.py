"""nn.Upsample / UpsamplingNearest2d / UpsamplingBilinear2d and nn.utils.rnn.pad_sequence against PyTorch: values,
gradients, reprs and errors; pad_sequence's gradient by finite differences; the torch.nn.utils.rnn module path."""
import subprocess
import sys

import numpy as np
import pytest

import minigrad
import nn
from minigrad.autograd import gradcheck
from nn.utils.rnn import pad_sequence, unpad_sequence

RNG = np.random.default_rng(3)


def arr(*shape):
    return RNG.standard_normal(shape)


# ---- Upsample --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw,shape", [
    ("Upsample", {"scale_factor": 2}, (2, 3, 4, 5)),
    ("Upsample", {"size": (5, 7), "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", {"scale_factor": (2, 3), "mode": "bilinear", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", {"scale_factor": 1.5, "mode": "linear"}, (2, 2, 5)),
    ("Upsample", {"size": 9, "mode": "nearest-exact"}, (1, 1, 4)),
    ("Upsample", {"scale_factor": 2.5, "mode": "bilinear", "recompute_scale_factor": True}, (1, 1, 3, 3)),
    ("UpsamplingNearest2d", {"scale_factor": 2}, (1, 2, 3, 3)),
    ("UpsamplingBilinear2d", {"size": 5}, (2, 1, 3, 4)),
    ("UpsamplingBilinear2d", {"scale_factor": 2}, (1, 1, 3, 3)),
])
def test_upsample_modules_vs_torch(torch, cls, kw, shape):
    ours, theirs = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert repr(ours) == repr(theirs)
    x = arr(*shape)
    xo, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours(xo), theirs(xt)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = arr(*y.shape)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_upsample_in_a_decoder_trains():
    model = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(2, 1, 3, padding=1))
    x = minigrad.tensor(arr(2, 2, 4, 4).astype(np.float32))
    model(x).pow(2).mean().backward()
    assert model[1].weight.grad is not None


def test_upsample_errors_vs_torch(torch):
    for lib, mod in ((torch, torch.nn), (minigrad, nn)):
        with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
            mod.Upsample()(lib.randn(1, 1, 2, 2))


# ---- pad_sequence ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)])
def test_pad_sequence_vs_torch(torch, batch_first, side, trailing):
    arrays = [arr(n, *trailing) for n in (3, 5, 1, 5)]
    ours = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = pad_sequence(ours, batch_first=batch_first, padding_value=-2.5, padding_side=side)
    ty = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first, padding_value=-2.5, padding_side=side)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g = arr(*y.shape)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())


def test_pad_sequence_dtype_and_tensor_input(torch):
    a, b = np.ones((2, 3), np.float32), np.ones((4, 3))
    y = pad_sequence([minigrad.tensor(a), minigrad.tensor(b)])
    ty = torch.nn.utils.rnn.pad_sequence([torch.tensor(a), torch.tensor(b)])
    assert y.dtype == minigrad.float32 and str(ty.dtype) == "torch.float32"
    x = arr(2, 3)
    assert pad_sequence(minigrad.tensor(x)).shape == tuple(torch.nn.utils.rnn.pad_sequence(torch.tensor(x)).shape)


def test_unpad_sequence_inverts_pad_sequence():
    seqs = [minigrad.tensor(arr(n, 2)) for n in (2, 4, 3)]
    back = unpad_sequence(pad_sequence(seqs), [2, 4, 3])
    for s, b in zip(seqs, back):
        np.testing.assert_array_equal(s.numpy(), b.numpy())


def test_pad_sequence_gradcheck():
    seqs = tuple(minigrad.tensor(arr(n, 2), requires_grad=True) for n in (3, 1, 2))
    assert gradcheck(lambda *s: pad_sequence(list(s), batch_first=True, padding_value=1.0), seqs)
    assert gradcheck(lambda *s: pad_sequence(list(s), padding_side="left"), seqs)


@pytest.mark.parametrize("call", [
    lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2, 3)], padding_side="up"),
    lambda t: t.nn.utils.rnn.pad_sequence([]),
    lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2, 3), t.tensor(1.0)]),
    lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2, 3), t.ones(3, 2)]),
])
def test_pad_sequence_errors_vs_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad)
    if "padding_side" in str(theirs.value) or "empty" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


def test_rnn_module_path():
    code = ("from minigrad.nn.utils.rnn import pad_sequence\nimport minigrad.nn.utils.rnn as r\nimport nn\n"
            "print(pad_sequence is nn.utils.rnn.pad_sequence, r is nn.utils.rnn, callable(nn.utils.clip_grad_norm_))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "True"]
