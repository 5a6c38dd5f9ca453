"""nn.utils.clip_grad_norm_ / clip_grad_value_: PyTorch's numbers (a non-finite norm's too);
parameters_to_vector / vector_to_parameters as PyTorch's."""
import math

import numpy as np
import pytest

import minigrad
import nn
from nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters


def _params(grads):
    params = []
    for g in grads:
        p = nn.Parameter(minigrad.zeros(np.shape(g)))
        p.grad = minigrad.tensor(np.asarray(g, dtype=np.float32))
        params.append(p)
    return params


GRADS = [np.arange(12, dtype=np.float32).reshape(3, 4) - 5, np.array([3.0, -4.0], dtype=np.float32), np.float32(2.5)]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3])
@pytest.mark.parametrize("max_norm", [1.0, 1e4])
def test_matches_torch(torch, norm_type, max_norm):
    ours = _params(GRADS)
    theirs = [torch.nn.Parameter(torch.zeros(np.shape(g))) for g in GRADS]
    for q, g in zip(theirs, GRADS):
        q.grad = torch.tensor(np.asarray(g))
    total = clip_grad_norm_(ours, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert isinstance(total, minigrad.Tensor) and total.ndim == 0 and total.dtype == minigrad.float32
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.array, q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_small_norm_leaves_grads_bitwise_unchanged():
    params = _params(GRADS)
    before = [p.grad.array.copy() for p in params]
    clip_grad_norm_(params, 1e6)
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.grad.array, b)


def test_accepts_one_tensor_and_skips_missing_grads():
    (p,) = _params([[3.0, 4.0]])
    assert clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.array, [0.6, 0.8], rtol=1e-5)
    assert clip_grad_norm_([nn.Parameter(minigrad.ones(2))], 1.0).item() == 0.0
    assert clip_grad_norm_([], 1.0).item() == 0.0


@pytest.mark.parametrize("norm_type", [2.0, math.inf])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_nonfinite_norm_raises_or_scales_as_pytorch(bad, norm_type):
    params = _params([[1.0, bad], [2.0, 3.0]])
    before = [p.grad.array.copy() for p in params]
    with pytest.raises(RuntimeError) as err:
        clip_grad_norm_(params, 1.0, norm_type, error_if_nonfinite=True)
    assert str(err.value) == (
        f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
        "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
        "`error_if_nonfinite=False`")
    for p, b in zip(params, before):  # (the error comes before any scaling)
        np.testing.assert_array_equal(p.grad.array, b)
    total = clip_grad_norm_(params, 1.0, norm_type)
    # scaled by max_norm / (norm + 1e-6): by 0 for an inf norm (inf * 0 is nan), by nan for a nan one
    if np.isnan(bad):
        assert math.isnan(total.item())
    else:
        assert total.item() == math.inf
    with np.errstate(invalid="ignore"):
        expected = [np.asarray(b, dtype=np.float32) * np.float32(0.0 if bad == np.inf else np.nan) for b in before]
    for p, e in zip(params, expected):
        np.testing.assert_array_equal(p.grad.array, e)


def test_a_nonfinite_norm_scales_as_in_torch(torch):
    for bad in (np.nan, np.inf):
        ours = _params([[1.0, bad], [2.0, 3.0]])
        theirs = [torch.nn.Parameter(torch.zeros(2)) for _ in range(2)]
        for q, g in zip(theirs, ([1.0, bad], [2.0, 3.0])):
            q.grad = torch.tensor(g)
        total, expected = clip_grad_norm_(ours, 1.0), torch.nn.utils.clip_grad_norm_(theirs, 1.0)
        np.testing.assert_array_equal(total.array, expected.numpy())
        for p, q in zip(ours, theirs):
            np.testing.assert_array_equal(p.grad.array, q.grad.numpy())


def test_clip_grad_value():
    params = _params([[-3.0, 0.5, 2.0]])
    clip_grad_value_(params, 1.0)
    np.testing.assert_array_equal(params[0].grad.array, [-1.0, 0.5, 1.0])


def test_parameters_to_vector_and_back(torch):
    shapes = [(2, 3), (3,), (1, 1, 2)]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [nn.Parameter(minigrad.tensor(a)) for a in arrays]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    v, tv = parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    (v * minigrad.arange(v.numel())).sum().backward()  # differentiable back into each parameter
    (tv * torch.arange(tv.numel())).sum().backward()
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    new = rng.standard_normal(v.numel())
    vector_to_parameters(minigrad.tensor(new), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert p.requires_grad and p.grad_fn is None
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0], ours)


def test_vector_to_parameters_makes_views_of_the_vector(torch):
    # PyTorch's: each parameter becomes a view of its slice (the vector's memory and dtype), a longer vector's
    # tail is left over (the parameters were copied into, and a longer vector refused)
    got = []
    for lib, mod in ((minigrad, nn), (torch, torch.nn)):
        ps = [mod.Parameter(lib.zeros(2, 3)), mod.Parameter(lib.zeros(4))]
        vec = lib.arange(12.0, dtype=lib.float64)
        (vector_to_parameters if lib is minigrad else torch.nn.utils.vector_to_parameters)(vec, ps)
        vec[0] = 100.0
        got.append([(str(p.dtype).split(".")[-1], p.requires_grad, p.detach().numpy().tolist()) for p in ps])
    assert got[0] == got[1]
