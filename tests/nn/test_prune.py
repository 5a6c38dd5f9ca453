"""nn.utils.prune against PyTorch's: the pruning tutorial's steps (l1_unstructured by fraction and count,
ln_structured on top of it through a PruningContainer, remove, global_unstructured, a custom method),
the module's parameters, buffers, hooks and state_dict keys, the gradient through the mask, and the errors."""
import numpy as np
import pytest

import minigrad
import nn
from nn.utils import prune

RNG = np.random.default_rng(5)


def tprune(torch):
    import torch.nn.utils.prune as torch_prune  # (not loaded by `import torch`)

    return torch_prune


def _model(lib, weights):
    m = lib.nn.Sequential(lib.nn.Conv2d(1, 6, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(6 * 6 * 6, 10))
    with lib.no_grad():
        for p, w in zip(m.parameters(), weights):
            p.copy_(lib.tensor(w))
    return m


def _both(torch):
    shapes = [(6, 1, 3, 3), (6,), (10, 216), (10,)]
    weights = [RNG.standard_normal(s) for s in shapes]
    return _model(minigrad, weights).double(), _model(torch, weights).double()


def _state(m):
    return {k: v.detach().numpy() for k, v in m.state_dict().items()}


def _same(ours, theirs):
    a, b = _state(ours), _state(theirs)
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_tutorial_steps_as_torch(torch):
    ours, theirs = _both(torch)
    for lib, m in ((prune, ours), (tprune(torch), theirs)):
        lib.l1_unstructured(m[0], name="weight", amount=0.3)
        lib.l1_unstructured(m[0], name="bias", amount=3)
        lib.ln_structured(m[0], name="weight", amount=0.5, n=2, dim=0)
    _same(ours, theirs)
    assert [n for n, _ in ours[0].named_parameters()] == [n for n, _ in theirs[0].named_parameters()]
    assert [n for n, _ in ours[0].named_buffers()] == [n for n, _ in theirs[0].named_buffers()]
    np.testing.assert_array_equal(ours[0].weight.detach().numpy(), theirs[0].weight.detach().numpy())
    hook = next(h for h in ours[0]._forward_pre_hooks.values() if h._tensor_name == "weight")
    assert [type(h).__name__ for h in hook] == ["L1Unstructured", "LnStructured"]
    assert prune.is_pruned(ours) and not prune.is_pruned(nn.Linear(2, 2))

    x = RNG.standard_normal((2, 1, 8, 8))
    ours(minigrad.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(ours[0].weight_orig.grad.numpy(), theirs[0].weight_orig.grad.numpy(), rtol=1e-12)

    prune.remove(ours[0], "weight")
    tprune(torch).remove(theirs[0], "weight")
    _same(ours, theirs)
    assert isinstance(ours[0].weight, nn.Parameter) and not hasattr(ours[0], "weight_orig")


def test_global_unstructured_and_a_custom_method_as_torch(torch):
    ours, theirs = _both(torch)

    def foobar(lib):
        class FooBar(lib.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask
        return FooBar

    for lib, m in ((prune, ours), (tprune(torch), theirs)):
        lib.global_unstructured(((m[0], "weight"), (m[3], "weight")), pruning_method=lib.L1Unstructured, amount=0.4)
        foobar(lib).apply(m[3], "bias")
        lib.custom_from_mask(m[0], "bias", mask=(m[0].bias > 0).double())
    _same(ours, theirs)
    assert int((ours[3].weight == 0).sum()) + int((ours[0].weight == 0).sum()) == round(0.4 * (54 + 2160))


def test_random_pruning_counts():
    m = nn.Linear(20, 10)
    prune.random_unstructured(m, "weight", amount=0.25)
    assert int((m.weight == 0).sum()) == 50
    prune.random_structured(m, "weight", amount=3, dim=0)  # on top: 3 more rows of 10
    assert int((m.weight.abs().sum(dim=1) == 0).sum()) >= 3
    prune.identity(m, "bias")
    assert m.bias_mask.sum().item() == 10


def test_errors_as_torch(torch):
    for lib, lin in ((prune, nn.Linear(3, 2)), (tprune(torch), torch.nn.Linear(3, 2))):
        with pytest.raises(ValueError, match=r"amount=1.5 should either be a float in the range \[0, 1\]"):
            lib.l1_unstructured(lin, "weight", amount=1.5)
        with pytest.raises(ValueError, match="amount=7 should be smaller than the number of parameters to prune=6"):
            lib.l1_unstructured(lin, "weight", amount=7)
        assert "weight" in dict(lin.named_parameters())  # put back after the failure
        with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
            lib.ln_structured(lin, "bias", amount=1, n=1, dim=0)
        with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
            lib.remove(lin, "weight")
