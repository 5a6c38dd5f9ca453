"""Focused tests for what the scripts of test_dl_scripts27.py (modern language-model code) met: a query row whose
keys are all masked by finfo.min, where minigrad's attention gradients are PyTorch's MATH backend's (its CPU flash
kernel's backward differs there, a strict xfail in the script test)."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def _attend(lib, sdpa, q, k, v, mask, g):
    ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
    m = lib.tensor(mask, requires_grad=True)
    y = sdpa(*ts, attn_mask=m)
    (y * lib.tensor(g)).sum().backward()
    return [y.detach().numpy()] + [t.grad.numpy() for t in ts] + [m.grad.numpy()]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fully_masked_rows_of_finfo_min_as_pytorch_math_backend(torch, dtype):
    """A left-padded batch: its first rows see no key (every score finfo.min), the output the values' mean; the
    gradients are those of that mean, as PyTorch's MATH backend gives them."""
    rng = np.random.default_rng(27)
    q, k, v = (rng.standard_normal((2, 2, 4, 3)).astype(dtype) for _ in range(3))
    g = rng.standard_normal((2, 2, 4, 3)).astype(dtype)
    low = np.finfo(dtype).min
    mask = np.where(np.triu(np.ones((4, 4), bool), 1), low, 0).astype(dtype)[None, None].repeat(2, 0)
    mask[0, :, :, :2] = low
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = _attend(torch, torch.nn.functional.scaled_dot_product_attention, q, k, v, mask, g)
    ours = _attend(minigrad, F.scaled_dot_product_attention, q, k, v, mask, g)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[0][0, :, :2], np.broadcast_to(v[0].mean(1, keepdims=True), (2, 2, 3)), **tol)
    for name, a, b in zip(["out", "q", "k", "v", "mask"], ours, theirs):
        np.testing.assert_allclose(a, b, err_msg=name, **tol)
