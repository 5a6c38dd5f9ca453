"""Complex tensors (phase 1) against PyTorch: dtypes, promotion, reprs, values, gradients and error texts."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
Z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
W = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
X = rng.standard_normal((3, 4))
Y = rng.standard_normal((3, 4))
SIG = rng.standard_normal((2, 64))


def _weights(t, c):
    return t.tensor((np.arange(c.numel() * 2).reshape(*c.shape, 2) % 5) - 2.0, dtype=t.float64)


def _loss(t, c):
    """A real loss of a complex tensor that weighs its real and imaginary parts differently."""
    return (t.view_as_real(c) * _weights(t, c)).sum()


def _same(f, *arrays):
    """f(minigrad, ...) and f(torch, ...) on float64/complex128 leaves: equal dtype, value and gradients."""
    ms = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    mo, to = f(mg, *ms), f(torch, *ts)
    assert str(mo.dtype).split(".")[1] == str(to.dtype).split(".")[1]
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().resolve_conj().numpy(), rtol=1e-7, atol=1e-10)
    mo.backward()
    to.backward()
    for m, t in zip(ms, ts):
        assert m.grad.dtype == getattr(mg, str(t.grad.dtype).split(".")[1])
        np.testing.assert_allclose(m.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("a, b", [("float32", "complex64"), ("float64", "complex64"), ("int64", "complex64"),
                                  ("complex64", "complex128"), ("bool", "complex128")])
def test_promote_types(a, b):
    assert str(mg.promote_types(getattr(mg, a), getattr(mg, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch", "minigrad")


@pytest.mark.parametrize("make", [
    lambda t: t.ones(2) * t.ones(2, dtype=t.complex64),
    lambda t: t.ones(2, dtype=t.float64) * t.ones(2, dtype=t.complex64),
    lambda t: t.ones(2) * 1j,
    lambda t: t.ones(2, dtype=t.float64) * 1j,
    lambda t: t.arange(3) + 2j,
    lambda t: t.tensor([1 + 2j]),
    lambda t: t.tensor(3j),
])
def test_result_dtype_and_repr(make):
    m, t = make(mg), make(torch)
    assert repr(m).replace("minigrad", "torch") == repr(t)


def test_reprs():
    for data in ([1 + 2j, 3 - 4.5j], [[1e-5 + 1j, 100 + 2j]], 1 + 2j):
        assert repr(mg.tensor(data)) == repr(torch.tensor(data))
    assert repr(mg.tensor([1.5 + 0j]).cdouble()).replace("minigrad", "torch") == \
        repr(torch.tensor([1.5 + 0j]).cdouble())


def test_dtype_flags():
    for name in ("complex64", "complex128", "cfloat", "cdouble"):
        m, t = getattr(mg, name), getattr(torch, name)
        assert (m.is_complex, m.is_floating_point, m.is_signed, m.itemsize) == \
            (t.is_complex, t.is_floating_point, t.is_signed, t.itemsize)
    z = mg.tensor([1j])
    assert z.is_complex() and not z.is_floating_point() and not mg.ones(1).is_complex()
    assert not z.conj().is_conj()
    with pytest.raises(AttributeError):
        mg.complex32  # noqa: B018


def test_float_of_complex_warns_and_keeps_the_real_part():
    ours_always = mg.is_warn_always_enabled()
    mg.set_warn_always(True)  # (said once a process, as PyTorch's: another test may have had it first)
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            m = mg.tensor([1 + 2j, 3 - 1j]).float()
    finally:
        mg.set_warn_always(ours_always)
    always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # (PyTorch warns this once per process: another test may have had it first)
    try:
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            t = torch.tensor([1 + 2j, 3 - 1j]).float()
    finally:
        torch.set_warn_always(always)
    assert want and [str(w.message) for w in got] == [str(w.message).split(" (Triggered")[0] for w in want]
    np.testing.assert_array_equal(m.numpy(), t.numpy())


def test_view_as_complex_errors():
    for bad in (lambda t: t.view_as_complex(t.zeros(3, 3)),
                lambda t: t.view_as_complex(t.zeros(2, 3).t()),
                lambda t: t.view_as_real(t.zeros(3))):
        with pytest.raises(RuntimeError) as want:
            bad(torch)
        with pytest.raises(RuntimeError, match=str(want.value)):
            bad(mg)


def test_stft_needs_return_complex():
    with pytest.raises(RuntimeError) as want:
        torch.stft(torch.randn(100), 16, window=torch.ones(16))
    with pytest.raises(RuntimeError) as got:
        mg.stft(mg.randn(100), 16, window=mg.ones(16))
    assert str(got.value) == str(want.value)


def test_unsupported_complex_ops_refuse():
    z = mg.tensor([[1 + 1j, 2j], [1, 1]])
    with pytest.raises(NotImplementedError) as got:  # (PyTorch has no complex kernel either: its words)
        z.erf()
    assert str(got.value) == "\"erf_vml_cpu\" not implemented for 'ComplexFloat'"


@pytest.mark.parametrize("f, args", [
    (lambda t, a: _loss(t, a * a.conj() * a), (Z,)),
    (lambda t, a, b: _loss(t, a * b + a / b - b), (Z, W)),
    (lambda t, a, b: _loss(t, a * b), (Z, X)),  # a real factor takes the real part
    (lambda t, a: _loss(t, a * 1j + 2), (X,)),
    (lambda t, a, b: _loss(t, t.complex(a, b) * t.polar(a.abs(), b)), (X, Y)),
    (lambda t, a: (a.abs() * 2 + a.angle()).sum(), (Z,)),
    (lambda t, a: (a.real * 3 + a.imag ** 2).sum(), (Z,)),
    (lambda t, a: _loss(t, t.view_as_complex(a.reshape(3, 2, 2))), (X,)),
    (lambda t, a: _loss(t, a.sum(0) + a.mean(1, keepdim=True)), (Z,)),
    (lambda t, a: _loss(t, t.cat([a[:, 1:], a.transpose(0, 1).reshape(3, 4)], 1).flatten()), (Z,)),
])
def test_gradients(f, args):
    _same(f, *args)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("f, arg", [
    (lambda t, a, norm: _loss(t, t.fft.fft(a, norm=norm)), Z),
    (lambda t, a, norm: _loss(t, t.fft.ifft(a, n=6, norm=norm)), Z),
    (lambda t, a, norm: _loss(t, t.fft.fft(a, n=2, dim=0, norm=norm)), Z),
    (lambda t, a, norm: _loss(t, t.fft.fft(a, norm=norm)), X),
    (lambda t, a, norm: _loss(t, t.fft.rfft(a, norm=norm)), X),
    (lambda t, a, norm: _loss(t, t.fft.rfft(a, n=7, norm=norm)), X),
    (lambda t, a, norm: (t.fft.irfft(a, norm=norm) * t.arange(6.0)).sum(), Z),
    (lambda t, a, norm: (t.fft.irfft(a, n=7, norm=norm) * t.arange(7.0)).sum(), Z),
    (lambda t, a, norm: (t.fft.irfft(a, n=3, norm=norm) * t.arange(3.0)).sum(), Z),
])
def test_fft_gradients(f, arg, norm):
    _same(lambda t, a: f(t, a, norm), arg)


def test_fft_helpers():
    for m, t in ((mg.fft.fftfreq(5), torch.fft.fftfreq(5)), (mg.fft.rfftfreq(6, 0.5), torch.fft.rfftfreq(6, 0.5)),
                 (mg.fft.fftshift(mg.arange(6)), torch.fft.fftshift(torch.arange(6))),
                 (mg.fft.ifftshift(mg.arange(5)), torch.fft.ifftshift(torch.arange(5)))):
        assert repr(m) == repr(t)


@pytest.mark.parametrize("kw", [dict(n_fft=16, hop_length=4), dict(n_fft=16, hop_length=5, win_length=12, normalized=True),
                                dict(n_fft=8, center=False)])
def test_stft_power_gradient(kw):
    win = kw.get("win_length", kw["n_fft"])
    _same(lambda t, a: (t.stft(a, window=t.hann_window(win, dtype=t.float64), return_complex=True, **kw).abs()
                        .pow(2)).sum(), SIG)


@pytest.mark.parametrize("length", [None, 60])
def test_istft(length):
    spec = torch.stft(torch.tensor(SIG), 16, 4, window=torch.hann_window(16, dtype=torch.float64),
                      return_complex=True).numpy()
    _same(lambda t, a: (t.istft(a, 16, 4, window=t.hann_window(16, dtype=t.float64), length=length)
                        * t.arange(float(length or 64))).sum(), spec)


def test_gradcheck_through_complex():
    def f(t):
        def g(x, theta):
            z = t.polar(x[:3].abs() + 1, theta[:3]) * t.fft.rfft(x)
            return t.view_as_real(t.fft.ifft(z)).sum(-1)
        return g

    x, theta = X[0].copy(), Y[0].copy()
    assert mg.autograd.gradcheck(f(mg), (mg.tensor(x, requires_grad=True), mg.tensor(theta, requires_grad=True)))
    _same(lambda t, a, b: (f(t)(a, b) ** 2).sum(), x, theta)


def _rotary(t, xq, freqs):
    """Llama's rotary embedding, as its reference model writes it."""
    freqs_cis = t.polar(t.ones_like(freqs), freqs)
    xq_ = t.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return t.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)


def test_llama_rotary_block():
    b, s, h, d = 2, 5, 3, 8
    xq = rng.standard_normal((b, s, h, d)).astype(np.float32)
    inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    freqs = np.outer(np.arange(s), inv).astype(np.float32)[None, :, None, :]
    wq = rng.standard_normal((d, d)).astype(np.float32)
    outs = {}
    for t in (mg, torch):
        x = t.tensor(xq, requires_grad=True)
        w = t.tensor(wq, requires_grad=True)
        out = _rotary(t, x @ w, t.tensor(freqs))
        (out * out.detach().sin()).sum().backward()
        outs[t] = (out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), str(out.dtype).split(".")[1])
    for m, tt in zip(outs[mg], outs[torch]):
        if isinstance(m, str):
            assert m == tt
        else:
            np.testing.assert_allclose(m, tt, rtol=1e-5, atol=1e-5)


def test_stft_conv1d_classifier_step():
    import minigrad.nn as mnn
    import minigrad.nn.functional as MF

    n_fft, hop = 32, 8
    audio = rng.standard_normal((4, 256)).astype(np.float32)
    labels = np.array([0, 1, 2, 1])
    torch.manual_seed(0)
    tconv = torch.nn.Conv1d(n_fft // 2 + 1, 3, 3)
    mconv = mnn.Conv1d(n_fft // 2 + 1, 3, 3)
    mconv.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in tconv.state_dict().items()})
    grads = {}
    for t, conv, F in ((mg, mconv, MF), (torch, tconv, torch.nn.functional)):
        x = t.tensor(audio, requires_grad=True)
        spec = t.stft(x, n_fft, hop, window=t.hann_window(n_fft), return_complex=True).abs().pow(2)
        logits = conv(t.log(spec + 1e-6)).mean(-1)
        loss = F.cross_entropy(logits, t.tensor(labels))
        loss.backward()
        grads[t] = (loss.item(), x.grad.numpy(), conv.weight.grad.numpy())
    np.testing.assert_allclose(grads[mg][0], grads[torch][0], rtol=1e-5)
    for m, tt in zip(grads[mg][1:], grads[torch][1:]):
        np.testing.assert_allclose(m, tt, rtol=1e-4, atol=1e-6)


# Ops PyTorch has no complex kernel for: minigrad raised nothing and returned numpy's lexicographic order, or a
# value computed on the real part alone (`z / 2` dropped the imaginary part); now PyTorch's exception and text.
_REFUSED = [
    lambda t, z, r: z.max(), lambda t, z, r: z.min(), lambda t, z, r: z.max(0), lambda t, z, r: z.min(1),
    lambda t, z, r: t.max(z, z), lambda t, z, r: t.maximum(z, r), lambda t, z, r: t.minimum(r, z),
    lambda t, z, r: z.amax(), lambda t, z, r: z.amin(0), lambda t, z, r: z.aminmax(),
    lambda t, z, r: z.argmax(), lambda t, z, r: z.argmin(1), lambda t, z, r: t.fmax(z, z), lambda t, z, r: t.fmin(z, z),
    lambda t, z, r: z.relu(), lambda t, z, r: z.relu_(), lambda t, z, r: t.relu(z), lambda t, z, r: z.clamp(0, 1),
    lambda t, z, r: z.clamp(min=0.5), lambda t, z, r: z.clamp_(0, 1), lambda t, z, r: z.clamp_max(1),
    lambda t, z, r: z.clip(-1, 1),
    lambda t, z, r: z.sort(), lambda t, z, r: z.argsort(), lambda t, z, r: z.msort(), lambda t, z, r: z.topk(1),
    lambda t, z, r: z.kthvalue(1), lambda t, z, r: z.cummax(0), lambda t, z, r: z.cummin(1),
    lambda t, z, r: z.median(), lambda t, z, r: z.median(0), lambda t, z, r: z.nanmedian(), lambda t, z, r: z.mode(),
    lambda t, z, r: z.nansum(), lambda t, z, r: z.nanmean(), lambda t, z, r: z.unique(),
    lambda t, z, r: z.sign(), lambda t, z, r: z.sign_(), lambda t, z, r: z.signbit(), lambda t, z, r: z.isposinf(),
    lambda t, z, r: z.isneginf(), lambda t, z, r: z.deg2rad(), lambda t, z, r: z.rad2deg(),
    lambda t, z, r: z.floor(), lambda t, z, r: z.ceil(), lambda t, z, r: z.trunc(), lambda t, z, r: z.round(),
    lambda t, z, r: z.round(decimals=1), lambda t, z, r: z.frac(), lambda t, z, r: t.heaviside(z, z),
    lambda t, z, r: z < z, lambda t, z, r: z <= 1, lambda t, z, r: r > z, lambda t, z, r: t.ge(z, r),
    lambda t, z, r: t.copysign(z, r), lambda t, z, r: t.atan2(z, z), lambda t, z, r: t.fmod(z, 2),
    lambda t, z, r: z % 2, lambda t, z, r: z // 2, lambda t, z, r: z.div(2, rounding_mode="trunc"),
    lambda t, z, r: t.xlogy(z, z),
]


@pytest.mark.parametrize("f", [lambda z: z / 2, lambda z: mg_or(z).div(z, 4.0), lambda z: z.true_divide(3)])
def test_complex_over_a_number(f):
    zt, zm = torch.tensor(Z), mg.tensor(Z)
    np.testing.assert_allclose(f(zm).numpy(), f(zt).numpy(), rtol=1e-12)
    assert str(f(zm).dtype) == str(f(zt).dtype).replace("torch", "minigrad")


def mg_or(z):
    return mg if isinstance(z, mg.Tensor) else torch


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "reciprocal", "sinc", "rsqrt", "tan",
                                  "sigmoid", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
                                  "exp2", "expm1", "log2", "log10", "log1p"])
def test_holomorphic_unary_ops(name):
    """Values and PyTorch's gradients (g times the derivative's conjugate), once and twice, through a real loss;
    before, each raised minigrad's 'not supported' line."""
    _same(lambda t, a: _loss(t, getattr(t, name)(a)), Z)
    _same(lambda t, a: _loss(t, getattr(t, name)(a) * a.conj()), Z)
    ms, ts = mg.tensor(Z, requires_grad=True), torch.tensor(Z, requires_grad=True)
    (gm,), (gt,) = (t.autograd.grad(_loss(t, getattr(t, name)(a)), a, create_graph=True) for t, a in ((mg, ms), (torch, ts)))
    (ggm,), (ggt,) = (t.autograd.grad(_loss(t, g), a) for t, g, a in ((mg, gm, ms), (torch, gt, ts)))
    np.testing.assert_allclose(ggm.numpy(), ggt.resolve_conj().numpy(), rtol=1e-7, atol=1e-10)
    z64 = Z.astype(np.complex64)
    m64, t64 = getattr(mg.tensor(z64), name)(), getattr(torch.tensor(z64), name)()
    assert m64.dtype == mg.complex64 and t64.dtype == torch.complex64
    np.testing.assert_allclose(m64.numpy(), t64.numpy(), rtol=2e-5, atol=1e-6)


def test_exp_of_i_theta():
    theta = rng.standard_normal(5)
    _same(lambda t, a: _loss(t, t.exp(1j * a)), theta)


def test_real_and_imag_are_views_that_take_writes_as_pytorchs(torch):
    # `x.real[...] = 0` and `x.imag.mul_(2)` write the complex tensor (they were copies: the writes were lost);
    # a write to x shows through a real view taken before; gradients through them unchanged; an in-place
    # write on the view of a leaf that requires grad is refused with PyTorch's text
    got = []
    for L in (mg, torch):
        x = L.tensor([1 + 2j, 3 - 4j, -0.5 + 0.25j])
        x.real[1:] = 0
        x.imag.mul_(2)
        r = x.real
        x.mul_(2)
        leaf = L.tensor([1 + 2j], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            leaf.real.mul_(2)
        got.append((x.numpy().copy(), r.numpy().copy(), r._base is x, x._version, str(e.value)))
    (x1, r1, b1, v1, e1), (x2, r2, b2, v2, e2) = got
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(r1, r2)
    assert b1 and b2 and v1 == v2 and e1 == e2


def test_rand_and_randn_of_a_complex_dtype_draw_both_parts_as_pytorch(torch):
    # (they raised "normal_kernel_cpu" not implemented): rand's parts each U[0, 1), randn's each N(0, 1/2), so
    # that |z|^2 has mean 1; the dtypes and shapes PyTorch gives
    mg.manual_seed(0)
    for L in (mg, torch):
        a = L.rand(200_000, dtype=L.cfloat)
        b = L.randn(400, 500, dtype=L.cdouble)
        assert (a.dtype, b.dtype, tuple(b.shape)) == (L.complex64, L.complex128, (400, 500))
        assert L.randn_like(b).dtype == L.complex128
        re, im = a.real.numpy(), a.imag.numpy()
        assert re.min() >= 0 and re.max() < 1 and im.min() >= 0 and im.max() < 1
        assert abs(re.mean() - 0.5) < 0.01 and abs(im.mean() - 0.5) < 0.01
        for part in (b.real.numpy(), b.imag.numpy()):
            assert abs(part.mean()) < 0.01 and abs(part.var() - 0.5) < 0.01


def _c(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("f, shapes", [
    (lambda t, a, b: t.mm(a, b), [(3, 4), (4, 5)]),
    (lambda t, a, b: a @ b, [(4,), (4,)]),
    (lambda t, a, b: a @ b, [(3, 4), (4,)]),
    (lambda t, a, b: a @ b, [(4,), (4, 5)]),
    (lambda t, a, b: t.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    (lambda t, a, b: t.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)]),
    (lambda t, a, b: a @ b, [(3, 1), (1, 5)]),  # (an outer product: the backend's "outer" takes floats only)
    (lambda t, a, b: a @ b.T, [(40, 64), (80, 64)]),  # (x @ W.T: the linear backend's path, floats only)
    (lambda t, a, b: t.nn.functional.linear(a, b, b[:, 0]), [(2, 6, 64), (80, 64)]),
    (lambda t, a, b: t.einsum("bij,kj->bik", a, b), [(2, 3, 4), (5, 4)]),
    (lambda t, a, b: t.vdot(a, b), [(4,), (4,)]),
    (lambda t, a, b: a.mH @ b, [(4, 3), (4, 5)]),
    (lambda t, a, b: a.adjoint() @ b.conj().transpose(-2, -1), [(4, 3), (5, 4)]),
])
def test_complex_matrix_products(f, shapes):
    """Values and PyTorch's gradients (gA = g B^H, gB = A^H g), once and twice; matmul refused complex
    operands, einsum's and linear's gradients lacked the conjugates and vdot did not conjugate."""
    a, b = (_c(*s) for s in shapes)
    _same(lambda t, x, y: _loss(t, f(t, x, y)), a, b)
    ms = [mg.tensor(x, requires_grad=True) for x in (a, b)]
    ts = [torch.tensor(x, requires_grad=True) for x in (a, b)]
    gm = mg.autograd.grad(_loss(mg, f(mg, *ms)), ms, create_graph=True)
    gt = torch.autograd.grad(_loss(torch, f(torch, *ts)), ts, create_graph=True)
    ggm, ggt = (t.autograd.grad(_loss(t, g[0].resolve_conj()) + _loss(t, g[1] * g[1]), leaves)
                for t, g, leaves in ((mg, gm, ms), (torch, gt, ts)))
    for m, t in zip(ggm, ggt):
        np.testing.assert_allclose(m.numpy(), t.resolve_conj().numpy(), rtol=1e-7, atol=1e-9)
    m64, t64 = (f(lib, lib.tensor(a.astype(np.complex64)), lib.tensor(b.astype(np.complex64))) for lib in (mg, torch))
    assert m64.dtype == mg.complex64
    np.testing.assert_allclose(m64.numpy(), t64.resolve_conj().numpy(), rtol=1e-4, atol=1e-4)


def test_abs_in_place_of_complex_raises_pytorchs_error():
    """abs_ wrote |z| over a complex tensor (its text was in the table, nothing called it)."""
    with pytest.raises(RuntimeError) as want:
        torch.tensor(Z).abs_()
    for call in (lambda z: z.abs_(), lambda z: mg.abs_(z)):
        z = mg.tensor(Z)
        with pytest.raises(RuntimeError) as got:
            call(z)
        assert str(got.value) == str(want.value)
        np.testing.assert_array_equal(z.numpy(), Z)
    x = mg.tensor(X)
    x.abs_()
    np.testing.assert_array_equal(x.numpy(), np.abs(X))



# Ops that returned a value of complex input (numpy's lexicographic order, the real part alone, a complex-typed
# draw) or of mixed complex/real operands where PyTorch raises: now PyTorch's exception and text.
_REFUSED_TOO = [
    lambda t, z, r: t.isin(z, z), lambda t, z, r: t.isin(r, z), lambda t, z, r: t.isin(z, 1.0),
    lambda t, z, r: t.searchsorted(z[0], z), lambda t, z, r: t.searchsorted(r[0], z), lambda t, z, r: t.bucketize(z, r[0]),
    lambda t, z, r: t.polygamma(0, z), lambda t, z, r: t.polygamma(1, z), lambda t, z, r: t.polygamma(3, z),
    lambda t, z, r: t.mvlgamma(z, 2), lambda t, z, r: t.randint_like(z, 5),
    lambda t, z, r: z.bernoulli_(), lambda t, z, r: z.bernoulli_(0.3), lambda t, z, r: t.bernoulli(z),
    lambda t, z, r: z.cauchy_(), lambda t, z, r: z.exponential_(), lambda t, z, r: z.log_normal_(),
    lambda t, z, r: t.allclose(z, r), lambda t, z, r: t.allclose(r, z), lambda t, z, r: t.isclose(z, r),
    lambda t, z, r: t.allclose(z, z.to(t.complex128 if z.dtype == t.complex64 else t.complex64)),
    lambda t, z, r: t.allclose(r, r.double()), lambda t, z, r: t.isclose(r, r.double()),
    lambda t, z, r: t.cross(z, r, dim=0), lambda t, z, r: t.cross(r, z, dim=0), lambda t, z, r: t.linalg.cross(z.T, r.T),
    lambda t, z, r: t.cross(r, r.double(), dim=0),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("i", range(len(_REFUSED + _REFUSED_TOO)))
def test_ops_without_complex_kernels_raise_pytorchs_error(i, dtype):
    f = (_REFUSED + _REFUSED_TOO)[i]
    errors = []
    for t in (torch, mg):
        z, r = t.tensor(Z, dtype=getattr(t, dtype)), t.tensor(X, dtype=t.float32)
        with pytest.raises(Exception) as info:
            f(t, z, r)
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("f, args", [
    (lambda t, z: _loss(t, t.float_power(z, 2)), (Z,)),
    (lambda t, z, x: _loss(t, t.float_power(z, x)), (Z, X)),
    (lambda t, x, z: _loss(t, t.float_power(x.abs(), z)), (X, Z)),
    (lambda t, z: _loss(t, t.float_power(2, z)), (Z,)),
    (lambda t, z, w: _loss(t, t.ldexp(z, w)), (Z, W)),
])
def test_float_power_and_ldexp_of_complex(f, args):  # they computed on the real parts (a float64 result)
    _same(f, *args)


def test_ldexp_of_a_real_tensor_and_complex_exponents():  # (torch's backward of this pairing raises: values only)
    got, want = mg.ldexp(mg.tensor(X), mg.tensor(Z)), torch.ldexp(torch.tensor(X), torch.tensor(Z))
    assert got.dtype == mg.complex128 and want.dtype == torch.complex128
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_isclose_and_allclose_of_two_complex_tensors():
    a, b = Z.astype(np.complex64), (Z + 1e-7 * W).astype(np.complex64)
    b[0, 0] += 1e-3j  # only the imaginary part differs
    for rtol, atol in ((1e-5, 1e-8), (1e-2, 0.0)):
        got = mg.isclose(mg.tensor(a), mg.tensor(b), rtol=rtol, atol=atol)
        want = torch.isclose(torch.tensor(a), torch.tensor(b), rtol=rtol, atol=atol)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert mg.allclose(mg.tensor(a), mg.tensor(b), rtol, atol) == torch.allclose(torch.tensor(a), torch.tensor(b),
                                                                                    rtol, atol)


@pytest.mark.parametrize("f, args", [
    (lambda t, z: _loss(t, z ** 2), (Z,)), (lambda t, z: _loss(t, z.pow(0.5)), (Z,)),
    (lambda t, z: _loss(t, z ** 3), (Z,)), (lambda t, z, w: _loss(t, z ** w), (Z, W)),
    (lambda t, z: _loss(t, 2.0 ** z), (Z,)), (lambda t, z: _loss(t, z * 1j), (Z,)),
    (lambda t, z: _loss(t, z.square()), (Z,)), (lambda t, x: _loss(t, x.to(t.complex128) * (1 + 2j)), (X,)),
])
def test_powers_and_products_of_complex(f, args):  # pow's backwards passed g f'(z), not g conj(f'(z))
    _same(f, *args)


@pytest.mark.parametrize("f", [
    lambda t, a: a.std(), lambda t, a: a.var(1), lambda t, a: a.std(0, keepdim=True, correction=0),
    lambda t, a: a.std(unbiased=False), lambda t, a: t.var_mean(a, 1)[0] + t.std_mean(a)[0],
    lambda t, a: t.linalg.vector_norm(a), lambda t, a: t.linalg.vector_norm(a, 1, dim=1),
    lambda t, a: t.linalg.vector_norm(a, 3), lambda t, a: t.linalg.vector_norm(a, float("inf")),
    lambda t, a: t.linalg.matrix_norm(a), lambda t, a: t.linalg.matrix_norm(a, "nuc"),
    lambda t, a: t.linalg.matrix_norm(a, 2), lambda t, a: t.linalg.norm(a), lambda t, a: a.norm(p=1, dim=0),
    lambda t, a: a.norm("fro"), lambda t, a: t.norm(a, dim=1), lambda t, a: a.abs().pow(2).sum(),
    lambda t, a: a.mean((0, 1)).abs(),
])
def test_spreads_and_norms_of_complex(f):  # they raised "only support floating point" before
    m, t = mg.tensor(Z, requires_grad=True), torch.tensor(Z, requires_grad=True)
    mo, to = f(mg, m), f(torch, t)
    assert str(mo.dtype).split(".")[1] == str(to.dtype).split(".")[1]
    assert mo.grad_fn.name() == to.grad_fn.name() or "Mean" in to.grad_fn.name()  # (var_mean's node: one name)
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-9)
    (mo * mg.arange(1.0, mo.numel() + 1, dtype=mg.float64).reshape(mo.shape)).sum().backward()
    (to * torch.arange(1.0, to.numel() + 1, dtype=torch.float64).reshape(to.shape)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-7, atol=1e-10)


def test_full_with_a_complex_fill_as_pytorchs():
    """torch.full / new_full take complex fills: complex of the default dtype, kept in a complex dtype, the
    real part in a real one where the imaginary part is 0, else PyTorch's refusal."""
    torch = pytest.importorskip("torch")
    assert mg.full((2,), 1 + 2j).dtype == mg.complex64
    np.testing.assert_array_equal(mg.full((2,), 1 + 2j).numpy(), torch.full((2,), 1 + 2j).numpy())
    np.testing.assert_array_equal(mg.zeros(2, dtype=mg.complex128).new_full((3,), 2 - 1j).numpy(),
                                  torch.zeros(2, dtype=torch.complex128).new_full((3,), 2 - 1j).numpy())
    for name in ["float32", "float64", "float16", "int64", "int32", "int16", "uint8", "bool"]:
        want = torch.full((2,), 3 + 0j, dtype=getattr(torch, name))
        got = mg.full((2,), 3 + 0j, dtype=getattr(mg, name))
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if name == "bool":
            continue
        with pytest.raises(RuntimeError) as theirs:
            torch.full((2,), 1 + 2j, dtype=getattr(torch, name))
        with pytest.raises(RuntimeError) as ours:
            mg.full((2,), 1 + 2j, dtype=getattr(mg, name))
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("base, exponent", [
    (np.array([-2.0, 3.0], np.float32), 0.5), (np.array([2.0, 3.0], np.float32), 1j),
    (np.array([2.0, 3.0], np.float32), np.array([1j])), (np.array([2, 3]), 1j), (np.array([2.0, 3.0]), 1j),
    (np.array([2.0, 3.0]), np.array([0.5 + 1j])), (np.array([1 + 1j], np.complex64), 2.0),
    (np.array([2.0, -3.0]), 0.5), (np.array([1 + 1j]), 2.0), (np.array([1 + 1j]), np.array([0.5]))])
def test_float_power_in_place_as_pytorchs(base, exponent):
    """float_power_ writes only into a base of the result's dtype (float64, complex128 with a complex operand)."""
    def run(t):
        b = t.tensor(base)
        try:
            b.float_power_(t.tensor(exponent) if isinstance(exponent, np.ndarray) else exponent)
        except RuntimeError as e:
            return str(e)
        return b.numpy()

    theirs, ours = run(torch), run(mg)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_linalg_eig_and_eigvals_values_and_gradients_as_pytorch(complex_input, shape):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_input else 0)
    w, u = rng.standard_normal(shape[:-1]), rng.standard_normal(shape)
    out = {}
    for lib in (mg, torch):
        A = lib.tensor(a, requires_grad=True)
        L, V = lib.linalg.eig(A)
        # a loss that does not depend on the eigenvectors' phases (PyTorch refuses one that does)
        ((L.real * lib.tensor(w)).sum() + (L.imag ** 2).sum() + (V.abs() * lib.tensor(u)).sum()).backward()
        B = lib.tensor(a, requires_grad=True)
        ev = lib.linalg.eigvals(B)
        ev.abs().sum().backward()
        out[lib] = [L, V, A.grad, ev, B.grad], (str(L.dtype).split(".")[-1], L.grad_fn.name(), ev.grad_fn.name())
    assert out[mg][1] == out[torch][1]
    got, want = ([x.detach().numpy() for x in out[lib][0]] for lib in (mg, torch))
    # eigenvectors are unit columns up to a phase each (LAPACK builds pick different ones): matched by it
    phase = (want[1].conj() * got[1]).sum(-2, keepdims=True)
    got[1] = got[1] / (phase / np.abs(phase))
    for m, t in zip(got, want):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-12)


def test_linalg_eig_of_float32_is_complex64_and_errors_as_pytorch():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], dtype=np.float32)  # real eigenvalues: still complex results
    m, t = mg.linalg.eigvals(mg.tensor(a)), torch.linalg.eigvals(torch.tensor(a))
    assert str(m.dtype) == str(t.dtype).replace("torch", "minigrad") == "minigrad.complex64"
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6)
    for make in (lambda lib: lib.ones(2, 3), lambda lib: lib.ones(3), lambda lib: lib.ones(2, 2, dtype=lib.int64),
                 lambda lib: lib.ones(2, 3, dtype=lib.complex64)):
        with pytest.raises(RuntimeError) as want:
            torch.linalg.eig(make(torch))
        with pytest.raises(RuntimeError) as got:
            mg.linalg.eig(make(mg))
        assert str(got.value) == str(want.value)


def test_linalg_eig_backward_refuses_a_phase_dependent_loss_as_pytorch():
    a = np.random.default_rng(4).standard_normal((3, 3))
    texts = []
    for lib in (mg, torch):
        A = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.linalg.eig(A).eigenvectors.real.sum().backward()
        texts.append(str(e.value))
    assert texts[0] == texts[1]


_PART_WRITES = {  # an in-place write through a real view of z (a complex non-leaf), w a real leaf
    "real_mul": lambda t, z, w: z.real.mul_(3),
    "imag_add": lambda t, z, w: z.imag.add_(w),
    "real_slice_zero": lambda t, z, w: z.real[1:].zero_(),
    "view_as_real_mul": lambda t, z, w: t.view_as_real(z)[..., 0].mul_(w),
    "view_as_real_row": lambda t, z, w: t.view_as_real(z)[1].copy_(w[:2]),
}


@pytest.mark.parametrize("name", list(_PART_WRITES))
def test_writes_through_real_views_of_a_complex_tensor_in_a_graph(torch, name):
    # (they raised "in-place operation on this view ... not supported"): the write reaches z, z's node is
    # CopySlices, and z's, the view's and w's gradients are PyTorch's, also through the view used after the write
    got = []
    for L in (mg, torch):
        a = L.tensor([1 + 2j, 3 - 1j, 0.5 + 0.25j], requires_grad=True)
        w = L.tensor([0.5, -2.0, 1.5], requires_grad=True)
        z = a * (1 - 2j)
        v = _PART_WRITES[name](L, z, w)
        loss = _loss(L, z) + (v * v).sum()
        loss.backward()
        got.append((z.detach().numpy().copy(), v.detach().numpy().copy(), z.grad_fn.name().split("::")[-1], a.grad.numpy(),
                    None if w.grad is None else w.grad.numpy()))  # (None where the write takes no w)
    for m, t in zip(*got):
        if m is None or isinstance(m, str):
            assert m == t
        else:
            np.testing.assert_allclose(m, t, rtol=1e-6, atol=1e-6)


def test_a_real_view_taken_before_a_write_to_its_complex_base_has_its_gradient(torch):
    # the view's history is regrown from z's as it is after the write (it raised: "not a contiguous array")
    got = []
    for L in (mg, torch):
        a = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        z = a * 2
        r, p = z.imag, L.view_as_real(z)
        z.mul_(1j)
        (r * L.tensor([1.0, 3.0])).sum().add(p[..., 0].sum()).backward()
        got.append(a.grad.numpy())
    np.testing.assert_allclose(*got)


def test_view_as_real_shares_memory_as_pytorchs(torch):
    # view_as_real copied its input: writes through it were lost, under no_grad too; it is now a view of z
    got = []
    for L in (mg, torch):
        z = L.tensor([[1 + 2j, 3 - 1j], [0.5 + 0.25j, -2j]])
        with L.no_grad():
            L.view_as_real(z)[..., 0].mul_(2)
        L.view_as_real(z.t())[0, 1, 1] = 7.0  # (a transposed z: its parts still on the last axis)
        v = L.view_as_real(z)
        got.append((z.numpy().copy(), v._base is z, v.shape, z._version))
    (z1, b1, s1, v1), (z2, b2, s2, v2) = got
    np.testing.assert_array_equal(z1, z2)
    assert b1 and b2 and tuple(s1) == tuple(s2) and v1 == v2


def test_writing_a_part_of_a_complex_leaf_that_requires_grad_is_refused_as_pytorch(torch):
    texts = []
    for L in (mg, torch):
        leaf = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        for write in (lambda t: t.real.mul_(2), lambda t: t.imag.zero_(), lambda t, L=L: L.view_as_real(t)[0].zero_()):
            with pytest.raises(RuntimeError) as e:
                write(leaf)
            texts.append(str(e.value))
    assert texts[:3] == texts[3:]
