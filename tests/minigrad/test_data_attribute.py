"""`.data` as PyTorch's: a Tensor sharing the tensor's memory, outside autograd; the raw array is `.array`."""
import numpy as np
import pytest

import minigrad
import nn


def test_data_is_a_tensor_sharing_memory_outside_autograd(torch):
    for lib in (minigrad, torch):
        x = lib.ones(3, requires_grad=True)
        d = x.data
        assert isinstance(d, lib.Tensor) and not d.requires_grad and d.grad_fn is None and d.is_leaf
        d.add_(2)
        assert x.tolist() == [3.0, 3.0, 3.0]
        assert x._version == 0  # a change through .data is not seen by autograd's checks
        assert x.data.numpy().tolist() == [3.0, 3.0, 3.0]  # no "requires grad" refusal there


def test_a_parameters_data_is_a_plain_tensor(torch):
    for lib, mod in ((minigrad, nn), (torch, torch.nn)):
        p = mod.Parameter(lib.zeros(2))
        assert type(p.data) is lib.Tensor


def test_manual_sgd_through_data_matches_torch(torch):
    rng = np.random.default_rng(0)
    w0, x0, y0 = rng.standard_normal((3, 4)), rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    result = []
    for lib in (minigrad, torch):
        w = lib.tensor(w0, requires_grad=True)
        x, y = lib.tensor(x0), lib.tensor(y0)
        for _ in range(3):
            loss = ((x @ w.T - y) ** 2).mean()
            loss.backward()
            w.data.add_(w.grad, alpha=-0.1)  # the update of older tutorials
            w.grad.data.zero_()
        result.append(w.detach().numpy().copy())
    np.testing.assert_allclose(result[0], result[1], rtol=1e-12)


def test_data_copy_zero_fill_and_assignment(torch):
    for lib in (minigrad, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        x.data.copy_(lib.ones(2, 3))
        assert x.sum().item() == 6
        x.data.fill_(2.0)
        assert x.sum().item() == 12
        x.data.zero_()
        assert x.sum().item() == 0
        x.data = lib.arange(4.0)  # the shape may change, the tensor stays the same leaf
        assert tuple(x.shape) == (4,) and x.requires_grad and x.tolist() == [0.0, 1.0, 2.0, 3.0]
        x.sum().backward()
        assert x.grad.tolist() == [1.0] * 4


def test_assigning_data_that_is_not_a_tensor_is_refused():
    x = minigrad.zeros(2)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got numpy.ndarray"):
        x.data = np.ones(2)


def test_the_raw_array_has_its_own_name():
    x = minigrad.ones(2, requires_grad=True)
    assert type(x.array) is np.ndarray
    x.array[0] = 5.0
    assert x.tolist() == [5.0, 1.0]


def test_add_and_sub_with_alpha_are_the_scaled_operand_added_in_place():
    rng = np.random.default_rng(1)
    a0, g0 = rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal((5, 7)).astype(np.float32)
    for alpha in (-0.005, 3, 1, 1.0):
        for name, ufunc in (("add_", np.add), ("sub_", np.subtract)):
            p = minigrad.tensor(a0, requires_grad=True)
            p.grad = minigrad.tensor(g0)
            version = p.data._version
            d = p.data
            assert getattr(d, name)(p.grad.data, alpha=alpha) is d and d._version == version + 1
            assert p.detach().numpy().tobytes() == ufunc(a0, g0 * alpha).tobytes()  # through .data: p's memory
            b = minigrad.tensor(a0)
            getattr(b, name)(0.25, alpha=alpha)
            assert b.numpy().tobytes() == ufunc(a0, np.float32(0.25 * alpha)).tobytes()
