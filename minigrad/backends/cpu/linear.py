"""Linear's matrix products on the CPU's thread team, each thread calling single-threaded BLAS on its
share (OpenBLAS's own workers sleep between calls, and waking them for each product costs a good part
of a small product). The shares are cut along the longer side of the result, never along the sum (K).
A given thread count always cuts alike, so the same inputs give the same bits; across thread counts
the bits may differ by rounding, as BLAS's own do (OpenBLAS's kernels pick paths by share size).

Small products, one thread: OpenBLAS's AVX-512 kernels (its SkylakeX, Cooperlake and SapphireRapids
cores: AVX-512 Xeons and AMD's Zen 4 alike) have a small-matrix path that skips packing, taken when
M N K <= 100^3, except that x w^T (column-major TN: both operands contiguous along the sum) takes it
only while the result has at most 1,200 entries and the sum at least 32 terms. A (32, 128) x (128, 64)
product, a recurrent cell's Linear, falls just outside and runs the packing path at about twice the
time of its NN form. `forward` then computes it in blocks of rows that each take the small path (the
same bits for the same shapes, every time; not always numpy's, whose path is the packing one).
"""
import numpy as np

from . import blas, blas_library, team

MIN_WORK = 1 << 22  # multiply-adds below which a product stays one numpy call (sharing it costs more)


def supports(out, x, w):
    """out = x w^T for 2-D x (N, in), w (out, in): contiguous numpy float arrays of one dtype, no side
    empty, BLAS's gemm there, and either work large enough to share out on more than one thread (on
    one thread, numpy's matmul is the same OpenBLAS call) or a small product that runs faster in row
    blocks (the module's docstring)."""
    work = out.size * x.shape[-1]
    if work < MIN_WORK:  # (_takes' first test, before it builds its list: the common small case)
        return work <= SMALL_WORK and out.size > SMALL_TN_ENTRIES and _takes_in_row_blocks(out, x, w)
    return _takes([(out, x, w, False, True)])


def forward(out, x, w):
    """Into out (N, out): x w^T, on the team (or, for a small product, in row blocks on this thread)."""
    if out.size * x.shape[-1] < MIN_WORK:
        address, ilp64, _ = blas.gemm_found(out.dtype)
        _row_blocks(out, x, w, SMALL_TN_ENTRIES // out.shape[1], address, ilp64)
    else:
        _products([(out, x, w, False, True)])


def backward(g, x, w, gx, gw):
    """Into gx (N, in) g w and into gw (out, in) g^T x, each where not None, for forward's x and w."""
    if g.size * (gx if gx is not None else gw).shape[1] < MIN_WORK:  # a small product's: BLAS's small path
        # takes both of its forms as they are
        if gx is not None:
            np.matmul(g, w, out=gx)
        if gw is not None:
            np.matmul(g.T, x, out=gw)
        return
    g = np.ascontiguousarray(g)
    _products(([(gx, g, w, False, False)] if gx is not None else []) + ([(gw, g, x, True, False)] if gw is not None
                                                                       else []))


SMALL_WORK = 100 ** 3  # OpenBLAS's small-matrix path: M N K at most this
SMALL_TN_ENTRIES = 1200  # ... and, for the TN form, a result of at most this many entries
SMALL_TN_MIN_SUM = 32  # ... and sums of at least this many terms
SMALL_PATH_CORES = ("skylakex", "cooperlake", "sapphirerapids")  # OpenBLAS's cores with that path
MAX_ROW_BLOCKS = 16  # more blocks than this cost more calls than the packing path costs
_small_path_blas = None  # whether numpy's BLAS is OpenBLAS on one of those cores (asked once)


def _takes_in_row_blocks(out, x, w):
    """Whether x w^T, a small product outside the TN small path, is worth running in row blocks here."""
    n, k = w.shape
    if k < SMALL_TN_MIN_SUM or n > SMALL_TN_ENTRIES or out.size > MAX_ROW_BLOCKS * (SMALL_TN_ENTRIES // n) * n \
            or _small_path_blas is False:
        return False
    if type(x) is not np.ndarray or type(w) is not np.ndarray or x.dtype is not _F32 or w.dtype is not _F32 \
            or out.dtype is not _F32 or not (x.flags.c_contiguous and w.flags.c_contiguous and out.flags.c_contiguous):
        return False
    found = blas.gemm_found(_F32)
    return found is not None and found[2] == "openblas" and _openblas_has_small_path()


_F32 = np.dtype(np.float32)


def _openblas_has_small_path():
    global _small_path_blas
    if _small_path_blas is None:
        core = blas_library.openblas_core()
        _small_path_blas = core is not None and core.lower() in SMALL_PATH_CORES
    return _small_path_blas


@team.kernel
def _row_blocks(C, A, B, rows, address, ilp64):  # C = A B^T, `rows` rows of C a gemm call
    M, N = C.shape
    K = A.shape[1]
    one, zero = C.dtype.type(1), C.dtype.type(0)
    for r0 in range(0, M, rows):
        team.gemm(address, ilp64, 111, 112, min(rows, M - r0), N, K, one, A[r0:], K, B, K, zero, C[r0:], N)


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
