"""A differential fuzz of minigrad.utils.data against torch.utils.data, and regression tests for the
differences it found: seeded random samples collated and converted, random loader configurations
(map-style and iterable, with and without batching) batch for batch, shuffles and DistributedSampler
by their structure (minigrad's generators draw other permutations than PyTorch's for the same seed)."""
import collections
import functools
import math
import random

import numpy as np
import pytest

import minigrad
import minigrad.utils.data as mdata
from tests.fuzz_settings import fuzz_seed

Point = collections.namedtuple("Point", ["x", "y"])


def plain(x):
    """A torch or minigrad result as comparable Python data: tensors become (dtype name, shape, values)."""
    if isinstance(x, minigrad.Tensor) or type(x).__name__ == "Tensor":
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.detach().numpy().tolist())
    if isinstance(x, dict):
        return type(x).__name__, {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [plain(v) for v in x]
    return type(x).__name__, x


def outcome(fn):
    """fn()'s result as plain data, or its exception's type and first line."""
    try:
        return "ok", plain(fn())
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0]


def both(torch, make, *args):
    """make(lib, data, *args) run with torch and with minigrad: (torch's outcome, minigrad's)."""
    return outcome(lambda: make(torch, torch.utils.data, *args)), outcome(lambda: make(minigrad, mdata, *args))


# ---- the differences found -----------------------------------------------------------------------
class Doubled:
    """A map-style dataset with `__getitems__` (returning `short` fewer samples than asked for)."""

    def __init__(self, short=0):
        self.short = short

    def __getitem__(self, i):
        return 2 * i

    def __getitems__(self, indices):
        return [2 * i for i in indices][self.short:]

    def __len__(self):
        return 4


@pytest.mark.parametrize("make", [
    lambda L, D: D.StackDataset([1, 2, 3, 4], Doubled()).__getitems__([3, 0, 1]),
    lambda L, D: D.StackDataset(a=Doubled(), b=["w", "x", "y", "z"]).__getitems__([2, 0]),
    lambda L, D: D.StackDataset(Doubled(), Doubled()).__getitems__([]),
    lambda L, D: D.StackDataset([1, 2, 3, 4], Doubled(short=1)).__getitems__([0, 1]),
    lambda L, D: list(D.DataLoader(D.StackDataset(a=Doubled(), b=[1.0, 2.0, 3.0, 4.0]), batch_size=3)),
], ids=["tuple", "dict", "empty", "short", "loader"])
def test_stack_dataset_fetches_batches_as_torch(torch, make):
    want, got = both(torch, make)
    assert got == want


@pytest.mark.parametrize("make", [
    lambda L, D: D.IterableDataset(),
    lambda L, D: type("NoIter", (D.IterableDataset,), {})(),
    lambda L, D: list(type("Counts", (D.IterableDataset,), {"__iter__": lambda self: iter(range(3))})()),
])
def test_an_iterable_dataset_needs_an_iter_as_torch(torch, make):
    want, got = both(torch, make)
    assert got == want


@pytest.mark.parametrize("make", [
    lambda L, D: [len(s) for s in D.random_split(range(5), L.tensor([2, 3]))],
    lambda L, D: L.randperm(L.tensor(4)).shape,
    lambda L, D: L.randperm(L.tensor([3])).shape,
    lambda L, D: L.randperm(np.int64(2)).shape,
    lambda L, D: L.randperm(3.0),
    lambda L, D: L.randperm(L.tensor(3.0)),
    lambda L, D: L.randperm(True),
    lambda L, D: L.randperm(None),
])
def test_randperm_takes_n_as_torch(torch, make):
    want, got = both(torch, make)
    assert got == want


@pytest.mark.parametrize("make", [
    lambda L, D: D.TensorDataset(L.tensor(1.0)),
    lambda L, D: L.tensor(1.0).size(0),
    lambda L, D: L.tensor(1.0).size(-1),
    lambda L, D: L.tensor(1.0).stride(0),
    lambda L, D: L.zeros(2).size(1),
])
def test_size_of_a_0d_tensor_errors_as_torch(torch, make):
    want, got = both(torch, make)
    assert got == want


# ---- the fuzz ------------------------------------------------------------------------------------
TENSOR_DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64"]
NUMPY_DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "bool",
                "complex64", "complex128"]
LEAVES = ["tensor", "tensor0", "numpy", "numpy_scalar", "int", "float", "bool", "str", "bytes", "none"]


def random_spec(rng, depth=0):
    """The recipe of one sample: nested containers around leaves of every kind default_collate meets."""
    if depth < 2 and rng.random() < 0.4:
        kind = rng.choice(["dict", "tuple", "list", "namedtuple"])
        if kind == "dict":
            return "dict", {f"k{i}": random_spec(rng, depth + 1) for i in range(rng.randint(1, 3))}
        if kind == "namedtuple":
            return kind, [random_spec(rng, depth + 1), random_spec(rng, depth + 1)]
        return kind, [random_spec(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    leaf = rng.choice(LEAVES)
    if leaf.startswith("tensor"):
        shape = () if leaf == "tensor0" else tuple(rng.randint(1, 3) for _ in range(rng.randint(1, 2)))
        return "tensor", (rng.choice(TENSOR_DTYPES), shape)
    if leaf == "numpy":
        return leaf, (rng.choice(NUMPY_DTYPES), tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 2))))
    if leaf == "numpy_scalar":
        return leaf, rng.choice(NUMPY_DTYPES)
    return leaf, None


def build(spec, lib, rng):
    """One sample from its recipe, its tensors made by `lib` (torch or minigrad), values drawn from rng."""
    kind, arg = spec
    if kind == "dict":
        return {k: build(v, lib, rng) for k, v in arg.items()}
    if kind == "namedtuple":
        return Point(*(build(v, lib, rng) for v in arg))
    if kind in ("tuple", "list"):
        items = [build(v, lib, rng) for v in arg]
        return tuple(items) if kind == "tuple" else items
    if kind == "tensor":
        return lib.as_tensor(rng.standard_normal(arg[1]) * 3).to(getattr(lib, arg[0]))
    if kind == "numpy":
        return (rng.standard_normal(arg[1]) * 3).astype(arg[0])
    if kind == "numpy_scalar":
        return np.dtype(arg).type(int(rng.integers(0, 5)))
    return {"int": lambda: int(rng.integers(-5, 5)), "float": lambda: float(rng.standard_normal()),
            "bool": lambda: bool(rng.integers(0, 2)), "str": lambda: f"s{rng.integers(0, 9)}",
            "bytes": lambda: b"b", "none": lambda: None}[kind]()


def test_fuzz_default_collate_and_convert_match_torch(torch):
    rng = random.Random(fuzz_seed(0))
    for case in range(200):
        spec, n = random_spec(rng), rng.randint(1, 3)
        for name in ("default_collate", "default_convert"):
            want, got = both(torch, collated, name, spec, n, case)
            assert got == want, (name, spec)


def collated(L, D, name, spec, n, seed):
    values = np.random.default_rng(seed)
    samples = [build(spec, L, values) for _ in range(n)]
    return getattr(D, name)(samples if name == "default_collate" else samples[0])


class Stream:
    """An iterable dataset of n samples (with `__len__` when `sized`), made for either library."""

    def __new__(cls, D, n, sized):
        body = {"__iter__": lambda self: iter(range(n))}
        if sized:
            body["__len__"] = lambda self: n
        return type("Stream", (D.IterableDataset,), body)()


def test_fuzz_loader_configurations_match_torch(torch):
    rng = random.Random(fuzz_seed(1))
    for _ in range(150):
        n = rng.randint(0, 13)
        iterable, sized = rng.random() < 0.4, rng.random() < 0.7
        kwargs = {"batch_size": rng.choice([None, 1, 2, 3, 5, 16])}
        if kwargs["batch_size"] is not None:
            kwargs["drop_last"] = rng.random() < 0.5
        if rng.random() < 0.2:
            kwargs["collate_fn"] = lambda batch: ("custom", batch)
        if rng.random() < 0.15:  # the options' own checks, against PyTorch's texts
            kwargs[rng.choice(["shuffle", "sampler", "batch_sampler", "prefetch_factor", "persistent_workers",
                               "timeout"])] = rng.choice([True, 1, [[0]]])
            if kwargs.get("shuffle") and not iterable:  # (a shuffle's order is compared by its structure below)
                kwargs["sampler"] = [0]
        want, got = both(torch, two_passes, n, iterable, sized, kwargs)
        assert got == want, (n, iterable, sized, kwargs)


def two_passes(L, D, n, iterable, sized, kwargs):
    ds = Stream(D, n, sized) if iterable else [float(i) if i % 2 else i for i in range(n)]
    loader = D.DataLoader(ds, **kwargs)
    return outcome(lambda: len(loader)), list(loader), list(loader)


def test_fuzz_shuffles_have_torchs_structure(torch):
    """Every key once per pass, a new order each pass, the same passes again from the same seed, for a
    `generator=` and for the global seed; len and batch sizes as PyTorch's."""
    rng = random.Random(fuzz_seed(2))
    for _ in range(40):
        n, batch_size = rng.randint(2, 20), rng.choice([None, 1, 3, 7])
        drop_last = batch_size is not None and rng.random() < 0.5
        passes = functools.partial(shuffled_passes, n=n, batch_size=batch_size, drop_last=drop_last)
        for L, D in ((torch, torch.utils.data), (minigrad, mdata)):
            for use_generator in (True, False):
                length, epochs = passes(L, D, 5, use_generator)
                assert passes(L, D, 5, use_generator) == (length, epochs)
                keys = [sorted(k for b in epoch for k in b) for epoch in epochs]
                kept = n - n % batch_size if drop_last else n
                assert [len(k) for k in keys] == [kept] * 3 and len(epochs[0]) == length
                if not drop_last:
                    assert keys == [list(range(n))] * 3
                assert [len(b) for b in epochs[0]] == [len(b) for b in epochs[1]]
                if kept > 5:  # (drop_last with batches larger than the dataset keeps nothing to shuffle)
                    assert epochs[0] != epochs[1]
        assert passes(torch, torch.utils.data, 5, True)[0] == passes(minigrad, mdata, 5, True)[0]


def shuffled_passes(L, D, seed, use_generator, n, batch_size, drop_last):
    """len(loader) and three passes of a shuffling loader, seeded by its generator or the global seed."""
    if not use_generator:
        L.manual_seed(seed)
    loader = D.DataLoader(list(range(n)), batch_size=batch_size, drop_last=drop_last, shuffle=True,
                          generator=L.Generator().manual_seed(seed) if use_generator else None)
    return len(loader), [[b.tolist() if batch_size else [int(b)] for b in loader] for _ in range(3)]


@pytest.mark.parametrize("n", [0, 1, 5, 7, 10])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_as_torch(torch, n, replicas, drop_last):
    """In order: rank for rank PyTorch's keys. Shuffled (another permutation than PyTorch's: the
    generators differ): one permutation shared by the ranks, each key of it read once (or padded as
    PyTorch pads), the same for the same seed and epoch, another after set_epoch."""
    if n == 0 and not drop_last:
        return  # (padding an empty dataset: a ZeroDivisionError in both)
    for shuffle in (False, True):
        ranks = functools.partial(each_rank, n=n, replicas=replicas, shuffle=shuffle, drop_last=drop_last)
        (want_len, want), (got_len, got) = ranks(torch, torch.utils.data), ranks(minigrad, mdata)
        assert got_len == want_len
        if not shuffle:
            assert got == want
            continue
        assert [len(k) for k in got] == [len(k) for k in want]
        assert sorted(collections.Counter(sum(got, [])).values()) == \
            sorted(collections.Counter(sum(want, [])).values())
        assert ranks(minigrad, mdata) == (got_len, got)
        if n > 5:
            assert ranks(minigrad, mdata, epoch=1)[1] != got and ranks(minigrad, mdata, seed=1)[1] != got


def each_rank(L, D, epoch=0, seed=0, *, n, replicas, shuffle, drop_last):
    """Each rank's len and keys at `epoch`."""
    samplers = [D.DistributedSampler(range(n), replicas, r, shuffle=shuffle, seed=seed, drop_last=drop_last)
                for r in range(replicas)]
    for s in samplers:
        s.set_epoch(epoch)
    return [len(s) for s in samplers], [list(s) for s in samplers]


@pytest.mark.parametrize("n,lengths", [(10, [0.33, 0.33, 0.34]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.3, 0.4]),
                                       (10, [0.1] * 10), (10, [3, 7]), (10, [3, 3]), (10, [0.5, 0.6])])
def test_random_split_sizes_as_torch(torch, n, lengths):
    def make(L, D):
        splits = D.random_split(range(n), lengths, generator=L.Generator().manual_seed(0))
        assert sorted(sum((list(s) for s in splits), [])) == list(range(n))
        return [len(s) for s in splits]
    want, got = both(torch, make)
    assert got == want


class _Sharded:
    """range(n), each worker reading its own contiguous share (a short or empty one last)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = self.worker_info()
        if info is None:
            return iter(range(self.n))
        per = math.ceil(self.n / info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))


class Sharded(_Sharded, mdata.IterableDataset):
    worker_info = staticmethod(mdata.get_worker_info)


try:  # its twin for torch's DataLoader (at module level, so that torch's workers can unpickle it)
    import torch.utils.data as _torch_data

    class TorchSharded(_Sharded, _torch_data.IterableDataset):
        worker_info = staticmethod(_torch_data.get_worker_info)
except ImportError:
    TorchSharded = None


@pytest.mark.parametrize("batch_size,drop_last", [(None, False), (2, False), (2, True)])
def test_two_workers_split_an_iterable_dataset_as_torch(torch, batch_size, drop_last):
    want, got = both(torch, lambda L, D: list(D.DataLoader((Sharded if L is minigrad else TorchSharded)(7), batch_size=batch_size,
                                                           drop_last=drop_last, num_workers=2)))
    assert got == want
