"""PyTorch's top-level functions built from other ops: control flow run eagerly (cond, while_loop),
segment_reduce, histogramdd, nonzero_static, as_strided_scatter, geqrf/ormqr, lobpcg, the legacy norms, and
the functions PyTorch has removed but still names (solve, symeig, eig, lstsq, matrix_rank), which raise its
texts saying what replaces them."""
import builtins

import numpy as np

from ..device import array_module
from ..tensor import Tensor
from . import linalg
from . import shape as shape_ops
from ._util import return_type


# ---- control flow, run eagerly: gradients flow through the branch (or the iterations) taken

def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); pred a bool or a one-element tensor."""
    if isinstance(pred, (builtins.bool, builtins.int, builtins.float)):  # (PyTorch checks nothing then: neither)
        return true_fn(*operands) if pred else false_fn(*operands)
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not builtins.all(_tensor_leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return true_fn(*operands) if builtins.bool(pred) else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """carried = body_fn(*carried) while cond_fn(*carried); returns the last carried values, as a tuple."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    if not builtins.all(_tensor_leaves(carried_inputs, ints=True)):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only"
                           f"consists of tensor or int leaves, but got {carried_inputs}.")  # (PyTorch's text, space lost)
    carried = tuple(carried_inputs)
    while True:
        go = cond_fn(*carried)
        if isinstance(go, Tensor) and go.numel() != 1:
            raise RuntimeError(f"Expected cond_fn to return a scalar tensor or a bool but got {go.shape}.")
        if not builtins.bool(go):
            return carried
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same number of outputs but got "
                               f"lhs:{list(out)} and rhs:{list(carried)}")
        carried = out


def _tensor_leaves(tree, ints=False):
    """Whether each leaf of nested tuples, lists and dicts is a tensor (or an int, with ints)."""
    for leaf in tree.values() if isinstance(tree, dict) else tree:
        if isinstance(leaf, (tuple, list, dict)):
            yield from _tensor_leaves(leaf, ints)
        else:
            yield isinstance(leaf, Tensor) or (ints and isinstance(leaf, builtins.int))


# ---- reductions and selections

_SEGMENT = {"sum": "sum", "mean": "mean", "max": "amax", "amax": "amax", "min": "amin", "amin": "amin",
            "prod": "prod"}
_EMPTY = {"sum": 0.0, "mean": float("nan"), "amax": -float("inf"), "amin": float("inf"), "prod": 1.0}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduces runs of data's entries along `axis`, the runs given by their lengths (or by offsets, the runs'
    bounds): 'sum', 'mean', 'max', 'min' or 'prod', each run's reduction starting from `initial` when given;
    an empty run gives initial, or the reduction's identity ('mean': nan)."""
    if reduce not in _SEGMENT:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    how = _SEGMENT[reduce]
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    bounds = lengths if lengths is not None else offsets
    if axis != bounds.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if bounds.ndim != 1:
        raise NotImplementedError("segment_reduce: minigrad takes 1-D lengths and offsets only")
    if data.dtype.is_floating_point is False:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{data.dtype._legacy[:-6]}'")
    b = bounds.detach().numpy().astype(np.int64)
    starts, sizes = (np.cumsum(b) - b, b) if lengths is not None else (b[:-1], np.diff(b))
    if lengths is not None and not unsafe and b.sum() != data.shape[axis]:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    runs = []
    for start, size in zip(starts.tolist(), sizes.tolist()):
        if size == 0:
            fill = _EMPTY[how] if initial is None else initial
            shape = data.shape[:axis] + data.shape[axis + 1:]
            runs.append(Tensor._wrap(array_module(data.array).full(shape, fill, dtype=data.array.dtype)))
        else:
            runs.append(_reduce_run(data.narrow(axis, start, size), how, axis, initial))
    return shape_ops.stack(runs, axis)


def _reduce_run(run, how, axis, initial):
    if initial is None:
        return getattr(run, how)(axis)
    if how == "sum":
        return run.sum(axis) + initial
    if how == "prod":
        return run.prod(axis) * initial
    if how == "mean":
        return (run.sum(axis) + initial) / run.shape[axis]  # (PyTorch's: initial joins the sum, not the count)
    return getattr(run, how)(axis).clamp(min=initial) if how == "amax" else run.amin(axis).clamp(max=initial)


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero's (n, ndim) indices cut or padded with fill_value to `size` rows: a shape fixed before the data."""
    if not isinstance(size, builtins.int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    xp = array_module(input.array)
    idx = xp.argwhere(input.array).astype(np.int64)[:size]
    out = xp.full((size, input.array.ndim), fill_value, dtype=np.int64)
    out[:len(idx)] = idx
    return Tensor._wrap(out)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The histogram of the points input (..., D) in D dims: bins an int, one int per dim, or one tensor of edges
    per dim; range the flat [min_0, max_0, min_1, ...] (else each dim's data range). Returns (hist, bin_edges)."""
    D = input.shape[-1]
    points = input.detach().numpy().reshape(-1, D)
    dtype = points.dtype
    if isinstance(bins, (tuple, list)) and bins and isinstance(bins[0], Tensor):
        edges = [b.detach().numpy().astype(dtype) for b in bins]
    else:
        counts = [builtins.int(bins)] * D if isinstance(bins, builtins.int) else [builtins.int(b) for b in bins]
        if len(counts) != D:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        if range is not None and len(range) != 2 * D:
            raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} "
                               f"elements, but got {len(range)}")
        lo = [range[2 * k] for k in builtins.range(D)] if range is not None else \
            (points.min(0) if len(points) else np.zeros(D)).tolist()
        hi = [range[2 * k + 1] for k in builtins.range(D)] if range is not None else \
            (points.max(0) if len(points) else np.zeros(D)).tolist()
        # (edges made in input's dtype, as PyTorch's, so that points on an edge fall in the same bin)
        edges = [np.linspace(a, b, n + 1).astype(dtype) if a != b else np.linspace(a - 0.5, b + 0.5, n + 1).astype(dtype)
                 for a, b, n in zip(lo, hi, counts)]
    w = weight.detach().numpy().reshape(-1) if weight is not None else None
    hist, _ = np.histogramdd(points.astype(np.float64), [e.astype(np.float64) for e in edges], weights=w,
                             density=density)
    fields = return_type("histogramdd", ("hist", "bin_edges"))
    return fields(Tensor._wrap(hist.astype(dtype)), [Tensor._wrap(e) for e in edges])


def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of input over dim (PyTorch keeps this name for TorchScript: linalg.vector_norm is its form)."""
    return input.norm(2, dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of the singular values of the matrices over dim (the last two): nuclear_norm(input, keepdim) too."""
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of (contiguous) input with src written at the elements as_strided(size, stride, storage_offset) views."""
    from .composite import _strided_index, index_put

    xp = array_module(input.array)
    where = _strided_index(xp, size, stride, 0 if storage_offset is None else storage_offset).reshape(-1)
    if tuple(src.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    flat = index_put(input.reshape(-1), (Tensor._wrap(where),), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


# ---- QR in LAPACK's form, and eigenpairs

def geqrf(input):
    """LAPACK's geqrf: (a, tau), R on and above a's diagonal, the Householder vectors below it (their leading 1s
    implied) with their scales tau; linalg.householder_product(a, tau) is Q."""
    a = input.detach().numpy()
    flat = a.reshape((-1,) + a.shape[-2:])
    hs, taus = zip(*(np.linalg.qr(m, mode="raw") for m in flat)) if len(flat) else ((), ())
    k = builtins.min(a.shape[-2:])
    h = np.stack([x.T for x in hs]).reshape(a.shape) if hs else a.copy()
    tau = np.stack(taus).reshape(a.shape[:-2] + (k,)) if taus else np.zeros(a.shape[:-2] + (k,), a.dtype)
    fields = return_type("geqrf", ("a", "tau"))
    return fields(Tensor._wrap(h.astype(a.dtype)), Tensor._wrap(tau.astype(a.dtype)))


def ormqr(input, tau, other, left=True, transpose=False):
    """other times the full m x m Q of geqrf's (input, tau): Q @ other (left) or other @ Q, Q^T with transpose."""
    m, n = input.shape[-2], input.shape[-1]
    if n < m:  # (Q is m x m: the missing reflectors are identities, tau 0)
        input = shape_ops.cat([input, input.new_zeros(input.shape[:-1] + (m - n,))], -1)
    if tau.shape[-1] < m:
        tau = shape_ops.cat([tau, tau.new_zeros(tau.shape[:-1] + (m - tau.shape[-1],))], -1)
    q = linalg.householder_product(input[..., :m], tau[..., :m])
    q = q.mT if transpose else q
    return q @ other if left else other @ q


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (or smallest, largest=False) eigenpairs of the symmetric A (A x = e B x with B): (E, X).
    Found by a full symmetric eigendecomposition rather than LOBPCG's iterations, so niter, tol, iK and X only
    set k; the eigenvalues are LOBPCG's limit, each eigenvector's sign is not fixed."""
    k = (X.shape[-1] if X is not None else 1) if k is None else k
    if B is not None:  # (L^-1 A L^-T y = e y with B = L L^T, x = L^-T y)
        L = linalg.cholesky(B)
        Li = linalg.inverse(L)
        e, y = linalg.eigh(Li @ A @ Li.mT)
        v = Li.mT @ y
    else:
        e, v = linalg.eigh(A)
    if largest is None or largest:
        return e[..., -k:].flip(-1), v[..., -k:].flip(-1)
    return e[..., :k], v[..., :k]


# ---- removed functions: PyTorch raises these texts

_SOLVE = ("This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in favor of "
          "`torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
          "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_SYMEIG = ("This function was deprecated since version 1.9 and is now removed. The default behavior has changed from "
           "using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\n"
           "L, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if "
           "upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
           "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_EIG = ("This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns complex tensors "
        "of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) "
        "should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ = ("This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is deprecated in favor of "
          "`torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about the problem).\n\nTo get "
          "the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored "
          "the residuals of the solution in the last m - n columns of the returned value whenever m > n. In "
          "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named tuple.\n\nThe "
          "unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
          "with:\nX = torch.linalg.lstsq(A, B).solution")
_MATRIX_RANK = ("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                "`torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input, A, *, out=None):
    raise RuntimeError(_SOLVE)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_SYMEIG)


def eig(input, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_EIG)


def lstsq(input, A, *, out=None):
    raise RuntimeError(_LSTSQ)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MATRIX_RANK)


def _solve_method(self, other):
    raise RuntimeError(_SOLVE)


def _lstsq_method(self, other):
    raise RuntimeError(_LSTSQ)


METHODS = {"solve": _solve_method, "lstsq": _lstsq_method, "symeig": symeig, "eig": eig, "geqrf": geqrf,
           "ormqr": ormqr, "nonzero_static": nonzero_static, "as_strided_scatter": as_strided_scatter}
