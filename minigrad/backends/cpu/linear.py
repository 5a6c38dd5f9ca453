"""Linear's matrix products on the CPU's thread team, each thread calling single-threaded BLAS on its
share (OpenBLAS's own workers sleep between calls, and waking them for each product costs a good part
of a small product). The shares are cut along the longer side of the result, never along the sum (K).
A given thread count always cuts alike, so the same inputs give the same bits; across thread counts
the bits may differ by rounding, as BLAS's own do (OpenBLAS's kernels pick paths by share size).

Few rows, one thread: OpenBLAS's AVX-512 kernels (its SkylakeX, Cooperlake and SapphireRapids cores:
AVX-512 Xeons and AMD's Zen 4 alike) have a small-matrix path that skips packing, taken when M N K <=
100^3, except that x W^T (column-major TN: both operands contiguous along the sum) takes it only while
the result has at most 1,200 entries and the sum at least 32 terms. Outside it, gemm packs all of W
for the few rows it multiplies: a recurrent cell's (32, 128) x (128, 64) takes twice its NN form's
time, an LSTM step's (20, 200) x (200, 800) 2x the small path's, a (4, 768) x (768, 768) 7x. For up
to 64 rows (`nt_blocks`), `nt_product` computes x W^T in blocks that each take the small path: all the
rows against as many of W's rows as fit, so W is read once. The same shapes always cut alike (the
same bits every time; not always numpy's, whose path is the packing one). The recurrent layers'
per-step products (rnn.py) use it too.
"""
import numpy as np

from . import blas, blas_library, team

MIN_WORK = 1 << 22  # multiply-adds below which a product stays one numpy call (sharing it costs more)


def supports(out, x, w):
    """out = x w^T for 2-D x (N, in), w (out, in): contiguous numpy float arrays of one dtype, no side
    empty, BLAS's gemm there, and either work large enough to share out on more than one thread (on
    one thread, numpy's matmul is the same OpenBLAS call) or few rows that run faster in blocks of
    BLAS's small path (the module's docstring)."""
    entries = out.size
    work = entries * x.shape[-1]
    if entries <= SMALL_TN_ENTRIES and work <= SMALL_WORK:  # (the common small case first: BLAS's small path)
        return False
    if _small_path_blas is not False and x.dtype is _F32 and _in_blocks(out, x, w):
        return True
    if work < MIN_WORK:  # (_takes' first test, before it builds its list)
        return False
    return _takes([(out, x, w, False, True)])


def forward(out, x, w, b=None):
    """Into out (N, out): x w^T (+ b (out,), where given), on the team (for few rows, in small-path blocks:
    on this thread, or on the team's shares of W where the work is large)."""
    rows, cols = _plan(x.shape, w.shape[0]) if x.dtype is _F32 else (0, 0)
    if rows and (out.size * x.shape[1] < MIN_WORK or team.threads() == 1):
        address, ilp64, _ = blas.gemm_found(_F32)
        if b is not None and b.shape == (out.shape[1],):
            # (one call: numpy's broadcast add of a bias costs a small layer as much as a block's product)
            nt_product_bias(out, x, w, b, rows, cols, address, ilp64)
            return
        nt_product(out, x, w, rows, cols, address, ilp64)
    else:
        _products([(out, x, w, False, True)], cols)
    if b is not None:
        out += b  # (numpy's broadcasting, and its error for a bias of another shape)


def backward(g, x, w, gx, gw):
    """Into gx (N, in) g w and into gw (out, in) g^T x, each where not None, for forward's x and w."""
    M, N = g.shape
    K = (gx if gx is not None else gw).shape[1]
    if M * N * K < MIN_WORK and nt_blocks(M, N, K, g.dtype)[0]:  # forward's blocks on this thread: numpy's
        if gx is not None:  # products (their NN and TN forms take the small path where the whole fits)
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
_small_path_blas = None  # whether the gemm the kernels call is OpenBLAS's on one of those cores (asked once)


def nt_blocks(M, N, K, dtype):
    """(rows, cols) of the blocks in which x W^T, x (M, K), W (N, K), runs faster than as one gemm, or
    (0, 0). Measured on Zen 4 (docs/performance.md): 2 to 32 rows (64 with sums of 64 terms or more),
    where the one gemm spends its time packing W (one row is BLAS's gemv, not slow); blocks of all the
    rows (W read once) against as many of W's rows as the small path takes."""
    if not (K >= SMALL_TN_MIN_SUM and 2 <= M and (M <= 32 or (M <= 64 and K >= 64))) or dtype != _F32:
        return 0, 0
    if M * N <= SMALL_TN_ENTRIES and M * N * K <= SMALL_WORK:  # the whole takes the small path already
        return 0, 0
    fit = min(SMALL_TN_ENTRIES, SMALL_WORK // K)  # entries of a block
    if fit < BLOCK_MIN_COLS * M or not _openblas_has_small_path():
        # (blocks of fewer of W's rows read all of x too often: a bag of words' (64, 5000) x (5000, 128), 3
        # rows a block, took 1.5x the one gemm's time)
        return 0, 0
    return M, fit // M


BLOCK_MIN_COLS = 4


_plans = {}  # {(x's shape, W's rows): (rows, cols)}: the blocks of float32 products


def _plan(x_shape, n):
    """nt_blocks of a float32 x (M, K) times W^T (n rows), remembered (`find` asks it at every linear call)."""
    plan = _plans.get((x_shape, n))
    if plan is None:
        if len(_plans) > 4096:  # (many shapes: sequences of every length, say)
            _plans.clear()
        plan = _plans[(x_shape, n)] = nt_blocks(x_shape[0], n, x_shape[1], _F32)
    return plan


def _in_blocks(out, x, w):
    """Whether `forward` runs x w^T (float32) in small-path blocks (checks cheapest first: `find` asks it
    of every linear call)."""
    if not _plan(x.shape, w.shape[0])[0]:
        return False
    if type(x) is not np.ndarray or type(w) is not np.ndarray or x.dtype is not _F32 or w.dtype is not _F32 \
            or not (x.flags.c_contiguous and w.flags.c_contiguous and out.flags.c_contiguous):
        return False
    return out.size * x.shape[1] < MIN_WORK or team.threads() == 1 or _takes([(out, x, w, False, True)])


_F32 = np.dtype(np.float32)


def _openblas_has_small_path():
    global _small_path_blas
    if _small_path_blas is None:
        found = blas.gemm_found(_F32)
        core = blas_library.openblas_core()
        _small_path_blas = (found is not None and found[2] == "openblas" and core is not None
                            and core.lower() in SMALL_PATH_CORES)
    return _small_path_blas


@team.kernel
def nt_product(C, A, B, rows, cols, address, ilp64):  # C = A B^T through gemm, in rows x cols blocks
    M, N = C.shape
    K = A.shape[1]
    lda, ldb, ldc = A.strides[0] // A.itemsize, B.strides[0] // B.itemsize, C.strides[0] // C.itemsize
    one = C.dtype.type(1)
    zero = one - one
    for r0 in range(0, M, rows):
        r = min(rows, M - r0)
        for c0 in range(0, N, cols):
            team.gemm(address, ilp64, 111, 112, r, min(cols, N - c0), K, one, A[r0:], lda, B[c0:], ldb, zero,
                      C[r0:, c0:], ldc)


@team.kernel
def nt_product_bias(C, A, B, b, rows, cols, address, ilp64):  # C = A B^T + b: the product, then b added
    nt_product(C, A, B, rows, cols, address, ilp64)
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[i, j] += b[j]  # (one float add each, as numpy's `C += b`: the same bits)


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


def _products(products, cols=0):
    """The team's products; `cols` > 0: the first is x W^T of few rows, each share of W's rows then
    taken in small-path blocks of all the rows and `cols` of W's (nt_blocks)."""
    if not products:
        return
    dtype = products[0][0].dtype
    address, ilp64, _ = blas.gemm_found(dtype)
    parts = team.threads()
    dt = dtype.type
    C2, A2, B2, ta2, tb2 = products[-1]
    with blas.team_gemm_context(dtype):
        _products_kernel(*products[0], C2, A2, B2, ta2, tb2, len(products), parts, dt(1), dt(0), cols, address,
                         ilp64)


@team.kernel(parallel=True)
def _products_kernel(C1, A1, B1, ta1, tb1, C2, A2, B2, ta2, tb2, n, parts, one, zero, cols, address, ilp64):
    # C_j = op(A_j) op(B_j) for j < n (op: transposed where ta_j / tb_j), each in `parts` shares
    for t in team.prange(n * parts):
        j, p = t // parts, t % parts
        C, A, B, ta, tb = (C1, A1, B1, ta1, tb1) if j == 0 else (C2, A2, B2, ta2, tb2)
        M, N = C.shape
        K = A.shape[0] if ta else A.shape[1]
        lda, ldb = A.shape[1], B.shape[1]
        if j == 0 and cols > 0:  # x W^T of few rows: this share's rows of W in small-path blocks
            c0, c1 = team.share(N, p, parts, 1)
            nt_product(C[:, c0:c1], A, B[c0:c1], M, cols, address, ilp64)
        elif M >= N:  # rows r0:r1 of C: rows of op(A)
            r0, r1 = team.share(M, p, parts, 1)
            Ap = A[:, r0:] if ta else A[r0:]
            team.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, r1 - r0, N, K, one, Ap, lda,
                             B, ldb, zero, C[r0:], N)
        else:  # columns c0:c1 of C: columns of op(B)
            c0, c1 = team.share(N, p, parts, 1)
            Bp = B[c0:] if tb else B[:, c0:]
            team.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, M, c1 - c0, K, one, A, lda,
                             Bp, ldb, zero, C[:, c0:], N)
