"""`minigrad.utils.hooks`, as `torch.utils.hooks`: the handle every `register_*_hook` returns."""
from ..autograd.function import RemovableHandle

__all__ = ["RemovableHandle"]
