"""`minigrad.cpu`: the CPU as `torch.cpu` presents it, for code written against PyTorch's device modules
(`minigrad.cpu.amp.GradScaler`, `minigrad.cpu.is_available()`)."""
from .amp import _device_amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]

amp = _device_amp("cpu")  # minigrad.cpu.amp: GradScaler and autocast for the CPU


def is_available():
    """Always True: minigrad runs on the CPU."""
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: CPU ops are done when they return."""

