"""torch.fft's multi-dimensional and Hermitian transforms against PyTorch: values, dtypes, grad_fn names,
gradients (PyTorch's complex convention) and error texts; and a Fourier-neural-operator layer trained by both."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4, 5))
Z = X + 1j * rng.standard_normal((3, 4, 5))


def _loss(t, c):
    """A real loss that weighs each element (each real and imaginary part) differently."""
    if c.is_complex():
        c = t.view_as_real(c.resolve_conj() if t is torch else c)
    return (c * t.tensor((np.arange(c.numel()).reshape(c.shape) % 5) - 2.0, dtype=t.float64)).sum()


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name, arg, kw", [
    ("fft2", Z, {}), ("fft2", X, dict(s=(3, 6))), ("ifft2", Z, dict(s=(2, 7), dim=(0, 2))),
    ("fftn", Z, {}), ("fftn", Z, dict(s=(2, 3))), ("ifftn", Z, dict(dim=(0, -1))),
    ("rfft2", X, {}), ("rfft2", X, dict(s=(3, 7))), ("rfftn", X, dict(s=(4, 2, 6))), ("rfftn", X, dict(dim=(0, 1))),
    ("irfft2", Z, {}), ("irfft2", Z, dict(s=(5, 7))), ("irfftn", Z, dict(s=(2, 3))),
    ("irfftn", Z, dict(dim=(0, 2), s=(4, 6))),
    ("hfft", Z, {}), ("hfft", Z, dict(n=7, dim=0)), ("ihfft", X, {}), ("ihfft", X, dict(n=7)),
    ("hfft2", Z, {}), ("hfftn", Z, dict(s=(3, 5))), ("ihfft2", X, {}), ("ihfftn", X, dict(s=(2, 5, 6))),
])
def test_transform_values_and_gradients(name, arg, kw, norm):
    m, t = mg.tensor(arg, requires_grad=True), torch.tensor(arg, requires_grad=True)
    mo, to = getattr(mg.fft, name)(m, norm=norm, **kw), getattr(torch.fft, name)(t, norm=norm, **kw)
    assert str(mo.dtype).split(".")[1] == str(to.dtype).split(".")[1]
    assert mo.grad_fn.name() == to.grad_fn.name()
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().resolve_conj().numpy(), rtol=1e-9, atol=1e-10)
    _loss(mg, mo).backward()
    _loss(torch, to).backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-9, atol=1e-10)


def test_dtypes_of_float32_and_integer_inputs():
    for f in (lambda t: t.fft.rfft2(t.ones(3, 4)), lambda t: t.fft.fft2(t.arange(6).reshape(2, 3)),
              lambda t: t.fft.irfftn(t.ones(3, 4, dtype=t.complex64)), lambda t: t.fft.hfft(t.ones(3))):
        assert str(f(mg).dtype).split(".")[1] == str(f(torch).dtype).split(".")[1]


@pytest.mark.parametrize("bad", [
    lambda t: t.fft.rfft2(t.ones(3, 4, dtype=t.complex64)),
    lambda t: t.fft.fft2(t.ones(3, 4), s=(3,)),
    lambda t: t.fft.fftn(t.ones(3, 4), dim=(0, 0)),
    lambda t: t.fft.ihfft(t.ones(3, dtype=t.complex64)),
    lambda t: t.fft.ihfft2(t.ones(3, 3, dtype=t.complex64)),
    lambda t: t.fft.fft2(t.ones(3)),
    lambda t: t.fft.fftn(t.ones(3, 3), s=(0, 3)),
    lambda t: t.fft.fftn(t.ones(3), s=(2, 3)),
    lambda t: t.fft.fft2(t.ones(3, 3), norm="x"),
])
def test_errors_as_pytorchs(bad):
    with pytest.raises(Exception) as want:
        bad(torch)
    with pytest.raises(want.type) as got:
        bad(mg)
    assert str(got.value) == str(want.value)


def _fno_run(t, nn, w1, w2, x, steps):
    """A Fourier layer as FNO scripts write it: rfft2, a complex einsum with complex weights on the lowest
    modes written into a zeros complex tensor, irfft2 back; trained a few Adam steps."""
    class SpectralConv2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights1 = nn.Parameter(t.tensor(w1))
            self.weights2 = nn.Parameter(t.tensor(w2))

        def forward(self, x):
            m1, m2 = self.weights1.shape[-2:]
            x_ft = t.fft.rfft2(x)
            out_ft = t.zeros(x.shape[0], self.weights1.shape[1], x.size(-2), x.size(-1) // 2 + 1, dtype=t.cfloat)
            out_ft[:, :, :m1, :m2] = t.einsum("bixy,ioxy->boxy", x_ft[:, :, :m1, :m2], self.weights1)
            out_ft[:, :, -m1:, :m2] = t.einsum("bixy,ioxy->boxy", x_ft[:, :, -m1:, :m2], self.weights2)
            return t.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))

    layer = SpectralConv2d()
    opt = t.optim.Adam(layer.parameters(), lr=1e-2)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((layer(t.tensor(x)) - 1.0) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        grads.append(np.array(layer.weights1.grad.detach().resolve_conj().numpy() if t is torch
                              else layer.weights1.grad.numpy()))
        opt.step()
    return losses, grads


def test_fourier_layer_trains_as_pytorchs():
    import minigrad.nn as mnn

    scale = 1 / 6
    w1, w2 = ((scale * (rng.random((2, 3, 3, 3)) + 1j * rng.random((2, 3, 3, 3)))).astype(np.complex64)
              for _ in range(2))
    x = rng.standard_normal((4, 2, 8, 8)).astype(np.float32)
    (tl, tg), (ml, mg_) = _fno_run(torch, torch.nn, w1, w2, x, 4), _fno_run(mg, mnn, w1, w2, x, 4)
    np.testing.assert_allclose(ml, tl, rtol=1e-5)
    for a, b in zip(mg_, tg):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
