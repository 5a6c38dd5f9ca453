"""`torch.functional`: the module PyTorch's einsum, split, stft, norm, unique, meshgrid, ... are defined in, for scripts
that import them from it. The same functions as minigrad's top-level names (this module loads on first use, after
minigrad itself)."""
from . import (  # noqa: F401
    atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod, cdist,
    chain_matmul, einsum, istft, lu, meshgrid, norm, pca_lowrank, split, stft, svd_lowrank, tensordot, unique,
    unique_consecutive, unravel_index,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu", "meshgrid", "norm", "pca_lowrank",
           "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]
