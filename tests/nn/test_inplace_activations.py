"""inplace=True on the activations: the input itself holds the result, as PyTorch's (it was accepted and
ignored: a new tensor, the input unchanged, and no error where PyTorch's in-place write breaks a backward)."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

NAMES = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "hardtanh", "silu", "mish", "hardswish",
         "hardsigmoid", "threshold", "rrelu"]
X = np.linspace(-4, 4, 12).reshape(3, 4).astype(np.float32)


def _call(fn, x, inplace):
    if fn is F.threshold:
        return fn(x, 0.5, -1.0, inplace=inplace)
    return fn(x, inplace=inplace)


@pytest.mark.parametrize("name", NAMES)
def test_inplace_writes_the_input_and_differentiates_as_out_of_place(name):
    fn = getattr(F, name)
    w = minigrad.tensor(X, requires_grad=True)
    h = w * 1.5
    version = h._version
    out = _call(fn, h, True)
    assert out is h and h._version == version + 1
    (out * out).sum().backward()
    w2 = minigrad.tensor(X, requires_grad=True)
    want = _call(fn, w2 * 1.5, False)
    (want * want).sum().backward()
    np.testing.assert_array_equal(out.detach().array, want.detach().array)
    np.testing.assert_array_equal(w.grad.array, w2.grad.array)
    with minigrad.no_grad():  # without grad: the plain tensor written
        t = minigrad.tensor(X)
        expected = _call(fn, minigrad.tensor(X), False).array
        assert _call(fn, t, True) is t
        np.testing.assert_array_equal(t.array, expected)


def test_modules_with_inplace_match_pytorch_in_a_cnn_and_an_mlp():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)

    def build(lib, N):
        conv = N.Sequential(N.Conv2d(3, 4, 3), N.BatchNorm2d(4), N.ReLU(inplace=True), N.Flatten(),
                            N.Linear(64, 8), N.BatchNorm1d(8), N.LeakyReLU(0.1, inplace=True), N.Linear(8, 2),
                            N.Hardtanh(inplace=True))
        with lib.no_grad():
            for p in conv.parameters():
                p.copy_(lib.tensor(np.linspace(-0.3, 0.3, p.numel(), dtype=np.float32).reshape(tuple(p.shape))))
        return conv

    ours, theirs = build(minigrad, nn), build(torch, torch.nn)
    mo, to = ours(minigrad.tensor(x)), theirs(torch.tensor(x))
    mo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(mo.detach().array, to.detach().numpy(), rtol=1e-5, atol=1e-5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.array, q.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_an_inplace_write_over_a_saved_output_is_an_error_as_in_pytorch():
    x = minigrad.ones(2, 3, requires_grad=True)
    h = (x * 2).tanh()  # tanh saves its output, which ReLU(inplace=True) then overwrites
    nn.ReLU(inplace=True)(h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        F.relu(minigrad.ones(2, requires_grad=True), inplace=True)


def _relu_input(shape, dtype):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    x.flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(5, 7), (64, 16, 32, 32)])  # (the second large enough for the thread team)
def test_relu_inplace_without_grad_writes_pytorchs_bits_into_the_array(shape, dtype):
    torch = pytest.importorskip("torch")
    x = _relu_input(shape, dtype)
    t = minigrad.tensor(x)
    keep = t.array
    with minigrad.no_grad():
        assert F.relu(t, inplace=True) is t
    assert t.array is keep and t._version == 1
    np.testing.assert_array_equal(t.array, torch.relu_(torch.tensor(x)).numpy())  # (NaN kept)
    out_of_place = F.relu(minigrad.tensor(x)).array  # the same bits as the out-of-place relu (-0.0 kept)
    np.testing.assert_array_equal(t.array.view(np.uint8), out_of_place.view(np.uint8))
    base = minigrad.tensor(x)
    nn.ReLU(inplace=True)(base[..., ::2])  # (not contiguous: the numpy path)
    tb = torch.tensor(x)
    torch.nn.ReLU(inplace=True)(tb[..., ::2])
    np.testing.assert_array_equal(base.array, tb.numpy())


@pytest.mark.parametrize("name, args", [("relu", ()), ("leaky_relu", (0.2,)), ("leaky_relu", (1.0,))])
def test_relu_inplace_recorded_has_pytorchs_graph_without_a_clone(name, args):
    torch = pytest.importorskip("torch")
    x = _relu_input((3, 4), np.float32)
    w, tw = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, th = w * 2, tw * 2
    ours = getattr(F, name)(h, *args, inplace=True)
    theirs = getattr(torch.nn.functional, name)(th, *args, inplace=True)
    assert ours is h
    names = [(f.name() if f else None) for f, _ in ours.grad_fn.next_functions]
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert names == [f.name() for f, _ in theirs.grad_fn.next_functions]
    ours.backward(minigrad.ones(3, 4))
    theirs.backward(torch.ones(3, 4))
    np.testing.assert_array_equal(w.grad.array, tw.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("slope", [0.2, 1, 0.0, -0.5, 2.0])
def test_leaky_relu_inplace_matches_out_of_place_and_pytorch(dtype, slope):
    torch = pytest.importorskip("torch")
    x = _relu_input((6, 5), dtype)
    want = F.leaky_relu(minigrad.tensor(x), slope).array
    with minigrad.no_grad():
        t = minigrad.tensor(x)
        assert F.leaky_relu(t, slope, inplace=True) is t
    np.testing.assert_array_equal(t.array.view(np.uint8), want.view(np.uint8))
    if dtype == np.float16:  # (minigrad's half leaky_relu rounds otherwise than PyTorch's, in and out of place)
        return
    np.testing.assert_array_equal(t.array, torch.nn.functional.leaky_relu_(torch.tensor(x), slope).numpy())
    base = minigrad.tensor(x)
    nn.LeakyReLU(slope, inplace=True)(base[:, ::2])  # (not contiguous)
    tb = torch.tensor(x)
    torch.nn.LeakyReLU(slope, inplace=True)(tb[:, ::2])
    np.testing.assert_array_equal(base.array, tb.numpy())
    w, w2 = minigrad.tensor(x, requires_grad=True), minigrad.tensor(x, requires_grad=True)
    h = w * 1.5
    (F.leaky_relu(h, slope, inplace=True) ** 2).sum().backward()
    (F.leaky_relu(w2 * 1.5, slope) ** 2).sum().backward()
    np.testing.assert_array_equal(h.detach().array, F.leaky_relu(minigrad.tensor(x) * 1.5, slope).array)
    np.testing.assert_array_equal(w.grad.array, w2.grad.array)
