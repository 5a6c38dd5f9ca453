"""The CUDA kernels (one file per op, loaded on first use), and `torch.backends.cuda`'s names:
`minigrad.backends.cuda.matmul.allow_tf32` and `is_built()`. Importing this package loads no cupy."""
import importlib.util

from ..flags import matmul  # noqa: F401


def is_built():
    """True when cupy is installed (minigrad's CUDA support); nothing is imported to find out."""
    return importlib.util.find_spec("cupy") is not None
