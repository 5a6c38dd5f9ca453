"""The engine's common path with its branches taken: nodes that no requested input needs, nodes of several
outputs that got some of their gradients, and the id checks of the ops whose ids are data. Against PyTorch."""
import numpy as np
import pytest

import minigrad
from minigrad.ops._util import some_id_outside
import nn.functional as F

torch = pytest.importorskip("torch")


def _pair(values, requires_grad=True):
    a = np.asarray(values, dtype=np.float64)
    return (minigrad.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def test_grad_of_some_inputs_leaves_the_other_leaves_alone():
    (x, tx), (w, tw) = _pair([1.0, -2.0, 3.0]), _pair([0.5, 4.0, -1.5])
    (gx,) = minigrad.autograd.grad(((x * w).exp() * w).sum(), x)
    (tgx,) = torch.autograd.grad(((tx * tw).exp() * tw).sum(), tx)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy())
    assert w.grad is None and x.grad is None and tw.grad is None


def test_backward_inputs_runs_no_node_of_an_unneeded_branch():
    (x, tx), (w, tw) = _pair([1.0, -2.0, 3.0]), _pair([0.5, 4.0, -1.5])
    seen, tseen = [], []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(1))
    tw.register_post_accumulate_grad_hook(lambda p: tseen.append(1))
    ((x * 2).sum() + (w * w).sum()).backward(inputs=[x])
    ((tx * 2).sum() + (tw * tw).sum()).backward(inputs=[tx])
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert w.grad is None and tw.grad is None
    assert seen == tseen == []


@pytest.mark.parametrize("used", [0, 1, 2])
def test_a_node_of_several_outputs_gets_zeros_for_the_outputs_without_a_gradient(used):
    (x, tx) = _pair(np.arange(6.0))
    for _ in range(2):  # the second backward through the retained graph sees the same buffers
        out = x.split(2)[used] * 3
        tout = tx.split(2)[used] * 3
        out.sum().backward(retain_graph=True)
        tout.sum().backward(retain_graph=True)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert out.grad_fn.next_functions[0][0].name() == tout.grad_fn.next_functions[0][0].name()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("ids", [[0, 3, 4], [4, 5], [-1, 2], [2, -128], [7], [], [[1, 2], [3, 9]]])
def test_some_id_outside_as_a_plain_comparison(dtype, ids):
    a = np.array(ids, dtype=np.int64)
    if (a < 0).any() and np.dtype(dtype).kind == "u":
        pytest.skip("no negative id in an unsigned array")
    ids = a.astype(dtype)
    assert type(ids) is np.ndarray  # (numpy's arrays take the ufunc reduce; others their own max)
    assert some_id_outside(ids, 5) == bool(((a < 0) | (a >= 5)).any())


def test_cross_entropy_of_probabilities_and_of_ids_as_torch():
    (x, tx) = _pair(np.linspace(-2.0, 2.0, 12).reshape(4, 3))
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    for target, ttarget in [(minigrad.tensor(p), torch.tensor(p)),
                            (minigrad.tensor([0, 2, 1, 2]), torch.tensor([0, 2, 1, 2]))]:
        loss, tloss = F.cross_entropy(x, target), torch.nn.functional.cross_entropy(tx, ttarget)
        if target.dtype == minigrad.int64:  # (the probabilities' composite ends in a division, named apart)
            assert type(loss.grad_fn).__name__ == type(tloss.grad_fn).__name__ == "NllLossBackward0"
        loss.backward()
        tloss.backward()
        np.testing.assert_allclose(loss.item(), tloss.item())
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
        x.grad = tx.grad = None
