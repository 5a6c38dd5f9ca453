"""Focused checks for what the scripts of test_dl_scripts32.py found minigrad doing unlike PyTorch: the gradient norm
of complex parameters (clip_grad_norm_, get_total_norm) is real, as PyTorch's."""
import numpy as np
import pytest

import minigrad


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.0, float("inf"), 3.0])
def test_clip_grad_norm_of_complex_gradients_is_real(torch, norm_type):
    def run(lib):
        w = lib.nn.Parameter(lib.tensor(np.array([3 + 4j, 1 - 2j, 0.5j])))
        v = lib.nn.Parameter(lib.tensor(np.array([0.25, -1.5])))
        ((w.abs() ** 2).sum() + (v ** 3).sum()).backward()
        total = lib.nn.utils.clip_grad_norm_([w, v], 1.0, norm_type=norm_type)
        after = lib.nn.utils.get_total_norm([w.grad, v.grad], norm_type)
        return total, after, lib.view_as_real(w.grad), v.grad

    for m, t in zip(run(minigrad), run(torch)):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_total_norm_of_an_empty_complex_gradient_is_real(torch):
    ours = minigrad.nn.utils.get_total_norm([minigrad.zeros(0, dtype=minigrad.complex64)])
    theirs = torch.nn.utils.get_total_norm([torch.zeros(0, dtype=torch.complex64)])
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert float(ours) == float(theirs)
