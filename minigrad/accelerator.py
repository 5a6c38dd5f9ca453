"""`torch.accelerator`'s device-agnostic questions (PyTorch's examples ask them before choosing a
device): the accelerator here is CUDA through cupy, when it imports and sees a GPU."""
from . import cuda
from .device import device as _device


def is_available():
    """Whether a GPU is there to use."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """device('cuda') where a GPU is there, else None (PyTorch's answer on a CPU-only machine)."""
    return _device("cuda") if cuda.is_available() else None


def device_count():
    """GPUs cupy sees (0 without one)."""
    return cuda.device_count()


def current_device_index():
    """The GPU in use (-1 without one)."""
    return cuda.current_device() if cuda.is_available() else -1


def synchronize(device=None):
    """Wait for the GPU's queued work (a GPU is needed, as in PyTorch)."""
    cuda.synchronize()
