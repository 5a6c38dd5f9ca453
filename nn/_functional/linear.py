"""linear (one AddmmBackward0 / MmBackward0 node) and embedding (one EmbeddingBackward0 node)."""
import numpy as np

from . import cpu_kernels
from ._common import Function, check_tensor, once_differentiable, wrap, xp_of


class Linear(Function):
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save(input=x if ctx.needs_input_grad[1] else None, weight=w if ctx.needs_input_grad[0] else None)
        return linear_arrays(x.data, w.data, None if b is None else b.data)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g W, gW = g^T x (summed over all leading dims: one GEMM), gb = sum g
        x, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        g = g.data
        g2 = _2d(g)
        xp = xp_of(g2)
        gx = gw = gb = None
        if needs[0]:  # allocated in its final shape: owned, so the engine adopts it without a copy
            gx = xp.empty(g.shape[:-1] + (w.data.shape[1],), dtype=g.dtype)
        if needs[1]:  # (out, in)
            gw = xp.empty((g.shape[-1], x.data.shape[-1]), dtype=g.dtype)
        products = ([(_2d(gx), g2, w.data, False, False)] if needs[0] else []) + (
            [(gw, g2, _2d(x.data), True, False)] if needs[1] else [])
        if products and not _team_products(products):
            for C, A, B, ta, tb in products:
                xp.matmul(A.T if ta else A, B.T if tb else B, out=C)
        if len(needs) > 2 and needs[2]:
            gb = g2.sum(axis=0)
        return wrap(gx), wrap(gw), wrap(gb)


def linear_arrays(x, w, b=None):  # y = x W^T + b, as one GEMM on x viewed as (N, in)
    """Linear's forward on arrays: x (..., in), w (out, in), b (out,) or None -> (..., out)."""
    xp = xp_of(w)
    out = xp.empty(x.shape[:-1] + (w.shape[0],), dtype=x.dtype)
    if x.size * w.shape[0] < TEAM_MIN_WORK or not _team_products([(_2d(out), _2d(x), w, False, True)]):
        xp.matmul(_2d(x), w.T, out=_2d(out))  # W.T is a view: BLAS reads it transposed, no copy
    if b is not None:
        out += b
    return out


# The matrix products on the compiled kernels' thread team (cpu_kernels.threads), each thread calling
# single-threaded BLAS on its share: OpenBLAS's own workers sleep between calls here and take ~25 us
# to wake for each product, a tenth of a baby GPT's. The shares are cut along the longer side of the
# result, never along the sum (K): at a GPT's shapes every element comes out as in one whole product
# (the same bits as numpy's matmul); where a share is small, BLAS may take its small-matrix path,
# which sums in another order (rounding-level differences). A given thread count always cuts alike.
TEAM_MIN_WORK = 1 << 22  # multiply-adds (~40 us of work) below which a product stays one numpy call


@cpu_kernels.kernel(parallel=True)
def _products_kernel(C1, A1, B1, ta1, tb1, C2, A2, B2, ta2, tb2, n, parts, one, zero, address, ilp64):
    # C_j = op(A_j) op(B_j) for j < n (op: transposed where ta_j / tb_j), each in `parts` shares
    for t in cpu_kernels.prange(n * parts):
        j, p = t // parts, t % parts
        C, A, B, ta, tb = (C1, A1, B1, ta1, tb1) if j == 0 else (C2, A2, B2, ta2, tb2)
        M, N = C.shape
        K = A.shape[0] if ta else A.shape[1]
        lda, ldb = A.shape[1], B.shape[1]
        if M >= N:  # rows r0:r1 of C: rows of op(A)
            r0, r1 = cpu_kernels.share(M, p, parts, 1)
            Ap = A[:, r0:] if ta else A[r0:]
            cpu_kernels.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, r1 - r0, N, K, one, Ap, lda,
                             B, ldb, zero, C[r0:], N)
        else:  # columns c0:c1 of C: columns of op(B)
            c0, c1 = cpu_kernels.share(N, p, parts, 1)
            Bp = B[c0:] if tb else B[:, c0:]
            cpu_kernels.gemm(address, ilp64, 112 if ta else 111, 112 if tb else 111, M, c1 - c0, K, one, A, lda,
                             Bp, ldb, zero, C[:, c0:], N)


def _team_products(products):
    """Compute [(C, A, B, ta, tb)]: C = op(A) op(B), on the team, and return True; or return False,
    computing nothing, where the team or BLAS's gemm is not there, an operand is not a contiguous
    float32/float64 numpy array of the one dtype, a side is empty, or the work is too small to share."""
    if sum(C.size * A.shape[0 if ta else -1] for C, A, _, ta, _ in products) < TEAM_MIN_WORK:
        return False  # (first: a small product, the common case of generation, pays for nothing else)
    C0 = products[0][0]
    if not cpu_kernels.use(C0):
        return False
    for C, A, B, _, _ in products:
        if not all(type(a) is np.ndarray and a.dtype == C0.dtype and a.flags.c_contiguous and a.ndim == 2
                   and a.size for a in (C, A, B)):
            return False
    parts = cpu_kernels.threads()
    found = cpu_kernels.gemm_address(C0.dtype) if parts > 1 else None
    if found is None:
        return False
    dt = C0.dtype.type
    C2, A2, B2, ta2, tb2 = products[-1]
    with cpu_kernels.one_blas_thread():
        _products_kernel(*products[0], C2, A2, B2, ta2, tb2, len(products), parts, dt(1), dt(0), *found)
    return True


def _2d(a):
    """(..., n) as (rows, n): the array itself when 2-D, else a view (a copy only if `a` is not viewable)."""
    return a if a.ndim == 2 else a.reshape(-1, a.shape[-1])


class LinearNoBias(Linear):
    node_name = "MmBackward0"


def linear(input, weight, bias=None):
    check_tensor(input, "input", "linear")
    check_tensor(weight, "weight", "linear")
    xs, ws = input.data.shape, weight.data.shape
    if not xs or len(ws) != 2 or xs[-1] != ws[-1]:
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1] if xs else 0} and "
            f"{'x'.join(map(str, ws[::-1]))}): input {list(xs)}, weight {list(ws)} (out_features, in_features)"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.data.dtype != input.data.dtype:
            raise RuntimeError(f"linear: expected {name} to have the input's dtype {input.dtype}, got {p.dtype}")
    if bias is None:
        return LinearNoBias.apply(input, weight, None)
    return Linear.apply(input, weight, bias)


class Embedding(Function):
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, idx, weight, padding_idx):  # out[...] = weight[idx[...]]
        xp = xp_of(weight.data)
        ctx.save(indices=idx)
        ctx.num_weights, ctx.padding_idx = weight.data.shape[0], padding_idx
        return xp.take(weight.data, idx.data, axis=0)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gW[v] = sum of g at the positions where idx == v (padding row: 0)
        idx = ctx._saved_indices.data.reshape(-1)
        g = g.data.reshape(idx.size, g.data.shape[-1])  # (not -1: no ids at all is a (0, C) gradient)
        gw = scatter_add_rows(idx, g, ctx.num_weights)
        if ctx.padding_idx is not None:
            gw[ctx.padding_idx] = 0
        return None, wrap(gw), None


ONE_HOT_MAX = 128  # up to this many rows, a one-hot GEMM beats sorting


@cpu_kernels.kernel
def _scatter_add_rows_compiled(out, idx, g):  # out[idx[i]] += g[i], in the order of i
    n = out.shape[0]
    for i in range(idx.size):
        r = idx[i]
        if r < 0 or r >= n:  # embedding checks the ids first: never write outside `out`
            raise IndexError("embedding backward: an index is out of range")
        for c in range(g.shape[1]):
            out[r, c] += g[i, c]


def scatter_add_rows(idx, g, n):
    """zeros((n, C)) with row g[i] added at idx[i] (repeats summed): the embedding gradient.

    np.add.at is slow (an unbuffered loop). Compiled (cpu_kernels): one loop over the rows in
    order, ~6x faster than the one-hot product at a baby GPT's 768 x 128 (no BLAS threads to
    wake). Otherwise, for a small vocabulary a one-hot GEMM (n, N) @ (N, C); else a stable sort of
    the ids and np.add.reduceat over runs of equal ids (a plain scatter when no id repeats).
    """
    xp = xp_of(g)
    if xp is not np:  # GPU: atomic adds
        out = xp.zeros((n, g.shape[1]), dtype=g.dtype)
        import cupyx

        cupyx.scatter_add(out, idx, g)
        return out
    if cpu_kernels.use(g) and idx.dtype.kind in "iu":
        out = np.zeros((n, g.shape[1]), dtype=g.dtype)
        _scatter_add_rows_compiled(out, idx, np.ascontiguousarray(g))
        return out
    if n <= ONE_HOT_MAX:
        one_hot = np.zeros((n, idx.size), dtype=g.dtype)
        one_hot[idx, np.arange(idx.size)] = 1.0
        return one_hot @ g
    out = np.zeros((n, g.shape[1]), dtype=g.dtype)
    order = np.argsort(idx, kind="stable")
    ids = idx[order]
    new = np.empty(ids.size, dtype=bool)
    new[:1] = True
    np.not_equal(ids[1:], ids[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    if starts.size == ids.size:  # all distinct
        out[ids] = g[order]
    else:
        out[ids[starts]] = np.add.reduceat(g[order], starts, axis=0)
    return out


def embedding(input, weight, padding_idx=None):
    check_tensor(input, "input", "embedding")
    if input.data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding)")
    n = weight.data.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError(f"padding_idx {padding_idx} must be within num_embeddings {n}")
        padding_idx %= n
    ids = input.data
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= n:
            bad = lo if lo < 0 else hi
            raise IndexError(f"index out of range in self: embedding id {bad} is not in [0, {n}) "
                             f"(weight has {n} rows)")
    return Embedding.apply(input, weight, padding_idx)

