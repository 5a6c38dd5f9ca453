"""The CUDA kernels (one file per op, loaded on first use), and `torch.backends.cuda`'s names:
`minigrad.backends.cuda.matmul.allow_tf32` and `is_built()`. Importing this package loads no cupy."""
import importlib.util

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
