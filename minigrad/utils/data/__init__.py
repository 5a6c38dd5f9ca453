"""Datasets, samplers and the DataLoader, as `torch.utils.data` (built on the engine alone).

    >>> from minigrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(minigrad.arange(10.0).reshape(5, 2), minigrad.arange(5))
    >>> for x, y in DataLoader(ds, batch_size=2, shuffle=True):
    ...     ...
"""
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
