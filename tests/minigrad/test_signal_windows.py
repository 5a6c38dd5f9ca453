"""minigrad.signal.windows against torch.signal.windows: values, dtypes, sym=, requires_grad= and error texts."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

CASES = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 0.5}),
         ("exponential", {"center": 2.0, "sym": False}), ("gaussian", {}), ("gaussian", {"std": 2.3}),
         ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}),
         ("hann", {}), ("kaiser", {}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 3.5}), ("nuttall", {})]


@pytest.mark.parametrize("name,kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_torch(name, kwargs, dtype):
    import minigrad.signal

    for M in range(13):
        for sym in ([kwargs["sym"]] if "sym" in kwargs else [True, False]):
            kw = dict(kwargs, sym=sym)
            expected = getattr(torch.signal.windows, name)(M, dtype=getattr(torch, dtype), **kw)
            got = getattr(minigrad.signal.windows, name)(M, dtype=getattr(minigrad, dtype), **kw)
            assert got.dtype == getattr(minigrad, dtype)
            assert tuple(got.shape) == tuple(expected.shape)
            tol = 2e-6 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=tol, atol=tol, err_msg=f"{name} M={M}")


def test_default_dtype_and_import_forms():
    from minigrad.signal.windows import hann

    assert hann(4).dtype == minigrad.float32
    np.testing.assert_allclose(hann(7).numpy(), torch.signal.windows.hann(7).numpy(), atol=1e-7)


@pytest.mark.parametrize("name", ["hann", "kaiser", "gaussian", "exponential", "bartlett", "cosine", "nuttall"])
def test_requires_grad_builds_torch_graph(name):
    import minigrad.signal

    for M in (0, 1, 6):
        expected = getattr(torch.signal.windows, name)(M, requires_grad=True)
        got = getattr(minigrad.signal.windows, name)(M, requires_grad=True)
        assert got.requires_grad
        assert (type(got.grad_fn).__name__ if got.grad_fn else None) == \
            (type(expected.grad_fn).__name__ if expected.grad_fn else None)


@pytest.mark.parametrize("name,M,kwargs", [
    ("hann", -1, {}), ("nuttall", -2, {}), ("gaussian", 3, {"std": 0}), ("exponential", 3, {"tau": 0}),
    ("exponential", 3, {"center": 1.0}), ("kaiser", 3, {"beta": -1}), ("hann", 3, {"dtype": "int64"}),
    ("bartlett", 3, {"dtype": "float16"}), ("blackman", 3, {"layout": "sparse_coo"}),
    ("general_cosine", 3, {"a": []}), ("general_cosine", 3, {"a": 3})])
def test_errors_match_torch(name, M, kwargs):
    import minigrad.signal

    def call(lib, windows):
        kw = {k: getattr(lib, v) if k in ("dtype", "layout") else v for k, v in kwargs.items()}
        with pytest.raises(Exception) as info:
            getattr(windows, name)(M, **kw)
        return info.type, str(info.value).replace("torch.", "").replace("minigrad.", "")

    assert call(minigrad, minigrad.signal.windows) == call(torch, torch.signal.windows)


def test_lazy_attribute():
    # minigrad.signal is an attribute of the package, as torch.signal is of torch (loaded on first use)
    assert minigrad.signal.windows.hamming(3).shape == (3,)
