"""A little linear algebra: inverse, det, slogdet/logdet, solve, matrix_power, pinverse, the decompositions
(cholesky, qr, eigh, svd, lu_factor), the solves built on them (solve_triangular, cholesky_solve, lu_solve, ...),
multi_dot, cond, tensorsolve/tensorinv, the randomized svd_lowrank/pca_lowrank, and matrix_norm (their PyTorch
names are minigrad/linalg.py's). Batched over leading dims; backward written in tensor ops, so second derivatives work."""
import builtins

import numpy as np

from ..autograd.composite import composite_node
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..device import array_module
from ..dtypes import cpp_name, float16, float32, float64
from . import reduction
from .._warn_once import warn_once
from ._util import return_type
from .array_op import array_op
from ..tensor import Tensor, int_argument

slogdet_result = return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet_result = return_type("linalg_slogdet", ("sign", "logabsdet"))

def _deprecated(name, text):
    """PyTorch's deprecation warning of `name`, once a process (as its C++ side says it)."""
    warn_once(name, text)


class LinAlgError(RuntimeError):
    """A linear algebra routine found its input singular or not positive-definite (torch.linalg.LinAlgError)."""


def _square(name, A, floating=True, prefix="linalg."):
    if A.array.ndim < 2:
        raise RuntimeError(f"{prefix}{name}: The input tensor A must have at least 2 dimensions.")
    if A.array.shape[-1] != A.array.shape[-2]:
        raise RuntimeError(f"{prefix}{name}: A must be batches of square matrices, but they are "
                           f"{A.array.shape[-2]} by {A.array.shape[-1]} matrices")
    if floating and A.array.dtype.kind not in "fc":
        raise RuntimeError(f"{prefix}{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy[:-6]}")


def _mT(t):
    return t.transpose(-2, -1)


def _mH(t):  # the adjoint (conjugate transpose): _mT for a real t
    return t.mH if t.array.dtype.kind == "c" else _mT(t)


def _conj(t):
    return t.conj() if t.array.dtype.kind == "c" else t


def _check_phase(name, vectors, im_diag, other=None):
    """PyTorch's refusal of a loss that depends on the free phase e^{i phi} of complex singular/eigen vectors:
    the imaginary diagonal of V^H gV (for svd: of U^H gU against -that of V^H gV) must vanish."""
    xp = array_module(im_diag)
    if not xp.allclose(im_diag, 0 if other is None else -other, rtol=1e-2, atol=1e-2):
        what = "this quantity, so it is ill-defined" if other is None else "this phase term, making it ill-defined"
        raise RuntimeError(f"{name}: The {vectors} in the complex case are specified up to multiplication by e^{{i phi}}. "
                           f"The specified loss function depends on {what}.")


class Inverse(Function):
    node_name = "LinalgInvExBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        xp = array_module(a.array)
        try:  # laid out column-major, as PyTorch's (LAPACK's) result: inv(A^T)^T
            return xp.swapaxes(xp.ascontiguousarray(xp.linalg.inv(xp.swapaxes(a.array, -1, -2))), -1, -2)
        except np.linalg.LinAlgError:
            info = _lu_packed(a.array)[2]  # (the first zero pivot of LU, as LAPACK's getrf names it)
            b, k = _first_failure(info)
            raise LinAlgError(f"linalg.inv: {_batch_where(info, b)}The diagonal element {k} is zero, the inversion "
                              "could not be completed because the input matrix is singular.") from None

    @staticmethod
    def backward(ctx, g):  # d(A^-1) = -A^-1 dA A^-1
        y = ctx._saved_result
        return -(_mH(y) @ g @ _mH(y))


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
    def backward(ctx, g):  # d det A = det A tr(A^-1 dA): the gradient g conj(det A) A^-H
        a, d = ctx.saved_tensors
        return (g * _conj(d)).unsqueeze(-1).unsqueeze(-1) * _mH(inverse(a))


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
        # sign is an output of the node as in PyTorch (its grad_fn shown), but locally constant: a gradient
        # reaching it alone gives A none, so grads stay unmaterialized to tell that case apart
        ctx.set_materialize_grads(False)
        return xp.asarray(sign), xp.asarray(logabs)

    @staticmethod
    def backward(ctx, gsign, g):
        # d log|det A| = re tr(A^-1 dA), d sign = i sign im tr(A^-1 dA): the gradient (g + i im(gsign conj(sign))) A^-H
        # (a real sign is locally constant: its gradient gives A none)
        (a,) = ctx.saved_tensors
        if a.array.dtype.kind == "c" and gsign is not None:
            d = det(a)  # (sign recomputed in tensor ops, so that a second derivative sees it depend on A)
            im = (gsign * (d / d.abs()).conj()).imag
            g = im * 1j if g is None else g + im * 1j
        if g is None:
            return None
        return g.unsqueeze(-1).unsqueeze(-1) * _mH(inverse(a))


def slogdet(input):
    """(sign, log|det|) of a square matrix, the log computed without overflow."""
    _square("slogdet", input)
    sign, logabs = Slogdet.apply(input)
    return slogdet_result(sign, logabs)


def linalg_slogdet(A):
    """torch.linalg.slogdet: slogdet's pair, named as PyTorch names that function's (linalg_slogdet)."""
    return linalg_slogdet_result(*slogdet(A))


def logdet(input):
    """log det, nan for a negative determinant (as PyTorch); complex: log|det| + i arg(det)."""
    if input.array.dtype.kind not in "fc":
        raise RuntimeError(f"logdet: Expected a floating point or complex tensor as input. Got {_legacy_name(input)}")
    _square("logdet", input, prefix="")  # (torch.logdet's own name in its texts)
    sign, logabs = slogdet(input)
    from .elementwise import where

    if input.array.dtype.kind == "c":
        from .elementwise import log

        return log(sign) + logabs
    return where(sign == -1, float("nan"), logabs)  # (a zero determinant: slogdet's logabs is -inf already)


@composite_node("LinalgSolveExBackward0")
def solve(A, B, *, left=True):
    """X with A X = B (X A = B when left=False)."""
    _square("solve", A)
    if A.array.dtype != B.array.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_legacy_name(A)} and B of type {_legacy_name(B)} instead")
    vector = B.array.ndim == 1 or (B.array.ndim == A.array.ndim - 1 and B.array.shape == A.array.shape[:-1])
    n, rows = A.array.shape[-1], (B.array.shape[-1] if vector else B.array.shape[-2] if left else B.array.shape[-1])
    if rows != n:
        shape_b = f"{B.array.shape[-1]}x1" if vector else f"{B.array.shape[-2]}x{B.array.shape[-1]}"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({n}x{n} and {shape_b})")
    try:
        A_inv = inverse(A)
    except LinAlgError:  # (inverse's error names linalg.inv: the solver's own text instead, as PyTorch's)
        _singular_solve("torch.linalg.solve", A)
    if left:
        if vector:
            return (A_inv @ B.unsqueeze(-1)).squeeze(-1)
        return A_inv @ B
    return B @ A_inv


def matrix_power(input, n):
    return _matrix_power(input, int_argument(n, "matrix_power", "'n' (position 2)"))


def linalg_matrix_power(A, n):
    return _matrix_power(A, int_argument(n, "linalg_matrix_power", "'n' (position 2)"))


def _matrix_power(input, n):
    """A^n by repeated squaring (n < 0: of the inverse; n == 0: the identity). Integer matrices too, as PyTorch's
    (a negative power meets the inverse's refusal of them)."""
    _square("matrix_power", input, floating=False)
    if n == 0:  # as PyTorch: the identity copied into a clone of A, so it keeps A's autograd (a zero gradient)
        from .inplace import copy_
        from .shape import clone

        xp = array_module(input.array)
        eye = Tensor._wrap(xp.eye(input.array.shape[-1], dtype=input.array.dtype))
        return copy_(clone(input), eye)
    if n == 3:  # PyTorch's order for a cube: (A A) A
        return (input @ input) @ input
    base = inverse(input) if n < 0 else input
    n = builtins.abs(n)
    out = None
    while n:
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    if out is input:  # A^1 is a new tensor, as PyTorch's (writing to it leaves A alone)
        from .shape import clone

        return clone(input)
    return out


class Pinv(Function):
    node_name = "LinalgPinvBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        """Singular values (|eigenvalues| when hermitian, from A's lower triangle) at or below
        max(atol, rtol * the largest) count as zero; atol / rtol broadcast against A's batch."""
        ctx.save(A=a)
        xp = array_module(a.array)
        if hermitian:
            w, V = xp.linalg.eigh(a.array, UPLO="L")
            S, left, right = xp.abs(w), V * xp.sign(w)[..., None, :], V
        else:
            U, S, Vh = xp.linalg.svd(a.array, full_matrices=False)
            left, right = U, xp.conj(xp.swapaxes(Vh, -1, -2))
        tol = xp.maximum(atol[..., None], rtol[..., None] * S.max(-1, keepdims=True, initial=0.0))
        kept = S > tol
        inv = xp.where(kept, 1 / xp.where(kept, S, 1), 0).astype(S.dtype)
        return (right * inv[..., None, :]) @ xp.conj(xp.swapaxes(left, -1, -2))

    @staticmethod
    def backward(ctx, g):
        # X = A+: dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X, whose adjoint is below
        a, x = ctx.saved_tensors
        xh, gh = _mH(x), _mH(g)
        return -(xh @ g @ xh) + (gh - a @ (x @ gh)) @ (x @ xh) + (xh @ x) @ (gh - (gh @ x) @ a)


def pinverse(input, rcond=1e-15):
    """The Moore-Penrose pseudo-inverse, singular values up to rcond times the largest counting as zero."""
    return linalg_pinv(input, rcond)


def _tolerance(value, A):
    if value is None or isinstance(value, Tensor):
        return value
    return Tensor._wrap(array_module(A.array).asarray(value, dtype=np.float64))


def _number(v):
    # (PyTorch's argument parser takes numpy's scalars as numbers too, np.float32 from finfo(...).eps included)
    return v is None or isinstance(v, (Tensor, np.integer, np.floating)) or (isinstance(v, (int, float))
                                                                              and not isinstance(v, bool))


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.pinv: rtol defaults to eps * max(m, n), or to 0 when only atol is given; the older
    positional rcond is an rtol with atol 0. Its gradient is that of the pseudo-inverse of A itself, as PyTorch's,
    even where small singular values were cut."""
    if (rcond is not None and (atol is not None or rtol is not None)) or not all(map(_number, (rcond, atol, rtol))):
        given = ", ".join(["Tensor"] + ([] if rcond is None else [_arg_type(rcond)]) +
                          [f"{k}={_arg_type(v)}" for k, v in (("atol", atol), ("rtol", rtol)) if v is not None])
        raise TypeError(f"linalg_pinv() received an invalid combination of arguments - got ({given}), but expected one of:")
    if A.array.ndim < 2 or A.array.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.pinv({_legacy_name(A)}{{{list(A.array.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        atol, rtol = 0.0, rcond
    atol, rtol = _tolerance(atol, A), _tolerance(rtol, A)
    m, n = A.array.shape[-2:]
    xp = array_module(A.array)
    if rtol is None:
        rtol = Tensor._wrap(xp.asarray(0.0 if atol is not None else np.finfo(A.array.dtype).eps * builtins.max(m, n)))
    atol = Tensor._wrap(xp.asarray(0.0)) if atol is None else atol
    batch = np.broadcast_shapes(A.array.shape[:-2], atol.array.shape, rtol.array.shape)
    if batch != A.array.shape[:-2]:  # (a batch of tolerances: one pseudo-inverse of A for each)
        A = A.expand(batch + (m, n))
    return Pinv.apply(A, atol.array.real.astype(np.float64), rtol.array.real.astype(np.float64), hermitian)


def _arg_type(v):
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


# ---- decompositions: cholesky, qr, eigh, svd; lstsq, matrix_rank ------------------------------------------
qr_result = return_type("linalg_qr", ("Q", "R"))
qr_legacy_result = return_type("qr", ("Q", "R"))
eigh_result = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
eig_result = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
svd_result = return_type("linalg_svd", ("U", "S", "Vh"))
svd_legacy_result = return_type("svd", ("U", "S", "V"))
lstsq_result = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _matrix(name, A):
    if A.array.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.array.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy[:-6]}")


def _save_outputs(outs):
    """Keep a decomposition's outputs for its backward as PyTorch does (as outputs of the node, so that
    create_graph differentiates through them too): `_outputs(ctx)` gives them back."""
    node = outs[0].grad_fn
    if node is not None:
        node._forward_cls.keep_state(node, None, outs)
    return outs


def _keep_outputs(node, inputs, outputs):  # (keep_state of the decompositions: their outputs, see _save_outputs)
    from ..autograd.function import SavedTensor

    node._factors = [SavedTensor(t, is_output=True) for t in outputs]


def _outputs(ctx):
    outs = []
    for nr, s in enumerate(ctx._factors):
        t = s.unpack(ctx)
        t._output_nr = nr
        outs.append(t)
    return outs


def _batch_where(info, b):
    return f"(Batch element {b}): " if info.ndim else ""


def _first_failure(info):
    """(index in the flattened batch, info) of the first matrix whose info is nonzero, or None."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    return (int(bad[0]), int(flat[bad[0]])) if bad.size else None


def _try_cholesky(a):
    """numpy's Cholesky factor, or None where a pivot fails: not positive, or NaN (numpy lets NaN through, LAPACK's
    potrf stops there)."""
    try:
        L = array_module(a).linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return None
    return None if np.isnan(L.diagonal(0, -2, -1)).any() else L


def _cholesky_info(a):
    """The order of the first leading minor of each matrix that is not positive-definite (0: none), as LAPACK."""
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    if _try_cholesky(a) is not None:
        return info
    flat = info.reshape(-1)
    for b, m in enumerate(a.reshape(-1, *a.shape[-2:])):
        flat[b] = next((k for k in range(1, m.shape[0] + 1) if _try_cholesky(m[:k, :k]) is None), 0)
    return info


def _partial_cholesky(m, k):
    """What LAPACK's potrf leaves of a lower factor whose leading minor of order k failed: the first k - 1 columns
    of L, the failing pivot's a_jj - |L[j, :j]|^2 on the diagonal, the rest of the lower triangle as read."""
    xp = array_module(m)
    j = k - 1
    L = xp.tril(m).copy()
    if j:
        lead = xp.linalg.cholesky(m[:j, :j])
        L[:j, :j] = lead
        L[j:, :j] = xp.linalg.solve(lead, m[j:, :j].conj().T).conj().T  # rows below: A[i, :j] L_lead^-H
    L[j, j] = m[j, j].real - (L[j, :j].conj() @ L[j, :j]).real
    return L


def _lower_factor(a, ex):
    """Cholesky's L of each lower triangle; with ex, a failed matrix gets LAPACK's partial factor, not an error."""
    xp = array_module(a)
    L = _try_cholesky(a)
    if L is not None:
        return L
    info = _cholesky_info(a)
    failed = _first_failure(info)
    if not ex:
        if failed is None:
            raise LinAlgError("linalg.cholesky: The factorization could not be completed.")
        b, k = failed
        raise LinAlgError(f"linalg.cholesky: {_batch_where(a[..., 0, 0], b)}The factorization could not be completed "
                          "because the input is not positive-definite (the leading minor of order "
                          f"{k} is not positive-definite).")
    out = xp.empty_like(a).reshape(-1, *a.shape[-2:])
    for b, (m, k) in enumerate(zip(a.reshape(-1, *a.shape[-2:]), info.reshape(-1))):
        out[b] = _partial_cholesky(m, k) if k else xp.linalg.cholesky(m)
    return out.reshape(a.shape)


class Cholesky(Function):
    node_name = "LinalgCholeskyExBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, upper=False, ex=False):
        ctx.upper = upper
        if not upper:
            return _lower_factor(a.array, ex)
        return _lower_factor(a.array.swapaxes(-1, -2).conj(), ex).swapaxes(-1, -2).conj()  # U = L^H, read above

    @staticmethod
    def backward(ctx, gL):  # A = L L^H: gA = L^-H (X + tril(X, -1)^H) L^-1 / 2, X = tril(L^H gL) (PyTorch's form)
        from .shape import tril

        L = ctx._saved_result
        if ctx.upper:  # A = U^H U: the same with L = U^H
            L, gL = _mH(L), _mH(gL)
        X = tril(_mH(L) @ gL)
        Li = inverse(L)
        return _mH(Li) @ ((X + _mH(tril(X, -1))) * 0.5) @ Li


def cholesky(A, *, upper=False):
    """L (lower triangular) with A = L L^T for a symmetric positive-definite A (only its lower triangle is read);
    upper=True gives U = L^T, read from A's upper triangle."""
    if not isinstance(upper, builtins.bool):
        raise TypeError(f"linalg_cholesky(): argument 'upper' must be bool, not {type(upper).__name__}")
    _square("cholesky", A)
    return Cholesky.apply(A, upper)


def cholesky_legacy(input, upper=False):
    """torch.cholesky (deprecated in PyTorch): `upper` positional."""
    _deprecated("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)"
                "\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
    _square("cholesky", input)
    return CholeskyLegacy.apply(input, upper)


class CholeskyLegacy(Cholesky):  # torch.cholesky's node: the same work under its older name
    node_name = "CholeskyBackward0"


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
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        if ctx.mode == "complete" and ctx.m > ctx.n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        Q, R = _outputs(ctx)
        if ctx.m >= ctx.n:
            return _qr_backward_tall(Q, R, gQ, gR)
        # m < n: A = [X | Y], R = [U | V] with X = QU square, Y = QV; Y's part reaches Q through gQ + Y gV^T
        m = ctx.m
        A = Q @ R
        gV = gR[..., m:]
        gX = _qr_backward_tall(Q, R[..., :m], gQ + A[..., m:] @ _mH(gV), gR[..., :m])
        from .shape import cat

        return cat([gX, Q @ gV], -1)


def _qr_backward_tall(Q, R, gQ, gR):
    # A = QR, m >= n: gA = Q (gR + M R^-H) + (gQ - Q Q^H gQ) R^-H, M = tril(G - G^H) with half its diagonal,
    # G = Q^H gQ - gR R^H (the diagonal, 2i im diag G, is nonzero only for complex A, whose R has a real diagonal)
    from .movement import diag_embed, diagonal
    from .shape import tril

    QhgQ = _mH(Q) @ gQ
    G = QhgQ - gR @ _mH(R)
    Rih = _mH(inverse(R))
    M = tril(G - _mH(G), -1)
    if G.array.dtype.kind == "c":
        M = M + diag_embed(diagonal(G, 0, -2, -1).imag * 1j)
    return Q @ (gR + M @ Rih) + (gQ - Q @ QhgQ) @ Rih


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
        # A = V diag(w) V^H: gA = V (diag(gw) + skew(V^H gV) / (w_j - w_i)) V^H, skew(X) = (X - X^H)/2, 0 on i == j
        from .movement import diag_embed
        from .elementwise import where

        w, V = _outputs(ctx)
        E = w.unsqueeze(-2) - w.unsqueeze(-1)  # E[i, j] = w_j - w_i
        off = E != 0
        F = where(off, 1.0 / where(off, E, 1.0), 0.0)
        X = _mH(V) @ gV
        if X.array.dtype.kind == "c":
            _check_phase("linalg_eigh_backward", "eigenvectors", X.array.diagonal(0, -2, -1).imag)
        inner = diag_embed(gw) + F * ((X - _mH(X)) * 0.5)
        return V @ inner @ _mH(V)


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix, read from its UPLO triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _kernel_dtype("linalg_eigh_cpu", A)
    _square("eigh", A)
    w, V = _save_outputs(Eigh.apply(A, UPLO))
    return eigh_result(w, V)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric matrix."""
    return eigh(A, UPLO).eigenvalues


class Eig(Function):
    node_name = "LinalgEigBackward0"

    @staticmethod
    def forward(ctx, a):  # complex results whatever A's dtype (numpy's are real when every eigenvalue is)
        kind = np.complex64 if a.array.dtype in (np.float32, np.complex64) else np.complex128
        w, v = array_module(a.array).linalg.eig(a.array)
        ctx.real_input = a.array.dtype.kind == "f"
        return w.astype(kind), v.astype(kind)

    @staticmethod
    def backward(ctx, gL, gV):
        # A = V diag(L) V^-1: gA = V^-H (diag(gL) + off-diag[(V^H gV - V^H V diag(re diag(V^H gV))) / E*]) V^H,
        # E[i, j] = L_j - L_i; real input takes the real part
        w, V = (t.array for t in _outputs(ctx))
        xp = array_module(V)
        Vh = xp.conj(xp.swapaxes(V, -1, -2))
        n = w.shape[-1]
        inner = xp.zeros(V.shape, dtype=V.dtype)
        if gV is not None:
            VhgV = Vh @ gV.array
            d = xp.diagonal(VhgV, axis1=-2, axis2=-1)
            _check_phase("linalg_eig_backward", "eigenvectors", d.imag)
            E = xp.conj(w[..., None, :] - w[..., :, None])
            E[..., xp.arange(n), xp.arange(n)] = 1
            inner = (VhgV - (Vh @ V) * d.real[..., None, :]) / E
        inner[..., xp.arange(n), xp.arange(n)] = 0 if gL is None else gL.array
        gA = xp.linalg.solve(Vh, inner @ Vh)
        return Tensor._wrap(gA.real.copy() if ctx.real_input else gA)


def eig(A):
    """(eigenvalues, eigenvectors as unit columns) of a square matrix, complex whatever its dtype."""
    if A.array.dtype.kind in "iub":
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype._legacy[:-6]}")
    _square("eig", A if A.array.dtype.kind != "c" else A.real)  # (the shape checks; complex is taken here)
    L, V = _save_outputs(Eig.apply(A))
    return eig_result(L, V)


def eigvals(A):
    """The eigenvalues of a square matrix (complex)."""
    if A.array.dtype.kind not in "iub":  # (integers meet eig's refusal first, as in PyTorch)
        _square("eigvals", A if A.array.dtype.kind != "c" else A.real)
    return eig(A).eigenvalues


class SVD(Function):
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = array_module(a.array).linalg.svd(a.array, full_matrices=full_matrices)
        return u, s, vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        # A = U S V^H: gA = U [F*(U^H gU - gU^H U) S + diag(gS) + S F*(V^H gV - gV^H V)] V^H
        #   + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H),  F[i, j] = 1 / (s_j^2 - s_i^2), 0 on i == j;
        #   complex A adds i im diag(U^H gU) / S to the diagonal (the phases of U and V tied, as PyTorch's)
        # (full_matrices: only the first k = min(m, n) columns of U and rows of Vh enter A; the rest get none)
        from .movement import diag_embed, diagonal
        from .elementwise import where

        U, S, Vh = _outputs(ctx)
        k = S.shape[-1]
        U, Vh, gU, gVh = U[..., :, :k], Vh[..., :k, :], gU[..., :, :k], gVh[..., :k, :]
        V, gV = _mH(Vh), _mH(gVh)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
        off = E != 0
        F = where(off, 1.0 / where(off, E, 1.0), 0.0)
        UtgU, VtgV = _mH(U) @ gU, _mH(V) @ gV
        Su, Sr = S.unsqueeze(-2), S.unsqueeze(-1)  # right- and left-multiplying by diag(S)
        inner = F * (UtgU - _mH(UtgU)) * Su + diag_embed(gS) + Sr * (F * (VtgV - _mH(VtgV)))
        if U.array.dtype.kind == "c":
            im_u = diagonal(UtgU, 0, -2, -1).imag
            _check_phase("svd_backward", "singular vectors", im_u.array, diagonal(VtgV, 0, -2, -1).imag.array)
            inner = inner + diag_embed(im_u / S * 1j)
        out = U @ inner @ Vh
        m, n = U.shape[-2], V.shape[-2]
        if m > k:
            out = out + ((gU - U @ UtgU) / Su) @ Vh
        if n > k:
            out = out + (U / Su) @ (gVh - gVh @ V @ Vh)
        return out


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, singular values descending. (`driver`: cuSOLVER's algorithm, on a GPU.)"""
    _matrix("svd", A)
    if driver is not None:
        _svd_driver("linalg_svd", A, driver)
    U, S, Vh = _save_outputs(SVD.apply(A, full_matrices))
    return svd_result(U, S, Vh)


def svdvals(A, *, driver=None):
    """The singular values, descending."""
    _matrix("svd", A)
    if driver is not None:
        _svd_driver("linalg_svdvals", A, driver)
    return _save_outputs(SVD.apply(A, False))[1]


def _svd_driver(name, A, driver):
    """PyTorch's checks of svd's `driver=`: a name, and only for a GPU input (one LAPACK routine on the CPU)."""
    if not isinstance(driver, str):
        raise TypeError(f"{name}(): argument 'driver' must be str, not {type(driver).__name__}")
    if type(A.array) is np.ndarray:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def svd_legacy(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) (V, not Vh); compute_uv=False gives zero-filled U and V of the full shapes."""
    if not compute_uv:
        m, n = input.array.shape[-2:]
        xp = array_module(input.array)
        batch = input.array.shape[:-2]
        S = svdvals(input)
        return svd_legacy_result(Tensor._wrap(xp.zeros(batch + (m, m), dtype=input.array.dtype)), S,
                                 Tensor._wrap(xp.zeros(batch + (n, n), dtype=input.array.dtype)))
    U, S, Vh = svd(input, full_matrices=not some)
    return svd_legacy_result(U, S, _mH(Vh))


def _approximate_basis(A, q, niter, M):
    """Q with orthonormal columns whose span nearly holds the range of A - M: a random sketch A R refined by
    `niter` power (subspace) iterations, re-orthonormalised by QR at each pass (Halko, Martinsson, Tropp 2009)."""
    from ..factory import randn  # (the factory sits above ops)
    # float32 for any other input (integers, bfloat16), as PyTorch's: the matmul then names the mismatch
    dtype = A.dtype if A.dtype in (float16, float32, float64) or A.dtype.is_complex else float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A @ R if M is None else A @ R - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # sketch the taller of A and A^H: the basis then spans the smaller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, 6 if q is None else q, 2 if niter is None else niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M  # A - M ~ Q B, so svd(B) gives A's leading triplets
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V), a randomized rank-q approximation A - M ~ U diag(S) V^H; differentiable, as it is built of
    matmul, qr and svd. Its random draws are minigrad's, so it matches PyTorch's up to the subspace found."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """svd_lowrank of A with each column's mean taken off (center=True): V's columns are the principal directions,
    S**2 / (m - 1) the variances along them."""
    m, n = A.shape[-2:]
    if q is None:
        q = builtins.min(6, m, n)
    elif not (q >= 0 and q <= builtins.min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={builtins.min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)


def qr_legacy(input, some=True):
    """torch.qr (deprecated in PyTorch): some=False is mode 'complete'."""
    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
                "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    Q, R = qr(input, "reduced" if some else "complete")
    return qr_legacy_result(Q, R)


@composite_node("LinalgLstsqBackward0")
def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||; the fields filled as PyTorch's CPU drivers
    fill them (gelsy, the default: rank; gelsd/gelss: rank, singular values; residuals when m > n and full rank)."""
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.array.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.array.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.array.dtype != B.array.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {A.dtype._legacy[:-6]} and other's dtype {B.dtype._legacy[:-6]}")
    if A.array.dtype.kind not in "fc" or A.array.dtype == np.float16:  # (LAPACK's single and double kinds only)
        raise RuntimeError("This function doesn't handle types other than float and double")
    xp = array_module(A.array)
    if not 0 <= A.array.ndim - B.array.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = B.array.ndim == A.array.ndim - 1  # a (batch of) vector(s) b, solved as one column
    if (B.array.shape[-1] if vector else B.array.shape[-2]) != A.array.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.array.shape[-2:]
    batch = A.array.shape[:-2]
    sv = xp.linalg.svd(A.array, compute_uv=False)
    eps = np.finfo(A.array.dtype).eps
    rtol = float(eps * builtins.max(m, n)) if rcond is None else rcond
    rank = (sv > rtol * sv[..., :1]).sum(-1).astype(np.int64)
    if driver != "gels" and bool((rank < builtins.min(m, n)).any()):
        # rank-deficient: the SVD drivers' minimum-norm solution, small singular values dropped (gelsy's pivoted
        # basic solution is another X with the same fit A X)
        X = linalg_pinv(A, rtol=rtol) @ Bm
    else:
        X = pinverse(A) @ Bm  # the pseudo-inverse solution (recorded, so X has a gradient)
    empty = xp.zeros((0,), dtype=sv.dtype)  # (residuals and singular values are real, as |.|)
    # (none, yet an output of the node as PyTorch's empty residuals are: differentiable, no gradient to A or B)
    residuals = Tensor._wrap(empty.copy()).requires_grad_(state.grad_enabled and (A._requires_grad or B._requires_grad))
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((A @ X - Bm).abs() ** 2).sum(-2)  # (a vector b keeps its column: PyTorch's (..., 1))
    singular_values = Tensor._wrap(sv) if driver in ("gelsd", "gelss") else Tensor._wrap(empty)
    rank_t = Tensor._wrap(xp.zeros((0,), dtype=np.int64)) if driver == "gels" else Tensor._wrap(xp.asarray(rank).reshape(batch))
    return lstsq_result(X.squeeze(-1) if vector else X, residuals, rank_t, singular_values)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * largest) (rtol defaults to eps * max(m, n))."""
    if A.array.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.array.dtype.kind not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = A.array.shape[-2:]
    if rtol is None:
        rtol = np.finfo(A.array.dtype).eps * builtins.max(m, n) if atol is None or atol == 0 else 0.0

    def rank(a):  # (an op of A's array: a minigrad.compile replay counts each call's singular values)
        xp = array_module(a)
        s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
        smax = s.max(-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), dtype=s.dtype)
        tol = xp.maximum(0.0 if atol is None else atol, rtol * smax)
        return (s > tol).sum(-1).astype(np.int64)

    return array_op(rank, A)


# ---- triangular and factored solves: solve_triangular, cholesky_solve/inverse, lu_factor/lu_solve ---------
# (composed of inverse, tril/triu and matmul, so their gradients need no backward of their own;
# lu_factor's backward is written below its forward)
triangular_solve_result = return_type("triangular_solve", ("solution", "cloned_coefficient"))
lu_factor_result = return_type("linalg_lu_factor", ("LU", "pivots"))
lu_factor_ex_result = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
lu_result = return_type("linalg_lu", ("P", "L", "U"))
lu_unpack_result = return_type("lu_unpack", ("P", "L", "U"))


def _legacy_name(t):
    return t.dtype._legacy[:-6]


def _kernel_dtype(kernel, *ts):
    """PyTorch's error for a LAPACK kernel called on an integer (or bool) tensor."""
    for t in ts:
        if t.array.dtype.kind not in "fc":
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy_name(t)}\'')


def _eye_like(t, n):
    return Tensor._wrap(array_module(t.array).eye(n, dtype=t.array.dtype))


def _triangle(A, upper, unitriangular=False):
    """The triangle of A that a triangular solve reads (its diagonal taken as ones when unitriangular)."""
    from .shape import tril, triu

    if unitriangular:
        return (triu(A, 1) if upper else tril(A, -1)) + _eye_like(A, A.array.shape[-1])
    return triu(A) if upper else tril(A)


def _read_triangle(L, upper):
    """L's triangle as the value, with the gradient of every entry of L, as PyTorch's cholesky_solve and
    cholesky_inverse: they read one triangle but differentiate as if the whole matrix were the factor."""
    from .shape import tril, triu

    T = triu(L) if upper else tril(L)
    if bool((T.array == L.array).all()):
        return L
    return L + (T - L).detach()


@composite_node("LinalgSolveTriangularBackward0")
def solve_triangular(input, B, *, upper=None, left=True, unitriangular=False):
    """X with A X = B (X A = B when left=False) for a triangular A (only the triangle named by `upper` is read;
    its diagonal taken as ones when unitriangular). Batched and broadcast over leading dims."""
    if upper is None:  # (required, as PyTorch's: its text, not Python's keyword-only one)
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    A = input
    if A.array.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 dimensions.")
    if B.array.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    n, n2 = A.array.shape[-2:]
    if n != n2:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are {n} by {n2} "
                           "matrices")
    if (B.array.shape[-2] if left else B.array.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{B.array.shape[-2]}x{B.array.shape[-1]})")
    _kernel_dtype("triangular_solve_cpu", A, B)
    Ti = inverse(_triangle(A, upper, unitriangular))
    return Ti @ B if left else B @ Ti


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated in PyTorch): (X with op(A) X = b, a copy of A), op(A) = A^T when
    transpose; A's batch dims broadcast with b's."""
    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
                "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
                "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be "
                "replaced with\nX = torch.linalg.solve_triangular(A, B).")
    return _triangular_solve(input, A, upper, transpose, unitriangular)


@composite_node("TriangularSolveBackward0")
def _triangular_solve(input, A, upper, transpose, unitriangular):
    b = input
    if b.array.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{b.array.ndim} dimensions instead")
    if A.array.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.array.ndim} dimensions instead")
    m, n = A.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    if b.array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {b.array.shape[-2]} by {b.array.shape[-1]}")
    _kernel_dtype("triangular_solve_cpu", b, A)
    from .shape import clone

    T = _triangle(A, upper, unitriangular)
    X = inverse(_mT(T) if transpose else T) @ b
    batch = X.array.shape[:-2]
    return triangular_solve_result(X, clone(A.expand(*batch, n, n)) if A.array.shape[:-2] != batch else clone(A))


def _cholesky_checks(name, A, kernel):
    if A.array.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices")
    _kernel_dtype(kernel, A)


@composite_node("CholeskySolveBackward0")
def cholesky_solve(input, input2, upper=False):
    """X with A X = B, given B (`input`) and A's Cholesky factor L (`input2`; A = L L^T, or U^T U when upper).
    Batched and broadcast over leading dims."""
    B, L = input, input2
    if B.array.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.array.ndim} dimensions instead")
    if L.array.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.array.ndim} dimensions instead")
    if B.array.dtype != L.array.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_legacy_name(B)} and A of "
                           f"type {_legacy_name(L)} instead.")
    m, n = L.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"cholesky_solve: A must be batches of square matrices, but they are {m} by {n} matrices")
    if B.array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {B.array.shape[-2]} by {B.array.shape[-1]}")
    _kernel_dtype("cholesky_solve_cpu", B)
    Li = inverse(_read_triangle(L, upper))
    if upper:  # A = U^T U: X = U^-1 U^-T B
        return Li @ (_mH(Li) @ B)
    return _mH(Li) @ (Li @ B)  # A = L L^T: X = L^-T L^-1 B


@composite_node("CholeskyInverseBackward0")
def cholesky_inverse(input, upper=False):
    """A^-1 from A's Cholesky factor L (A = L L^T, or U^T U when upper). Batched."""
    _cholesky_checks("cholesky_inverse", input, "cholesky_inverse_out_cpu")
    Li = inverse(_read_triangle(input, upper))
    return Li @ _mH(Li) if upper else _mH(Li) @ Li


def _lu_packed(a):
    """LU with partial pivoting of each matrix in a batch (LAPACK's getrf): (LU packed as one matrix, the 1-based
    int32 row swaps, info = the 1-based index of the first zero pivot, 0 when none)."""
    xp = array_module(a)
    *batch, m, n = a.shape
    k = builtins.min(m, n)
    lu = a.reshape(_prod(batch), m, n).copy()
    rows = xp.arange(lu.shape[0])
    piv = xp.empty((lu.shape[0], k), dtype=np.int32)
    # the pivot is the largest |re| + |im| (LAPACK's i?amax), the modulus only for a real A
    size = (lambda c: xp.abs(c.real) + xp.abs(c.imag)) if a.dtype.kind == "c" else xp.abs
    for j in range(k):
        p = j + xp.argmax(size(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        d = lu[:, j, j]
        lu[:, j + 1:, j] /= xp.where(d == 0, 1, d)[:, None]  # (a zero pivot: the column below is zero too)
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, None, j, j + 1:]
    zero = lu[:, xp.arange(k), xp.arange(k)] == 0
    info = xp.where(zero.any(-1), xp.argmax(zero, -1) + 1, 0).astype(np.int32) if k else \
        xp.zeros(lu.shape[0], dtype=np.int32)
    return lu.reshape(a.shape), piv.reshape(*batch, k), info.reshape(batch)


def _permutation(pivots, m, dtype):
    """The permutation matrices P (batch, m, m) of LAPACK's row swaps: A = P L U."""
    xp = array_module(pivots)
    flat = pivots.reshape(_prod(pivots.shape[:-1]), pivots.shape[-1])
    perm = xp.tile(xp.arange(m), (flat.shape[0], 1))
    rows = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j].astype(np.int64) - 1
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    P = xp.zeros((flat.shape[0], m, m), dtype=dtype)
    P[rows[:, None], perm, xp.arange(m)[None, :]] = 1  # row i of P^T A is row perm[i] of A
    return P.reshape(*pivots.shape[:-1], m, m)


class LUFactor(Function):
    node_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx, a):
        lu, piv, info = _lu_packed(a.array)
        ctx.P = _permutation(piv, a.array.shape[-2], a.array.dtype)
        ctx.mark_non_differentiable(piv, info)
        return lu, piv, info

    @staticmethod
    def backward(ctx, gLU, _gpiv, _ginfo):
        # A = P L U (L unit lower, U upper, packed as one matrix LU), square: with gL = tril(gLU, -1), gU = triu(gLU),
        #   gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T.
        # Wide (m < n, U = [U1 U2]): gA = P L^-T [[tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T)] U1^-T, gU2].
        # Tall (m > n, L = [L1; L2]): gA = P [L1^-T [tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2)] U^-T; gL2 U^-T].
        from .shape import cat, tril, triu

        LU = _outputs(ctx)[0]
        P = Tensor._wrap(ctx.P)
        m, n = LU.shape[-2:]
        if m <= n:
            L = tril(LU[..., :, :m], -1) + _eye_like(LU, m)
            U1, U2 = triu(LU[..., :, :m]), LU[..., :, m:]
            gL, gU1, gU2 = tril(gLU[..., :, :m], -1), triu(gLU[..., :, :m]), gLU[..., :, m:]
            LiT = _mH(inverse(L))
            inner = tril(_mH(L) @ gL - gU2 @ _mH(U2), -1) + triu(gU1 @ _mH(U1))
            gA = LiT @ inner @ _mH(inverse(U1))
            if m < n:
                gA = cat([gA, LiT @ gU2], -1)
            return P @ gA
        L1, L2 = tril(LU[..., :n, :], -1) + _eye_like(LU, n), LU[..., n:, :]
        U = triu(LU[..., :n, :])
        gL1, gL2, gU = tril(gLU[..., :n, :], -1), gLU[..., n:, :], triu(gLU[..., :n, :])
        UiT = _mH(inverse(U))
        inner = tril(_mH(L1) @ gL1, -1) + triu(gU @ _mH(U) - _mH(L2) @ gL2)
        return P @ cat([_mH(inverse(L1)) @ inner @ UiT, gL2 @ UiT], -2)


def _lu_factor_checks(name, A, pivot):
    if A.array.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.array.shape)} "
                           "instead")
    _kernel_dtype("lu_cpu", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): A = P L U packed as LU, with LAPACK's 1-based int32 row swaps; info > 0 names the first
    zero pivot of U (1-based) instead of raising."""
    _lu_factor_checks("torch.lu_factor", A, pivot)
    LU, piv, info = _save_outputs(LUFactor.apply(A))
    if check_errors:
        _lu_raise("linalg.lu_factor_ex", info)
    return lu_factor_ex_result(LU, piv, info)


def _lu_raise(name, info):
    flat = info.array.reshape(-1)
    for b, i in enumerate(flat.tolist()):
        if i > 0:
            where = f"(Batch element {b}): " if info.array.ndim else ""
            raise RuntimeError(f"torch.{name}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a "
                               "division by zero. If you still want to perform the factorization, consider calling "
                               "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True):
    """(LU, pivots): the LU factorization with partial pivoting, A = P L U, as LAPACK packs it (L's unit diagonal
    not stored; pivots 1-based int32 row swaps). Raises for an exactly singular A. Batched."""
    _lu_factor_checks("torch.lu_factor", A, pivot)
    LU, piv, info = _save_outputs(LUFactor.apply(A))
    _lu_raise("linalg.lu_factor", info)
    return lu_factor_result(LU, piv)


@composite_node("LuUnpackBackward0")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's packed result: A = P L U (L m x k unit lower, U k x n upper, k = min(m, n))."""
    from .shape import tril, triu

    xp = array_module(LU_data.array)
    m, n = LU_data.array.shape[-2:]
    k = builtins.min(m, n)
    empty = Tensor._wrap(xp.zeros((0,), dtype=LU_data.array.dtype))
    dtype = LU_data.array.dtype  # (P in an op of the pivots' array: a minigrad.compile replay unpacks each call's)
    P = array_op(lambda piv: _permutation(piv, m, dtype), LU_pivots) if unpack_pivots else empty
    if not unpack_data:
        return lu_unpack_result(P, empty, empty)
    eye = Tensor._wrap(xp.eye(m, k, dtype=LU_data.array.dtype))
    return lu_unpack_result(P, tril(LU_data[..., :, :k], -1) + eye, triu(LU_data[..., :k, :]))


@composite_node("LinalgLuBackward0")
def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U (torch.linalg.lu). Batched."""
    _lu_factor_checks("linalg.lu", A, pivot)
    LU, piv, _ = lu_factor_ex(A)
    return lu_result(*lu_unpack(LU, piv))


def lu_legacy(A, pivot=True, get_infos=False):
    """torch.lu (deprecated in PyTorch): the tuple (LU, pivots), with infos when get_infos=True."""
    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                "torch.linalg.lu_factor_ex(A, compute_pivots)")
    _lu_factor_checks("torch.lu_factor", A, pivot)
    LU, piv, info = _save_outputs(LUFactor.apply(A))
    return (LU, piv, info) if get_infos else (LU, piv)


@composite_node("LinalgLuSolveBackward0")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (X A = B when left=False; A^T in place of A when adjoint) from lu_factor's (LU, pivots).
    Batched and broadcast over leading dims; differentiable in LU and B."""
    if LU.array.dtype != B.array.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_legacy_name(LU)} and B of type {_legacy_name(B)} instead")
    if LU.array.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor LU must have at least 2 dimensions.")
    if B.array.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    m, n = LU.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    if (B.array.shape[-2] if left else B.array.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{B.array.shape[-2]}x{B.array.shape[-1]})")
    if pivots.array.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots.array.shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if pivots.array.shape != LU.array.shape[:-1]:
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(pivots.array.shape)} instead")
    _kernel_dtype("lu_solve_cpu", LU)
    from .shape import tril, triu

    dtype = LU.array.dtype  # (P in an op of the pivots' array: a minigrad.compile replay unpacks each call's)
    P = array_op(lambda piv: _permutation(piv, n, dtype), pivots)
    Li = inverse(tril(LU, -1) + _eye_like(LU, n))
    Ui = inverse(triu(LU))
    if left:  # A = P L U: A^-1 = U^-1 L^-1 P^T, A^-T = P L^-T U^-T
        return P @ (_mH(Li) @ (_mH(Ui) @ B)) if adjoint else Ui @ (Li @ (_mT(P) @ B))
    return ((B @ P) @ _mH(Li)) @ _mH(Ui) if adjoint else ((B @ Ui) @ Li) @ _mT(P)


def lu_solve_legacy(input, LU_data, LU_pivots):
    """torch.lu_solve (deprecated in PyTorch): linalg.lu_solve(LU_data, LU_pivots, input)."""
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, input)


# ---- LDL^T (Bunch-Kaufman): ldl_factor, ldl_factor_ex, ldl_solve ----------------------------------------------
# (no derivative in PyTorch: the results record a NotImplemented node; numpy, one matrix of a batch at a time,
# since each pivot choice branches)
ldl_factor_result = return_type("linalg_ldl_factor", ("LD", "pivots"))
ldl_factor_ex_result = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_BUNCH_KAUFMAN_ALPHA = (1 + 17 ** 0.5) / 8  # (the growth bound's optimum, as LAPACK's sytf2)


def _sytf2(a, hermitian):
    """LAPACK's lower Bunch-Kaufman factorization (sytf2, hetf2 when hermitian) of one matrix `a`, in place:
    P A P^T = L D L^T (L^H when hermitian), D of 1x1 and 2x2 blocks. Returns (1-based pivots, a 2x2 block's
    two entries both -p for the row p swapped with its second row; info, the first zero block, 0 when none)."""
    n = a.shape[0]
    herm = hermitian and a.dtype.kind == "c"
    conj = np.conj if herm else (lambda z: z)
    # LAPACK's size of an entry: |re| + |im| (the modulus for a real one); a hermitian diagonal is real
    size = (lambda z: np.abs(z.real) + np.abs(z.imag)) if a.dtype.kind == "c" else np.abs
    diag = (lambda z: np.abs(z.real)) if herm else size
    piv, info, k = np.zeros(n, dtype=np.int32), 0, 0
    while k < n:
        step, absakk = 1, diag(a[k, k])
        imax, colmax = k, 0.0
        if k + 1 < n:
            col = size(a[k + 1:, k])
            imax = k + 1 + int(np.argmax(col))
            colmax = col[imax - k - 1]
        if builtins.max(absakk, colmax) == 0 or np.isnan(absakk):
            info, kp = info or k + 1, k  # (a zero column: nothing to eliminate)
            if herm:
                a[k, k] = a[k, k].real
        else:
            kp = k
            if absakk < _BUNCH_KAUFMAN_ALPHA * colmax:
                rowmax = size(a[imax, k:imax]).max()
                if imax + 1 < n:
                    rowmax = builtins.max(rowmax, size(a[imax + 1:, imax]).max())
                if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag(a[imax, imax]) >= _BUNCH_KAUFMAN_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:  # swap rows and columns kk and kp of the lower triangle still to factor
                a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                between = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = conj(between)
                a[kp, kk] = conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if step == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if herm:
                a[k, k] = a[k, k].real
                a[k + step - 1, k + step - 1] = a[k + step - 1, k + step - 1].real
            rest = slice(k + step, n)
            if step == 1:  # A22 -= x x^T / d, then x /= d (x the column below the pivot d)
                r = 1 / (a[k, k].real if herm else a[k, k])
                x = a[rest, k]
                a[rest, rest] += x[:, None] * (-r * conj(x))[None, :]
                a[rest, k] = x * r
            elif k + 2 < n:  # A22 -= [x y] D^-1 [x y]^T, then [x y] D^-1 replaces [x y] (D the 2x2 block)
                x, y = a[rest, k].copy(), a[rest, k + 1].copy()
                if herm:
                    d = np.abs(a[k + 1, k])
                    d11, d22, d21 = a[k + 1, k + 1].real / d, a[k, k].real / d, a[k + 1, k] / d
                    d = (1 / (d11 * d22 - 1)) / d
                    wk, wkp1 = d * (d11 * x - d21 * y), d * (d22 * y - np.conj(d21) * x)
                else:
                    d21 = a[k + 1, k]
                    d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                    d21 = (1 / (d11 * d22 - 1)) / d21
                    wk, wkp1 = d21 * (d11 * x - y), d21 * (d22 * y - x)
                a[rest, rest] -= x[:, None] * conj(wk)[None, :] + y[:, None] * conj(wkp1)[None, :]
                a[rest, k], a[rest, k + 1] = wk, wkp1
            if herm and k + step < n:  # (a hermitian diagonal stays real, as LAPACK's her updates keep it)
                trailing = a[rest, rest]
                trailing[np.diag_indices(n - k - step)] = trailing.diagonal().real
        piv[k:k + step] = kp + 1 if step == 1 else -(kp + 1)
        k += step
    return piv, info


def _ldl_packed(A, hermitian):
    """(LD: L below the diagonal, D's blocks on and under it, zeros above; pivots; info) of a batch."""
    *batch, n, _ = A.shape
    ld = np.array(A.reshape(_prod(batch), n, n), copy=True)
    piv = np.zeros((ld.shape[0], n), dtype=np.int32)
    info = np.zeros(ld.shape[0], dtype=np.int32)
    for i in range(ld.shape[0]):
        piv[i], info[i] = _sytf2(ld[i], hermitian)
    return np.tril(ld).reshape(A.shape), piv.reshape(*batch, n), info.reshape(batch)


def _ldl_checks(name, A):
    if A.array.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices")
    if A.array.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_legacy_name(A)}")


def _lapack_dtype(kernel, t):
    """PyTorch's error for a LAPACK kernel called on half precision (it has float, double and the complex ones)."""
    if t.array.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy_name(t)}\'')


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): the Bunch-Kaufman factorization P A P^T = L D L^T (L^H when hermitian), as LAPACK's
    sytrf packs it; info > 0 names the first zero diagonal block of D (1-based) instead of raising."""
    _ldl_checks("torch.linalg.ldl_factor_ex", A)
    _lapack_dtype("ldl_factor_kernel_cpu", A)
    from .composite import NoDerivative

    ld, piv, info = _ldl_packed(A.array, hermitian)
    if check_errors:
        _ldl_raise("linalg.ldl_factor_ex", info)
    return ldl_factor_ex_result(NoDerivative.apply(ld, "linalg_ldl_factor_ex", A), Tensor._wrap(piv),
                                Tensor._wrap(info))


def _ldl_raise(name, info):
    if info.any():  # (PyTorch's words: its check reads sytrf's info > 0 as an unknown error code)
        raise RuntimeError(f"torch.{name}: Unknown error code: {int(info.reshape(-1)[info.reshape(-1) > 0][0])}.")


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots): A's LDL^T factorization with Bunch-Kaufman pivoting (ldl_factor_ex's, raising where D has a
    zero diagonal block). Batched."""
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _ldl_raise("linalg.ldl_factor", info.array)
    return ldl_factor_result(LD, piv)


def _sytrs(ld, piv, b, hermitian):
    """X with A X = b (b: n x k, solved in place) from one matrix's sytf2 factors (LAPACK's sytrs, hetrs)."""
    n = ld.shape[0]
    herm = hermitian and ld.dtype.kind == "c"
    conj = np.conj if herm else (lambda z: z)
    k = 0
    while k < n:  # L D y = P b: forward, one block of D at a time
        if piv[k] > 0:
            p = piv[k] - 1
            b[[k, p]] = b[[p, k]]
            b[k + 1:] -= ld[k + 1:, k, None] * b[k]
            b[k] *= 1 / (ld[k, k].real if herm else ld[k, k])
            k += 1
        else:
            p = -piv[k] - 1
            b[[k + 1, p]] = b[[p, k + 1]]
            b[k + 2:] -= ld[k + 2:, k, None] * b[k] + ld[k + 2:, k + 1, None] * b[k + 1]
            akm1k = ld[k + 1, k]
            akm1, ak = ld[k, k] / conj(akm1k), ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T x = y (L^H when hermitian), undoing the swaps: backward
        first = k if piv[k] > 0 else k - 1
        for j in range(first, k + 1):
            b[j] -= conj(ld[k + 1:, j]) @ b[k + 1:]
        p = abs(int(piv[k])) - 1
        b[[k, p]] = b[[p, k]]
        k = first - 1
    return b


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots) of A. LD's batch broadcast with B's; not differentiable
    (as PyTorch's: a NotImplemented node)."""
    name = "torch.linalg.ldl_solve"
    _ldl_checks(name, LD)
    if B.array.dtype != LD.array.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_legacy_name(B)} and A of "
                           f"type {_legacy_name(LD)} instead.")
    if B.array.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    n = LD.array.shape[-1]
    if B.array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                           f"{B.array.shape[-2]} by {B.array.shape[-1]}")
    if pivots.array.shape != LD.array.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.array.shape)} instead")
    if pivots.array.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_legacy_name(pivots)}")
    _lapack_dtype("ldl_solve_kernel_cpu", LD)
    from .composite import NoDerivative
    from ._util import broadcast_shapes

    batch = broadcast_shapes(B.array.shape[:-2], LD.array.shape[:-2])
    count = _prod(batch)
    ld = np.broadcast_to(LD.array, batch + (n, n)).reshape(count, n, n)
    piv = np.broadcast_to(pivots.array, batch + (n,)).reshape(count, n)
    x = np.array(np.broadcast_to(B.array, batch + B.array.shape[-2:]), copy=True).reshape(count, *B.array.shape[-2:])
    for i in range(x.shape[0]):
        _sytrs(ld[i], piv[i], x[i], hermitian)
    return NoDerivative.apply(x.reshape(batch + B.array.shape[-2:]), "linalg_ldl_solve", LD, B)


# ---- products and tensor forms: multi_dot, chain_matmul, cond, tensorsolve, tensorinv ------------------------
def _chain_order(dims):
    """The cheapest parenthesization of a chain of matrices dims[i] x dims[i+1] (the classic dynamic program):
    split[i][j] is where the product of matrices i..j is cut."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices in the cheapest order; the first may be a 1-D row vector and the last a
    1-D column vector."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0].array.ndim, tensors[-1].array.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.array.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.array.dtype != tensors[0].array.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{cpp_name(tensors[0].array.dtype)} and tensor {i} {cpp_name(t.array.dtype)}")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].array.shape[1] != mats[i + 1].array.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].array.shape)} and "
                               f"{list(tensors[i + 1].array.shape)} cannot be multiplied")
    if n == 2:
        out = mats[0] @ mats[1]
    else:
        split = _chain_order([m.array.shape[0] for m in mats] + [mats[-1].array.shape[1]])

        def product(i, j):
            return mats[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

        out = product(0, n - 1)
    rows, cols = out.array.shape
    return out.view((rows,) * (first == 2) + (cols,) * (last == 2))  # (PyTorch's node: a view of the mm, even 2-D)


def chain_matmul(*matrices, out=None):
    """torch.chain_matmul (deprecated in PyTorch): linalg.multi_dot of 2-D matrices (one matrix: a copy)."""
    _deprecated("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                "parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.array.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.array.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        from .shape import clone

        result = clone(matrices[0])
    else:
        result = multi_dot(matrices)
    if out is not None:
        from .inplace import copy_

        return copy_(out, result)
    return result


_COND_ORDS = (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf"))


def cond(input, p=None):
    """The condition number of a matrix in the norm p: None or 2 (largest over smallest singular value), -2 (its
    reciprocal), 'nuc' (sum(s) * sum(1 / s)), or 'fro', 1, -1, inf, -inf (norm(A) * norm(A^-1), inf for an exactly
    singular A). Batched."""
    A = input
    if A.array.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if not (p is None or (p in ("fro", "nuc") if isinstance(p, str) else
                          isinstance(p, (builtins.int, builtins.float)) and p in _COND_ORDS[1:])):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        _matrix("svd", A)
        s = svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, -1, 1)
        return (small / big if p == -2 else big / small).squeeze(-1)  # (PyTorch's nodes: a squeeze of the ratio)
    m, n = A.array.shape[-2:]
    if m != n:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    if p == "nuc":  # (as PyTorch: from the singular values, sum(s) * sum(1 / s), so no inf for a singular A)
        _matrix("svd", A)
        s = svdvals(A)
        return s.sum(-1) * (1.0 / s).sum(-1)
    _square("inv", A)
    xp = array_module(A.array)
    batch = A.array.shape[:-2]
    if n == 0:
        return Tensor._wrap(xp.zeros(batch, dtype=A.array.dtype))
    flat = A.array.reshape(-1, n, n)
    singular = xp.zeros(flat.shape[0], dtype=bool)
    try:
        xp.linalg.inv(flat)
    except np.linalg.LinAlgError:
        for b, a in enumerate(flat):
            try:
                xp.linalg.inv(a)
            except np.linalg.LinAlgError:
                singular[b] = True
    from .elementwise import where

    norm = matrix_norm
    if not singular.any():  # (the nan_to_num changes nothing here: PyTorch's node, over its product)
        return (norm(A, p) * norm(inverse(A), p)).nan_to_num(posinf=float("inf"))
    singular = Tensor._wrap(singular.reshape(batch))
    safe = where(singular.unsqueeze(-1).unsqueeze(-1), _eye_like(A, n), A)  # (the singular ones: inf, below)
    return where(singular, float("inf"), norm(A, p) * norm(inverse(safe), p)).nan_to_num(posinf=float("inf"))


def _prod(shape):
    out = 1
    for s in shape:
        out *= s
    return out


def tensorsolve(input, other, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's leading dims are B's, its trailing dims X's (after moving `dims`
    of A to the end)."""
    A, B = input, other
    if dims is not None:
        from .composite import movedim

        dims = [dims] if isinstance(dims, builtins.int) else list(dims)
        nd = A.array.ndim
        A = movedim(A, dims, list(range(nd - len(dims), nd)))
    rest = A.array.shape[B.array.ndim:]
    if _prod(rest) != _prod(B.array.shape):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {_prod(rest)} != {_prod(B.array.shape)}")
    k = _prod(B.array.shape)
    return solve(A.reshape(k, k), B.reshape(k, 1)).reshape(rest)


def tensorinv(input, ind=2):
    """The inverse of A for tensordot(A, ., ind) as a map: shape A.shape[ind:] + A.shape[:ind]."""
    if not isinstance(ind, builtins.int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = input.array.shape[:ind], input.array.shape[ind:]
    if _prod(tail) != _prod(head):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(tail)} != {_prod(head)}")
    k = _prod(head)
    return _reshape_alias(inverse(input.reshape(k, k)), (*tail, *head))


@composite_node("ReshapeAliasBackward0")  # (PyTorch's inverse is column-major: its reshape is a strided view)
def _reshape_alias(input, shape):
    return input.reshape(shape)


def _lu_solve_array(a, b, transpose=False):
    """X of A X = B (A^T X = B with `transpose`) for arrays a (..., n, n) and b (..., n, k), by LAPACK's getrs
    steps on getrf's factors, PA = LU: the row swaps, then the two triangular solves, in IEEE arithmetic, so
    that a zero pivot leaves the inf and nan that LAPACK's leaves (what solve_ex and inv_ex return there)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    lu, piv, _ = _lu_packed(np.broadcast_to(a, batch + a.shape[-2:]))
    x = np.broadcast_to(b, batch + b.shape[-2:]).copy()
    n = a.shape[-1]

    def swap(i):  # rows i and piv[i] of x
        j = np.broadcast_to((piv[..., i] - 1)[..., None, None].astype(np.intp), batch + (1, x.shape[-1]))
        row = x[..., i, :].copy()
        x[..., i, :] = np.take_along_axis(x, j, -2)[..., 0, :]
        np.put_along_axis(x, j, row[..., None, :], -2)

    def substitute(order, unit, t):  # x_i = (x_i - sum_j t_ij x_j) / t_ii, j before i in `order`
        for step, i in enumerate(order):
            done = order[:step]
            if done:
                x[..., i, :] -= (t[..., i, done, None] * x[..., done, :]).sum(-2)
            if not unit:
                x[..., i, :] /= t[..., i, i, None]

    with np.errstate(all="ignore"):
        if not transpose:  # L U x = P b
            for i in range(n):
                swap(i)
            substitute(list(range(n)), True, lu)
            substitute(list(range(n - 1, -1, -1)), False, lu)
        else:  # U^T L^T P x = b
            lut = lu.swapaxes(-1, -2)
            substitute(list(range(n)), False, lut)
            substitute(list(range(n - 1, -1, -1)), True, lut)
            for i in range(n - 1, -1, -1):
                swap(i)
    return x


def _lapack_where(failed, value, lapack, core=2):
    """value, with the array `lapack` (what LAPACK's solve leaves, _lu_solve_array) in the matrices of the batch
    that `failed` (a boolean array of A's batch shape); `core`: the dims of one result, 1 for a vector's."""
    from .elementwise import where

    lapack = array_module(value.array).asarray(lapack.astype(value.array.dtype))
    failed = failed.reshape(failed.shape + (1,) * core)
    return where(Tensor._wrap(failed), Tensor._wrap(lapack), value)


def _eye_where(failed, A):
    """A, an identity where it `failed`: the others computed without raising, their gradient untouched."""
    from .elementwise import where

    eye = Tensor._wrap(array_module(A.array).eye(A.array.shape[-1], dtype=A.array.dtype))
    return where(Tensor._wrap(failed[..., None, None]), eye, A)


inv_ex_result = return_type("linalg_inv_ex", ("inverse", "info"))
cholesky_ex_result = return_type("linalg_cholesky_ex", ("L", "info"))
solve_ex_result = return_type("linalg_solve_ex", ("result", "info"))


def _no_failures(A):
    return Tensor._wrap(np.zeros(A.array.shape[:-2], dtype=np.int32))


def inv_ex(A, *, check_errors=False):
    """(inverse, info): info the 1-based index of the first zero pivot of A's LU factorization (0 when A is
    invertible), the inverse for such an A what LAPACK's solve leaves (inf and nan from the zero pivot), instead of
    raising (check_errors=True raises)."""
    _square("inv", A)
    try:  # (the usual case, an invertible A: no LU of our own to find the info)
        return inv_ex_result(inverse(A), _no_failures(A))
    except LinAlgError:
        pass
    info = _lu_packed(A.array)[2]
    failed = _first_failure(info)
    if check_errors:
        raise LinAlgError(f"linalg.inv_ex: {_batch_where(info, failed[0])}The diagonal element {failed[1]} is zero, "
                          "the inversion could not be completed because the input matrix is singular.")
    a = A.array
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return inv_ex_result(_lapack_where(info > 0, inverse(_eye_where(info > 0, A)), _lu_solve_array(a, eye)),
                         Tensor._wrap(info))


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info the order of the first leading minor of A that is not positive-definite (0 when A is),
    L then LAPACK's partial factor, instead of raising (check_errors=True raises)."""
    _square("cholesky", A)
    info = _cholesky_info(A.array.swapaxes(-1, -2).conj() if upper else A.array)
    failed = _first_failure(info)
    if failed is not None and check_errors:
        raise LinAlgError(f"linalg.cholesky_ex: {_batch_where(info, failed[0])}The factorization could not be "
                          "completed because the input is not positive-definite (the leading minor of order "
                          f"{failed[1]} is not positive-definite).")
    return cholesky_ex_result(Cholesky.apply(A, upper, True), Tensor._wrap(info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): solve's X, with info as inv_ex's (X for a singular A what LAPACK's solve leaves) instead of
    raising."""
    _square("solve", A)
    try:
        return solve_ex_result(solve(A, B, left=left), _no_failures(A))
    except LinAlgError:
        pass
    info = _lu_packed(A.array)[2]
    if check_errors:
        _singular_solve("torch.linalg.solve_ex", A)
    a, b = np.asarray(A.array), np.asarray(B.array)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])  # (solve's rule)
    if vector:  # a column
        lapack = _lu_solve_array(a, b[..., None])[..., 0]
    else:  # (X A = B: A^T X^T = B^T)
        lapack = _lu_solve_array(a, b if left else b.swapaxes(-1, -2), not left)
        lapack = lapack if left else lapack.swapaxes(-1, -2)
    x = solve(_eye_where(info > 0, A), B, left=left)
    return solve_ex_result(_lapack_where(info > 0, x, lapack, 1 if vector else 2), Tensor._wrap(info))


def _singular_solve(name, A):
    info = _lu_packed(A.array)[2]
    raise LinAlgError(f"{name}: {_batch_where(info, _first_failure(info)[0])}The solver failed because the input "
                      "matrix is singular.") from None


def _expm(a):
    """exp of each matrix of array `a`, in double: scaled by 2^-s to a 1-norm under 1/2, a Taylor series of
    degree 18 there (its error under the double's rounding), then squared s times."""
    a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    norm = np.abs(a).sum(-2).max(-1, initial=0.0)
    s = np.where(np.isfinite(norm) & (norm > 0.5), np.ceil(np.log2(np.maximum(norm, 0.5) / 0.5)), 0).astype(int)
    x = a / (2.0 ** s)[..., None, None]
    out = term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for i in range(int(s.max(initial=0))):
        out = np.where((i < s)[..., None, None], out @ out, out)
    return out


class MatrixExp(Function):
    node_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(self=a)
        xp = array_module(a.array)
        return xp.asarray(_expm(np.asarray(a.array)).astype(a.array.dtype))

    @staticmethod
    def backward(ctx, g):  # gA = the top-right block of exp([[A^H, g], [0, A^H]]) (the Frechet derivative's adjoint)
        from .shape import cat

        A, = ctx.saved_tensors
        n = A.shape[-1]
        At = _mH(A)
        block = cat([cat([At, g], -1), cat([g * 0, At], -1)], -2)
        return matrix_exp(block)[..., :n, n:]


def matrix_exp(A):
    """exp(A) = sum_k A^k / k! of a square matrix (or of each in a batch)."""
    _square("matrix_exp", A)
    return MatrixExp.apply(A)


def linalg_vander(x, *, N=None):
    """The Vandermonde matrix of x's last dim, its columns x^0, x^1, ..., x^(N-1) (N = that dim's size)."""
    from .scan import cumprod
    from .shape import cat

    if x.array.dtype.kind == "b":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    N = (x.array.shape[-1] if x.array.ndim else 1) if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    x = x.unsqueeze(-1)
    return cat([x.new_ones(x.shape), cumprod(x.expand(*x.shape[:-1], N - 1), -1)], -1)  # (PyTorch's CatBackward0)


@composite_node("LinalgHouseholderProductBackward0")
def householder_product(input, tau):
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T with v_i column i of input below its
    diagonal and a 1 on it (the Q that geqrf's reflectors describe)."""
    A, name = input, "torch.linalg.householder_product"
    if A.array.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.array.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.array.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.array.ndim != A.array.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.array.ndim} and input.ndim is equal to {A.array.ndim}")
    if tau.array.shape[:-1] != A.array.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.array.shape[:-1])}")
    _kernel_dtype("orgqr_cpu", A)
    if tau.array.dtype != A.array.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype._legacy[:-6]} does not match input dtype "
                           f"{A.dtype._legacy[:-6]}")
    from .shape import tril

    eye = Tensor._wrap(array_module(A.array).eye(m, n, dtype=A.array.dtype))
    V = tril(A, -1) + eye
    Q = eye.expand(*A.array.shape)
    for i in reversed(range(tau.array.shape[-1])):  # Q <- H_i Q, the last reflector applied first
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i, None, None] * v @ (_mH(v) @ Q)
    return Q


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False):
    """linalg.matrix_norm: the Frobenius, nuclear, 2, 1 and inf norms of the matrices over dims `dim`."""
    from .reduction import amax, amin, norm

    _matrix("matrix_norm", x)
    if ord == "fro":
        return norm(x, 2, dim, keepdim)
    r, c = dim
    if isinstance(ord, str) and ord == "nuc" or ord in (2, -2):  # from the singular values
        from .composite import movedim

        s = svdvals(movedim(x, (r, c), (-2, -1)))
        # (an empty matrix has no singular values: its norms are 0, the empty sum's; its smallest one, -2, is
        # amin's error, as PyTorch's)
        out = s.sum(-1) if isinstance(ord, str) or ord == 2 and not s.shape[-1] else (amax if ord == 2 else amin)(s, -1)
        if keepdim:
            for d in sorted((r % x.array.ndim, c % x.array.ndim)):
                out = out.unsqueeze(d)
        return out
    if ord not in (1, -1, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # the largest (smallest) 1-norm of the columns for ord 1, of the rows for inf: PyTorch's two nodes
    nd = x.array.ndim
    summed, kept = (r % nd, c % nd) if ord in (1, -1) else (c % nd, r % nd)
    if not keepdim and summed < kept:
        kept -= 1
    sums = norm(x, 1, summed, keepdim)
    if ord > 0 and not sums.shape[kept]:  # (no sums: 0, the empty sum's, as PyTorch's; the smallest, amin's error)
        return sums.sum(kept, keepdim)
    return (amax if ord > 0 else amin)(sums, kept, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm (and Tensor.norm): a matrix's nuclear norm for p='nuc' (linalg.matrix_norm's, over two dims),
    else reduction.norm's vector p-norms."""
    if p == "fro" and not (dim is None or isinstance(dim, int)) and len(dim) > 2:  # (a matrix norm's: two dims)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if p != "nuc":
        return reduction.norm(input, p, dim, keepdim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    if dim is None and input.array.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = tuple(range(input.array.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    return matrix_norm(input, "nuc", dims, keepdim)

for _cls in (QR, Eigh, Eig, SVD, LUFactor):
    _cls.keep_state = staticmethod(_keep_outputs)
