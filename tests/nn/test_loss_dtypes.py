"""The dtype a loss is computed in when its input and target differ, and PyTorch's errors where it refuses
them: a float32 model's output against float64 targets (numpy's default) is the everyday case."""
import numpy as np
import pytest

import minigrad
import nn.functional as F

torch = pytest.importorskip("torch")

LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "poisson_nll_loss",
          "binary_cross_entropy", "binary_cross_entropy_with_logits"]
PAIRS = {"f32/f64": ("float32", "float64"), "f64/f32": ("float64", "float32"), "f16/f32": ("float16", "float32"),
         "f32/f16": ("float32", "float16"), "i64/f32": ("int64", "float32"), "i64/f64": ("int64", "float64"),
         "f32/i64": ("float32", "int64"), "f32/bool": ("float32", "bool")}


def _operands(lib, dtypes):
    x = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    y = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]) * 0.8 + 0.1
    arrays = (x if dtypes[0] != "int64" else (x * 3).round(), y if dtypes[1] not in ("int64", "bool") else (y > 0.5))
    return [lib.tensor(a.astype(d)) for a, d in zip(arrays, dtypes)]


def _run(lib, fn, name, dtypes, reduction):
    try:
        with np.errstate(all="ignore"):
            out = getattr(fn, name)(*_operands(lib, dtypes), reduction=reduction)
    except (RuntimeError, NotImplementedError) as e:
        return type(e), None, None
    return None, str(out.dtype).split(".")[-1], out.detach().double().numpy()


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("name", LOSSES)
def test_mixed_dtypes_as_pytorch(name, pair, reduction):
    dtypes = PAIRS[pair]
    want_err, want_dtype, want = _run(torch, torch.nn.functional, name, dtypes, reduction)
    got_err, got_dtype, got = _run(minigrad, F, name, dtypes, reduction)
    if want_err is not None:  # PyTorch refuses the pair: minigrad refuses it too (its text may differ)
        assert got_err is not None, f"{name}({pair}) computed {got_dtype}; PyTorch raised {want_err.__name__}"
        return
    assert got_err is None, f"{name}({pair}) raised; PyTorch computed {want_dtype}"
    assert got_dtype == want_dtype
    tol = 2e-3 if "float16" in dtypes else 1e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "kl_div"])
def test_float64_target_gradient_reaches_float32_input(name):
    x = minigrad.tensor(np.linspace(0.1, 0.9, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    y = minigrad.tensor(np.linspace(0.9, 0.2, 6).reshape(2, 3))  # float64
    loss = getattr(F, name)(x, y)
    loss.backward()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tloss = getattr(torch.nn.functional, name)(tx, torch.tensor(y.numpy()))
    tloss.backward()
    assert loss.dtype == minigrad.float64 and x.grad.dtype == minigrad.float32
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_binary_cross_entropy_refuses_mismatched_dtypes_with_pytorchs_text():
    p = minigrad.tensor([0.2, 0.7])
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        F.binary_cross_entropy(p, minigrad.tensor([0.0, 1.0], dtype=minigrad.float64))
