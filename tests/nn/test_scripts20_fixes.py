"""Focused tests for what the scripts of test_dl_scripts20.py (Griffin-Lim's stft / istft loop) found in minigrad."""
import contextlib
import warnings

import numpy as np
import pytest

import minigrad

SIGNAL = np.random.default_rng(20).standard_normal(40)


def _hann(lib, n=8, dtype="float64"):
    return lib.hann_window(n, dtype=getattr(lib, dtype))


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
            return type(e).__name__, str(e).replace("torch.", "minigrad.")
    raise AssertionError("no error")


STFT_ERRORS = {
    "3d input": lambda lib: lib.stft(lib.tensor(SIGNAL).view(2, 2, 10), 8, 2, window=_hann(lib), return_complex=True),
    "0d input": lambda lib: lib.stft(lib.tensor(SIGNAL)[0], 8, 2, window=_hann(lib), center=False,
                                     return_complex=True),
    "int input": lambda lib: lib.stft(lib.tensor(SIGNAL).int(), 8, 2, window=_hann(lib), return_complex=True),
    "n_fft too long": lambda lib: lib.stft(lib.tensor(SIGNAL), 80, 2, window=_hann(lib, 80), center=False,
                                           return_complex=True),
    "n_fft 0": lambda lib: lib.stft(lib.tensor(SIGNAL), 0, 2, center=False, return_complex=True),
    "hop 0": lambda lib: lib.stft(lib.tensor(SIGNAL), 8, 0, window=_hann(lib), return_complex=True),
    "win_length too long": lambda lib: lib.stft(lib.tensor(SIGNAL), 8, 2, win_length=9, return_complex=True),
    "window size": lambda lib: lib.stft(lib.tensor(SIGNAL), 8, 2, window=_hann(lib, 7, "float32"),
                                        return_complex=True, onesided=True, normalized=True),
    "window 2d, batch": lambda lib: lib.stft(lib.tensor(SIGNAL).view(2, 20), 8, 2, window=_hann(lib).view(2, 4),
                                             return_complex=True),
    "pad mode": lambda lib: lib.stft(lib.tensor(SIGNAL), 8, 2, window=_hann(lib), pad_mode="bogus",
                                     return_complex=True),
}


@pytest.mark.parametrize("case", list(STFT_ERRORS))
def test_stft_bad_arguments_refused_with_pytorchs_texts(torch, case):
    theirs = _error(lambda: STFT_ERRORS[case](torch))
    assert _error(lambda: STFT_ERRORS[case](minigrad)) == theirs


def _spectrum(lib, onesided=None, center=True):
    return lib.stft(lib.tensor(SIGNAL), 8, 2, window=_hann(lib), return_complex=True, onesided=onesided,
                    center=center)


ISTFT_ERRORS = {
    "empty": lambda lib: lib.istft(_spectrum(lib)[:, :0], 8, 2, window=lib.ones(7, dtype=lib.float64)),
    "1d": lambda lib: lib.istft(_spectrum(lib)[0], 8, 2, window=_hann(lib)),
    "0d": lambda lib: lib.istft(_spectrum(lib)[0, 0], 8, 2, window=_hann(lib)),
    "4d": lambda lib: lib.istft(_spectrum(lib).view(1, 1, 5, 21), 8, 2, window=_hann(lib)),
    "bins, onesided": lambda lib: lib.istft(_spectrum(lib)[:4], 8, 2, window=_hann(lib), return_complex=True),
    "bins, full": lambda lib: lib.istft(_spectrum(lib), 8, 2, window=_hann(lib), onesided=False),
    "full bins, onesided": lambda lib: lib.istft(_spectrum(lib, onesided=False), 8, 2, onesided=True),
    "hop": lambda lib: lib.istft(_spectrum(lib), 8, 0, window=_hann(lib)),
    "win_length": lambda lib: lib.istft(_spectrum(lib), 8, 2, win_length=9),
    "window shape": lambda lib: lib.istft(_spectrum(lib), 8, 2, window=lib.ones(7, dtype=lib.float64)),
    "onesided complex": lambda lib: lib.istft(_spectrum(lib), 8, 2, window=_hann(lib), return_complex=True),
    "complex window": lambda lib: lib.istft(_spectrum(lib), 8, 2, window=_hann(lib).to(lib.complex128)),
    "overlap add": lambda lib: lib.istft(_spectrum(lib, center=False), 8, 2, window=_hann(lib), center=False),
}


@pytest.mark.parametrize("case", list(ISTFT_ERRORS))
def test_istft_bad_arguments_refused_with_pytorchs_texts(torch, case):
    theirs = _error(lambda: ISTFT_ERRORS[case](torch))
    assert _error(lambda: ISTFT_ERRORS[case](minigrad)) == theirs


@contextlib.contextmanager
def _warn_always(lib):
    """The warnings a library gives once a process, given every time (they do not depend on the tests run before)."""
    before = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        yield
    finally:
        lib.set_warn_always(before)


def _run(lib, fn):
    """fn(lib, x) on a signal that requires grad: its dtype, shape, grad_fn name, values and the signal's grad."""
    x = lib.tensor(SIGNAL, requires_grad=True)
    with warnings.catch_warnings(record=True) as said, _warn_always(lib):
        warnings.simplefilter("always")
        y = fn(lib, x)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape))
    weights = lib.tensor(g + 1j * g[::-1] if y.is_complex() else g)
    (y * weights).real.sum().backward() if y.is_complex() else (y * weights).sum().backward()
    texts = sorted(str(w.message).split(" (Triggered internally")[0] for w in said)  # (PyTorch's C++ origin cut)
    return (str(y.dtype).split(".")[-1], tuple(y.shape), type(y.grad_fn).__name__, texts), y.detach().numpy(), \
        x.grad.numpy()


RUNS = {
    "stft": lambda lib, x: lib.stft(x, 8, 2, window=_hann(lib), return_complex=True),
    "stft batch": lambda lib, x: lib.stft(x.view(2, 20), 8, 2, window=_hann(lib), return_complex=True),
    "stft constant pad": lambda lib, x: lib.stft(x, 8, 2, window=_hann(lib), pad_mode="constant",
                                                 return_complex=True),
    "istft longer": lambda lib, x: lib.istft(lib.stft(x, 8, 2, window=_hann(lib), return_complex=True), 8, 2,
                                             window=_hann(lib), length=45),
    "istft full spectrum": lambda lib, x: lib.istft(1j * lib.stft(x, 8, 2, window=_hann(lib), onesided=False,
                                                                  return_complex=True), 8, 2, window=_hann(lib)),
    "istft full spectrum, onesided=False": lambda lib, x: lib.istft(
        1j * lib.stft(x, 8, 2, window=_hann(lib), onesided=False, return_complex=True), 8, 2, window=_hann(lib),
        onesided=False),
    "istft complex": lambda lib, x: lib.istft(1j * lib.stft(x, 8, 2, window=_hann(lib), onesided=False,
                                                            return_complex=True), 8, 2, window=_hann(lib),
                                              return_complex=True),
}


@pytest.mark.parametrize("case", list(RUNS))
def test_stft_istft_results_grad_fns_and_gradients_as_pytorch(torch, case):
    theirs, ours = _run(torch, RUNS[case]), _run(minigrad, RUNS[case])
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-10, atol=1e-12)


# ---- the spectral regression's features: vander, linalg.vander; cumprod's float32 rounding -----------------------
def _vander_outcome(lib, fn, values):
    x = lib.tensor(values, requires_grad=values.dtype.kind == "f")
    try:
        y = fn(lib, x)
    except RuntimeError as e:
        return ("error", str(e)), None, None
    grad = None
    # (torch.vander's own backward fails in PyTorch 2.13: its cumprod_out writes into the result the scan saved;
    # linalg.vander's gradient is compared)
    if y.requires_grad and fn is VANDERS["linalg"][0]:
        y.backward(lib.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape))))
        grad = x.grad.numpy()
    name = None if y.grad_fn is None else type(y.grad_fn).__name__
    return (str(y.dtype).split(".")[-1], tuple(y.shape), name), y.detach().numpy(), grad


POINTS = np.array([0.5, -1.25, 2.0, 0.75])
VANDERS = {
    "default": (lambda lib, x: lib.vander(x), POINTS),
    "N, increasing": (lambda lib, x: lib.vander(x, N=6, increasing=True), POINTS),
    "N=1": (lambda lib, x: lib.vander(x, N=1), POINTS),
    "N=0": (lambda lib, x: lib.vander(x, N=0), POINTS),
    "float32": (lambda lib, x: lib.vander(x.float(), N=5), POINTS),
    "int32": (lambda lib, x: lib.vander(x, N=4), np.array([1, -2, 3], dtype=np.int32)),
    "negative N": (lambda lib, x: lib.vander(x, N=-1), POINTS),
    "2-D": (lambda lib, x: lib.vander(x.view(2, 2)), POINTS),
    "linalg": (lambda lib, x: lib.linalg.vander(x.view(2, 2), N=4), POINTS),
}


@pytest.mark.parametrize("case", list(VANDERS))
def test_vander_as_pytorch(torch, case):
    fn, values = VANDERS[case]
    theirs, ours = _vander_outcome(torch, fn, values), _vander_outcome(minigrad, fn, values)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_cumprod_float32_rounds_once_as_pytorchs_cpu_scan(torch):
    a = np.random.default_rng(3).uniform(0.5, 1.5, (6, 50)).astype(np.float32)
    theirs = torch.cumprod(torch.tensor(a), 1).numpy()
    np.testing.assert_array_equal(minigrad.cumprod(minigrad.tensor(a), 1).numpy(), theirs)


@pytest.mark.parametrize("driver, rcond", [("gelsd", None), ("gelsd", 0.3), ("gelss", None), ("gelss", 0.3),
                                           ("gelsy", None)])
def test_lstsq_rank_deficient_drops_small_singular_values(torch, driver, rcond):
    """The SVD drivers' minimum-norm solution and its gradient; gelsy's (another X, pivoted) its fit A X. (gelsy's
    rank under a large rcond comes from its pivoted QR's condition estimate, not the singular values: not compared)"""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 3)), rng.standard_normal((5, 2))
    out = []
    for lib in (torch, minigrad):
        A = lib.tensor(a, requires_grad=True)
        res = lib.linalg.lstsq(A, lib.tensor(b), rcond=rcond, driver=driver)
        res.solution.backward(lib.tensor(np.ones((3, 2))))
        fit = (A @ res.solution).detach().numpy()
        out.append((int(res.rank), fit, res.solution.detach().numpy(), A.grad.numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-12)
    if driver != "gelsy":
        np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(out[1][3], out[0][3], rtol=1e-8, atol=1e-10)


# ---- checkpoint's own keyword arguments: context_fn, debug, early_stop, determinism_check --------------------------
def _checkpoint_run(lib, **kw):
    """A checkpointed block with `kw`: the log of its context managers (after forward, after backward), the
    output and the input's gradient."""
    log = []

    class Note:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name)

        def __exit__(self, *exc):
            log.append("/" + self.name)

    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    if kw.pop("notes", False):
        kw["context_fn"] = lambda: (Note("forward"), Note("recompute"))
    y = lib.utils.checkpoint.checkpoint(lambda h, *, k: (h.sin() * k).exp(), x, k=2.0, use_reentrant=False, **kw)
    after_forward = list(log)
    y.sum().backward()
    return after_forward, log, y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("kw", [dict(notes=True), dict(debug=True, early_stop=False)], ids=["context_fn", "debug"])
def test_checkpoint_takes_context_fn_debug_and_early_stop_as_pytorch(torch, kw):
    theirs, ours = _checkpoint_run(torch, **dict(kw)), _checkpoint_run(minigrad, **dict(kw))
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


CHECKPOINT_ERRORS = {
    "determinism_check": dict(use_reentrant=False, determinism_check="foo"),
    "reentrant debug": dict(use_reentrant=True, debug=True),
    "reentrant context_fn": dict(use_reentrant=True, context_fn=lambda: (None, None)),
}


@pytest.mark.parametrize("case", list(CHECKPOINT_ERRORS))
def test_checkpoint_refuses_its_arguments_as_pytorch(torch, case):
    def call(lib):
        x = lib.ones(2, requires_grad=True)
        return lambda: lib.utils.checkpoint.checkpoint(lambda h: h * 2, x, **CHECKPOINT_ERRORS[case])

    assert _error(call(minigrad)) == _error(call(torch))


# ---- the AWD-LSTM step's addmm: the bias is expanded to the product's shape, never the product broadcast to it ----
PRODUCT_SHAPES = {
    "addmm vector": lambda lib: lib.addmm(lib.ones(4), lib.ones(4, 3), lib.ones(3, 3)),
    "addmm rows": lambda lib: lib.addmm(lib.ones(2, 3), lib.ones(4, 3), lib.ones(3, 3)),
    "addmm 3-D": lambda lib: lib.addmm(lib.ones(4, 3, 1), lib.ones(4, 3), lib.ones(3, 3)),
    "addmm integers 3-D": lambda lib: lib.addmm(*(lib.ones(*s, dtype=lib.int64) for s in ((4, 3, 1), (4, 3), (3, 3)))),
    "baddbmm": lambda lib: lib.baddbmm(lib.ones(3, 1), lib.ones(2, 4, 3), lib.ones(2, 3, 3)),
    "addbmm 3-D": lambda lib: lib.addbmm(lib.ones(1, 4, 3), lib.ones(2, 4, 3), lib.ones(2, 3, 3)),
    "addr 3-D": lambda lib: lib.addr(lib.ones(1, 4, 3), lib.ones(4), lib.ones(3)),
    "addmv 2-D input": lambda lib: lib.addmv(lib.ones(4, 1), lib.ones(4, 3), lib.ones(3)),
    "addmv 3-D mat": lambda lib: lib.addmv(lib.ones(2), lib.ones(4, 3, 1), lib.ones(3)),
    "addmv input size": lambda lib: lib.addmv(lib.ones(3), lib.ones(4, 3), lib.ones(3)),
    "addmv vec size": lambda lib: lib.addmv(lib.ones(4), lib.ones(4, 3), lib.ones(2)),
}


@pytest.mark.parametrize("case", list(PRODUCT_SHAPES))
def test_add_product_ops_refuse_an_input_of_another_shape_as_pytorch(torch, case):
    theirs = _error(lambda: PRODUCT_SHAPES[case](torch))
    assert _error(lambda: PRODUCT_SHAPES[case](minigrad)) == theirs


@pytest.mark.parametrize("shape", [(), (1,), (4,)])
def test_addmv_takes_one_value_or_a_vector_of_rows(torch, shape):
    out = [lib.addmv(lib.arange(1.0, 1.0 + (shape[0] if shape else 1)).reshape(shape), lib.ones(4, 3),
                     lib.ones(3), beta=2).numpy() for lib in (torch, minigrad)]
    np.testing.assert_array_equal(out[1], out[0])


LSTSQ_ERRORS = {
    "1-D input": lambda lib: lib.linalg.lstsq(lib.ones(3, dtype=lib.int64), lib.ones(3, 1, dtype=lib.int64)),
    "0-D other": lambda lib: lib.linalg.lstsq(lib.ones(3, 2), lib.tensor(1.0)),
    "dtypes": lambda lib: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 1)),
    "integers": lambda lib: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 1, dtype=lib.int64)),
    "bools": lambda lib: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.bool), lib.ones(3, 1, dtype=lib.bool)),
    "float16": lambda lib: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.float16), lib.ones(3, 1, dtype=lib.float16)),
}


@pytest.mark.parametrize("case", list(LSTSQ_ERRORS))
def test_lstsq_refuses_bad_operands_as_pytorch(torch, case):
    assert _error(lambda: LSTSQ_ERRORS[case](minigrad)) == _error(lambda: LSTSQ_ERRORS[case](torch))



def _spectral_warnings(lib):
    s = lib.tensor(np.linspace(-1, 1, 40))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        spec = lib.stft(s, 8, 2, return_complex=True)
        lib.istft(spec, 8, 2)
        lib.istft(spec, 8, 2, window=lib.ones(8, dtype=lib.float64), length=45)
    return [str(w.message).split(" (Triggered internally")[0].replace("torch.", "minigrad.") for w in said]


def test_stft_istft_warnings_as_pytorch(torch, monkeypatch):
    """PyTorch gives these once a process (set_warn_always(True): every time); their texts compared."""
    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())
    assert len(_spectral_warnings(minigrad)) == 3
    assert _spectral_warnings(minigrad) == []
    with _warn_always(torch), _warn_always(minigrad):
        theirs, ours = _spectral_warnings(torch), _spectral_warnings(minigrad)
    assert len(theirs) == 3 and ours == theirs
