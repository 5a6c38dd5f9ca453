"""`torch.backends.cudnn`'s flags, settable and readable (`import minigrad.backends.cudnn as cudnn`).

minigrad calls no cuDNN (its GPU convolutions are matmuls through cupy), so `is_available()` is False,
as it is for a PyTorch without CUDA; the flags keep PyTorch's defaults and whatever a script sets.
"""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available():
    return False


def version():
    return None
