"""Focused tests for what the scripts of test_dl_scripts19.py found in minigrad."""
import numpy as np
import pytest

import minigrad


def _stft(lib, n, pad_mode, shape=(2,), n_fft=16):
    x = lib.tensor(np.random.default_rng(n).standard_normal(shape + (n,)), requires_grad=True)
    try:
        spec = lib.stft(x, n_fft, hop_length=4, window=lib.hann_window(n_fft, dtype=lib.float64), pad_mode=pad_mode,
                        return_complex=True)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    spec.abs().sum().backward()
    return spec.detach(), x.grad


@pytest.mark.parametrize("shape", [(2,), ()])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect", "replicate", "circular"])
def test_stft_pad_modes_as_pytorch(torch, pad_mode, shape):
    (ours, our_grad), (theirs, their_grad) = _stft(minigrad, 20, pad_mode, shape), _stft(torch, 20, pad_mode, shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n, pad_mode, shape", [
    (8, "reflect", (2,)), (7, "reflect", ()), (7, "circular", (3,)), (5, "circular", ()), (9, "foo", (2,)),
])
def test_stft_too_short_for_its_padding_or_an_unknown_mode(torch, n, pad_mode, shape):
    ours, theirs = _stft(minigrad, n, pad_mode, shape), _stft(torch, n, pad_mode, shape)
    assert isinstance(theirs[0], str)
    assert ours == theirs


_R = np.random.default_rng(19)
_A = _R.standard_normal((4, 3))
_RANK2 = _A[:, :2] @ _R.standard_normal((2, 3))
_SYM = _A.T @ _A - 1.5 * np.eye(3)


@pytest.mark.parametrize("a, call", [
    (_A, lambda T, a: T.linalg.pinv(a, rtol=0.5)),
    (_A.T, lambda T, a: T.linalg.pinv(a, atol=0.9)),
    (_A, lambda T, a: T.linalg.pinv(a, T.tensor(0.5, dtype=T.float64))),
    (_A, lambda T, a: T.linalg.pinv(a, 0.5)),
    (_A, lambda T, a: T.pinverse(a, rcond=0.5)),
    (_RANK2, lambda T, a: T.linalg.pinv(a)),
    (_RANK2, lambda T, a: T.pinverse(a)),
    (_SYM, lambda T, a: T.linalg.pinv(a, hermitian=True)),
    (_SYM, lambda T, a: T.linalg.pinv(a, rtol=0.3, hermitian=True)),
    (np.stack([_A, 2 * _A]), lambda T, a: T.linalg.pinv(a, atol=T.tensor([0.1, 0.9], dtype=T.float64))),
    (_A, lambda T, a: T.linalg.pinv(a, rtol=T.tensor([[0.1], [0.6]], dtype=T.float64))),
], ids=["rtol", "atol", "rcond_tensor", "rcond_positional", "pinverse_rcond", "rank_deficient",
        "pinverse_rank_deficient", "hermitian", "hermitian_rtol", "batched_atol", "broadcast_rtol"])
def test_pinv_tolerances_values_and_gradients_as_pytorch(torch, a, call):
    """The gradient is PyTorch's (that of A's own pseudo-inverse) also where singular values were cut, and the
    tolerance arguments (rcond positional or as pinverse's, tensors, batches of them) mean what they do there."""
    results = []
    for T in (minigrad, torch):
        x = T.tensor(a, requires_grad=True)
        y = call(T, x)
        w = T.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)))
        (g,) = T.autograd.grad((y * w).sum(), x, create_graph=True)
        g.sin().sum().backward()
        results.append((y.detach().numpy(), type(y.grad_fn).__name__, g.detach().numpy(), x.grad.numpy()))
    (y, name, g, gg), (ty, tname, tg, tgg) = results
    assert name == tname
    for ours, theirs in ((y, ty), (g, tg), (gg, tgg)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.pinv(T.ones(3, 2), 0.5, atol=0.1),
    lambda T: T.linalg.pinv(T.ones(3, 2), rtol="a"),
])
def test_pinv_argument_errors_as_pytorch(torch, call):
    errors = []
    for T in (minigrad, torch):
        with pytest.raises(TypeError) as e:
            call(T)
        errors.append(str(e.value).split("\n")[0])
    assert errors[0] == errors[1]


@pytest.mark.parametrize("kw", [
    dict(hop_length=0, onesided=True, normalized=True), dict(hop_length=-1, center=False), dict(win_length=0),
    dict(n_fft=0), dict(n_fft=100, center=False), dict(n_fft=41, center=False), dict(win_length=20),
    dict(window=(2, 8)), dict(window=(10,)), dict(shape=(40,), n_fft=100, center=False), dict(shape=(2, 2, 40)),
], ids=["hop0", "hop_negative", "win0", "nfft0", "nfft_long", "nfft_one_over", "win_long", "window_2d",
        "window_short", "one_signal", "3d"])
def test_stft_argument_errors_as_pytorch(torch, kw):
    """A bad stft argument gets PyTorch's one line (the call as its C++ side prints it), not a numpy error."""
    kw = dict(kw)
    shape, n_fft, window = kw.pop("shape", (2, 40)), kw.pop("n_fft", 16), kw.pop("window", None)
    errors = []
    for T in (minigrad, torch):
        with pytest.raises(RuntimeError) as e:
            T.stft(T.zeros(shape, dtype=T.float64), n_fft, window=None if window is None else T.ones(window),
                   return_complex=True, **kw)
        errors.append(str(e.value).replace("torch.", "minigrad."))  # (minigrad names its own types)
    assert errors[0] == errors[1]


def _istft(T, spec, **kw):
    s = T.tensor(spec, requires_grad=True)
    y = T.istft(s, 16, hop_length=4, window=T.hann_window(16, dtype=T.float64), **kw)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    (y.abs() * w).sum().backward()
    return y.detach(), s.grad


_SPEC = np.random.default_rng(3).standard_normal((2, 16, 11)) + 1j * np.random.default_rng(4).standard_normal((2, 16, 11))


@pytest.mark.parametrize("kw", [dict(onesided=False), dict(), dict(return_complex=True),
                                dict(return_complex=True, onesided=False, length=30)],
                         ids=["two_sided", "inferred", "complex", "complex_length"])
def test_istft_of_a_two_sided_spectrum_as_pytorch(torch, kw):
    """A two-sided spectrum (not conjugate-symmetric here): PyTorch reads only its first n_fft // 2 + 1 bins for a
    real signal (so the gradient of the rest is zero), and inverts it whole with return_complex=True."""
    (y, g), (ty, tg) = _istft(minigrad, _SPEC, **kw), _istft(torch, _SPEC, **kw)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bins, n_fft, kw", [
    (9, 16, dict(return_complex=True)), (9, 16, dict(return_complex=True, onesided=True)),
    (16, 16, dict(onesided=True)), (9, 16, dict(onesided=False)), (9, 15, dict(length=20, center=False)),
], ids=["complex_of_onesided", "complex_onesided", "onesided_of_two_sided", "two_sided_of_onesided", "odd_n_fft"])
def test_istft_spectrum_of_the_wrong_size_refused_as_pytorch(torch, bins, n_fft, kw):
    errors = []
    for T in (minigrad, torch):
        with pytest.raises(RuntimeError) as e:
            T.istft(T.tensor(_SPEC[:, :bins]), n_fft, hop_length=4, window=T.hann_window(n_fft, dtype=T.float64), **kw)
        errors.append(str(e.value).replace("torch.", "minigrad."))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("make", [
    lambda T: T.ones(2, 3), lambda T: T.ones(2, 3, dtype=T.complex64), lambda T: T.ones(3),
    lambda T: T.ones(2, 3, dtype=T.long),
], ids=["rectangular", "complex_rectangular", "vector", "integer"])
def test_eigvals_refusals_name_eigvals(torch, make):
    errors = []
    for T in (minigrad, torch):
        with pytest.raises(RuntimeError) as e:
            T.linalg.eigvals(make(T))
        errors.append(str(e.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("equation, shapes", [("bn,bm->bnm", [(2, 3), (2, 4)]), ("ij,jk->ik", [(2, 3), (3, 4)])])
def test_einsum_grad_fn_name_as_pytorch(torch, equation, shapes):
    names = []
    for T in (minigrad, torch):
        operands = [T.ones(*s, dtype=T.float64, requires_grad=True) for s in shapes]
        names.append(type(T.einsum(equation, *operands).grad_fn).__name__)
    assert names[0] == names[1]


@pytest.mark.parametrize("make, n_fft, kw", [
    (lambda T: T.tensor(_SPEC[:, :9]), 16, dict(hop_length=20)),
    (lambda T: T.tensor(_SPEC[:, :9]), 16, dict(hop_length=0)),
    (lambda T: T.tensor(_SPEC[:, :9]), 16, dict(win_length=20, hop_length=4)),
    (lambda T: T.tensor(_SPEC[:, :9]), 16, dict(window=(10,), hop_length=4)),
    (lambda T: T.tensor(_SPEC[:, :9]), 16, dict(window=(16,), hop_length=4, center=False)),
    (lambda T: T.ones(2, 0, 5, dtype=T.complex128), 16, dict()),
    (lambda T: T.ones(1, 1, 9, 5, dtype=T.complex64), 16, dict()),
    (lambda T: T.ones(9, dtype=T.complex64), 16, dict()),
], ids=["hop_over_win", "hop0", "win_over_n_fft", "window_size", "zero_envelope", "empty", "4d", "1d"])
def test_istft_argument_errors_as_pytorch(torch, make, n_fft, kw):
    kw = dict(kw)
    window = kw.pop("window", None)
    errors = []
    for T in (minigrad, torch):
        w = None if window is None else T.hann_window(*window, dtype=T.float64)
        with pytest.raises((RuntimeError, IndexError)) as e:
            T.istft(make(T), n_fft, window=w, **kw)
        # (the first line: PyTorch's envelope text goes on with the printout of a bool tensor)
        errors.append((type(e.value).__name__, str(e.value).split("\n")[0].replace("torch.", "minigrad.")))
    assert errors[0] == errors[1]


def test_stft_of_integers_refused_as_pytorch(torch):
    errors = []
    for T in (minigrad, torch):
        with pytest.raises(RuntimeError) as e:
            T.stft(T.ones(40, dtype=T.long), 16, return_complex=True)
        errors.append(str(e.value).replace("torch.", "minigrad."))
    assert errors[0] == errors[1]
