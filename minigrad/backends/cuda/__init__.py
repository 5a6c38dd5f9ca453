"""The CUDA kernels (one file per op, loaded on first use), and `torch.backends.cuda`'s names:
`minigrad.backends.cuda.matmul.allow_tf32`, `is_built()` and the scaled-dot-product-attention switches. Importing
this package loads no cupy."""
import contextlib
import importlib.util
import warnings

from ..flags import matmul  # noqa: F401


def is_built():
    """True when cupy is installed (minigrad's CUDA support); nothing is imported to find out."""
    return importlib.util.find_spec("cupy") is not None


def _sdp_switches(name):
    from .. import flags

    def enabled():
        return flags.sdp_enabled(name)

    def enable(enabled):
        flags.set_sdp(name, enabled)

    enabled.__name__, enable.__name__ = f"{name}_sdp_enabled", f"enable_{name}_sdp"
    return enabled, enable


# torch.backends.cuda.flash_sdp_enabled(), enable_flash_sdp(False), ...: read and set (see flags.py)
flash_sdp_enabled, enable_flash_sdp = _sdp_switches("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switches("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switches("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switches("cudnn")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """PyTorch's deprecated context manager: the four switches set inside the block, restored after it."""
    from .. import flags

    warnings.warn("`minigrad.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `minigrad.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    chosen = {"flash": enable_flash, "math": enable_math, "mem_efficient": enable_mem_efficient, "cudnn": enable_cudnn}
    saved = {name: flags.sdp_enabled(name) for name in chosen}
    for name, enabled in chosen.items():
        flags.set_sdp(name, enabled)
    try:
        yield
    finally:
        for name, enabled in saved.items():
            flags.set_sdp(name, enabled)
