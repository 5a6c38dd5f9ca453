"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp."""
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..device import array_module
from ..tensor import Tensor, dtype_argument
from ._util import normalize_dim
from .reduction import values_indices


def _dim(input, dim):
    d = normalize_dim(dim, input.array.ndim)
    return d if input.array.ndim else None


def _integral_to_int64(input, dtype, name):
    dtype = dtype_argument(dtype, name)
    if dtype is not None:
        return input.to(dtype)
    if input.array.dtype.kind in "biu":
        from ..dtypes import int64

        return input.to(int64)
    return input


def _running(a):
    """The dtype a scan of array `a` runs in, PyTorch's accumulation type, each result rounded once (numpy would
    round every running value): float16's in float32, a CPU float32's in float64; else a's own."""
    if a.dtype == np.float16:
        return np.float32
    return np.float64 if a.dtype == np.float32 and isinstance(a, np.ndarray) else a.dtype


def reverse_cumsum(g, dim):
    """sum_{j >= i} g_j along dim: the adjoint of cumsum."""
    from .movement import flip

    if dim is None:
        return g
    return flip(cumsum(flip(g, (dim,)), dim), (dim,))


class Cumsum(Function):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        if dim is None:
            return a.array.copy()
        x = a.array
        xp = array_module(x)
        if xp is np and x.dtype == np.float32:
            # PyTorch's CPU scan of float32 runs in double (its accumulation type there), each result rounded
            # once; converted first, then scanned in place (numpy's scan with a dtype= casts through buffers,
            # ~3 times slower)
            s = x.astype(np.float64)
            return np.cumsum(s, axis=dim, out=s).astype(np.float32)
        return xp.cumsum(x, axis=dim, dtype=_running(x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):  # d(cumsum a)_j / da_i = [i <= j]: the gradient summed from the end
        return reverse_cumsum(g, ctx.dim), None


def cumsum(input, dim=None, dtype=None):
    """Running sums along `dim` (bool and integer inputs give int64, as PyTorch)."""
    if dim is None:
        raise TypeError('cumsum() missing 1 required positional arguments: "dim"')
    input = _integral_to_int64(input, dtype, "cumsum")
    return Cumsum.apply(input, _dim(input, dim))


class Cumprod(Function):
    node_name = "CumprodBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.save(self=a)
        ctx.dim = dim
        if dim is None:
            return a.array.copy()
        return array_module(a.array).cumprod(a.array, axis=dim, dtype=_running(a.array)).astype(a.array.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):  # d(cumprod a)_j / da_i = prod_{k <= j, k != i} a_k for i <= j
        a, result = ctx.saved_tensors
        if a.array.dtype.kind == "c":  # g conj(d out/da): the same products of the conjugates
            a, result = a.conj(), result.conj()
        if ctx.dim is None or a.array.shape[ctx.dim] == 1:  # the result is a: g as it is (as PyTorch: not
            return g, None  # g * result / a, NaN for an inf or NaN)
        if not bool((a.array == 0).any()):
            return reverse_cumsum(g * result, ctx.dim) / a, None
        if state.grad_enabled:  # create_graph: the products depend on a (even where g is a constant)
            return _cumprod_grad_with_zeros_recorded(a, g, ctx.dim), None
        return Tensor._wrap(_cumprod_grad_with_zeros(a.array, g.array, result.array, ctx.dim)), None


def _cumprod_grad_with_zeros_recorded(a, g, dim):
    """The gradient where some a_i are 0, as recorded ops: row i of an (n, n) stack is a with a_i set to 1, whose
    running products are prod_{k <= j, k != i} a_k, summed with g_j over j >= i. Quadratic in the length, so
    kept for create_graph (the array steps above serve every backward without one)."""
    from .elementwise import where

    xp = array_module(a.array)
    a, g = a.movedim(dim, -1), g.movedim(dim, -1)
    n = a.shape[-1]
    eye = Tensor._wrap(xp.eye(n, dtype=bool))
    products = where(eye, 1.0, a.unsqueeze(-2)).to(a.dtype).cumprod(-1)  # [..., i, j]
    upper = Tensor._wrap(xp.triu(xp.ones((n, n), dtype=a.array.dtype)))  # j >= i
    return (products * upper * g.unsqueeze(-2)).sum(-1).movedim(-1, dim)


def _cumprod_grad_with_zeros(a, g, out, dim):
    """The gradient where some a_i are 0 (there prod / a_i is 0/0), by PyTorch's O(n) steps, whose NaNs it
    keeps: before the first zero, the sum of g * out from the end over a; at the first zero z, the sum of g
    times the products from z on without it, times out[z - 1]; after it, 0 (every product there has the
    zero and another factor, even a NaN or inf)."""
    xp = array_module(a)
    a, g, out = (xp.moveaxis(x, dim, -1) for x in (a, g, out))
    zeros_seen = (a == 0).cumsum(-1)
    before = zeros_seen == 0
    first = (zeros_seen == 1) & (a == 0)
    after_first = (zeros_seen == 1) & ~first
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        w = xp.where(before, out * g, 0)
        res = xp.where(before, xp.flip(xp.cumsum(xp.flip(w, -1), -1), -1) / xp.where(before, a, 1), 0)
        tail = (xp.cumprod(xp.where(after_first, a, 1), -1) * xp.where(zeros_seen == 1, g, 0)).sum(-1, keepdims=True)
        z = first.argmax(-1)[..., None]
        prev = xp.where(z == 0, 1, xp.take_along_axis(out, xp.maximum(z - 1, 0), -1))
        res = xp.where(first, tail * prev, res).astype(g.dtype, copy=False)
    return xp.moveaxis(res, -1, dim)


def cumprod(input, dim, dtype=None):
    """Running products along `dim` (bool and integer inputs give int64)."""
    input = _integral_to_int64(input, dtype, "cumprod")
    return Cumprod.apply(input, _dim(input, dim))


class Cummax(Function):
    node_name = "CummaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, largest):
        xp = array_module(a.array)
        ctx.shape, ctx.dim = a.array.shape, dim
        if dim is None:
            idx = xp.zeros((), dtype=np.int64)
            ctx.indices = idx
            ctx.mark_non_differentiable(idx)
            return a.array.copy(), idx
        acc = xp.maximum if largest else xp.minimum
        values = acc.accumulate(a.array, axis=dim)
        # the index is that of the last element that reached the running extreme (ties: the later one,
        # as PyTorch); a nan sticks with its own index
        hit = (a.array == values) | (xp.isnan(a.array) if a.array.dtype.kind == "f" else False)
        shape = [1] * a.array.ndim
        shape[dim] = -1
        pos = xp.where(hit, xp.arange(a.array.shape[dim]).reshape(shape), 0)
        idx = xp.maximum.accumulate(pos, axis=dim).astype(np.int64)
        ctx.indices = idx
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _):  # each running extreme's gradient goes to the element it came from
        from .indexing import index_scatter

        if ctx.dim is None:
            return g, None, None
        return index_scatter(g, ctx.dim, Tensor._wrap(ctx.indices), ctx.shape), None, None


class Cummin(Cummax):
    node_name = "CumminBackward0"


def _empty_scan(input, op):
    """PyTorch returns an empty tensor's scan before it checks the dim."""
    xp = array_module(input.array)
    return values_indices(input.clone(), Tensor._wrap(xp.zeros(input.array.shape, dtype=np.int64)), op)


def cummax(input, dim):
    """Running maxima along `dim` and the index each came from."""
    if input.array.dtype.kind == "c":
        from .complex import refuse

        refuse("cummax", input)
    if input.array.size == 0:
        return _empty_scan(input, "cummax")
    values, indices = Cummax.apply(input, _dim(input, dim), True)
    return values_indices(values, indices, "cummax")


def cummin(input, dim):
    """Running minima along `dim` and the index each came from."""
    if input.array.dtype.kind == "c":
        from .complex import refuse

        refuse("cummin", input)
    if input.array.size == 0:
        return _empty_scan(input, "cummin")
    values, indices = Cummin.apply(input, _dim(input, dim), False)
    return values_indices(values, indices, "cummin")


class Logcumsumexp(Function):
    node_name = "LogcumsumexpBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.save(self=a)
        ctx.dim = dim
        if dim is None:
            return a.array.copy()
        with np.errstate(invalid="ignore"):
            out = array_module(a.array).logaddexp.accumulate(a.array, axis=dim)
        out += 0.0  # the first entry is log(0 + e^x): +0 at x = -0, as PyTorch
        return out

    @staticmethod
    def backward(ctx, g):  # d out_j / d a_i = exp(a_i - out_j) for i <= j (each term <= 1: no overflow)
        from .elementwise import exp, where

        a, result = ctx.saved_tensors
        d = ctx.dim
        if d is None:
            return g, None
        n = a.shape[d]
        a_m, r_m, g_m = a.transpose(d, -1), result.transpose(d, -1), g.transpose(d, -1)
        upper = Tensor._wrap(np.triu(np.ones((n, n), dtype=bool)))  # [i <= j]
        terms = exp(where(upper, a_m.unsqueeze(-1) - r_m.unsqueeze(-2), float("-inf")))
        return (terms * g_m.unsqueeze(-2)).sum(-1).transpose(d, -1), None


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along `dim`, without overflow (floating tensors only)."""
    d = _dim(input, dim)
    if input.array.dtype.kind != "f":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{input.dtype._legacy[:-6]}'")
    return Logcumsumexp.apply(input, d)
