"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch's, with PyTorch's weights loaded through the state dict: the
parameter names, forward's (output, loss), the gradients, log_prob, predict, and the errors of misuse."""
import numpy as np
import pytest

import minigrad
import nn

RNG = np.random.default_rng(5)


def pair(torch, head_bias=False, div_value=2.0):
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 9, 15], div_value=div_value, head_bias=head_bias)
    ours = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 9, 15], div_value=div_value, head_bias=head_bias)
    theirs = theirs.double()
    ours = ours.double()
    state = {k: minigrad.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    assert all(tuple(ours.state_dict()[k].shape) == tuple(v.shape) for k, v in state.items())
    ours.load_state_dict(state)
    return ours, theirs


@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_backward_match_torch(torch, head_bias):
    ours, theirs = pair(torch, head_bias)
    x = RNG.standard_normal((12, 16))
    target = np.array([0, 3, 4, 8, 9, 14, 15, 19, 2, 10, 16, 5])  # every cluster, both ends of each
    xo, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = ours(xo, minigrad.tensor(target)), theirs(xt, torch.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    np.testing.assert_allclose(out.output.detach().numpy(), tout.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), tout.loss.item(), rtol=1e-12)
    (out.loss + out.output[3]).backward()
    (tout.loss + tout.output[3]).backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-10, atol=1e-12)


def test_unbatched_log_prob_predict(torch):
    ours, theirs = pair(torch, div_value=4.0)
    x = RNG.standard_normal((30, 16)) * 3
    out, tout = ours(minigrad.tensor(x[0]), minigrad.tensor(17)), theirs(torch.tensor(x[0]), torch.tensor(17))
    assert out.output.shape == tuple(tout.output.shape) == ()
    np.testing.assert_allclose(out.output.item(), tout.output.item(), rtol=1e-12)
    lp, tlp = ours.log_prob(minigrad.tensor(x)), theirs.log_prob(torch.tensor(x))
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-12)
    assert ours.log_prob(minigrad.tensor(x[0])).shape == (20,)
    pred, tpred = ours.predict(minigrad.tensor(x)), theirs.predict(torch.tensor(x))
    assert pred.dtype == minigrad.int64
    np.testing.assert_array_equal(pred.numpy(), tpred.numpy())
    with pytest.raises(IndexError) as e:
        ours.predict(minigrad.tensor(x[0]))
    with pytest.raises(IndexError) as te:
        theirs.predict(torch.tensor(x[0]))
    assert str(e.value) == str(te.value)


def test_errors(torch):
    for cutoffs in ([4, 4], [9, 4], [0, 4], [4, 20]):
        with pytest.raises(ValueError) as e:
            nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs)
        with pytest.raises(ValueError) as te:
            torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs)
        assert str(e.value) == str(te.value)
    ours, theirs = pair(torch)
    x = RNG.standard_normal((3, 16))
    for target in ([1, 2], [1, 20, 3], [[1, 2, 3]]):
        msgs = []
        for lib, m in ((minigrad, ours), (torch, theirs)):
            with pytest.raises(RuntimeError) as e:
                m(lib.tensor(x), lib.tensor(target))
            msgs.append(str(e.value).replace("minigrad", "torch"))
        assert msgs[0] == msgs[1]
