"""Matrix products: `matmul` (`@`) for 1-D, 2-D and batched, broadcasting shapes."""
import math
from types import SimpleNamespace

import numpy as np

from .. import backends
from ..autograd.function import Function, keeps_operand_shapes
from ..autograd.grad_mode import state
from ..device import array_module
from ..dtypes import cpp_name
from ..tensor import Tensor
from ._util import broadcast_shapes, operand_type_error, sum_to, sum_to_array, type_name


def matmul_arrays(a, b, out=None):
    """a @ b of arrays (into `out`). A 2-D product whose inner size is 1, an outer product (a batch of
    one row's weight gradient, a Linear(1, n)), is the elementwise product: each entry one rounding of
    a_i b_j, as BLAS makes it, which numpy's matmul hands OpenBLAS at 3-4x the time (and its broadcast
    multiply at 3-4x a backend's loop)."""
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] == 1 and b.shape[0] == 1 and type(a) is type(b) is np.ndarray \
            and a.dtype == b.dtype:
        impl = backends.find("outer", a, b, out)
        return np.multiply(a, b, out=out) if impl is None else impl.forward(a, b, out)
    return (np if type(a) is np.ndarray else array_module(a)).matmul(a, b, out=out)


def product(a, b):
    """a @ b of arrays for the matmul op. `x @ W.T` (b the transposed view of a C-contiguous W) is
    nn.Linear's product: it runs through the linear backend where that takes it, so it has the bits of
    F.linear(x, W), as in PyTorch; for few rows (a recurrent cell's `g @ W_hh.T` in backward) the backend's
    small-path blocks also skip the packing OpenBLAS does for numpy's matmul (minigrad/backends/cpu/linear.py).
    Where the backend declines, numpy's matmul writes into the result made for it: the gemm call numpy makes
    for a result of its own (the same bits), without a second one."""
    if b.ndim == 2 and a.ndim == 2 and b.flags.f_contiguous and not b.flags.c_contiguous and type(b) is np.ndarray \
            and type(a) is np.ndarray and a.dtype == b.dtype:
        w = b.T
        out = np.empty((a.shape[0], w.shape[0]), dtype=a.dtype)
        impl = backends.find("linear", out, a, w)
        if impl is None:
            return np.matmul(a, b, out=out)
        impl.forward(out, a, w)
        return out
    return matmul_arrays(a, b)


class Matmul(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save(self=a if ctx.needs_input_grad[1] else None, mat2=b if ctx.needs_input_grad[0] else None)
        return product(a.array, b.array)

    @staticmethod
    def backward(ctx, g):  # C = A B: gA = g B^T, gB = A^T g (summed over broadcast batch dims)
        a, b = ctx.saved_tensors
        if g.array.dtype.kind == "c":  # gA = g B^H, gB = A^H g: the formulas below of the conjugates
            from .complex import conj

            a, b = a if a is None else conj(a), b if b is None else conj(b)
        a_shape, b_shape = ctx._shapes
        if not state.grad_enabled and len(a_shape) >= 2 and len(b_shape) == 2:
            # no graph of the backward wanted: the two products on the arrays, with none of the four
            # recorded-op calls (two transposes, two matmuls) the formula below makes
            ga = Tensor._wrap(product(g.array, b.array.T)) if ctx.needs_input_grad[0] else None
            gb = Tensor._wrap(matmul_arrays(_rows(a.array).T, _rows(g.array))) if ctx.needs_input_grad[1] else None
            return ga, gb
        a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
        if a_vec and b_vec:  # dot: g is a scalar
            return (g * b if ctx.needs_input_grad[0] else None, g * a if ctx.needs_input_grad[1] else None)
        # treat vectors as matrices, as matmul does, so one formula serves every other case
        if a_vec:
            g = g.unsqueeze(-2)
        if b_vec:
            g = g.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            B = b.unsqueeze(-1) if b_vec else b
            ga = g @ B.mT
            ga = sum_to(ga.squeeze(-2) if a_vec else ga, a_shape)
        if ctx.needs_input_grad[1]:
            A = a.unsqueeze(0) if a_vec else a
            gb = A.mT @ g
            gb = sum_to(gb.squeeze(-1) if b_vec else gb, b_shape)
        return ga, gb

    @staticmethod
    def array_step(needs, a, b):
        return _matmul_step(needs, a, b)


def _matmul_step(needs, a, b):
    """Matmul's array_step for operands of 2 dims or more: the formula of its backward on arrays."""
    a_shape, b_shape = a.array.shape, b.array.shape
    if len(a_shape) < 2 or len(b_shape) < 2 or a.array.dtype != b.array.dtype or a.array.dtype.kind == "c":
        return None  # (complex: its backward's conjugates are the Function's)

    def forward(x, y):
        return product(x, y), (x if needs[1] else None, y if needs[0] else None)

    def backward(saved, g):
        x, y = saved
        if len(b_shape) == 2:
            return (product(g, y.T) if needs[0] else None,
                    matmul_arrays(_rows(x).T, _rows(g)) if needs[1] else None)
        return (sum_to_array(matmul_arrays(g, y.swapaxes(-1, -2)), a_shape) if needs[0] else None,
                sum_to_array(matmul_arrays(x.swapaxes(-1, -2), g), b_shape) if needs[1] else None)

    return forward, backward


def _rows(x):
    """x as a matrix of rows: `x @ W` of a (B, T, C) x is a product of B*T rows, and W's gradient one
    product over them all (PyTorch folds it so), not a (C, C') product per batch entry summed after."""
    return x if x.ndim == 2 else x.reshape(-1, x.shape[-1])



class Dot(Matmul):
    node_name = "DotBackward0"


class Mv(Matmul):
    node_name = "MvBackward0"


class Bmm(Matmul):
    node_name = "BmmBackward0"


class BroadcastMatmul(Matmul):
    node_name = "MatmulBackward0"


def _check(a, b):
    """PyTorch's checks, in the words of the kernel its matmul runs for these operands (never a numpy error
    from inside the product)."""
    sa, sb = a.array.shape, b.array.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    if len(sa) > 2 and len(sb) > 2:
        broadcast_shapes(sa[:-2], sb[:-2])  # (PyTorch expands the batch dims before it multiplies)
    k, m = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if k == m:
        return
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0]:
        # PyTorch multiplies by a batch of one that wants a gradient as by its matrix (a smaller gradient):
        # that product's rule and words
        for one, other, first in ((a, b, True), (b, a, False)):
            if one.array.shape[0] == 1 and one._requires_grad:
                matrix = SimpleNamespace(array=one.array[0], _requires_grad=True)
                return _check(matrix, other) if first else _check(other, matrix)
    if len(sa) <= 2 and len(sb) <= 2 or _folds(a, b):
        if len(sb) > 2:  # folded the other way round: b's transpose times a's
            sa, sb = sb[:-2] + (sb[-1], sb[-2]), sa[::-1]
        rows = math.prod(sa[:-1])
        if len(sb) == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and {sb[0]}x{sb[1]})")
        if len(sa) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k}] and src [{m}] to have the same number "
                               f"of elements, but got {k} and {m} elements respectively")
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})")
    batch = math.prod(broadcast_shapes(sa[:-2], sb[:-2]))
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] "
                       f"but got: [{batch}, {m}].")


def _folds(a, b):
    """Whether PyTorch's matmul folds the operand of 3 or more dims into a matrix (one mm or mv, whose words
    its shape errors use) rather than running a bmm: its rule, on the layout and on which side wants a grad."""
    larger, smaller = (a, b) if a.array.ndim >= b.array.ndim else (b, a)
    if larger.array.ndim < 3 or smaller.array.ndim > 2:
        return False
    if smaller._requires_grad:
        return True
    if a.array.ndim == 2:
        return False
    t = larger.array if larger is a else larger.array.swapaxes(-1, -2)
    if not t.size:
        return True
    return all(t.strides[i] == t.strides[i + 1] * t.shape[i + 1] for i in range(t.ndim - 2))


def _kernel(na, nb):
    """Which of PyTorch's product kernels a matmul of an na-D by an nb-D operand runs (its dtype errors name it):
    an n-D @ 2-D product folds into one mm, an n-D @ 1-D into one mv, a 3-D or more right operand is a bmm."""
    if nb == 1:
        return "dot" if na == 1 else "mv"
    return "mm" if nb == 2 else "bmm"


def _operands(input, other, shapes=None):
    """Both operands as tensors of one dtype (PyTorch's promotion), without the elementwise broadcast check.
    `shapes`: the product's shape check, which PyTorch makes before the dtypes' in all but a dot."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        tensor, bad = (input, other) if isinstance(input, Tensor) else (other, input)
        raise operand_type_error(tensor, bad, f"matmul(): argument 'other' must be Tensor, not {type_name(bad)}")
    na, nb = input.array.ndim, other.array.ndim
    kernel = _kernel(na, nb)
    if shapes is not None and kernel != "dot":
        shapes(input, other)
    if input.array.dtype != other.array.dtype:  # PyTorch promotes elementwise ops, not products
        a, b = input.dtype._legacy[:-6], other.dtype._legacy[:-6]
        if kernel == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a} and {b}")
        if kernel == "mv":
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {b}, {a}, and {b}")
        if kernel == "bmm":
            raise RuntimeError(f"expected scalar type {a} but found {b}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_name(input.array.dtype)} != "
                           f"{cpp_name(other.array.dtype)}")
    if shapes is not None and kernel == "dot":
        shapes(input, other)
    if input.array.dtype.kind == "b" and (kernel == "dot" or (input.array.size and other.array.size and na and nb)):
        which = {"dot": "dot", "mv": "addmv_impl_cpu", "mm": "addmm_impl_cpu_", "bmm": "bmm"}[kernel]
        raise NotImplementedError(f"\"{which}\" not implemented for 'Bool'")
    return input, other


def _apply(cls, a, b):
    out = cls.apply(a, b)
    if out.grad_fn is not None:
        out.grad_fn._keep_shapes(a.array.shape, b.array.shape)
    return out


def matmul(input, other):
    """Matrix product with numpy's rules: 1-D operands are vectors, leading dims broadcast.

    One node per product. PyTorch names 2-D @ 2-D `MmBackward0`, 2-D @ 1-D `MvBackward0` and
    1-D @ 1-D `DotBackward0`, as here; for batched and 1-D @ 2-D operands it decomposes into
    view/expand + mm/bmm + unsafe_view nodes, where minigrad records a single `BmmBackward0`
    (equal 3-D batches) or `MatmulBackward0` node (a deliberate difference: fewer nodes).
    """
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        # two matrices of one float dtype whose inner sizes agree, a recurrent step's `H @ W`: none of the
        # promotion and shape checks below has anything to say, and each would cost a call
        x, y = input.array, other.array
        if x.ndim == 2 and y.ndim == 2 and x.shape[1] == y.shape[0] and x.dtype == y.dtype and x.dtype.kind == "f":
            return _apply(Matmul, input, other)
    if getattr(input, "is_sparse", False) or getattr(input, "_compressed", False):  # a sparse COO, CSR or CSC
        return input.matmul(other)  # matrix (minigrad/sparse.py) makes its own product
    if getattr(other, "is_sparse", False) or getattr(other, "_compressed", False):
        return other.__rmatmul__(input)
    a, b = _operands(input, other, shapes=_check)
    na, nb = a.array.ndim, b.array.ndim
    if na == 2 and nb == 2:
        cls = Matmul
    elif na == 1 and nb == 1:
        cls = Dot
    elif na == 2 and nb == 1:
        cls = Mv
    elif na == 3 and nb == 3 and a.array.shape[0] == b.array.shape[0]:
        cls = Bmm
    else:
        cls = BroadcastMatmul
    return _apply(cls, a, b)


def mm(input, mat2):
    """Product of two matrices (2-D only, as torch.mm)."""
    if getattr(input, "is_sparse", False) or getattr(input, "_compressed", False):  # a sparse COO, CSR or CSC
        return input.mm(mat2)  # matrix (minigrad/sparse.py) makes its own product
    if getattr(mat2, "is_sparse", False) or getattr(mat2, "_compressed", False):
        return mat2._rmm(input)
    a, b = _operands(input, mat2)
    if a.array.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.array.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check(a, b)
    return _apply(Matmul, a, b)


def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch sizes (as torch.bmm)."""
    a, b = _operands(input, mat2)
    if a.array.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.array.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.array.shape[0] != b.array.shape[0] or a.array.shape[2] != b.array.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.array.shape[0]}, {a.array.shape[2]}] "
            f"but got: [{b.array.shape[0]}, {b.array.shape[1]}]."
        )
    return _apply(Bmm, a, b)


def dot(input, other):
    """Inner product of two 1-D tensors."""
    a, b = _operands(input, other)
    if a.array.ndim != 1 or b.array.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.array.ndim}D and {b.array.ndim}D tensors")
    _check(a, b)
    return _apply(Dot, a, b)

keeps_operand_shapes(Bmm, BroadcastMatmul, Dot, Matmul, Mv)  # (their callers keep the operands' shapes)
