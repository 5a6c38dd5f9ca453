"""Linear's matrix products on the CPU's thread team, each thread calling single-threaded BLAS on its
share (OpenBLAS's own workers sleep between calls, and waking them for each product costs a good part
of a small product). The shares are cut along the longer side of the result, never along the sum (K).
A given thread count always cuts alike, so the same inputs give the same bits; across thread counts
the bits may differ by rounding, as BLAS's own do (OpenBLAS's kernels pick paths by share size).
"""
import numpy as np

from . import blas, team

MIN_WORK = 1 << 22  # multiply-adds below which a product stays one numpy call (sharing it costs more)


def supports(out, x, w):
    """out = x w^T for 2-D x (N, in), w (out, in): contiguous numpy float arrays of one dtype, no side
    empty, work large enough to share out, BLAS's gemm there, and more than one thread to share it on
    (on one thread, numpy's matmul is the same OpenBLAS call)."""
    if out.size * x.shape[-1] < MIN_WORK:  # (_takes' first test, before it builds its list: the common small case)
        return False
    return _takes([(out, x, w, False, True)])


def forward(out, x, w):
    """Into out (N, out): x w^T, on the team."""
    _products([(out, x, w, False, True)])


def backward(g, x, w, gx, gw):
    """Into gx (N, in) g w and into gw (out, in) g^T x, each where not None, for forward's x and w."""
    g = np.ascontiguousarray(g)
    _products(([(gx, g, w, False, False)] if gx is not None else []) + ([(gw, g, x, True, False)] if gw is not None
                                                                       else []))


def _takes(products):
    """Whether the team computes [(C, A, B, ta, tb)]: C = op(A) op(B) (the conditions of `supports`)."""
    if sum(C.size * A.shape[0 if ta else -1] for C, A, _, ta, _ in products) < MIN_WORK:
        return False  # (first: a small product, the common case of generation, pays for nothing else)
    dtype = products[0][0].dtype
    for C, A, B, _, _ in products:
        for a in (C, A, B):
            if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != 2 or not a.size or not a.flags.c_contiguous:
                return False
    found = blas.gemm_found(dtype)
    if found is None:
        return False
    return team.threads() > 1 or (found[2] != "openblas" and team.has_team())


def _products(products):
    if not products:
        return
    dtype = products[0][0].dtype
    address, ilp64, _ = blas.gemm_found(dtype)
    parts = team.threads()
    dt = dtype.type
    C2, A2, B2, ta2, tb2 = products[-1]
    with blas.team_gemm_context(dtype):
        _products_kernel(*products[0], C2, A2, B2, ta2, tb2, len(products), parts, dt(1), dt(0), address, ilp64)


@team.kernel(parallel=True)
def _products_kernel(C1, A1, B1, ta1, tb1, C2, A2, B2, ta2, tb2, n, parts, one, zero, address, ilp64):
    # C_j = op(A_j) op(B_j) for j < n (op: transposed where ta_j / tb_j), each in `parts` shares
    for t in team.prange(n * parts):
        j, p = t // parts, t % parts
        C, A, B, ta, tb = (C1, A1, B1, ta1, tb1) if j == 0 else (C2, A2, B2, ta2, tb2)
        M, N = C.shape
        K = A.shape[0] if ta else A.shape[1]
        lda, ldb = A.shape[1], B.shape[1]
        if M >= N:  # rows r0:r1 of C: rows of op(A)
            r0, r1 = team.share(M, p, parts, 1)
            Ap = A[:, r0:] if ta else A[r0:]
            team.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, r1 - r0, N, K, one, Ap, lda,
                             B, ldb, zero, C[r0:], N)
        else:  # columns c0:c1 of C: columns of op(B)
            c0, c1 = team.share(N, p, parts, 1)
            Bp = B[c0:] if tb else B[:, c0:]
            team.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, M, c1 - c0, K, one, A, lda,
                             Bp, ldb, zero, C[:, c0:], N)
