"""minigrad.utils.data against torch.utils.data: batches, their order, structure and dtypes where the
semantics are deterministic, PyTorch's errors; shuffles that repeat under a seed; worker processes
that give the batches of num_workers=0, seeded as PyTorch seeds them, re-raising their errors."""
import collections
import gc
import os
import random
import time
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.utils.data import (
    BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
    SequentialSampler, StackDataset, Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
    default_collate, default_convert, get_worker_info, random_split,
)

Point = collections.namedtuple("Point", ["x", "y"])


# ---- datasets (module level: worker processes receive them pickled) ----------------------------------
class Squares(Dataset):
    """Sample i: the structure a real dataset returns, built from i alone."""

    def __init__(self, n=7):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full(3, i, dtype=np.float32), "y": i * i, "w": i / 2, "name": f"s{i}",
                "flag": i % 2 == 0, "p": Point(np.int32(i), [i, -i])}


class _Stream:
    """range(n), each worker taking every num_workers-th element."""

    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        info = self.worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n if self.length is None else self.length


class Stream(_Stream, IterableDataset):
    worker_info = staticmethod(get_worker_info)


try:  # its twin for torch's DataLoader (at module level, so that torch's workers can unpickle it)
    import torch.utils.data as _torch_data

    class TorchStream(_Stream, _torch_data.IterableDataset):
        worker_info = staticmethod(_torch_data.get_worker_info)
except ImportError:
    TorchStream = None


class WorkerDraws(Dataset):
    """Sample i: which worker read it, that worker's seed, and a draw from each global generator."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.seed, random.random(), float(np.random.random()), minigrad.rand(()).item()


class Offset(Dataset):
    """Sample i is i + offset; worker_init_fn sets each worker's copy's offset."""

    offset = 0

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return i + self.offset


def set_offset(worker_id):
    get_worker_info().dataset.offset = 100 * (worker_id + 1)


def fail_to_start(worker_id):
    raise OSError(f"no GPU for worker {worker_id}")


class Failing(Dataset):
    def __init__(self, exc):
        self.exc = exc

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise self.exc
        return i


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1.0)
        return i


# ---- comparing with torch -------------------------------------------------------------------------
def assert_same(mg, th, torch):
    """minigrad's batch has torch's structure (container types, keys, order), values, shapes and dtypes."""
    if isinstance(th, torch.Tensor):
        assert isinstance(mg, minigrad.Tensor), type(mg)
        assert str(mg.dtype).split(".")[1] == str(th.dtype).split(".")[1]
        assert tuple(mg.shape) == tuple(th.shape)
        np.testing.assert_array_equal(mg.numpy(), th.numpy())
    elif isinstance(th, (dict, list, tuple)):
        assert type(mg) is type(th), (type(mg), type(th))
        if isinstance(th, dict):
            assert list(mg) == list(th)
            for k in th:
                assert_same(mg[k], th[k], torch)
        else:
            assert len(mg) == len(th)
            for a, b in zip(mg, th):
                assert_same(a, b, torch)
    else:
        assert type(mg) is type(th) and mg == th


def batches(loader):
    return list(loader)


def twin_tensor_datasets(torch, n=10):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((n, 3)), rng.integers(0, 5, n)
    return (TensorDataset(minigrad.tensor(x), minigrad.tensor(y)),
            torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)))


def flat(batches_):
    return [int(v) for b in batches_ for v in (b.tolist() if hasattr(b, "tolist") else b)]


# ---- batching in this process, against torch -------------------------------------------------------
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False),
                                                  (12, False), (12, True)])
def test_sequential_batches_match_torch(torch, batch_size, drop_last):
    mg_ds, th_ds = twin_tensor_datasets(torch)
    mg = DataLoader(mg_ds, batch_size=batch_size, drop_last=drop_last)
    th = torch.utils.data.DataLoader(th_ds, batch_size=batch_size, drop_last=drop_last)
    assert len(mg) == len(th)
    got, want = batches(mg), batches(th)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_same(a, b, torch)


def test_collate_structure_and_dtypes_match_torch(torch):
    ds = Squares()
    for batch_size in (1, 3):
        got = batches(DataLoader(ds, batch_size=batch_size))
        want = batches(torch.utils.data.DataLoader(ds, batch_size=batch_size))
        assert_same(got, want, torch)
    assert got[0]["y"].dtype == minigrad.int64 and got[0]["w"].dtype == minigrad.float64
    assert got[0]["flag"].dtype == minigrad.bool and got[0]["x"].dtype == minigrad.float32
    assert got[0]["name"] == ["s0", "s1", "s2"] and isinstance(got[0]["p"], Point)


@pytest.mark.parametrize("batch", [
    [1, 2, 3], [1.5, 2.0], [True, False], [1, 2.5], ["a", "b"], [b"a", b"b"],
    [np.float32(1), np.float32(2)], [np.float64(1)], [np.int32(4), np.int32(5)], [np.bool_(True)], [np.uint8(3)],
    [np.array(1.0), np.array(2.0)], [np.arange(4).reshape(2, 2)] * 3,
    [(1, "a"), (2, "b")], [[1, 2], [3, 4]], [Point(1, 2.0), Point(3, 4.0)],
    [{"a": 1, "b": [np.zeros(2), 3.0]}, {"a": 2, "b": [np.ones(2), 4.0]}],
    [collections.OrderedDict(b=1, a=2)], [collections.defaultdict(list, k=1.0)],
])
def test_default_collate_matches_torch(torch, batch):
    assert_same(default_collate(batch), torch.utils.data.default_collate(batch), torch)


def test_default_collate_stacks_tensors(torch):
    rows = [np.arange(6.0).reshape(2, 3) * i for i in range(4)]
    got = default_collate([minigrad.tensor(r) for r in rows])
    assert_same(got, torch.utils.data.default_collate([torch.tensor(r) for r in rows]), torch)


@pytest.mark.parametrize("data", [
    np.arange(3), np.float32(2), 3, 2.5, "s", (np.zeros(2), 1), [np.ones(1), "x"], Point(np.int64(1), 2),
    {"k": np.arange(2), "s": "t"}, np.array(["a", "b"]),
])
def test_default_convert_matches_torch(torch, data):
    got, want = default_convert(data), torch.utils.data.default_convert(data)
    if isinstance(want, np.ndarray):  # a string array is left as it is
        assert got is data
    else:
        assert_same(got, want, torch)


@pytest.mark.parametrize("batch", [[object()], [np.array(["a"])], [np.array([object()])], [[1, 2], [3]]])
def test_default_collate_errors_match_torch(torch, batch):
    with pytest.raises((TypeError, RuntimeError)) as want:
        torch.utils.data.default_collate(batch)
    with pytest.raises(want.type) as got:
        default_collate(batch)
    assert str(got.value) == str(want.value)


def test_default_collate_shares_numpy_memory():
    a = np.zeros(3)
    assert np.shares_memory(default_convert(a).numpy(), a)


def test_no_batching_converts_each_sample(torch):
    ds = Squares(3)
    got = batches(DataLoader(ds, batch_size=None))
    want = batches(torch.utils.data.DataLoader(ds, batch_size=None))
    assert_same(got, want, torch)


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (4, False), (4, True), (11, False), (20, True)])
def test_iterable_dataset_batches_match_torch(torch, batch_size, drop_last):
    mg = DataLoader(Stream(11), batch_size=batch_size, drop_last=drop_last)
    th = torch.utils.data.DataLoader(TorchStream(11), batch_size=batch_size,
                                     drop_last=drop_last)
    assert len(mg) == len(th)
    assert_same(batches(mg), batches(th), torch)


def test_iterable_dataset_longer_than_its_len_warns():
    loader = DataLoader(Stream(5, length=2), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert len(list(loader)) == 5


@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                    (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(torch, n, batch_size, drop_last):
    got = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
    want = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(got) == list(want) and len(got) == len(want)


def test_custom_batch_sampler_and_sampler(torch):
    mg_ds, th_ds = twin_tensor_datasets(torch)
    order = [[3, 1], [0], [9, 8, 7]]
    assert_same(batches(DataLoader(mg_ds, batch_sampler=order)),
                batches(torch.utils.data.DataLoader(th_ds, batch_sampler=order)), torch)
    keys = [5, 2, 2, 0]
    assert_same(batches(DataLoader(mg_ds, sampler=keys, batch_size=3)),
                batches(torch.utils.data.DataLoader(th_ds, sampler=keys, batch_size=3)), torch)


def test_iterating_twice_gives_the_same_sequential_batches(torch):
    mg_ds, _ = twin_tensor_datasets(torch)
    loader = DataLoader(mg_ds, batch_size=4)
    first, second = batches(loader), batches(loader)
    for a, b in zip(first, second, strict=True):
        assert minigrad.equal(a[0], b[0]) and minigrad.equal(a[1], b[1])


# ---- datasets --------------------------------------------------------------------------------------
def test_concat_and_subset_index_as_torch(torch):
    parts = [list(range(3)), list(range(10, 15)), [], list(range(20, 22))]
    mg, th = ConcatDataset(parts), torch.utils.data.ConcatDataset(parts)
    assert mg.cumulative_sizes == th.cumulative_sizes and len(mg) == len(th)
    assert [mg[i] for i in range(-len(mg), len(mg))] == [th[i] for i in range(-len(th), len(th))]
    for bad in (-len(mg) - 1,):
        with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
            mg[bad]
    assert (Squares(2) + Squares(3))[4]["y"] == 4
    sub = Subset(list(range(10, 20)), [4, 0, 7])
    assert [sub[i] for i in range(len(sub))] == [14, 10, 17] and sub.__getitems__([2, 0]) == [17, 14]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream(3)])
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])


def test_chain_stack_and_tensor_datasets():
    assert list(Stream(2) + Stream(3)) == [0, 1, 0, 1, 2] and len(ChainDataset([Stream(2), Stream(3)])) == 5
    st = StackDataset(a=list("xyz"), b=[1, 2, 3])
    assert st[1] == {"a": "y", "b": 2} and StackDataset([1, 2], [3, 4])[0] == (1, 3)
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(minigrad.zeros(3), minigrad.zeros(4))


def test_random_split_lengths_and_fractions_as_torch(torch):
    for n, lengths in [(10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.7]), (5, [1.0])]:
        got = random_split(range(n), lengths, generator=minigrad.Generator().manual_seed(1))
        want = torch.utils.data.random_split(range(n), lengths, generator=torch.Generator().manual_seed(1))
        assert [len(s) for s in got] == [len(s) for s in want]
        assert sorted(i for s in got for i in s) == list(range(n))  # disjoint, and covering the dataset
    again = random_split(range(10), [0.5, 0.5], generator=minigrad.Generator().manual_seed(1))
    assert [list(s) for s in again] == [list(s) for s in random_split(range(10), [0.5, 0.5],
                                                                     generator=minigrad.Generator().manual_seed(1))]
    minigrad.manual_seed(4)
    a = [list(s) for s in random_split(range(10), [4, 6])]
    minigrad.manual_seed(4)
    assert a == [list(s) for s in random_split(range(10), [4, 6])]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(3), [1.0, 0.0])


@pytest.mark.parametrize("lengths", [[3, 3], [1.5, -0.5], [0.6, 0.6]])
def test_random_split_errors_match_torch(torch, lengths):
    with pytest.raises(ValueError) as want:
        torch.utils.data.random_split(range(10), lengths)
    with pytest.raises(ValueError) as got:
        random_split(range(10), lengths)
    assert str(got.value) == str(want.value)


# ---- random order ----------------------------------------------------------------------------------
def test_generator_as_torch(torch):
    g = minigrad.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() and g.device == minigrad.device("cpu")
    assert g.manual_seed(-1) is g and g.initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    g.manual_seed(5)
    state = g.get_state()
    a = minigrad.randperm(10, generator=g).tolist()
    assert minigrad.randperm(10, generator=g).tolist() != a  # it moves on
    assert minigrad.randperm(10, generator=g.set_state(state)).tolist() == a
    assert minigrad.randperm(10, generator=minigrad.Generator().manual_seed(5)).tolist() == a
    minigrad.manual_seed(5)
    minigrad.randperm(10, generator=g)  # draws from g leave the default generator alone
    assert minigrad.rand(3).tolist() == (minigrad.manual_seed(5), minigrad.rand(3))[1].tolist()


def test_shuffle_repeats_with_a_seeded_generator():
    ds = list(range(20))

    def epochs(seed):
        loader = DataLoader(ds, batch_size=6, shuffle=True, generator=minigrad.Generator().manual_seed(seed))
        return [flat(batches(loader)) for _ in range(2)]

    a, b = epochs(5), epochs(5)
    assert a == b
    assert sorted(a[0]) == ds and a[0] != a[1]  # a permutation, a fresh one each pass
    assert epochs(6) != a


def test_shuffle_without_a_generator_follows_manual_seed():
    loader = DataLoader(list(range(20)), batch_size=5, shuffle=True)
    minigrad.manual_seed(3)
    a = [flat(batches(loader)) for _ in range(2)]
    minigrad.manual_seed(3)
    assert [flat(batches(loader)) for _ in range(2)] == a and a[0] != a[1]


def test_random_sampler_options():
    g = minigrad.Generator().manual_seed(0)
    s = RandomSampler(range(5), num_samples=12, generator=g)
    draws = list(s)
    assert len(s) == len(draws) == 12 and sorted(draws[:5]) == sorted(draws[5:10]) == list(range(5))
    r = RandomSampler(range(4), replacement=True, num_samples=70, generator=minigrad.Generator().manual_seed(0))
    draws = list(r)
    assert len(draws) == 70 and set(draws) == {0, 1, 2, 3}
    assert draws == list(RandomSampler(range(4), replacement=True, num_samples=70,
                                       generator=minigrad.Generator().manual_seed(0)))
    sub = list(SubsetRandomSampler([10, 20, 30, 40], generator=minigrad.Generator().manual_seed(1)))
    assert sorted(sub) == [10, 20, 30, 40]


def test_weighted_random_sampler():
    w = WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 200, generator=minigrad.Generator().manual_seed(0))
    draws = list(w)
    assert len(w) == 200 and set(draws) == {1, 2} and draws.count(2) > draws.count(1)
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    assert w.weights.dtype == minigrad.float64


def test_weighted_random_sampler_takes_tensor_weights_quietly():
    # the usual call passes a tensor of per-sample weights: no copy-construct warning, as in PyTorch
    weights = minigrad.tensor([0.1, 0.9, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sampler = WeightedRandomSampler(weights, 5)
    assert sampler.weights.dtype == minigrad.float64 and len(list(sampler)) == 5


# ---- errors, against torch -------------------------------------------------------------------------
LOADER_ERRORS = [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True), dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]), dict(batch_size=None, drop_last=True), dict(batch_size=0),
    dict(batch_size=True), dict(drop_last=1), dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"), dict(num_workers=1, multiprocessing_context=3),
]


@pytest.mark.parametrize("kwargs", LOADER_ERRORS, ids=str)
def test_loader_errors_match_torch(torch, kwargs):
    with pytest.raises((ValueError, TypeError)) as want:
        torch.utils.data.DataLoader(list(range(4)), **kwargs)
    with pytest.raises(want.type) as got:
        DataLoader(list(range(4)), **kwargs)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])], ids=str)
def test_iterable_dataset_refuses_an_order(torch, kwargs):
    with pytest.raises(ValueError) as want:
        torch.utils.data.DataLoader(TorchStream(3), **kwargs)
    with pytest.raises(ValueError) as got:
        DataLoader(Stream(3), **kwargs)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("make", [
    lambda d: d.RandomSampler(range(3), num_samples=0), lambda d: d.RandomSampler(range(3), replacement=1),
    lambda d: d.RandomSampler([]), lambda d: d.WeightedRandomSampler([[1.0]], 2),
    lambda d: d.WeightedRandomSampler([1.0], 2, replacement=None), lambda d: d.WeightedRandomSampler([1.0], -1),
])
def test_sampler_errors_match_torch(torch, make):
    import minigrad.utils.data as mg_data

    with pytest.raises((ValueError, TypeError)) as want:
        make(torch.utils.data)
    with pytest.raises(want.type) as got:
        make(mg_data)
    assert str(got.value) == str(want.value)


def test_loader_attributes_are_fixed_after_init(torch):
    for attr in ("batch_size", "sampler", "dataset", "drop_last", "batch_sampler", "persistent_workers"):
        with pytest.raises(ValueError) as want:
            setattr(torch.utils.data.DataLoader([1]), attr, None)
        with pytest.raises(ValueError) as got:
            setattr(DataLoader([1]), attr, None)
        assert str(got.value) == str(want.value)
    loader = DataLoader([1])
    loader.num_workers = 0  # others may change


def test_timeout_needs_workers_and_pin_memory_warns():
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(DataLoader([1], timeout=1))
    if not minigrad.cuda_is_available():
        with pytest.warns(UserWarning, match="no accelerator is found"):
            iter(DataLoader([1], pin_memory=True))
    assert get_worker_info() is None


# ---- worker processes ------------------------------------------------------------------------------
def test_workers_give_the_batches_of_one_process():
    ds = Squares(11)

    def run(**kw):
        return batches(DataLoader(ds, batch_size=3, shuffle=True, generator=minigrad.Generator().manual_seed(2), **kw))

    want = run()
    for kw in (dict(num_workers=2), dict(num_workers=1, prefetch_factor=1)):
        got = run(**kw)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a["name"] == b["name"] and minigrad.equal(a["x"], b["x"]) and minigrad.equal(a["p"].x, b["p"].x)


def test_iterable_dataset_sharded_in_workers_matches_torch(torch):
    for drop_last in (False, True):
        got = batches(DataLoader(Stream(11), batch_size=2, num_workers=2, drop_last=drop_last))
        want = batches(torch.utils.data.DataLoader(TorchStream(11), batch_size=2,
                                                   num_workers=2, drop_last=drop_last))
        assert_same(got, want, torch)  # worker 0's batches and worker 1's taken in turn, until each stream ends
    assert sorted(flat(batches(DataLoader(Stream(11), batch_size=2, num_workers=2)))) == list(range(11))


def test_workers_are_seeded_base_seed_plus_id():
    def run():
        return batches(DataLoader(WorkerDraws(), batch_size=None, num_workers=2,
                                  generator=minigrad.Generator().manual_seed(9)))

    rows = run()
    assert rows == run()  # a seeded generator repeats the workers' draws
    seeds = {wid: seed for wid, seed, *_ in rows}
    assert set(seeds) == {0, 1} and seeds[1] == seeds[0] + 1
    for _, seed, py, _, mg in rows[:2]:  # each worker's first draws come from its seed
        assert py == random.Random(seed).random()
        assert mg == minigrad.rand((), generator=minigrad.Generator().manual_seed(seed)).item()
    assert rows[0][2:] != rows[1][2:]  # the workers do not draw the same numbers
    other = batches(DataLoader(WorkerDraws(), batch_size=None, num_workers=2,
                               generator=minigrad.Generator().manual_seed(10)))
    assert other[0][1] != rows[0][1]


def test_worker_init_fn_runs_in_each_worker():
    got = batches(DataLoader(Offset(), batch_size=None, num_workers=2, worker_init_fn=set_offset))
    assert [int(x) for x in got] == [100, 201, 102, 203, 104, 205]  # tasks go to the workers in turn
    assert [int(x) for x in batches(DataLoader(Offset(), batch_size=None))] == list(range(6))
    with pytest.raises(OSError, match="Caught OSError in DataLoader worker process 0.(.|\n)*no GPU for worker 0"):
        list(DataLoader(Offset(), batch_size=None, num_workers=2, worker_init_fn=fail_to_start))


@pytest.mark.parametrize("exc", [ValueError("bad sample"), KeyError("missing"), ZeroDivisionError("zero")])
def test_worker_errors_are_raised_with_the_worker_traceback(exc):
    it = iter(DataLoader(Failing(exc), batch_size=1, num_workers=2))
    assert [int(next(it)) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(type(exc)) as info:
        next(it)
    msg = info.value.args[0]
    assert msg.startswith(f"Caught {type(exc).__name__} in DataLoader worker process 1.\nOriginal Traceback")
    assert "in __getitem__" in msg and str(exc.args[0]) in msg
    if isinstance(exc, KeyError):
        assert str(info.value) == msg  # not the repr of the whole traceback
    workers = it._workers
    del it, info
    gc.collect()  # (the exception's traceback holds the iterator in a cycle)
    for w in workers:
        w.join(timeout=10)
        assert not w.is_alive()


def test_workers_exit_after_a_pass_and_when_the_iterator_goes():
    it = iter(DataLoader(list(range(8)), batch_size=2, num_workers=2))
    assert len(it) == 4 and flat(list(it)) == list(range(8))
    assert all(not w.is_alive() for w in it._workers)
    it = iter(DataLoader(list(range(100)), batch_size=2, num_workers=2))
    next(it)
    workers = it._workers
    del it  # stopped early: the workers are told to go
    for w in workers:
        w.join(timeout=10)
        assert not w.is_alive()


def test_persistent_workers_serve_every_pass():
    loader = DataLoader(Stream(7), batch_size=2, num_workers=2, persistent_workers=True)
    first = flat(batches(loader))
    pids = [w.pid for w in loader._iterator._workers]
    assert first == [0, 2, 1, 3, 4, 6, 5] and flat(batches(loader)) == first
    it = iter(loader)
    next(it)  # a pass cut short: what it left in flight is dropped by the next one
    assert flat(batches(loader)) == first and [w.pid for w in loader._iterator._workers] == pids
    workers = loader._iterator._workers
    loader._iterator._shutdown_workers()
    assert all(not w.is_alive() for w in workers)


def test_in_order_false_gives_every_batch():
    got = batches(DataLoader(list(range(9)), batch_size=2, num_workers=2, in_order=False))
    assert sorted(flat(got)) == list(range(9))


def test_a_dead_worker_and_a_timeout_are_errors():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Dies(), batch_size=None, num_workers=2, timeout=1))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(DataLoader(Slow(), batch_size=None, num_workers=1, timeout=0.2))


def test_spawned_workers():
    ds = TensorDataset(minigrad.arange(10.0).reshape(5, 2), minigrad.arange(5))
    got = batches(DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="spawn"))
    want = batches(DataLoader(ds, batch_size=2))
    for (a, b), (c, d) in zip(got, want, strict=True):
        assert minigrad.equal(a, c) and minigrad.equal(b, d)


def test_too_many_workers_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DataLoader([1], num_workers=(os.cpu_count() or 1) * 64)
    assert any("worker processes in total" in str(w.message) for w in caught)


def test_the_data_package_needs_the_engine_alone():
    import ast
    from pathlib import Path

    root = Path(minigrad.__file__).parent / "utils" / "data"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            assert not [n for n in names if n.split(".")[0] in ("nn", "gpt", "torch")], path


def test_tensor_dataset_batches_are_the_collated_samples():
    # DataLoader(TensorDataset(...)) picks each batch's rows at once: the batch default_collate makes
    # from the samples one by one, shuffled or not, with drop_last or not
    x = minigrad.tensor(np.arange(60.0).reshape(20, 3)).float()
    ds = TensorDataset(x, minigrad.arange(20), minigrad.tensor(np.arange(20) % 2 == 0))
    for kwargs in (dict(batch_size=6), dict(batch_size=6, drop_last=True), dict(batch_size=7, shuffle=True)):
        minigrad.manual_seed(0)
        fast = list(DataLoader(ds, **kwargs))
        minigrad.manual_seed(0)
        slow = list(DataLoader(ds, collate_fn=lambda samples: default_collate(samples), **kwargs))
        assert len(fast) == len(slow) == (3 if kwargs.get("drop_last") else -(-20 // kwargs["batch_size"]))
        for a, b in zip(fast, slow):
            assert type(a) is type(b) is list and len(a) == 3
            for p, q in zip(a, b):
                assert p.dtype == q.dtype and p.shape == q.shape and p.tolist() == q.tolist()
