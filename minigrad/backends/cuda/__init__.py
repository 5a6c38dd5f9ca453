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
        yield {}  # (PyTorch's value for `as`: an empty dict)
    finally:
        for name, enabled in saved.items():
            flags.set_sdp(name, enabled)


class SDPAParams:
    """torch.backends.cuda's SDPAParams: the arguments of one scaled_dot_product_attention call, as the kernel
    checks (`can_use_flash_attention`, ...) read them."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = float(dropout), bool(is_causal), bool(enable_gqa)


def _can_use(params):
    if not isinstance(params, SDPAParams):
        raise TypeError(f"expected an SDPAParams, got {type(params).__name__}")
    return False  # minigrad has one attention (nn/_functional/attention.py): no flash or memory-efficient kernel


def can_use_flash_attention(params, debug=False):
    """Whether the flash-attention kernel would run these arguments: never, minigrad has none (so `debug` has
    nothing to explain, as PyTorch built without it)."""
    return _can_use(params)


def can_use_efficient_attention(params, debug=False):
    """Whether the memory-efficient kernel would run these arguments: never, minigrad has none."""
    return _can_use(params)
