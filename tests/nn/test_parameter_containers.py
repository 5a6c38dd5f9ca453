"""nn.ParameterList and nn.ParameterDict against PyTorch's: registration, names, wrapping, repr."""
import numpy as np

import minigrad
import nn


def build(lib, mod):
    class Net(mod.Module):
        def __init__(self):
            super().__init__()
            self.ws = mod.ParameterList([mod.Parameter(lib.ones(2, 3)), lib.zeros(3)])
            self.ws.append(lib.full((1,), 2.0))
            self.named = mod.ParameterDict({"a": mod.Parameter(lib.ones(2)), "b": lib.zeros(4)})
            self.named["c"] = lib.ones(1)

        def forward(self, x):
            return (x @ self.ws[0]).sum() + self.ws[1].sum() * self.ws[2].sum() + sum(p.sum() for p in self.named.values())

    return Net()


def test_parameter_containers_match_torch(torch):
    ours, theirs = build(minigrad, nn), build(torch, torch.nn)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert all(isinstance(p, nn.Parameter) for p in ours.parameters())
    assert len(ours.ws) == 3 and list(ours.named) == ["a", "b", "c"] and "b" in ours.named
    x = np.arange(4.0).reshape(2, 2)
    a, b = ours(minigrad.tensor(x, dtype=minigrad.float32)), theirs(torch.tensor(x, dtype=torch.float32))
    a.backward()
    b.backward()
    assert a.item() == b.item()
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy(), err_msg=n)
    ours.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours.ws) == repr(theirs.ws).replace("torch.", "minigrad.")
    assert repr(ours.named) == repr(theirs.named).replace("torch.", "minigrad.")


def test_slicing_and_extend():
    pl = nn.ParameterList([minigrad.zeros(1), minigrad.ones(1)])
    pl += [minigrad.ones(2)]
    assert len(pl) == 3 and len(pl[1:]) == 2 and tuple(pl[-1].shape) == (2,)
