"""Issue 29: the short paths of the small ops a small model calls at every step (`randint(0, n, (B,))`,
`x.view(B, C)`, `loss.sum()`) give what the general paths give: randint's stream, view's shapes, views and
refusals, sum's values and node, as PyTorch's."""
import numpy as np
import pytest

import minigrad as mg


@pytest.mark.parametrize("low,high,size", [(0, 2000, (32,)), (0, 27, (20, 3)), (-5, 5, (4, 4)), (3, 10, ()),
                                           (0, 1 << 32, (9,)), (-(1 << 40), -(1 << 40) + 100, (5,)), (0, 7, (0, 3))])
def test_randint_takes_one_64_bit_draw_modulo_the_span_per_value(low, high, size):
    # the rule random.integers states: a given seed's numbers are the stream's raw 64-bit draws, each modulo
    # high - low, plus low (what every earlier version drew, so a seeded run keeps its batches)
    g = mg.Generator().manual_seed(11)
    raw = np.random.Generator(type(g._rng.bit_generator)())
    raw.bit_generator.state = g._rng.bit_generator.state
    drawn = mg.randint(low, high, size, generator=g)
    expected = (raw.bit_generator.random_raw(size) % np.uint64(high - low)).astype(np.int64) + low
    assert drawn.dtype == mg.int64 and drawn.shape == size
    assert drawn.numpy().tolist() == expected.tolist()


def test_randint_sizes_that_are_no_plain_ints_go_through_the_parser(torch):
    assert mg.randint(0, 5, [2, 3]).shape == (2, 3)
    assert mg.randint(0, 5, (np.int64(2), 3)).shape == (2, 3)
    for size in [(2, -1), (2, 1.5)]:
        with pytest.raises((RuntimeError, TypeError)) as theirs:
            torch.randint(0, 5, size)
        with pytest.raises(theirs.type) as ours:
            mg.randint(0, 5, size)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape,sizes", [((32, 64), (64, 32)), ((32, 64), (-1, 32)), ((32, 64), (2048, 1)),
                                         ((0, 4), (0, 7)), ((6,), (2, 3))])
def test_view_of_two_sizes_matches_torch(torch, shape, sizes):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    a, ta = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x, tx = a * 1, ta * 1
    v, tv = x.view(*sizes), tx.view(*sizes)
    assert v.shape == tuple(tv.shape) and v.grad_fn.name() == tv.grad_fn.name() == "ViewBackward0"
    assert v._base is x and v._is_view()
    x.add_(1)  # one version counter: the write through the base is seen through the view
    tx.add_(1)
    assert v._version == tv._version == 1
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())


@pytest.mark.parametrize("sizes", [(-1, 7), (3, 5), (-2, 32), (4096, 1), (-1, 0), (0, 0)])
def test_view_of_two_sizes_refused_as_torch(torch, sizes):
    data = np.zeros((32, 64), np.float32)
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor(data).view(*sizes)
    with pytest.raises(RuntimeError) as ours:
        mg.tensor(data).view(*sizes)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_sum_of_everything_matches_torch(torch, dtype):
    data = np.random.RandomState(0).randn(32, 64).astype(dtype)
    a, ta = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    s, ts = a.sum(), ta.sum()
    assert s.dtype.itemsize == ts.dtype.itemsize and s.grad_fn.name() == ts.grad_fn.name() == "SumBackward0"
    assert s.item() == data.sum()  # (numpy's pairwise order: its bits; PyTorch's order differs in the last place)
    assert s.item() == pytest.approx(ts.item(), rel=1e-2 if dtype == "float16" else 1e-5)
    s.backward(mg.tensor(2.0, dtype=s.dtype))
    ts.backward(torch.tensor(2.0, dtype=ts.dtype))
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    k, tk = a.sum((0, 1), keepdim=True), ta.sum((0, 1), keepdim=True)  # (not the short path: its own node)
    assert k.grad_fn.name() == tk.grad_fn.name() == "SumBackward1" and k.shape == tuple(tk.shape)
