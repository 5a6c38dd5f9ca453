"""F.ctc_loss, nn.CTCLoss and torch.ctc_loss against PyTorch: values and gradients (padded and concatenated
targets, uneven lengths, repeated labels, empty targets, impossible alignments with and without zero_infinity),
finite differences through log_softmax, and the errors of common misuse."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck

RNG = np.random.default_rng(11)


def case(T=7, N=4, C=5, S=3, dtype=np.float64):
    x = RNG.standard_normal((T, N, C)).astype(dtype)
    targets = RNG.integers(1, C, (N, S))
    targets[0, :2] = 2  # a repeated label: no jump between them
    il = np.array([T, T - 1, T - 3, 3][:N])
    tl = np.array([S, 2, 0, 1][:N])
    return x, targets, il, tl




@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concat", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch(torch, reduction, concat, dtype):
    x, targets, il, tl = case(dtype=dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)
    if concat:
        targets_in = np.concatenate([row[:n] for row, n in zip(targets, tl)])
    else:
        targets_in = targets
    g = RNG.standard_normal(4 if reduction == "none" else ()).astype(dtype)
    res = []
    for lib, fn in ((minigrad, F.ctc_loss), (torch, torch.nn.functional.ctc_loss)):
        xt = lib.tensor(x, requires_grad=True)
        loss = fn(xt.log_softmax(2), lib.tensor(targets_in), lib.tensor(il), lib.tensor(tl), reduction=reduction)
        loss.backward(lib.tensor(g))
        res.append((loss, xt.grad))
    (y, gx), (ty, tgx) = res
    assert y.shape == tuple(ty.shape) and y.dtype == minigrad.tensor(x).dtype
    assert y.grad_fn.name() == ty.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), **tol)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), **tol)


def test_gradient_wrt_log_probs_and_lengths_as_tuples(torch):
    """PyTorch's gradient w.r.t. log_probs itself (exp(y) - occupancy / p), lengths given as tuples."""
    x, targets, il, tl = case()
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    ours = minigrad.tensor(lp, requires_grad=True)
    theirs = torch.tensor(lp, requires_grad=True)
    y = nn.CTCLoss(blank=0, reduction="sum")(ours, minigrad.tensor(targets), tuple(il.tolist()), tuple(tl.tolist()))
    ty = torch.nn.CTCLoss(blank=0, reduction="sum")(theirs, torch.tensor(targets), tuple(il.tolist()),
                                                    tuple(tl.tolist()))
    y.backward()
    ty.backward()
    np.testing.assert_allclose(y.item(), ty.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert (ours.grad.numpy()[il[3]:, 3] == 0).all()  # frames past the input length


def test_other_blank_and_torch_form(torch):
    x, targets, il, tl = case()
    targets = np.where(targets == 4, 0, targets)  # blank 4: class 0 is a label
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    args = (targets, il, tl)
    y = minigrad.ctc_loss(minigrad.tensor(lp), *[minigrad.tensor(a) for a in args], 4)
    ty = torch.ctc_loss(torch.tensor(lp), *[torch.tensor(a) for a in args], 4)
    assert y.shape == tuple(ty.shape)  # no reduction given: per-sample, as PyTorch's
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)
    y = minigrad.ctc_loss(minigrad.tensor(lp), *[minigrad.tensor(a) for a in args], 4, 1)
    np.testing.assert_allclose(y.item(), torch.ctc_loss(torch.tensor(lp), *[torch.tensor(a) for a in args], 4, 1).item())


def test_unbatched(torch):
    x, targets, il, tl = case()
    lp = x[:, 0] - np.log(np.exp(x[:, 0]).sum(1, keepdims=True))
    for reduction in ("mean", "none"):
        y = F.ctc_loss(minigrad.tensor(lp), minigrad.tensor(targets[0]), minigrad.tensor(7), minigrad.tensor(3),
                       reduction=reduction)
        ty = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(targets[0]), torch.tensor(7),
                                          torch.tensor(3), reduction=reduction)
        assert y.shape == tuple(ty.shape)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(torch, zero_infinity):
    """Three repeated labels need five frames: with three the loss is inf (its gradient NaN), or 0 and no gradient."""
    x, _, _, _ = case(N=2)
    targets, il, tl = np.array([[1, 1, 1], [2, 3, 1]]), np.array([3, 7]), np.array([3, 3])
    res = []
    for lib, fn in ((minigrad, F.ctc_loss), (torch, torch.nn.functional.ctc_loss)):
        xt = lib.tensor(x, requires_grad=True)
        loss = fn(xt.log_softmax(2), lib.tensor(targets), lib.tensor(il), lib.tensor(tl), reduction="none",
                  zero_infinity=zero_infinity)
        loss.sum().backward()
        res.append((loss.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)  # (NaN where PyTorch's is NaN)


def test_gradcheck_through_log_softmax():
    x, targets, il, tl = case(T=5, N=3, C=4, S=2)
    targets = minigrad.tensor(targets % 3 + 1)
    il, tl = minigrad.tensor(np.array([5, 4, 5])), minigrad.tensor(np.array([2, 1, 0]))
    for reduction in ("mean", "none"):
        assert gradcheck(lambda t, r=reduction: F.ctc_loss(t.log_softmax(2), targets, il, tl, reduction=r),
                         (minigrad.tensor(x, requires_grad=True),))


def test_errors(torch):
    x, targets, il, tl = case()
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    bad = [
        dict(input_lengths=np.array([8, 6, 4, 3])),
        dict(target_lengths=np.array([4, 2, 0, 1])),
        dict(input_lengths=np.array([7.0, 6, 4, 3])),
        dict(input_lengths=np.array([7, 6, 4])),
        dict(blank=5),
    ]
    for kw in bad:
        args = dict(input_lengths=il, target_lengths=tl, blank=0)
        args.update(kw)
        blank = args.pop("blank")
        msgs = []
        for lib, fn in ((minigrad, F.ctc_loss), (torch, torch.nn.functional.ctc_loss)):
            with pytest.raises(RuntimeError) as e:
                fn(lib.tensor(lp), lib.tensor(targets), lib.tensor(args["input_lengths"]),
                   lib.tensor(args["target_lengths"]), blank=blank)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
