"""The short paths of ops that record nothing (randint's usual call, `X[ix]` of data, `.float()` of a mask):
each gives what the general path gives (values, dtype, generator stream, errors) and what PyTorch gives, and the
cases it leaves out still take the general path."""
import numpy as np
import pytest

import minigrad
from minigrad import factory
from minigrad.autograd.function import Function
from minigrad.ops import indexing
from minigrad.tensor import Tensor


def test_randint_fast_path_draws_the_general_paths_numbers():
    fast, general = minigrad.Generator().manual_seed(5), minigrad.Generator().manual_seed(5)
    for low, high, size in ((0, 2000, (32,)), (3, 10, (4, 5)), (-7, 7, (9,)), (0, 2**40, (6,)), (0, 1, ())):
        a = minigrad.randint(low, high, size, generator=fast)
        b = minigrad.randint(low, high, list(size), dtype=minigrad.int64, generator=general)  # (the general path)
        assert a.dtype == b.dtype == minigrad.int64 and a.shape == b.shape
        assert np.array_equal(a.array, b.array)


def test_randint_fast_path_draws_from_the_default_generator():
    minigrad.manual_seed(3)
    a = minigrad.randint(0, 50, (8,))
    minigrad.manual_seed(3)
    b = minigrad.randint(50, (8,))  # (the general path: randint(high, size))
    assert np.array_equal(a.array, b.array)


def test_randint_cases_the_fast_path_leaves_out_take_the_general_path(monkeypatch):
    calls = []
    general = factory._randint
    monkeypatch.setattr(factory, "_randint", lambda *a: calls.append(a) or general(*a))
    g = minigrad.Generator().manual_seed(0)
    minigrad.randint(0, 10, (3,), generator=g)
    assert calls == []
    minigrad.randint(0, 10, [3], generator=g)
    minigrad.randint(0, 10, (3,), dtype=minigrad.int32, generator=g)
    minigrad.randint(np.int64(0), 10, (3,), generator=g)
    minigrad.randint(0, 10, (3,), device="cpu", generator=g)
    assert len(calls) == 4


def test_randint_fast_path_errors_as_torch_and_the_general_path():
    torch = pytest.importorskip("torch")
    for low, high, size in ((5, 5, (3,)), (0, 10, (-1,)), (0, 10, (2.0,))):
        for given in (size, list(size)):  # the fast path (a tuple) and the general one (a list)
            with pytest.raises(Exception) as ours:
                minigrad.randint(low, high, given)
            with pytest.raises(Exception) as theirs:
                torch.randint(low, high, given)
            assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def _index_apply_calls(monkeypatch):
    calls = []
    apply = indexing.Index.apply.__func__
    monkeypatch.setattr(indexing.Index, "apply", classmethod(lambda cls, *a: calls.append(a) or apply(cls, *a)))
    return calls


def test_index_by_ids_of_untracked_data_skips_apply_with_the_same_result(monkeypatch):
    torch = pytest.importorskip("torch")
    X = np.arange(60).reshape(20, 3)
    ids = np.array([3, -1, 0, 3, 9])
    calls = _index_apply_calls(monkeypatch)
    for data in (X, X.T.copy().T, X[::2], X[:, 0].astype(np.float32)):
        ours = minigrad.tensor(data)[minigrad.tensor(ids)]
        theirs = torch.tensor(data)[torch.tensor(ids)]
        assert calls == []
        assert ours.grad_fn is None and not ours.requires_grad and ours.array.flags.c_contiguous
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert np.array_equal(ours.array, theirs.numpy())
        assert ours._version_counter is not minigrad.tensor(data)._version_counter


def test_index_by_ids_records_and_errors_through_the_general_path(monkeypatch):
    torch = pytest.importorskip("torch")
    calls = _index_apply_calls(monkeypatch)
    w = minigrad.randn(5, 2, requires_grad=True)
    out = w[minigrad.tensor([1, 1, 4])]
    assert len(calls) == 1 and out.grad_fn.name() == "IndexBackward0"
    with minigrad.no_grad():
        assert w[minigrad.tensor([0])].grad_fn is None
    with pytest.raises(IndexError) as ours:
        minigrad.arange(5)[minigrad.tensor([0, 7])]
    with pytest.raises(IndexError) as theirs:
        torch.arange(5)[torch.tensor([0, 7])]
    assert str(ours.value) == str(theirs.value)


def _apply_calls(monkeypatch):
    calls = []
    apply = Function.apply.__func__
    monkeypatch.setattr(Function, "apply", classmethod(lambda cls, *a: calls.append(cls) or apply(cls, *a)))
    return calls


@pytest.mark.parametrize("method", ["float", "double", "long", "int", "bool"])
def test_casts_of_untracked_tensors_match_torch(method, monkeypatch):
    torch = pytest.importorskip("torch")
    calls = _apply_calls(monkeypatch)
    for data in ([True, False, True], [0.5, -2.0, 3.0], [[1, 0], [7, -3]]):
        ours, theirs = getattr(minigrad.tensor(data), method)(), getattr(torch.tensor(data), method)()
        assert calls == []
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert np.array_equal(ours.array, theirs.numpy()) and ours.grad_fn is None


def test_casts_that_record_or_convert_complex_take_the_general_path(monkeypatch):
    calls = _apply_calls(monkeypatch)
    w = minigrad.randn(3, dtype=minigrad.float32, requires_grad=True)
    d = w.double()
    assert calls and d.grad_fn.name() == "ToCopyBackward0"
    d.sum().backward()
    assert w.grad.dtype == minigrad.float32
    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())  # (said once a process: as if not said before)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        minigrad.tensor([1 + 2j]).float()
    x = minigrad.ones(2)
    assert x.float() is x


def test_cast_of_a_view_whose_base_requiring_grad_was_written_since_records_that_write(monkeypatch):
    base = minigrad.zeros(4, requires_grad=True).clone()
    view = base[1:].detach()
    v = base[1:]
    base.mul_(2)
    assert isinstance(v.double(), Tensor) and v.double().grad_fn is not None
    assert view.double().grad_fn is None
