"""minigrad.linalg: PyTorch's `torch.linalg` names for minigrad's linear algebra (minigrad/ops/linalg.py).

    >>> import minigrad
    >>> minigrad.linalg.norm(minigrad.tensor([3.0, 4.0]))
    tensor(5.)
"""
import numbers

from .ops.linalg import (  # noqa: F401
    LinAlgError, cholesky, cholesky_ex, cond, det, eig, eigh, eigvals, eigvalsh, householder_product, inv_ex, ldl_factor,
    ldl_factor_ex, ldl_solve, lstsq, lu,
    lu_factor, lu_factor_ex, lu_solve, matrix_exp, matrix_norm, matrix_rank, multi_dot, qr, solve,
    solve_ex, solve_triangular, svd, svdvals, tensorinv, tensorsolve,
)
from .ops import _numpy_names as _torch_names
from .ops.linalg import _legacy_name
from .ops.linalg import inverse as inv, linalg_matrix_power as matrix_power, linalg_pinv as pinv, linalg_slogdet as slogdet, linalg_vander as vander  # noqa: F401
from .ops.out import take_out
from .tensor import Tensor, dtype_argument, type_name


_VECTOR_NORM_ARGUMENTS = ("input", "ord", "dim", "keepdim")


def vector_norm(*args, **kwargs):
    """linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None): x, ord, dim and keepdim by position or
    by name (x as `input=`, PyTorch's parser's name, or `x=`, its documented one), as PyTorch's parser takes them
    (its refusal of an ord that is no number names its position)."""
    from .ops.reduction import norm

    if len(args) > 4:
        raise TypeError(f"linalg_vector_norm() takes from 1 to 4 positional arguments but {len(args)} were given")
    given = dict(zip(_VECTOR_NORM_ARGUMENTS, args))
    if "x" in kwargs and "input" not in given and "input" not in kwargs:
        kwargs["input"] = kwargs.pop("x")
    for name in kwargs:
        if name in given:
            raise TypeError(f"linalg_vector_norm() got multiple values for argument '{name}'")
        if name not in _VECTOR_NORM_ARGUMENTS and name != "dtype":
            raise TypeError(f"linalg_vector_norm() got an unexpected keyword argument '{name}'")
    given.update(kwargs)
    if "input" not in given:
        raise TypeError('linalg_vector_norm() missing 1 required positional arguments: "input"')
    ord = given.get("ord", 2)
    # (None, a string (the matrix orders are linalg.norm's and torch.norm's) or a tensor of elements: no Number; nor
    # is a tensor that requires grad, which the parser does not read as a number)
    if not isinstance(ord, numbers.Number) and not (isinstance(ord, Tensor) and ord.array.ndim == 0
                                                    and not ord.requires_grad):
        where = "" if "ord" in kwargs else " (position 2)"
        raise TypeError(f"linalg_vector_norm(): argument 'ord'{where} must be Number, not {type_name(ord)}")
    if not isinstance(ord, (numbers.Real, Tensor)) or isinstance(ord, Tensor) and ord.array.dtype.kind == "c":
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    return norm(given["input"], ord, given.get("dim"), given.get("keepdim", False), dtype=given.get("dtype"))


def norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A matrix norm over two dims (dim a pair, or a 2-d x with ord but no dim), else a vector norm."""
    from .ops.reduction import norm

    dtype = dtype_argument(dtype, "linalg_norm", (x,))
    if isinstance(dim, (tuple, list)) and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is None and ord is not None:
        if isinstance(ord, str) or x.array.ndim == 2:
            dim = (-2, -1)
        elif x.array.ndim != 1:
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {x.array.ndim}D.")
    if ord is not None and isinstance(dim, (tuple, list)) and len(dim) == 2:
        return matrix_norm(x if dtype is None else x.to(dtype), ord, tuple(dim), keepdim)
    return norm(x, 2 if ord is None or ord == "fro" else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    from .ops.composite import cross

    return cross(input, other, dim)


def vecdot(x, y, *, dim=-1):  # sum of conj(x) y
    if x.array.dtype != y.array.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_legacy_name(x)} and y of type {_legacy_name(y)} instead")
    return (x.conj() * y).sum(dim) if x.array.dtype.kind == "c" else (x * y).sum(dim)


def matmul(input, other):
    return input @ other


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .ops.movement import diagonal

    return diagonal(A, offset, dim1, dim2)


# torch.linalg's keyword names where they are not the ones of torch's function of that name (torch.det(input),
# torch.linalg.det(A))
det, inv = _torch_names(det, {"A": "input"}), _torch_names(inv, {"A": "input"})
matrix_power, norm = _torch_names(matrix_power, {"input": "A"}), _torch_names(norm, {"input": "x"})
matrix_norm = _torch_names(matrix_norm, {"input": "x"})
take_out(globals(), "linalg")  # PyTorch's out= (minigrad/ops/out.py)
