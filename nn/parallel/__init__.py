"""Data-parallel training (torch.nn.parallel's counterpart): DistributedDataParallel over minigrad.distributed."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
