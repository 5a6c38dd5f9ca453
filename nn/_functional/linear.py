"""linear (one AddmmBackward0 / MmBackward0 node) and embedding (one EmbeddingBackward0 node).
The references (primitive ops, autograd): nn/_functional/reference.py's linear and embedding."""
import numpy as np

from minigrad import backends

from ._common import Function, check_tensor, once_differentiable, wrap, xp_of


class Linear(Function):
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save(input=x if ctx.needs_input_grad[1] else None, weight=w if ctx.needs_input_grad[0] else None)
        return linear_arrays(x.array, w.array, None if b is None else b.array)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g W, gW = g^T x (summed over all leading dims: one GEMM), gb = sum g
        x, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        g = g.array
        g2 = _2d(g)
        xp = xp_of(g2)
        gx = gw = gb = None
        if needs[0]:  # allocated in its final shape: owned, so the engine adopts it without a copy
            gx = xp.empty(g.shape[:-1] + (w.array.shape[1],), dtype=g.dtype)
        if needs[1]:  # (out, in)
            gw = xp.empty((g.shape[-1], x.array.shape[-1]), dtype=g.dtype)
        products = ([(_2d(gx), g2, w.array, False, False)] if needs[0] else []) + (
            [(gw, g2, _2d(x.array), True, False)] if needs[1] else [])
        fast = backends.lookup("linear", *products[0][:3]) if products else None  # (products() checks them all)
        if products and not (fast is not None and fast.products(products)):
            for C, A, B, ta, tb in products:
                xp.matmul(A.T if ta else A, B.T if tb else B, out=C)
        if len(needs) > 2 and needs[2]:
            gb = g2.sum(axis=0)
        return wrap(gx), wrap(gw), wrap(gb)


def linear_arrays(x, w, b=None):  # y = x W^T + b, as one GEMM on x viewed as (N, in)
    """Linear's forward on arrays: x (..., in), w (out, in), b (out,) or None -> (..., out)."""
    xp = xp_of(w)
    out = xp.empty(x.shape[:-1] + (w.shape[0],), dtype=x.dtype)
    fast = backends.lookup("linear", x, w)
    if fast is None or not fast.products([(_2d(out), _2d(x), w, False, True)]):
        xp.matmul(_2d(x), w.T, out=_2d(out))  # W.T is a view: BLAS reads it transposed, no copy
    if b is not None:
        out += b
    return out


def _2d(a):
    """(..., n) as (rows, n): the array itself when 2-D, else a view (a copy only if `a` is not viewable)."""
    return a if a.ndim == 2 else a.reshape(-1, a.shape[-1])


class LinearNoBias(Linear):
    node_name = "MmBackward0"


def linear(input, weight, bias=None):
    check_tensor(input, "input", "linear")
    check_tensor(weight, "weight", "linear")
    xs, ws = input.array.shape, weight.array.shape
    if not xs or len(ws) != 2 or xs[-1] != ws[-1]:
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1] if xs else 0} and "
            f"{'x'.join(map(str, ws[::-1]))}): input {list(xs)}, weight {list(ws)} (out_features, in_features)"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.array.dtype != input.array.dtype:
            raise RuntimeError(f"linear: expected {name} to have the input's dtype {input.dtype}, got {p.dtype}")
    if bias is None:
        return LinearNoBias.apply(input, weight, None)
    return Linear.apply(input, weight, bias)


class Embedding(Function):
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, idx, weight, padding_idx):  # out[...] = weight[idx[...]]
        xp = xp_of(weight.array)
        ctx.save(indices=idx)
        ctx.num_weights, ctx.padding_idx = weight.array.shape[0], padding_idx
        return xp.take(weight.array, idx.array, axis=0)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gW[v] = sum of g at the positions where idx == v (padding row: 0)
        idx = ctx._saved_indices.array.reshape(-1)
        g = g.array.reshape(idx.size, g.array.shape[-1])  # (not -1: no ids at all is a (0, C) gradient)
        gw = scatter_add_rows(idx, g, ctx.num_weights)
        if ctx.padding_idx is not None:
            gw[ctx.padding_idx] = 0
        return None, wrap(gw), None


ONE_HOT_MAX = 128  # up to this many rows, a one-hot GEMM beats sorting


def scatter_add_rows(idx, g, n):
    """zeros((n, C)) with row g[i] added at idx[i] (repeats summed): the embedding gradient.

    np.add.at is slow (an unbuffered loop): for a small vocabulary a one-hot GEMM (n, N) @ (N, C);
    else a stable sort of the ids and np.add.reduceat over runs of equal ids (a plain scatter when no
    id repeats). The CPU backend's is one compiled loop over the rows in order.
    """
    xp = xp_of(g)
    if xp is not np:  # GPU: atomic adds
        out = xp.zeros((n, g.shape[1]), dtype=g.dtype)
        import cupyx

        cupyx.scatter_add(out, idx, g)
        return out
    fast = backends.lookup("embedding", g)
    if fast is not None and idx.dtype.kind in "iu":
        return fast.scatter_add_rows(idx, g, n)
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
    if input.array.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding)")
    n = weight.array.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError(f"padding_idx {padding_idx} must be within num_embeddings {n}")
        padding_idx %= n
    ids = input.array
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= n:
            bad = lo if lo < 0 else hi
            raise IndexError(f"index out of range in self: embedding id {bad} is not in [0, {n}) "
                             f"(weight has {n} rows)")
    return Embedding.apply(input, weight, padding_idx)

