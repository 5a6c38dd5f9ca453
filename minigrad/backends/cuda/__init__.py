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


# PyTorch's switches among its attention kernels, recorded for the scripts that set them: minigrad's
# scaled_dot_product_attention has one kernel per device (the backends' registry picks it), whatever they say
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """PyTorch's deprecated context manager: the four switches set inside the block, restored after it."""
    warnings.warn("`minigrad.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed.", FutureWarning, stacklevel=3)
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(saved)
