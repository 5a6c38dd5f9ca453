"""`torch.backends.mps`: Apple's GPUs, which minigrad does not run on."""


def is_available():
    return False


def is_built():
    return False
