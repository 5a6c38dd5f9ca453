"""`torch.mps`: Apple's GPUs, which minigrad does not run on. As PyTorch's on a machine without them:
`is_available()` is False, `device_count()` 0, `manual_seed` does nothing, and the rest raise its RuntimeError."""

__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize", "empty_cache", "get_rng_state",
           "set_rng_state", "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
           "set_per_process_memory_fraction"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Nothing to seed without the backend (PyTorch's does nothing too)."""


def _missing(what):
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")


def synchronize():
    _missing("deviceSynchronize")


def empty_cache():
    _missing("emptyCache")


def seed():
    _missing("getDefaultGenerator")


def get_rng_state(device="mps"):
    _missing("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    _missing("getDefaultGenerator")


def current_allocated_memory():
    _missing("getCurrentAllocatedMemory")


def driver_allocated_memory():
    _missing("getDriverAllocatedMemory")


def recommended_max_memory():
    _missing("getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction):
    _missing("setMemoryFraction")
