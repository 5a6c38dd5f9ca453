"""Complex convolutions against PyTorch 2.13: F.conv1d/2d/3d and conv_transpose1d/2d/3d on complex operands (three
real convolutions of the parts), their values, grad_fn names and gradients (first and second order), the modules
with a complex dtype and each padding_mode, and the operand-type refusals."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as mF

torch = pytest.importorskip("torch")

TOL = {"complex128": dict(rtol=1e-10, atol=1e-10), "complex64": dict(rtol=1e-5, atol=1e-5)}

CASES = {  # name: (functional name, x shape, w shape, bias, kwargs)
    "conv1d": ("conv1d", (2, 3, 7), (4, 3, 3), True, dict(padding=1)),
    "conv1d_unbatched": ("conv1d", (3, 7), (4, 3, 3), True, dict(stride=2)),
    "conv1d_dilation_same": ("conv1d", (2, 2, 8), (3, 2, 3), False, dict(padding="same", dilation=2)),
    "conv2d": ("conv2d", (2, 2, 5, 6), (3, 2, 3, 3), True, dict(stride=(2, 1), padding=(1, 2))),
    "conv2d_groups": ("conv2d", (1, 4, 5, 5), (6, 2, 2, 3), True, dict(groups=2, dilation=(2, 1))),
    "conv3d": ("conv3d", (1, 2, 4, 5, 4), (2, 2, 2, 3, 2), True, dict(padding=1, stride=(1, 2, 1))),
    "conv_transpose1d": ("conv_transpose1d", (2, 3, 5), (3, 2, 3), True, dict(stride=2, output_padding=1)),
    "conv_transpose2d": ("conv_transpose2d", (1, 4, 3, 4), (4, 1, 3, 2), True, dict(groups=2, padding=1, dilation=2)),
    "conv_transpose2d_stride1": ("conv_transpose2d", (2, 2, 4, 4), (2, 3, 3, 3), False, dict()),
    "conv_transpose3d": ("conv_transpose3d", (1, 2, 3, 3, 2), (2, 2, 2, 2, 3), True, dict(stride=2)),
}


def _arrays(name, dtype):
    _, xs, ws, bias, _ = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    shapes = [xs, ws] + ([(ws[1] * CASES[name][4].get("groups", 1) if "transpose" in name else ws[0],)] if bias
                         else [])
    return [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dtype) for s in shapes]


def _run(T, name, dtype, second=False):
    fname, _, _, _, kw = CASES[name]
    F = torch.nn.functional if T is torch else mF
    ts = [T.tensor(a).requires_grad_() for a in _arrays(name, dtype)]
    y = getattr(F, fname)(*ts, **kw)
    c = np.random.default_rng(1).standard_normal(tuple(y.shape)) + 0.5j
    loss = (y * T.tensor(c.astype(dtype))).real.sum() + (y.conj() * y).real.sum()
    grads = T.autograd.grad(loss, ts, create_graph=second)
    out = {"y": y.detach().numpy(), "dtype": str(y.dtype).split(".")[-1], "grad_fn": type(y.grad_fn).__name__,
           "grads": [g.detach().numpy() for g in grads]}
    if second:
        loss2 = sum((g * g.conj()).real.sum() + g.real.sum() for g in grads)
        out["grads2"] = [g.detach().numpy() for g in T.autograd.grad(loss2, ts)]
    return out


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", list(CASES))
def test_complex_conv_matches_torch(name, dtype):
    want, got = _run(torch, name, dtype), _run(minigrad, name, dtype)
    assert (got["dtype"], got["grad_fn"]) == (want["dtype"], want["grad_fn"])
    np.testing.assert_allclose(got["y"], want["y"], **TOL[dtype])
    for g, w in zip(got["grads"], want["grads"]):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **TOL[dtype])


@pytest.mark.parametrize("name", ["conv2d_groups", "conv_transpose1d", "conv3d"])
def test_complex_conv_second_order_matches_torch(name):
    want, got = _run(torch, name, "complex128", True), _run(minigrad, name, "complex128", True)
    for g, w in zip(got["grads2"], want["grads2"]):
        np.testing.assert_allclose(g, w, **TOL["complex128"])


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("module", ["Conv1d", "Conv2d", "ConvTranspose2d"])
def test_complex_conv_module_matches_torch(module, padding_mode):
    if module.startswith("ConvTranspose") and padding_mode != "zeros":
        pytest.skip("transposed convolutions take zero padding only")
    n = int(module[-2])
    kw = dict(padding=1, padding_mode=padding_mode, dtype=None)
    mods = {}
    for T in (torch, minigrad):
        kw["dtype"] = T.complex64
        mods[T] = getattr(torch.nn if T is torch else nn, module)(2, 3, 3, **kw)
    assert mods[minigrad].weight.dtype == minigrad.complex64 and mods[minigrad].bias.dtype == minigrad.complex64
    x = (np.random.default_rng(n).standard_normal((2, 2) + (5,) * n) * (1 - 2j)).astype(np.complex64)
    res = {}
    for T, m in mods.items():
        for p, q in zip(m.parameters(), mods[torch].parameters()):
            with T.no_grad():
                p.copy_(T.tensor(q.detach().numpy()))
        y = m(T.tensor(x))
        (y.abs() ** 2).sum().backward()
        res[T] = [y.detach().numpy()] + [p.grad.numpy() for p in m.parameters()]
    for g, w in zip(res[minigrad], res[torch]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_complex_uniform_draws_both_parts_in_range():
    a = minigrad.empty(4000, dtype=minigrad.complex64).uniform_(-3, 1)
    b = nn.init.uniform_(minigrad.empty(4000, dtype=minigrad.complex128), 2, 5)
    assert a.dtype == minigrad.complex64 and b.dtype == minigrad.complex128
    for t, lo, hi in ((a, -3, 1), (b, 2, 5)):
        for part in (t.real.numpy(), t.imag.numpy()):
            assert lo <= part.min() < lo + 0.1 and hi - 0.1 < part.max() < hi


def _refusal(T, fname, xd, wd, bd):
    F = torch.nn.functional if T is torch else mF
    x = T.tensor(np.ones((1, 2, 5)), dtype=getattr(T, xd))
    w = T.tensor(np.ones((2, 2, 3)), dtype=getattr(T, wd))
    b = None if bd is None else T.tensor(np.ones(2), dtype=getattr(T, bd))
    try:
        getattr(F, fname)(x, w, b)
    except RuntimeError as e:
        return str(e).replace("minigrad.", "torch.")  # (minigrad's legacy type names, minigrad.FloatTensor)
    return None


@pytest.mark.parametrize("fname", ["conv1d", "conv_transpose1d"])
@pytest.mark.parametrize("xd,wd,bd", [("complex128", "complex64", None), ("complex128", "float64", "complex128"),
                                      ("complex64", "float32", None), ("complex128", "complex128", "float64"),
                                      ("complex64", "complex64", "complex128"), ("float64", "complex128", None),
                                      ("float32", "float32", "complex64")])
def test_complex_conv_operand_types_refused_as_torch(fname, xd, wd, bd):
    want = _refusal(torch, fname, xd, wd, bd)
    assert want is not None
    assert _refusal(minigrad, fname, xd, wd, bd) == want
