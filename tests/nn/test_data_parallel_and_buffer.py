"""nn.DataParallel (one device per process: the module's own forward), nn.Buffer, and
utils.data.DistributedSampler, as PyTorch's scripts use them."""
import numpy as np
import pytest

import minigrad
import nn
from minigrad.utils.data import DistributedSampler, TensorDataset


class _WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.pe = nn.Buffer(minigrad.arange(3.0))
        self.scratch = nn.Buffer(minigrad.ones(2), persistent=False)
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(x + self.pe)


def test_a_buffer_assigned_to_a_module_is_registered():
    m = _WithBuffers()
    assert [n for n, _ in m.named_buffers()] == ["pe", "scratch"]
    assert list(m.state_dict()) == ["pe", "lin.weight", "lin.bias"]  # (not the non-persistent one)
    assert isinstance(m.pe, nn.Buffer) and not m.pe.requires_grad and [p for p in m.parameters()] == [m.lin.weight, m.lin.bias]
    m.double()
    assert m.pe.dtype == minigrad.float64  # moved with the module, as a buffer is


def test_buffer_and_data_parallel_state_dicts_match_pytorchs():
    torch = pytest.importorskip("torch")

    class TorchWithBuffers(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pe = torch.nn.Buffer(torch.arange(3.0))
            self.scratch = torch.nn.Buffer(torch.ones(2), persistent=False)
            self.lin = torch.nn.Linear(3, 1)

    ours, theirs = nn.DataParallel(_WithBuffers()), torch.nn.DataParallel(TorchWithBuffers())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert repr(ours).replace("minigrad.", "") == repr(theirs).replace("TorchWithBuffers", "_WithBuffers")


def test_data_parallel_runs_the_modules_forward_and_backward():
    minigrad.manual_seed(0)
    m = _WithBuffers()
    dp = nn.DataParallel(m, device_ids=[0])
    assert dp.module is m and isinstance(dp, nn.Module)
    assert minigrad.nn.parallel.DataParallel is nn.DataParallel  # (torch.nn.parallel without importing it)
    x = minigrad.randn(4, 3)
    dp(x).sum().backward()
    want = m.lin.weight.grad.array.copy()
    m.zero_grad()
    m(x).sum().backward()
    np.testing.assert_array_equal(m.lin.weight.grad.array, want)
    plain = _WithBuffers()
    plain.load_state_dict({k.removeprefix("module."): v for k, v in dp.state_dict().items()})
    np.testing.assert_array_equal(plain(x).array, dp(x).array)


@pytest.mark.parametrize("n", [10, 11, 12])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_shares_out_the_keys_as_pytorchs(n, drop_last):
    torch = pytest.importorskip("torch")
    ds = TensorDataset(minigrad.arange(n))
    for ranks in (1, 3, 4):
        ours = [list(DistributedSampler(ds, ranks, r, shuffle=False, drop_last=drop_last)) for r in range(ranks)]
        theirs = [list(torch.utils.data.DistributedSampler(range(n), ranks, r, shuffle=False, drop_last=drop_last))
                  for r in range(ranks)]
        assert ours == theirs
        assert [len(DistributedSampler(ds, ranks, r, drop_last=drop_last)) for r in range(ranks)] == \
            [len(t) for t in theirs]


def test_distributed_sampler_shuffles_the_same_on_every_rank_and_anew_each_epoch():
    ds = TensorDataset(minigrad.arange(20))
    samplers = [DistributedSampler(ds, num_replicas=4, rank=r, seed=7) for r in range(4)]
    first = [list(s) for s in samplers]
    assert sorted(i for part in first for i in part) == list(range(20))  # every key once: a permutation, shared
    assert [list(s) for s in samplers] == first  # the same epoch: the same order
    for s in samplers:
        s.set_epoch(1)
    second = [list(s) for s in samplers]
    assert second != first and sorted(i for part in second for i in part) == list(range(20))
    with pytest.raises(ValueError, match=r"Invalid rank 4, rank should be in the interval \[0, 3\]"):
        DistributedSampler(ds, num_replicas=4, rank=4)
