"""DistributedSampler: each rank of a data-parallel run reads its own share of a dataset's keys."""
import math

from ... import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Every `num_replicas`-th key from `rank` on, of the keys in order or shuffled (the same permutation on
    every rank: drawn from `seed + epoch`, so call `set_epoch(epoch)` before each epoch for a new one).
    The keys are padded by repeating the first ones (or, with drop_last, cut) to a multiple of the ranks,
    so every rank has `len(sampler)` keys and the ranks stay in step. num_replicas and rank default to
    minigrad.distributed's world size and rank."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            import minigrad.distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        # drop_last: the largest multiple of the ranks that fits, so no key is read twice
        self.num_samples = math.ceil((n - num_replicas) / num_replicas) if drop_last and n % num_replicas else \
            math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad > 0 else []
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose permutation the next iteration draws (the same on every rank)."""
        self.epoch = epoch
