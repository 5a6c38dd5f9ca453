"""Utilities built on the engine, named as in `torch.utils` (`minigrad.utils.checkpoint`)."""
from . import checkpoint  # noqa: F401
