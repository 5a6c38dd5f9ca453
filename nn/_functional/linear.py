"""linear (one AddmmBackward0 / MmBackward0 node) and embedding (one EmbeddingBackward0 node).
The references (primitive ops, autograd): nn/_functional/reference.py's linear and embedding."""
import functools
import math

import numpy as np

from minigrad import backends
from minigrad.autograd import recording
from minigrad.autograd.composite import composite_node
from minigrad.dtypes import type_text
from minigrad.ops._util import SUM_KERNEL_MIN_ROWS, add_reduce, broadcast_shapes, in_float32, output_shape_error
from minigrad.ops.matmul import matmul_arrays

from ._common import Function, Tensor, once_differentiable, some_id_outside, type_name, wrap, xp_of


class Linear(Function):
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save(input=x if ctx.needs_input_grad[1] else None, weight=w if ctx.needs_input_grad[0] else None)
        out, ctx.impl = _forward(x.array, w.array, None if b is None else b.array)
        return out

    @staticmethod
    def array_forward(x, w, b):
        impl = _forward(x.array, w.array, None if b is None else b.array)[1]
        if impl is None and _one_matrix(x.array, w.array):
            return _matrix_product
        return functools.partial(_forward_with, impl)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx, gw, gb = _backward(g.array, None if x is None else x.array, None if w is None else w.array,
                               ctx.needs_input_grad, ctx.impl)
        w_ = Tensor._wrap  # (wrap's test inline: three calls fewer a backward)
        return None if gx is None else w_(gx), None if gw is None else w_(gw), None if gb is None else w_(gb)

    @staticmethod
    def array_step(needs, x, w, b):
        impl = _forward(x.array, w.array, None if b is None else b.array)[1]  # (the backend, for these shapes)
        if impl is None and _plain_step(x.array, w.array, b):
            return _numpy_step(needs, x.array.shape, w.shape[0], b is not None)
        edges = 2 if b is None else 3

        def forward(x, w, b=None):
            return _forward(x, w, b, impl, False)[0], (x if needs[1] else None, w if needs[0] else None)

        def backward(saved, g):
            return _backward(g, saved[0], saved[1], needs, impl)[:edges]

        return forward, backward


    @staticmethod
    def double_backward(ctx, g):  # create_graph: gx = g W, gW = g^T x, gb = sum g, as recorded ops
        x, w = ctx.saved_tensors
        needs = ctx.needs_input_grad
        flat = g.ndim == 2  # (rows already: no view nodes around the products, as PyTorch's addmm records none)
        g2 = g if flat else g.reshape(-1, g.shape[-1])
        gx = None
        if needs[0]:
            gx = g2 @ w if flat else (g2 @ w).reshape(tuple(g.shape[:-1]) + (w.shape[1],))
        gw = g2.t() @ (x if flat else x.reshape(-1, x.shape[-1])) if needs[1] else None
        gb = g2.sum(0) if len(needs) > 2 and needs[2] else None
        return gx, gw, gb


def _forward(x, w, b, impl=None, find=True):  # y = x W^T + b, as one GEMM on x viewed as (N, in)
    """x (..., in), w (out, in), b (out,) or None -> (y (..., out), the backend that ran or None);
    find=False: run `impl` (None: numpy's matmul), found before for arrays of these shapes."""
    numpy = type(w) is np.ndarray
    out = (np if numpy else xp_of(w)).empty(x.shape[:-1] + (w.shape[0],), dtype=x.dtype)
    out2, x2 = (out, x) if x.ndim == 2 else (out.reshape(-1, w.shape[0]), x.reshape(-1, x.shape[-1]))  # (_2d's)
    if find:
        impl = backends.find("linear", out2, x2, w)
    if impl is not None:
        impl.forward(out2, x2, w, b)  # (b added there)
        return out, impl
    if b is not None and x.dtype.char == "e":  # (float16; a dtype's == with a type converts the type first)
        out2[...] = _half_addmm(x2, w, b)
        return out, impl
    # W.T is a view: BLAS reads it transposed, no copy (numpy's matmul straight, where matmul_arrays would
    # only pass it on: an inner size over 1, not an outer product)
    if numpy and type(x2) is np.ndarray and x2.shape[1] != 1:
        np.matmul(x2, w.T, out=out2)
    else:
        matmul_arrays(x2, w.T, out=out2)
    if b is not None:
        out += b
    return out, impl


def _half_addmm(x2, w, b):
    """x2 W^T + b of float16 arrays as PyTorch's half addmm: the bias added to the float32 product, one
    rounding (numpy's half matmul rounds the product, and the bias then rounds again)."""
    return in_float32(lambda x, w, b: np.matmul(x, w.T) + b, x2, w, b)


def _backward(g, x, w, needs, impl):  # gx = g W, gW = g^T x (summed over all leading dims: one GEMM), gb = sum g
    """Linear's backward on arrays: (gx, gW, gb), each None where not needed; `impl` forward's backend."""
    g2 = g if g.ndim == 2 else _2d(g)
    numpy = type(g2) is np.ndarray
    xp = np if numpy else xp_of(g2)
    gx = gw = gb = None
    if needs[0]:  # allocated in its final shape: owned, so the engine adopts it without a copy
        gx = xp.empty(g.shape[:-1] + (w.shape[1],), dtype=g.dtype)
    if needs[1]:  # (out, in)
        gw = xp.empty((g.shape[-1], x.shape[-1]), dtype=g.dtype)
    x2 = (x if x.ndim == 2 else _2d(x)) if needs[1] else None
    if impl is not None:
        impl.backward(g2, x2, w if needs[0] else None, None if gx is None else _2d(gx), gw)
    else:
        # numpy's matmul straight where matmul_arrays would only pass it on (its outer products: an inner size of 1)
        mm = np.matmul if numpy else matmul_arrays
        if needs[0]:
            (mm if g2.shape[1] != 1 else matmul_arrays)(g2, w, out=gx if gx.ndim == 2 else _2d(gx))
        if needs[1]:
            (mm if g2.shape[0] != 1 else matmul_arrays)(g2.T, x2, out=gw)  # (one row: an outer product)
    if len(needs) > 2 and needs[2]:  # (a sum of one row is that row; under add_reduce's kernel rows, its numpy call)
        if g2.shape[0] == 1:
            gb = g2[0].copy()
        elif numpy and g2.shape[0] < SUM_KERNEL_MIN_ROWS and g2.dtype.char != "e":
            gb = np.add.reduce(g2, (0,), None, None, False)
        else:
            gb = add_reduce(g2, (0,), False)
    return gx, gw, gb


def _plain_step(x, w, b):
    """Whether a replay's linear of these arrays may be `_numpy_step`'s: numpy arrays of one float dtype
    (not half: its bias is added apart), and no inner size of 1 in the three products (matmul_arrays' outer
    products; one row's bias gradient is that row)."""
    rows = math.prod(x.shape[:-1])
    return (type(x) is np.ndarray and type(w) is np.ndarray and (b is None or type(b.array) is np.ndarray)
            and x.dtype == w.dtype and (b is None or b.array.dtype == x.dtype) and x.dtype in (np.float32, np.float64)
            and x.ndim >= 2 and x.shape[-1] > 1 and w.shape[0] > 1 and rows > 1)


def _numpy_step(needs, x_shape, n, bias):
    """Linear's array_step where no backend takes the products (`_plain_step`): numpy's matmul calls
    `_forward` and `_backward` make for these shapes, each into a result of its own (the same gemm, the
    same bits), the bias's sum numpy's reduce, with none of the Python around them (a replayed small
    model's linear layers)."""
    flat = len(x_shape) == 2
    out_shape = x_shape[:-1] + (n,)
    sum_bias = bias and len(needs) > 2 and needs[2]
    small = math.prod(x_shape[:-1]) < SUM_KERNEL_MIN_ROWS  # (add_reduce's plain numpy reduce there: called as it calls it)

    def forward(x, w, b=None):
        if flat:
            out = np.matmul(x, w.T)
        else:
            out = np.empty(out_shape, dtype=x.dtype)
            np.matmul(x.reshape(-1, x.shape[-1]), w.T, out=out.reshape(-1, n))
        if b is not None:
            out += b
        return out, (x if needs[1] else None, w if needs[0] else None)

    def backward(saved, g):
        x, w = saved
        g2 = g if flat else g.reshape(-1, n)
        gx = gw = gb = None
        if needs[0]:  # (in its final shape, owned: a leaf adopts it as eager's)
            if flat:
                gx = np.matmul(g2, w)
            else:
                gx = np.empty(x_shape, dtype=g.dtype)
                np.matmul(g2, w, out=gx.reshape(-1, x_shape[-1]))
        if needs[1]:
            gw = np.matmul(g2.T, x if flat else x.reshape(-1, x_shape[-1]))
        if sum_bias:
            gb = np.add.reduce(g2, (0,), None, None, False) if small else add_reduce(g2, (0,), False)
        return (gx, gw, gb) if bias else (gx, gw)

    return forward, backward


def _forward_with(impl, x, w, b=None):
    """`_forward` with its backend found before (array_forward's). Without one, the product is numpy's
    matmul into an array of its own: the same call, the same bits, without the empty output `find`
    needed (a generated token's linear layers are 1-row products, where that allocation shows)."""
    if impl is not None or b is not None and x.dtype == np.float16:
        return _forward(x, w, b, impl, False)[0]
    out = matmul_arrays(x if x.ndim == 2 else x.reshape(-1, x.shape[-1]), w.T)
    if b is not None:
        out += b
    return out if x.ndim == 2 else out.reshape(x.shape[:-1] + (w.shape[0],))


def _one_matrix(x, w):
    """Whether x (..., in) is one matrix, every dim before its last two of size 1 (a generated token's
    (1, 1, in)), that numpy's matmul takes against W^T as the one 2-D product `_forward_with` makes of its
    2-D view: the same BLAS call, the same bits (not an inner size of 1, matmul_arrays' outer product)."""
    return (type(x) is np.ndarray and type(w) is np.ndarray and x.dtype == w.dtype and x.ndim >= 2
            and x.shape[-1] > 1 and all(d == 1 for d in x.shape[:-2]) and x.dtype != np.float16)


def _matrix_product(x, w, b=None):
    """`_forward_with` for x that is `_one_matrix`: one matmul call, none of the views around it (a
    generated token's Linear layers are 1-row products, where the Python around the product shows)."""
    out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out


def linear_arrays(x, w, b=None):
    """Linear's forward on arrays: x (..., in), w (out, in), b (out,) or None -> (..., out)."""
    return _forward(x, w, b)[0]


def _2d(a):
    """(..., n) as (rows, n): the array itself when 2-D, else a view (a copy only if `a` is not viewable)."""
    return a if a.ndim == 2 else a.reshape(-1, a.shape[-1])


class LinearNoBias(Linear):
    node_name = "MmBackward0"


def check_tensor_arg(x, fn, name, position):
    """PyTorch's TypeError for an argument that is not a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type_name(x)}")


def linear(input, weight, bias=None):
    if type(input) is not Tensor or type(weight) is not Tensor:  # (two Tensors, the usual, pay for no call)
        check_tensor_arg(input, "linear", "input", 1)
        check_tensor_arg(weight, "linear", "weight", 2)
    x, w = input.array, weight.array
    if x.shape[-1:] != w.shape[1:] or w.ndim != 2 or x.dtype != w.dtype or x.dtype.kind == "c" or (
            bias is not None and (bias.array.dtype != w.dtype or bias.array.ndim != 1 or len(bias.array) != len(w))):
        if x.ndim and w.ndim == 1 and x.shape[-1] == w.shape[0] and x.dtype == w.dtype:  # a vector: input @ w
            out = input @ weight
            return out if bias is None else out + bias
        check_linear(input, weight, bias)
        if bias is not None and bias.array.shape != w.shape[:1]:
            return _other_bias(input, weight, bias)
        if x.dtype.kind == "c":  # (Linear's backward on arrays has no conjugates: matmul's nodes have them)
            out = input @ weight.mT
            return out if bias is None else out + bias
    try:
        if x.ndim == 1:  # a vector ends as PyTorch's does: in a view of its addmm, or a squeeze_ of its (1, in) mm
            if bias is None:
                return LinearNoBias.apply(input.unsqueeze(0), weight, None).squeeze_(0)
            return Linear.apply(input, weight, bias).view(-1)
        return (LinearNoBias if bias is None else Linear).apply(input, weight, bias)
    except ValueError:  # a bias that does not broadcast: PyTorch's words, found only once numpy refused it
        check_linear(input, weight, bias)
        raise


def _other_bias(input, weight, bias):
    """linear with a bias of another shape than (out,), as PyTorch's: an addmm of the input as (rows, in) when the
    input is a matrix, or is contiguous with a contiguous bias that is or squeezes to 1-D; else input @ W^T with the
    bias added in place (so it must broadcast to the output's shape)."""
    from minigrad.ops.composite import addmm

    xs = input.array.shape  # (check_linear has passed: the shapes fit, the bias's checked)
    out_features = weight.array.shape[0]
    if len(xs) == 2:
        return addmm(bias, input, weight.t())
    if _addmm_bias(input, bias):
        return addmm(bias, input.reshape(-1, xs[-1]), weight.t()).view(*xs[:-1], out_features)
    return input @ weight.t() + bias


def check_linear(input, weight, bias):
    """PyTorch's error for a linear call whose shapes or dtypes do not fit, in PyTorch's order (a call that
    fits passes). Called only off the fast path: when something does not fit."""
    xs, ws = input.array.shape, weight.array.shape
    if not xs or not ws:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(xs)}D and {len(ws)}D")
    if len(ws) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(ws)}D")
    if bias is not None:  # (PyTorch's addmm: the bias against the weight, then the input)
        if bias.array.dtype != weight.array.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_name(bias)} and {_name(weight)}")
        if input.array.dtype != weight.array.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_name(input)} and {_name(weight)}")
    if xs[-1] != ws[-1]:
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1  # (PyTorch multiplies the input as (rows, in))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1]} and "
                           f"{'x'.join(map(str, ws[::-1]))})")
    if input.array.dtype != weight.array.dtype:  # (without a bias: PyTorch's mm)
        from minigrad.dtypes import cpp_name

        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_name(input.array.dtype)} != "
                           f"{cpp_name(weight.array.dtype)}")
    if bias is not None:
        _check_bias(input, ws[0], bias)


def _addmm_bias(input, bias):
    """Whether PyTorch's linear adds this bias in an addmm of the input as (rows, in), not in place afterwards."""
    b = bias.array
    return input.array.ndim == 2 or (input.is_contiguous() and bias.is_contiguous()
                                     and (b.ndim == 1 or np.squeeze(b).ndim == 1))


def _check_bias(input, out, bias):
    """PyTorch's error for a bias that does not fit the product: its addmm expands the bias to (rows, out),
    an in-place add needs it to broadcast to the output's shape."""
    xs = input.array.shape
    if _addmm_bias(input, bias):
        bias.expand(int(np.prod(xs[:-1])), out)
        return
    shape = xs[:-1] + (out,)
    broadcast = broadcast_shapes(shape, bias.array.shape)
    if broadcast != shape:
        raise output_shape_error(shape, broadcast)


def _name(t):  # PyTorch's name of a tensor's dtype in its errors: Float, Double, Long, ...
    return t.dtype._legacy[:-6]


def _check_ids(ids, n):
    """PyTorch's IndexError for an embedding id outside [0, n) (numpy's take would wrap a negative one)."""
    if some_id_outside(ids, n):
        lo, hi = int(ids.min()), int(ids.max())
        err = IndexError("index out of range in self")  # PyTorch's text; which id, in a note under the traceback
        err.__notes__ = [f"embedding id {lo if lo < 0 else hi} is not in [0, {n}) (the weight has {n} rows)"]
        raise err


class Embedding(Function):
    node_name = "EmbeddingBackward0"
    backward_ignores_inputs = True  # (gW is g summed by the ids: no weight in it)
    fp_arithmetic = False  # (forward picks rows)

    @staticmethod
    def forward(ctx, idx, weight, padding_idx, scale_grad_by_freq=False):
        ctx.save(indices=idx)
        ctx.num_weights, ctx.padding_idx = weight.array.shape[0], padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return _embedding_forward(idx.array, weight.array)

    @staticmethod
    def array_forward(idx, weight, padding_idx, scale_grad_by_freq=False):
        return _embedding_forward

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        gw = _embedding_backward(ctx._saved_indices.array, g.array, ctx.num_weights, ctx.padding_idx,
                                 ctx.scale_grad_by_freq)
        return (wrap(gw),)  # (one per tensor input: the weight's; the ids take none)

    @staticmethod
    def double_backward(ctx, g):  # create_graph through an incoming gradient that requires grad: gW recorded
        return (_embedding_dense_backward(g, ctx._saved_indices.array, ctx.num_weights, ctx.padding_idx),)

    @staticmethod
    def array_step(needs, idx, weight, padding_idx, scale_grad_by_freq=False):
        n = weight.array.shape[0]
        return ((lambda ids, w: (_embedding_forward(ids, w), ids)),
                (lambda ids, g: (None, _embedding_backward(ids, g, n, padding_idx, scale_grad_by_freq))))


@composite_node("EmbeddingDenseBackwardBackward0")
def _embedding_dense_backward(g, ids, num_weights, padding_idx):
    """gW = g's rows summed into the rows the ids name (`ids` an array: PyTorch's node has g's edge alone)."""
    ids = wrap(ids.reshape(-1))
    g2 = g.reshape(ids.shape[0], g.shape[-1])
    if padding_idx is not None:
        g2 = g2 * (ids != padding_idx).unsqueeze(1).to(g2.dtype)
    # (scale_grad_by_freq left out: PyTorch's double backward of the scaled gradient is the plain lookup)
    return g2.new_zeros((num_weights, g2.shape[1])).index_add(0, ids, g2)


class SparseEmbedding(Embedding):
    """embedding(sparse=True): the weight's gradient a COO tensor of one row per id looked up, in lookup
    order and uncoalesced, as PyTorch's (an optimizer then touches only those rows)."""
    node_name = "EmbeddingBackward0"

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # (forward: the dense node's)
        if ctx.scale_grad_by_freq:  # (PyTorch refuses it at the backward, not the call)
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")

        ids = ctx._saved_indices.array.reshape(-1)
        rows = g.array.reshape(ids.size, g.array.shape[-1])
        return (sparse_rows_grad(ids, rows, ctx.num_weights, ctx.padding_idx),)

    double_backward = array_step = None  # (the dense node's: a sparse gradient has neither)


def sparse_rows_grad(ids, rows, n, padding_idx):
    """The (n, C) gradient of row ids[i] += rows[i] as a COO tensor, uncoalesced, in lookup order (PyTorch's)."""
    from minigrad.sparse import SparseTensor  # (the sparse module loads only on this path)

    if padding_idx is not None:  # the padding row's lookups are left out, not kept as zeros
        keep = ids != padding_idx
        ids, rows = ids[keep], rows[keep]
    indices = wrap(ids.astype(np.int64).reshape(1, -1))
    # (a gradient that is no array of its own, as sum's expanded one, stays a view: PyTorch's values keep its layout,
    # and a later sparse add of non-contiguous values concatenates rather than merges)
    return SparseTensor(indices, wrap(rows.copy() if rows.flags.c_contiguous else rows), (n, rows.shape[1]),
                        coalesced=ids.size < 2)  # (one element or none: coalesced, as PyTorch flags it)


def sparse_embedding(input, weight, padding_idx=None, scale_grad_by_freq=False):
    check_embedding_ids(input)
    n = weight.array.shape[0]
    if padding_idx is not None:
        padding_idx %= n
    return SparseEmbedding.apply(input, weight, padding_idx, scale_grad_by_freq)


def _embedding_backward(ids, g, n, padding_idx, scale_grad_by_freq=False):
    """gW[v] = sum of g at the positions where ids == v (padding row: 0); scale_grad_by_freq: / count(v)."""
    idx = ids.reshape(-1)
    g = g.reshape(idx.size, g.shape[-1])  # (not -1: no ids at all is a (0, C) gradient)
    if scale_grad_by_freq:  # each position's share (the ids' rows, not the whole table: fewer)
        g = g / xp_of(idx).bincount(idx, minlength=n)[idx].astype(g.dtype)[:, None]
    gw = scatter_add_rows(idx, g, n)
    if padding_idx is not None:
        gw[padding_idx] = 0
    return gw


def _embedding_forward(idx, w):  # out[...] = w[idx[...]]
    _check_ids(idx, w.shape[0])  # (here: a replayed step checks each call's ids)
    return xp_of(w).take(w, idx, axis=0)


ONE_HOT_MAX = 128  # up to this many rows, a one-hot GEMM beats sorting


def scatter_add_rows(idx, g, n):
    """zeros((n, C)) with row g[i] added at idx[i] (repeats summed): the embedding gradient.

    np.add.at is slow (an unbuffered loop): for a small vocabulary a one-hot GEMM (n, N) @ (N, C);
    else a stable sort of the ids and np.add.reduceat over runs of equal ids (a plain scatter when no
    id repeats). The CPU backend's is one compiled loop over the rows in order; the GPU's, cupyx's
    atomic adds.
    """
    impl = backends.find("embedding", g, idx, n)
    if impl is not None:
        return impl.backward(g, idx, n)
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


def check_embedding_ids(input):
    """PyTorch's errors for embedding ids that are not a Tensor of integers (the range is checked in the op)."""
    check_tensor_arg(input, "embedding", "indices", 2)
    if input.array.dtype.type not in (np.int64, np.int32):  # (PyTorch's two index types)
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {type_text(input.dtype)} instead (while checking arguments for embedding)")


def embedding(input, weight, padding_idx=None, scale_grad_by_freq=False):
    check_embedding_ids(input)
    n = weight.array.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError(f"padding_idx {padding_idx} must be within num_embeddings {n}")
        padding_idx %= n
    if scale_grad_by_freq:
        return Embedding.apply(input, weight, padding_idx, True)
    return Embedding.apply(input, weight, padding_idx)


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Scale in place, outside autograd, every row of `weight` that `input` looks up and whose p-norm exceeds
    max_norm, down to max_norm: w[i] *= max_norm / (||w[i]||_p + 1e-7) (PyTorch's rule, its 1e-7 included).
    minigrad.compile replays it as one call (a write to the array outside an op would happen at the capture
    only, and every later call would look rows up unscaled)."""
    if recording.hook.recorder is not None:
        recording.hook.recorder.on_call(_renorm_rows, weight, input, max_norm, norm_type)
    else:
        _renorm_rows(weight, input, max_norm, norm_type)
    return weight


def _renorm_rows(weight, input, max_norm, norm_type):
    _check_ids(input.array, weight.array.shape[0])
    xp = xp_of(weight.array)
    ids = xp.unique(input.array.reshape(-1))
    rows = weight.array[ids]
    norms = xp.linalg.norm(rows, ord=norm_type, axis=-1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(rows.dtype)
    weight.array[ids] = rows * scale[:, None]
    weight._bump_version()  # an in-place change: a graph that saved the old weight must notice
