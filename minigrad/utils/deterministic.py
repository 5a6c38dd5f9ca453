"""`minigrad.utils.deterministic`, as `torch.utils.deterministic`: the module's one attribute is a setting."""
import sys
import types

from ..backends.flags import _deterministic


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether `empty` fills its memory with NaN (an integer's largest value) under use_deterministic_algorithms."""
        return _deterministic["fill_uninitialized_memory"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if type(mode) is not bool:
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _deterministic["fill_uninitialized_memory"] = mode


sys.modules[__name__].__class__ = _Deterministic
