"""torch.distributed.algorithms.ddp_comm_hooks: communication hooks for DistributedDataParallel
(`ddp.register_comm_hook(state, hook)`). The default ones are here (PowerSGD is not)."""
from . import default_hooks
from . import default_hooks as default

__all__ = ["default_hooks", "default"]
