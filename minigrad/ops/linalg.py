"""A little linear algebra: inverse, det, slogdet/logdet, solve, matrix_power, pinverse, and the
`minigrad.linalg` names for them (with vector_norm, matrix_norm, cross, vecdot). Batched over
leading dims; backward written in tensor ops, so second derivatives work."""
import builtins
from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from ..device import array_module
from .array_op import array_op
from ..tensor import Tensor

slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])


def _square(name, A):
    if A.array.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.array.shape[-1] != A.array.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.array.shape[-2]} by {A.array.shape[-1]} matrices")
    if A.array.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy[:-6]}")


def _mT(t):
    return t.transpose(-2, -1)


class Inverse(Function):
    node_name = "LinalgInvExBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        xp = array_module(a.array)
        try:  # laid out column-major, as PyTorch's (LAPACK's) result: inv(A^T)^T
            return xp.swapaxes(xp.ascontiguousarray(xp.linalg.inv(xp.swapaxes(a.array, -1, -2))), -1, -2)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
                               "because the input matrix is singular.") from None

    @staticmethod
    def backward(ctx, g):  # d(A^-1) = -A^-1 dA A^-1
        y = ctx._saved_result
        return -(_mT(y) @ g @ _mT(y))


def inverse(input):
    """The inverse of a square matrix (or of each in a batch)."""
    _square("inv", input)
    return Inverse.apply(input)


class Det(Function):
    node_name = "LinalgDetBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(A=a)
        return array_module(a.array).asarray(array_module(a.array).linalg.det(a.array))

    @staticmethod
    def backward(ctx, g):  # d det A = det A tr(A^-1 dA): the gradient det A * A^-T
        a, d = ctx.saved_tensors
        return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inverse(a))


def det(input):
    """The determinant of a square matrix (or of each in a batch)."""
    _square("det", input)
    return Det.apply(input)


class Slogdet(Function):
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(A=a)
        xp = array_module(a.array)
        sign, logabs = xp.linalg.slogdet(a.array)
        sign = xp.asarray(sign)
        ctx.mark_non_differentiable(sign)
        return sign, xp.asarray(logabs)

    @staticmethod
    def backward(ctx, _, g):  # d log|det A| = tr(A^-1 dA): the gradient A^-T
        (a,) = ctx.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * _mT(inverse(a))


def slogdet(input):
    """(sign, log|det|) of a square matrix, the log computed without overflow."""
    _square("slogdet", input)
    sign, logabs = Slogdet.apply(input)
    return slogdet_result(sign, logabs)


def logdet(input):
    """log det, nan for a negative determinant (as PyTorch)."""
    sign, logabs = slogdet(input)
    from .elementwise import where

    return where(sign < 0, float("nan"), where(sign == 0, float("-inf"), logabs))


def solve(A, B, *, left=True):
    """X with A X = B (X A = B when left=False)."""
    _square("solve", A)
    if left:
        if B.array.ndim == 1 or (B.array.ndim == A.array.ndim - 1 and B.array.shape == A.array.shape[:-1]):  # vectors
            return (inverse(A) @ B.unsqueeze(-1)).squeeze(-1)
        return inverse(A) @ B
    return B @ inverse(A)


def matrix_power(input, n):
    """A^n by repeated squaring (n < 0: of the inverse; n == 0: the identity)."""
    _square("matrix_power", input)
    if n == 0:  # as PyTorch: the identity copied into a clone of A, so it keeps A's autograd (a zero gradient)
        from .inplace import copy_
        from .shape import clone

        xp = array_module(input.array)
        eye = Tensor(xp.eye(input.array.shape[-1], dtype=input.array.dtype))
        return copy_(clone(input), eye)
    base = inverse(input) if n < 0 else input
    n = builtins.abs(n)
    out = None
    while n:
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


def pinverse(input, rcond=1e-15):
    """The Moore-Penrose pseudo-inverse: (A^T A)^-1 A^T for full column rank, via numpy otherwise (no gradient)."""
    m, n = input.array.shape[-2:]
    try:
        if m >= n:
            return inverse(_mT(input) @ input) @ _mT(input)
        return _mT(input) @ inverse(input @ _mT(input))
    except RuntimeError:
        return array_op(lambda a: array_module(a).linalg.pinv(a, rcond=rcond), input)




# ---- decompositions: cholesky, qr, eigh, svd; lstsq, matrix_rank ------------------------------------------
qr_result = namedtuple("linalg_qr", ["Q", "R"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
svd_legacy_result = namedtuple("svd", ["U", "S", "V"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _matrix(name, A):
    if A.array.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.array.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy[:-6]}")


def _save_outputs(outs):
    """Keep a decomposition's outputs for its backward as PyTorch does (as outputs of the node, so that
    create_graph differentiates through them too): `_outputs(ctx)` gives them back."""
    from ..autograd.function import SavedTensor

    node = outs[0].grad_fn
    if node is not None:
        node._factors = [SavedTensor(t, is_output=True) for t in outs]
    return outs


def _outputs(ctx):
    outs = []
    for nr, s in enumerate(ctx._factors):
        t = s.unpack(ctx)
        t._output_nr = nr
        outs.append(t)
    return outs


class Cholesky(Function):
    node_name = "LinalgCholeskyExBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        xp = array_module(a.array)
        try:
            return xp.linalg.cholesky(a.array)
        except np.linalg.LinAlgError:
            pass
        flat = a.array.reshape(-1, *a.array.shape[-2:])
        for b, m in enumerate(flat):  # name the batch element and the first leading minor that fails, as LAPACK
            for k in range(1, m.shape[0] + 1):
                try:
                    xp.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    where = f"(Batch element {b}): " if a.array.ndim > 2 else ""
                    raise RuntimeError(f"linalg.cholesky: {where}The factorization could not be completed because the "
                                       f"input is not positive-definite (the leading minor of order {k} is not "
                                       "positive-definite).") from None
        raise RuntimeError("linalg.cholesky: The factorization could not be completed.")

    @staticmethod
    def backward(ctx, gL):  # A = L L^T: gA = sym(L^-T Phi(L^T gL) L^-1), Phi = lower triangle with half the diagonal
        from .movement import diag_embed
        from .movement import diagonal
        from .shape import tril

        L = ctx._saved_result
        P = _mT(L) @ gL
        P = tril(P, -1) + diag_embed(diagonal(P, 0, -2, -1) * 0.5)
        Li = inverse(L)
        S = _mT(Li) @ P @ Li
        return (S + _mT(S)) * 0.5


def cholesky(A, *, upper=False):
    """L (lower triangular) with A = L L^T for a symmetric positive-definite A (only its lower triangle is read);
    upper=True gives L^T."""
    _square("cholesky", A)
    L = Cholesky.apply(A)
    return _mT(L) if upper else L


def cholesky_legacy(input, upper=False):
    """torch.cholesky (deprecated in PyTorch): `upper` positional."""
    return cholesky(input, upper=upper)


class QR(Function):
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode):
        xp = array_module(a.array)
        ctx.mode, (ctx.m, ctx.n) = mode, a.array.shape[-2:]
        if mode == "r":
            r = xp.linalg.qr(a.array, mode="r")
            q = xp.zeros((0,), dtype=a.array.dtype)
        else:
            q, r = xp.linalg.qr(a.array, mode=mode)
        return q, r

    @staticmethod
    def backward(ctx, gQ, gR):
        # A = QR, m >= n: gA = [Q (gR + tril(Q^T gQ - gQ^T Q + R gR^T - gR R^T) R^-T) + (gQ - Q Q^T gQ) R^-T]
        from .shape import tril

        if ctx.mode == "r":
            raise NotImplementedError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                                      "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                                      "through linalg.qr.")
        if ctx.mode == "complete" and ctx.m > ctx.n:
            raise NotImplementedError("The QR decomposition is not differentiable when mode='complete' and "
                                      "nrows > ncols.")
        if ctx.m < ctx.n:
            raise NotImplementedError("minigrad: the backward of linalg.qr is implemented for square and tall "
                                      f"matrices (m >= n) only, not for {ctx.m} by {ctx.n}.")
        Q, R = _outputs(ctx)
        QtgQ = _mT(Q) @ gQ
        RgRt = R @ _mT(gR)
        Rit = _mT(inverse(R))
        M = tril(QtgQ - _mT(QtgQ) + RgRt - _mT(RgRt))
        return Q @ (gR + M @ Rit) + (gQ - Q @ QtgQ) @ Rit


def qr(A, mode="reduced"):
    """(Q, R) with A = QR, Q orthonormal columns and R upper triangular; mode 'reduced', 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    _matrix("qr", A)
    Q, R = _save_outputs(QR.apply(A, mode))
    return qr_result(Q, R)


class Eigh(Function):
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, UPLO):
        w, v = array_module(a.array).linalg.eigh(a.array, UPLO=UPLO)
        return w, v

    @staticmethod
    def backward(ctx, gw, gV):
        # A = V diag(w) V^T: gA = V (diag(gw) + skew(V^T gV) / (w_j - w_i)) V^T, skew(X) = (X - X^T)/2, 0 on i == j
        from .movement import diag_embed
        from .elementwise import where

        w, V = _outputs(ctx)
        E = w.unsqueeze(-2) - w.unsqueeze(-1)  # E[i, j] = w_j - w_i
        off = E != 0
        F = where(off, 1.0 / where(off, E, 1.0), 0.0)
        X = _mT(V) @ gV
        inner = diag_embed(gw) + F * ((X - _mT(X)) * 0.5)
        return V @ inner @ _mT(V)


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix, read from its UPLO triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _square("eigh", A)
    w, V = _save_outputs(Eigh.apply(A, UPLO))
    return eigh_result(w, V)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric matrix."""
    return eigh(A, UPLO).eigenvalues


class SVD(Function):
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = array_module(a.array).linalg.svd(a.array, full_matrices=full_matrices)
        return u, s, vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        # A = U S V^T: gA = U [F*(U^T gU - gU^T U) S + diag(gS) + S F*(V^T gV - gV^T V)] V^T
        #   + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),  F[i, j] = 1 / (s_j^2 - s_i^2), 0 on i == j
        # (full_matrices: only the first k = min(m, n) columns of U and rows of Vh enter A; the rest get none)
        from .movement import diag_embed
        from .elementwise import where

        U, S, Vh = _outputs(ctx)
        k = S.shape[-1]
        U, Vh, gU, gVh = U[..., :, :k], Vh[..., :k, :], gU[..., :, :k], gVh[..., :k, :]
        V, gV = _mT(Vh), _mT(gVh)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
        off = E != 0
        F = where(off, 1.0 / where(off, E, 1.0), 0.0)
        UtgU, VtgV = _mT(U) @ gU, _mT(V) @ gV
        Su, Sr = S.unsqueeze(-2), S.unsqueeze(-1)  # right- and left-multiplying by diag(S)
        inner = F * (UtgU - _mT(UtgU)) * Su + diag_embed(gS) + Sr * (F * (VtgV - _mT(VtgV)))
        out = U @ inner @ Vh
        m, n = U.shape[-2], V.shape[-2]
        if m > k:
            out = out + ((gU - U @ UtgU) / Su) @ Vh
        if n > k:
            out = out + (U / Su) @ (_mT(gV) - _mT(gV) @ V @ Vh)
        return out


def svd(A, full_matrices=True):
    """(U, S, Vh) with A = U diag(S) Vh, singular values descending."""
    _matrix("svd", A)
    U, S, Vh = _save_outputs(SVD.apply(A, full_matrices))
    return svd_result(U, S, Vh)


def svdvals(A):
    """The singular values, descending."""
    _matrix("svdvals", A)
    return _save_outputs(SVD.apply(A, False))[1]


def svd_legacy(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) (V, not Vh); compute_uv=False gives zero-filled U and V of the full shapes."""
    if not compute_uv:
        m, n = input.array.shape[-2:]
        xp = array_module(input.array)
        batch = input.array.shape[:-2]
        S = svdvals(input)
        return svd_legacy_result(Tensor(xp.zeros(batch + (m, m), dtype=input.array.dtype)), S,
                                 Tensor(xp.zeros(batch + (n, n), dtype=input.array.dtype)))
    U, S, Vh = svd(input, full_matrices=not some)
    return svd_legacy_result(U, S, _mT(Vh))


def qr_legacy(input, some=True):
    """torch.qr (deprecated in PyTorch): some=False is mode 'complete'."""
    Q, R = qr(input, "reduced" if some else "complete")
    return namedtuple("qr", ["Q", "R"])(Q, R)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||; the fields filled as PyTorch's CPU drivers
    fill them (gelsy, the default: rank; gelsd/gelss: rank, singular values; residuals when m > n and full rank)."""
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    _matrix("lstsq", A)
    if A.array.dtype != B.array.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {A.dtype._legacy[:-6]} and other's dtype {B.dtype._legacy[:-6]}")
    xp = array_module(A.array)
    vector = B.array.ndim == A.array.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.array.shape[-2:]
    batch = A.array.shape[:-2]
    sv = xp.linalg.svd(A.array, compute_uv=False)
    eps = np.finfo(A.array.dtype).eps
    tol = (eps * builtins.max(m, n) if rcond is None else rcond) * sv[..., :1]
    rank = (sv > tol).sum(-1).astype(np.int64)
    X = pinverse(A) @ Bm  # the pseudo-inverse solution (recorded, so X has a gradient)
    empty = xp.zeros((0,), dtype=A.array.dtype)
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    singular_values = Tensor(sv) if driver in ("gelsd", "gelss") else Tensor(empty)
    rank_t = Tensor(xp.zeros((0,), dtype=np.int64)) if driver == "gels" else Tensor(xp.asarray(rank).reshape(batch))
    return lstsq_result(X.squeeze(-1) if vector else X, residuals if isinstance(residuals, Tensor) else
                        Tensor(residuals), rank_t, singular_values)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * largest) (rtol defaults to eps * max(m, n))."""
    if A.array.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    _matrix("matrix_rank", A)
    xp = array_module(A.array)
    m, n = A.array.shape[-2:]
    s = xp.abs(xp.linalg.eigvalsh(A.array)) if hermitian else xp.linalg.svd(A.array, compute_uv=False)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), dtype=s.dtype)
    if rtol is None:
        rtol = np.finfo(A.array.dtype).eps * builtins.max(m, n) if atol is None or atol == 0 else 0.0
    tol = xp.maximum(0.0 if atol is None else atol, rtol * smax)
    return Tensor((s > tol).sum(-1).astype(np.int64))


class _Linalg:
    """`minigrad.linalg`: PyTorch's torch.linalg names for what minigrad has."""

    inv = staticmethod(inverse)
    det = staticmethod(det)
    slogdet = staticmethod(slogdet)
    solve = staticmethod(solve)
    matrix_power = staticmethod(matrix_power)
    pinv = staticmethod(pinverse)
    cholesky = staticmethod(cholesky)
    qr = staticmethod(qr)
    eigh = staticmethod(eigh)
    eigvalsh = staticmethod(eigvalsh)
    svd = staticmethod(svd)
    svdvals = staticmethod(svdvals)
    lstsq = staticmethod(lstsq)
    matrix_rank = staticmethod(matrix_rank)

    @staticmethod
    def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
        from .reduction import norm

        return norm(x, ord, dim, keepdim, dtype=dtype)

    @staticmethod
    def norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
        from .reduction import norm

        if ord is None or (isinstance(ord, str) and ord == "fro"):
            return norm(x, 2, dim, keepdim, dtype=dtype)
        if isinstance(ord, str) and ord == "nuc" or (x.array.ndim == 2 and dim is None and ord in (2, -2)):
            return _Linalg.matrix_norm(x, ord, keepdim=keepdim)
        if x.array.ndim >= 2 and dim is None and ord in (1, -1, float("inf"), float("-inf")):
            return _Linalg.matrix_norm(x, ord, keepdim=keepdim)
        return norm(x, ord, dim, keepdim, dtype=dtype)

    @staticmethod
    def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False):
        from .elementwise import abs as _abs
        from .reduction import amax, amin, norm

        if ord == "fro":
            return norm(x, 2, dim, keepdim)
        r, c = dim
        if isinstance(ord, str) and ord == "nuc" or ord in (2, -2):  # from the singular values
            from .composite import movedim

            s = svdvals(movedim(x, (r, c), (-2, -1)))
            out = s.sum(-1) if isinstance(ord, str) else (amax if ord == 2 else amin)(s, -1)
            if keepdim:
                for d in sorted((r % x.array.ndim, c % x.array.ndim)):
                    out = out.unsqueeze(d)
            return out
        if ord in (1, -1):
            s = _abs(x).sum(dim=r, keepdim=True)
            out = (amax if ord == 1 else amin)(s, c % x.array.ndim, keepdim=True)
        elif ord in (float("inf"), float("-inf")):
            s = _abs(x).sum(dim=c, keepdim=True)
            out = (amax if ord > 0 else amin)(s, r % x.array.ndim, keepdim=True)
        else:
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        return out if keepdim else out.squeeze(builtins.max(r % x.array.ndim, c % x.array.ndim)).squeeze(
            builtins.min(r % x.array.ndim, c % x.array.ndim))

    @staticmethod
    def cross(input, other, *, dim=-1):
        from .composite import cross

        return cross(input, other, dim)

    @staticmethod
    def vecdot(x, y, *, dim=-1):
        return (x * y).sum(dim)

    @staticmethod
    def matmul(input, other):
        return input @ other

    @staticmethod
    def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
        from .movement import diagonal

        return diagonal(A, offset, dim1, dim2)


linalg = _Linalg()
