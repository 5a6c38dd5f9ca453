"""Fetchers: what a DataLoader (or one of its workers) does with one index from its sampler."""
import numpy as np

from ....tensor import Tensor
from ..dataset import TensorDataset
from .collate import default_collate


class MapDatasetFetcher:
    """`dataset[key]`, or, batching, the samples of a list of keys collated into one batch."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if type(self.dataset) is TensorDataset and self.collate_fn is default_collate and len(index):
            # the usual DataLoader(TensorDataset(x, y)): each tensor's rows picked at once, the batch
            # default_collate would stack from the samples one by one (the same values, as a list)
            rows = Tensor._wrap(np.asarray(index, dtype=np.int64))
            return [t[rows] for t in self.dataset.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """The next sample of the dataset's iterator, or, batching, the next len(index) of them; raises
    StopIteration at the end (and for a short last batch with `drop_last`)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableDatasetFetcher if iterable else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
