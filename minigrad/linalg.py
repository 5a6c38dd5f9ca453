"""minigrad.linalg: PyTorch's `torch.linalg` names for minigrad's linear algebra (minigrad/ops/linalg.py).

    >>> import minigrad
    >>> minigrad.linalg.norm(minigrad.tensor([3.0, 4.0]))
    tensor(5.)
"""
from .ops.linalg import (  # noqa: F401
    LinAlgError, cholesky, cholesky_ex, cond, det, eig, eigh, eigvals, eigvalsh, householder_product, inv_ex, lstsq, lu,
    lu_factor, lu_factor_ex, lu_solve, matrix_exp, matrix_norm, matrix_power, matrix_rank, multi_dot, qr, solve,
    solve_ex, solve_triangular, svd, svdvals, tensorinv, tensorsolve,
)
from .ops.linalg import inverse as inv, linalg_pinv as pinv, linalg_slogdet as slogdet, linalg_vander as vander  # noqa: F401
from .ops.out import take_out
from .tensor import dtype_argument


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    from .ops.reduction import norm

    if isinstance(ord, str):  # (the matrix orders are linalg.norm's and torch.norm's)
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    return norm(x, ord, dim, keepdim, dtype=dtype)


def norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm, or a matrix norm where `ord` is one of a matrix's (or a 2-d input has no `dim`)."""
    from .ops.reduction import norm

    dtype = dtype_argument(dtype, "linalg_norm", (x,))
    if ord is None or (isinstance(ord, str) and ord == "fro"):
        return norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) and ord == "nuc" or (x.array.ndim == 2 and dim is None and ord in (2, -2)):
        return matrix_norm(x, ord, keepdim=keepdim)
    if x.array.ndim >= 2 and dim is None and ord in (1, -1, float("inf"), float("-inf")):
        return matrix_norm(x, ord, keepdim=keepdim)
    return norm(x, ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    from .ops.composite import cross

    return cross(input, other, dim)


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


def matmul(input, other):
    return input @ other


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .ops.movement import diagonal

    return diagonal(A, offset, dim1, dim2)


take_out(globals(), "linalg")  # PyTorch's out= (minigrad/ops/out.py)
