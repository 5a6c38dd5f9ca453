"""torch.distributed.algorithms' counterpart: Join, for ranks whose inputs run out at different steps."""
from .join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
