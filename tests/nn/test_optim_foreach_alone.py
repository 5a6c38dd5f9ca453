"""foreach over a group of large and small parameters: the large ones stepped in place on their own, the
small ones concatenated; PyTorch's values and state_dict order either way."""
import numpy as np
import pytest

import minigrad
from nn.optim.optimizer import ALONE

SIZES = (ALONE * 2, 5, ALONE + 3, 7, 1)  # large and small interleaved
SMALL = (1, 3, 4)  # their positions


def _run(make, foreach, wrap=minigrad.tensor, steps=3):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(n).astype(np.float32) for n in SIZES]
    grads = [[rng.standard_normal(n).astype(np.float32) for n in SIZES] for _ in range(steps)]
    params, opt = make(values, foreach)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = wrap(g)
        opt.step()
    return params, opt


def _ours(values, foreach, cls="AdamW"):
    params = [minigrad.tensor(v, requires_grad=True) for v in values]
    return params, getattr(minigrad.optim, cls)(params, lr=0.01, weight_decay=0.1, foreach=foreach)


@pytest.mark.parametrize("cls", ["AdamW", "Adam"])
def test_large_parameters_step_in_place_small_ones_concatenated_with_torchs_values(cls):
    torch = pytest.importorskip("torch")

    def theirs(values, foreach):
        params = [torch.tensor(v, requires_grad=True) for v in values]
        return params, getattr(torch.optim, cls)(params, lr=0.01, weight_decay=0.1, foreach=False)

    ours, opt = _run(lambda v, f: _ours(v, f, cls), None)
    ref, topt = _run(theirs, False, torch.from_numpy)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    # the small ones share flat buffers; a large one's state is its own, and nothing large was copied
    (key,) = opt._flat_state
    assert key[0] == tuple(id(ours[i]) for i in SMALL)
    for i, p in enumerate(ours):
        base = opt.state[p]["exp_avg"].array.base
        assert (base is not None and base.size == 13) == (i in SMALL)
    assert max(b.size for k, b in opt._scratch_buffers.items() if k[0] == "concat") == 13
    # state_dict in the group's order, as PyTorch's
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == list(range(len(SIZES)))
    for i in sd["state"]:
        np.testing.assert_allclose(sd["state"][i]["exp_avg_sq"].numpy(), tsd["state"][i]["exp_avg_sq"].numpy(),
                                   rtol=1e-6, atol=1e-12)
        assert float(sd["state"][i]["step"]) == float(tsd["state"][i]["step"]) == 3.0


def test_foreach_equals_the_loop_bit_for_bit_with_large_parameters():
    each, _ = _run(_ours, None)
    loop, _ = _run(_ours, False)
    for a, b in zip(each, loop):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_sgd_momentum_large_parameters_alone_with_torchs_values():
    torch = pytest.importorskip("torch")

    def ours(values, foreach):
        params = [minigrad.tensor(v, requires_grad=True) for v in values]
        return params, minigrad.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=foreach)

    def theirs(values, foreach):
        params = [torch.tensor(v, requires_grad=True) for v in values]
        return params, torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=False)

    a, opt = _run(ours, None)
    b, _ = _run(theirs, False, torch.from_numpy)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert max(b.size for k, b in opt._scratch_buffers.items() if k[0] == "concat") == 13
