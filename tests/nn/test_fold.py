"""F.unfold / F.fold / F.local_response_norm and their modules against PyTorch: values and gradients (twice for
unfold/fold) over kernel, dilation, padding and stride, unbatched inputs, reprs and error texts."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

RNG = np.random.default_rng(8)
CASES = [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2), dict(kernel_size=3, padding=1, dilation=2),
         dict(kernel_size=(3, 2), padding=(1, 0), stride=(2, 1), dilation=(1, 2))]


def pair(a):
    import torch
    return minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_unfold_and_fold_as_torch(torch, kw, batched):
    shape = (2, 3, 7, 6) if batched else (3, 7, 6)
    x, xt = pair(RNG.standard_normal(shape))
    cols, cols_t = F.unfold(x, **kw), torch.nn.functional.unfold(xt, **kw)
    close(cols, cols_t)
    w = RNG.standard_normal(tuple(cols.shape))
    back, back_t = F.fold(cols * minigrad.tensor(w), (7, 6), **kw), torch.nn.functional.fold(cols_t * torch.tensor(w),
                                                                                             (7, 6), **kw)
    close(back, back_t)
    (g,) = minigrad.autograd.grad((back ** 2).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((back_t ** 2).sum(), xt, create_graph=True)
    close(g, gt)
    g.sum().backward()
    gt.sum().backward()
    close(x.grad, xt.grad)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 4), (1, 4, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_as_torch(torch, shape, size):
    x, xt = pair(RNG.standard_normal(shape))
    y = nn.LocalResponseNorm(size, alpha=0.1, beta=0.6, k=2.0)(x)
    yt = torch.nn.LocalResponseNorm(size, alpha=0.1, beta=0.6, k=2.0)(xt)
    close(y, yt)
    y.sum().backward()
    yt.sum().backward()
    close(x.grad, xt.grad)


def test_reprs_and_errors_as_torch(torch):
    for ours, theirs in ((nn.Unfold(2, stride=2), torch.nn.Unfold(2, stride=2)),
                         (nn.Fold((4, 4), 2), torch.nn.Fold((4, 4), 2)),
                         (nn.LocalResponseNorm(2), torch.nn.LocalResponseNorm(2))):
        assert repr(ours) == repr(theirs)
    calls = [lambda L: L.nn.functional.unfold(L.ones(1, 1, 2, 2), 3),
             lambda L: L.nn.functional.unfold(L.ones(1, 1, 4, 4), 2, stride=0),
             lambda L: L.nn.functional.fold(L.ones(1, 5, 4), (3, 3), 2),
             lambda L: L.nn.functional.fold(L.ones(1, 4, 5), (3, 3), 2),
             lambda L: L.nn.functional.fold(L.ones(4), (3, 3), 2),
             lambda L: L.nn.functional.local_response_norm(L.ones(2, 3), 2)]
    for call in calls:
        with pytest.raises(Exception) as ours:
            call(minigrad)
        with pytest.raises(Exception) as theirs:
            call(torch)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
