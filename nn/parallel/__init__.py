"""Data-parallel training (torch.nn.parallel's counterpart): DistributedDataParallel over minigrad.distributed,
and DataParallel (one device per process here: the module's own forward)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
