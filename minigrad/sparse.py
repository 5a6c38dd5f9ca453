"""A small COO sparse tensor, for the graph scripts that hold an adjacency matrix as one (pygcn's
`torch.sparse.mm(adj, x)`): construction, coalesce, to_dense, and a sparse @ dense product.

It is made of two dense tensors, `indices` (sparse_dim x nnz, int64) and `values` (nnz x dense dims),
and every op is written with the dense ops (index_select, index_add), so gradients reach both the
dense operand and the values through the ordinary autograd. What PyTorch's sparse tensors do beyond
that raises PyTorch's error for an operator the sparse backend lacks."""
import builtins
import warnings

import numpy as np

from . import dtypes
from .backends.arrays import xp_of
from .autograd.function import Function
from .ops import cat, index_add, index_select
from .ops._util import broadcast_shapes, normalize_dim
from .ops.indexing import Index, IndexPutAdd, _scattered
from .factory import tensor, zeros
from .tensor import Size, Tensor


def _no_sparse_kernel(name):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
        "(if using custom build).")


class SparseTensor:
    """A COO sparse tensor: element indices[:, k] of the full tensor is values[k] (repeats add up)."""

    is_sparse = True
    is_sparse_csr = False

    def __init__(self, indices, values, size, coalesced=False):
        self._indices_t, self._values_t, self._size, self._coalesced = indices, values, Size(size), coalesced

    # ---- what it is -------------------------------------------------------------------
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    def __len__(self):
        return self._size[0]

    def sparse_dim(self):
        return self._indices_t.shape[0]

    def dense_dim(self):
        return self._values_t.dim() - 1

    def _nnz(self):
        return self._indices_t.shape[1]

    @property
    def dtype(self):
        return self._values_t.dtype

    @property
    def device(self):
        return self._values_t.device

    @property
    def layout(self):
        from . import sparse_coo

        return sparse_coo

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values_t

    # ---- autograd: it is its values' ---------------------------------------------------
    @property
    def requires_grad(self):
        return self._values_t.requires_grad

    @property
    def grad_fn(self):
        return self._values_t.grad_fn

    @property
    def is_leaf(self):
        return self._values_t.is_leaf

    def requires_grad_(self, requires_grad=True):
        # its own values, so that marking it does not mark the tensor it was built from
        if self._values_t.is_leaf and self._values_t.requires_grad != requires_grad:
            self._values_t = self._values_t.detach().requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        g = self._values_t.grad
        return None if g is None else SparseTensor(self._indices_t, g, self._size, self._coalesced)

    def detach(self):
        return SparseTensor(self._indices_t, self._values_t.detach(), self._size, self._coalesced)

    # ---- conversions -------------------------------------------------------------------
    def _linear(self):
        """Each element's row-major position among the sparse dims (an array)."""
        idx = self._indices_t.array
        lin = xp_of(idx).zeros(idx.shape[1], dtype=np.int64)
        for d in range(idx.shape[0]):
            lin = lin * self._size[d] + idx[d]
        return lin

    def coalesce(self):
        """Indices sorted and unique, the values of repeats summed."""
        if self._coalesced:
            return self
        xp = xp_of(self._indices_t.array)
        lin, inverse = xp.unique(self._linear(), return_inverse=True)
        rows = []
        for n in reversed(self._size[:self.sparse_dim()]):  # back from positions to indices
            rows.append(lin % n)
            lin = lin // n
        indices = Tensor._wrap(xp.stack(rows[::-1]))
        v = self._values_t
        values = Coalesce.apply(v, inverse.reshape(-1), (indices.shape[1],) + tuple(v.shape[1:]))
        return SparseTensor(indices, values, self._size, coalesced=True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        _check_indices(self._indices_t, self._size)  # (PyTorch's writes past its buffer: its text, not ours)
        v = self._values_t
        n = 1
        for s in self._size[:self.sparse_dim()]:
            n *= s
        return ToDense.apply(v, self._linear(), (n,) + tuple(v.shape[1:]), tuple(self._size))

    def to(self, *args, **kwargs):
        values = self._values_t.to(*args, **kwargs)
        indices = self._indices_t.to(values.device)
        if values is self._values_t and indices is self._indices_t:
            return self
        return SparseTensor(indices, values, self._size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def type(self, dtype=None):
        if dtype is None:
            return "minigrad.sparse." + self._values_t.type().split(".")[-1]
        return self.to(dtype)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def item(self):
        if self._size.numel() != 1:
            raise RuntimeError(f"a Tensor with {self._size.numel()} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def __bool__(self):  # (not __len__'s: a sparse matrix is no list of rows)
        if self._size.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        if max(dim0, dim1) >= self.sparse_dim() or min(dim0, dim1) < -self.sparse_dim():
            raise _no_sparse_kernel("transpose")  # (a dense dim: not here)
        order = list(range(self.sparse_dim()))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        size = list(self._size)
        size[dim0], size[dim1] = size[dim1], size[dim0]
        return SparseTensor(self._indices_t[order], self._values_t, size)

    def index_select(self, dim, index):
        """The slices at `index` along sparse dim `dim`: each picked slice's elements, in index order."""
        dim = normalize_dim(dim, len(self._size))
        if dim >= self.sparse_dim():
            raise _no_sparse_kernel("index_select")  # (along a dense dim: not here)
        idx = np.asarray(index.array if isinstance(index, Tensor) else index).reshape(-1)
        out = idx[(idx < -self._size[dim]) | (idx >= self._size[dim])]
        if out.size:
            raise IndexError(f"index_select(): index contains {out[0]} that is out of range for tensor of size "
                             f"{list(self._size)} at dimension {dim}")
        coords = np.asarray(self._indices_t.array)
        j, k = np.nonzero(coords[dim][None, :] == (idx % self._size[dim])[:, None])  # by output slot, then element
        indices = coords[:, k]
        indices[dim] = j
        size = list(self._size)
        size[dim] = idx.size
        return SparseTensor(Tensor._wrap(indices), index_select(self._values_t, 0, Tensor._wrap(k)), size)

    def select(self, dim, index):
        """The slice at `index` along `dim`: sparse while a sparse dim is left, else dense (the sum of the
        elements there)."""
        d = normalize_dim(dim, self.dim())
        n = self._size[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._size)} at "
                             f"dimension {d}")
        size = self._size[:d] + self._size[d + 1:]
        if d >= self.sparse_dim():  # a dense dim: the values'
            return SparseTensor(self._indices_t, self._values_t.select(d - self.sparse_dim() + 1, index), size,
                                self._coalesced)
        coords = np.asarray(self._indices_t.array)
        k = Tensor._wrap(np.flatnonzero(coords[d] == index % n))
        values = index_select(self._values_t, 0, k)
        if self.sparse_dim() == 1:
            return values.sum(0)
        indices = index_select(self._indices_t[[i for i in range(self.sparse_dim()) if i != d]], 1, k)
        return SparseTensor(indices, values, size, coalesced=k.shape[0] < 2)

    def __getitem__(self, key):
        """Ints (select) and full slices: PyTorch's sparse indexing; any other slice needs as_strided."""
        key = key if isinstance(key, tuple) else (key,)
        if builtins.any(k is Ellipsis for k in key):
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (self.dim() - len(key) + 1) + key[at + 1:]
        out, d = self, 0
        for k in key:
            if isinstance(k, slice) and k == slice(None):
                d += 1
            elif isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool):
                n = out.shape[d]
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
                out = out.select(d, builtins.int(k))
            elif k is None:
                out = out.unsqueeze(d)
                d += 1
            elif isinstance(k, slice):
                raise _no_sparse_kernel("as_strided")
            else:
                raise _no_sparse_kernel("index.Tensor")
        return out

    def narrow_copy(self, dim, start, length):
        """The elements with start <= index < start + length along `dim`, a new sparse tensor."""
        d = normalize_dim(dim, self.dim())
        n = self._size[d]
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if start < 0 or start + length > n:  # (a negative start too: PyTorch's sparse narrow_copy takes none)
            raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a subset of range(0, {n}).")
        size = list(self._size)
        size[d] = length
        if d >= self.sparse_dim():
            return SparseTensor(self._indices_t, self._values_t.narrow(d - self.sparse_dim() + 1, start, length),
                                size, self._coalesced)
        coords = np.asarray(self._indices_t.array)
        k = Tensor._wrap(np.flatnonzero((coords[d] >= start) & (coords[d] < start + length)))
        indices = index_select(self._indices_t, 1, k).clone()
        indices.array[d] -= start
        return SparseTensor(indices, index_select(self._values_t, 0, k), size, self._coalesced)

    def narrow(self, dim, start, length):  # (PyTorch's narrow is a view, made by as_strided: no sparse kernel)
        n = self._size[normalize_dim(dim, self.dim())]
        start = start + n if start < 0 else start
        if start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
        raise _no_sparse_kernel("as_strided")

    def clone(self):
        return SparseTensor(self._indices_t.clone(), self._values_t.clone(), self._size, self._coalesced)

    def _contiguous_values(self):  # (itself where they are)
        if self._values_t.is_contiguous():
            return self
        return SparseTensor(self._indices_t, self._values_t.contiguous(), self._size, self._coalesced)

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return self._values_t.sum(dtype=dtype)
        return _sum_dims(self, dim, keepdim, dtype, SumValues)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout.name in _COMPRESSED:
            return to_compressed(self, layout.name, dense_dim)
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                               "is not supported")
        return self

    def to_sparse_coo(self):
        return self

    def to_sparse_csr(self, dense_dim=None):
        return to_compressed(self, "sparse_csr", dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        return to_compressed(self, "sparse_csc", dense_dim)

    def _cat(self, tensors, dim):  # torch.cat of a list that holds a sparse tensor
        return _concatenate(tensors, dim)

    def _stack(self, tensors, dim):  # torch.stack of a list that holds a sparse tensor: each unsqueezed, then cat
        d = normalize_dim(dim, tensors[0].dim() + 1)
        for i, t in enumerate(tensors):
            if tuple(t.shape) != tuple(tensors[0].shape):
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                                   f"entry 0 and {list(t.shape)} at entry {i}")
        return _concatenate([t.unsqueeze(d) if isinstance(t, SparseTensor) else t for t in tensors], d)

    def unsqueeze(self, dim):
        """A size-1 dim at `dim`: a sparse dim (every element at index 0 along it) up to sparse_dim, else a
        dense one of the values."""
        d = normalize_dim(dim, self.dim() + 1)
        size = tuple(self._size[:d]) + (1,) + tuple(self._size[d:])
        idx = self._indices_t
        if d <= self.sparse_dim():
            indices = cat([idx[:d], zeros(1, idx.shape[1], dtype=idx.dtype, device=idx.device), idx[d:]])
            return SparseTensor(indices, self._values_t, size)
        return SparseTensor(idx, self._values_t.unsqueeze(d - self.sparse_dim() + 1), size)

    # ---- arithmetic: on the values, where PyTorch's result is sparse ----------------------
    def _scalar(self, other):
        """`other` as a number or 0-dim tensor, or None."""
        if isinstance(other, (int, float, bool, np.generic)) or isinstance(other, Tensor) and other.dim() == 0:
            return other
        return None

    def __neg__(self):
        return self.neg()

    def mul(self, other):
        return self * other

    def __add__(self, other):
        return _merge(self, other, 1)


    def __radd__(self, other):  # (a number or a dense tensor on the left reaches here only for a number)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def __sub__(self, other):
        return _merge(self, other, -1)

    __rsub__ = __radd__

    def pow(self, exponent):  # each stored element's power: repeats summed first, as (a + b)^p is not a^p + b^p
        if isinstance(exponent, Tensor):
            raise _no_sparse_kernel("pow.Tensor_Tensor")
        if exponent == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                               "dense")
        s = self.coalesce()
        return SparseTensor(s._indices_t, s._values_t.pow(exponent), self._size, coalesced=True)

    __pow__ = pow

    def __rpow__(self, other):
        raise _no_sparse_kernel("pow.Scalar")

    def __mul__(self, other):
        if self._scalar(other) is not None:
            return SparseTensor(self._indices_t, self._values_t * other, self._size, self._coalesced)
        if isinstance(other, SparseTensor):
            return _intersect(self, other)
        if isinstance(other, Tensor) and other.dim() <= self.dim() and self.dense_dim() == 0:
            broadcast_shapes(tuple(other.shape), tuple(self._size))  # (PyTorch's text where it does not broadcast)
            other = other.expand(self._size)
            picked = index_select(other.reshape(-1), 0, Tensor._wrap(self._linear()))  # the dense at each element
            return SparseTensor(self._indices_t, self._values_t * picked, self._size, self._coalesced)
        raise _no_sparse_kernel("mul")

    __rmul__ = __mul__

    def __truediv__(self, other):
        if self._scalar(other) is None:
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other.shape)} for divisor)")
        return SparseTensor(self._indices_t, self._values_t / other, self._size, self._coalesced)

    def __rtruediv__(self, other):
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{list(self._size)} for divisor)")

    # ---- the product ---------------------------------------------------------------------
    def mm(self, mat2):
        return _mm(self, mat2, SparseMmDense)

    def matmul(self, other):
        if isinstance(other, Tensor) and other.dim() == 1:  # (matmul's vector; mm refuses one)
            return _mm(self, other, SparseMv)
        return _mm(self, other, SparseMmDense)

    __matmul__ = matmul

    def mv(self, vec):
        if not isinstance(vec, Tensor):
            raise TypeError(f"mv(): argument 'vec' (position 2) must be Tensor, not {type(vec).__name__}")
        if self.dim() != 2 or vec.dim() != 1:
            raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: {self.dim()}"
                               f"Tensor Dim: {vec.dim()}")
        if self.shape[1] != vec.shape[0]:
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
        return _mm(self, vec, SparseMv)

    def __rmatmul__(self, other):
        if isinstance(other, Tensor) and other.dim() == 1:  # (matmul's vector: a row, then squeezed)
            return _dense_mm(other.unsqueeze(0), self).squeeze_(0)
        return _dense_mm(other, self)

    def _rmm(self, other):  # torch.mm(other, self)
        return _dense_mm(other, self)

    def smm(self, mat2):
        return smm(self, mat2)

    def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
        return sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def dim_order(self, *, ambiguity_check=False):
        raise AttributeError(f"Can't get dim order on sparse type: {self.type()} Use Tensor.to_dense() to convert "
                             "to a dense tensor first.")

    def __repr__(self):
        from ._format import add_suffixes

        body = f"tensor(indices={_part_repr(self._indices_t, 15)},\n       values={_part_repr(self._values_t, 14)}"
        return add_suffixes(body, _repr_suffixes(self), len("tensor("), force_newline=True)

    @property
    def array(self):
        # what every dense op reads first: refused here in one line, rather than __getattr__'s stub going on
        # into the op and failing somewhere inside it ('function' object has no attribute 'dtype')
        raise NotImplementedError("a sparse COO tensor was passed to an op minigrad runs on dense tensors only "
                                  "(sparse ones take coalesce, to_dense and sparse @ dense): call .to_dense() first")

    def __getattr__(self, name):
        if name.startswith("__") or not hasattr(Tensor, name):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")

        def unsupported(*args, **kwargs):
            raise _no_sparse_kernel(_KERNELS.get(name, name))

        return unsupported


_KERNELS = {"isfinite": "ne.Scalar", "logical_not": "logical_not.out", "logical_not_": "logical_not.out"}  # (ops
# PyTorch runs as others: the one its refusal names)


# PyTorch's elementwise ops on a sparse COO tensor, each a map of its values that keeps zero at zero: name -> the
# op on the values (an alias's target: arcsin is asin), and whether the values are coalesced first (a map that is
# not linear must see each element's sum, as |a + b| is not |a| + |b|); the in-place form of such an op wants a
# coalesced tensor. The top-level functions (minigrad.tanh(s)) reach these methods from their own first look at
# their input: ops/_util.py's not_dense.
_ELEMENTWISE = {
    **{name: (name, False) for name in ("neg", "positive", "conj_physical")},
    **{name: (name, True) for name in (
        "abs", "sqrt", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh", "atanh", "expm1", "log1p", "sign", "sgn",
        "ceil", "floor", "round", "trunc", "frac", "relu", "square", "deg2rad", "rad2deg", "erf", "erfinv",
        "nan_to_num", "isnan", "isinf", "isposinf", "isneginf", "signbit")},
    "negative": ("neg", False), "absolute": ("abs", True), "fix": ("trunc", True), "arcsin": ("asin", True),
    "arctan": ("atan", True), "arcsinh": ("asinh", True), "arctanh": ("atanh", True),
}
_INPLACE_KERNEL = {"square": "pow_.Scalar"}  # (an in-place form PyTorch's sparse backend runs as another op: refused)


def _elementwise(name):
    op, coalesces = _ELEMENTWISE[name]

    def method(self, *args, **kwargs):
        if op == "round" and (args or kwargs):
            raise _no_sparse_kernel("round.decimals")
        s = self.coalesce() if coalesces else self
        return SparseTensor(s._indices_t, getattr(s._values_t, op)(*args, **kwargs), s._size, s._coalesced)

    def in_place(self, *args, **kwargs):
        if name in _INPLACE_KERNEL:
            raise _no_sparse_kernel(_INPLACE_KERNEL[name])
        if coalesces and not self._coalesced:
            raise RuntimeError(f"{op}_ requires coalesced input")
        getattr(self._values_t, op + "_")(*args, **kwargs)
        return self

    method.__name__, in_place.__name__ = name, name + "_"
    return method, in_place


for _name in _ELEMENTWISE:
    _method, _in_place = _elementwise(_name)
    setattr(SparseTensor, _name, _method)
    if hasattr(Tensor, _name + "_"):  # (isnan_ and kin: no such method, PyTorch's AttributeError)
        setattr(SparseTensor, _name + "_", _in_place)


def _intersect(a, b):
    """a * b of two sparse tensors: the product at the elements both hold (each one's repeats summed first)."""
    if a._size != b._size or a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    ca, cb = a.coalesce(), b.coalesce()
    _, ia, ib = np.intersect1d(np.asarray(ca._linear()), np.asarray(cb._linear()), assume_unique=True,
                               return_indices=True)
    ia, ib = Tensor._wrap(ia.astype(np.int64)), Tensor._wrap(ib.astype(np.int64))
    values = index_select(ca._values_t, 0, ia) * index_select(cb._values_t, 0, ib)
    return SparseTensor(index_select(ca._indices_t, 1, ia), values, a._size, a._coalesced and b._coalesced)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None, pin_memory=False):
    """A COO sparse tensor of `values` at `indices` (sparse_dim x nnz); `size` defaults to the smallest
    that holds them. Its values keep their autograd history: gradients reach them through its ops."""
    if pin_memory:  # (PyTorch's text here: pinning looks for an accelerator first)
        raise RuntimeError("Cannot access accelerator device when none is available.")
    indices = indices if isinstance(indices, Tensor) else tensor(indices)
    values = values if isinstance(values, Tensor) else tensor(values)
    if indices.dtype != dtypes.int64:  # (PyTorch takes any number dtype and converts)
        indices = indices.long()
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1)
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    if size is None:
        idx = indices.array
        size = [int(m) + 1 for m in idx.max(axis=1)] if idx.shape[1] else [0] * idx.shape[0]
        size += list(values.shape[1:])
    else:
        size = list(size)
        if len(size) != indices.shape[0] + values.dim() - 1:
            raise RuntimeError(f"number of dimensions must be sparse_dim ({indices.shape[0]}) + dense_dim "
                               f"({values.dim() - 1}), but got {len(size)}")
    if check_invariants:
        _check_indices(indices, size)
    out = SparseTensor(indices, values, size, coalesced=bool(is_coalesced) or indices.shape[1] < 2)
    if requires_grad:
        out.requires_grad_()
    return out


def FloatTensor(indices, values, size=None):
    """The legacy constructor pygcn's loaders call (`torch.sparse.FloatTensor(indices, values, shape)`)."""
    warnings.warn("torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated.  Please use "
                  "torch.sparse_coo_tensor(indices, values, shape, dtype=, device=).", UserWarning, stacklevel=2)
    return sparse_coo_tensor(indices, values, size, dtype=dtypes.float32)


class SparseMm(Function):
    """beta * bias + alpha * (sparse @ dense): row r of the product sums values[k] * dense[col[k]] over the
    elements k in row r. The backward is written with dense ops, so that it too can be differentiated."""

    node_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx, values, dense, bias, rows, cols, n_rows, beta, alpha):
        ctx.rows, ctx.cols, ctx.beta, ctx.alpha = Tensor._wrap(rows), Tensor._wrap(cols), beta, alpha
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.save(values=values, dense=dense)
        v, d = values.detach(), dense.detach()
        d2 = d if d.dim() == 2 else d.unsqueeze(1)
        out = index_add(zeros(n_rows, d2.shape[1], dtype=d.dtype, device=d.device), 0, ctx.rows,
                        v.unsqueeze(1) * index_select(d2, 0, ctx.cols), alpha=alpha)
        if bias is not None:
            out = out + bias.detach() * beta if beta != 1 else out + bias.detach()
        return (out if d.dim() == 2 else out.squeeze(1)).array

    @staticmethod
    def backward(ctx, g):
        values, dense = ctx.saved_tensors
        vector = g.dim() == 1
        g2, d2 = (g.unsqueeze(1), dense.unsqueeze(1)) if vector else (g, dense)
        g_rows = index_select(g2, 0, ctx.rows) * ctx.alpha if ctx.alpha != 1 else index_select(g2, 0, ctx.rows)
        grad_values = (g_rows * index_select(d2, 0, ctx.cols)).sum(1)
        grad_dense = index_add(zeros(d2.shape, dtype=d2.dtype, device=d2.device), 0, ctx.cols,
                               values.unsqueeze(1) * g_rows)
        grad_bias = None
        if ctx.bias_shape is not None:
            grad_bias = (g * ctx.beta if ctx.beta != 1 else g).sum_to_size(ctx.bias_shape)
        return (grad_values, grad_dense.squeeze(1) if vector else grad_dense, grad_bias,
                None, None, None, None, None)


class SparseMmDense(SparseMm):  # torch.mm, Tensor.mm and @ of a sparse matrix: their node's name
    node_name = "MmBackward0"


class DenseMmSparse(SparseMm):
    """dense @ sparse by torch.mm, Tensor.mm and @, computed as PyTorch does: (sparse^T @ dense^T)^T, in one node."""

    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, *args):
        return SparseMm.forward(ctx, *args).T

    @staticmethod
    def backward(ctx, g):
        return SparseMm.backward(ctx, g.t())


class SparseMv(SparseMm):
    node_name = "MvBackward0"


def _mm(mat1, mat2, kind, bias=None, beta=1, alpha=1):
    """sparse @ dense (a sparse product where mat2 is sparse too), as the op `kind` names it."""
    if isinstance(mat2, SparseTensor):  # sparse @ sparse: sparse, at the product's nonzeros
        product = _mm(mat1, mat2.to_dense(), kind)
        where = product.array.nonzero()
        return SparseTensor(Tensor._wrap(xp_of(product.array).stack(where)), product[where], product.shape,
                            coalesced=True)
    if not isinstance(mat2, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(mat2).__name__}")
    if mat2.dim() == 1 and kind is not SparseMv:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0:
        raise RuntimeError(f"addmm: matrices expected, got {mat1.sparse_dim()}D, {mat2.dim()}D tensors")
    if mat2.dim() not in (1, 2):
        raise RuntimeError(f"addmm: matrices expected, got 2D, {mat2.dim()}D tensors")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype._legacy[:-6]} but found {mat2.dtype._legacy[:-6]}")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}")
    if bias is not None:
        target = [mat1.shape[0], mat2.shape[1]]
        try:
            np.broadcast_shapes(tuple(bias.shape), tuple(target))
        except ValueError:
            raise RuntimeError(_expand_error(bias.shape, target)) from None
    rows, cols = mat1._indices_t.array
    return kind.apply(mat1._values_t, mat2, bias, rows, cols, mat1.shape[0], beta, alpha)


def _expand_error(shape, target):
    for d in range(1, len(shape) + 1):
        if shape[-d] != 1 and shape[-d] != target[-d]:
            return (f"The expanded size of the tensor ({target[-d]}) must match the existing size ({shape[-d]}) at "
                    f"non-singleton dimension {len(target) - d}.  Target sizes: {list(target)}.  Tensor sizes: "
                    f"{list(shape)}")
    return f"expand: the bias of shape {list(shape)} does not broadcast to {list(target)}"


def mm(mat1, mat2):
    """torch.sparse.mm: sparse @ dense, dense @ sparse (dense when both are dense)."""
    if isinstance(mat2, SparseTensor) and not isinstance(mat1, SparseTensor):
        return _dense_mm(mat1, mat2, SparseMm)
    if not isinstance(mat1, SparseTensor):
        from .ops import mm as dense_mm

        return dense_mm(mat1, mat2)
    return _mm(mat1, mat2, SparseMm)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    if not isinstance(mat1, SparseTensor):
        from .ops import addmm as dense_addmm

        return dense_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
    return _mm(mat1, mat2, SparseMm, mat, beta, alpha)


def dsmm(input, mat2):
    """torch.dsmm: sparse @ dense, a dense result."""
    return _mm(input, mat2, SparseMmDense)


def hspmm(mat1, mat2):
    """torch.hspmm: sparse @ dense as a hybrid COO tensor of the product's rows that the sparse matrix has
    elements in."""
    product = _mm(mat1, mat2, SparseMmDense)
    rows = xp_of(mat1._indices_t.array).unique(mat1._indices_t.array[0])
    return SparseTensor(Tensor._wrap(rows.reshape(1, -1)), index_select(product, 0, Tensor._wrap(rows)),
                        product.shape, coalesced=True)


def _merge(a, b, sign):
    """a + b or a - b of two sparse tensors, as PyTorch merges them: one walk along both element lists, taking
    the element whose indices come first (both where equal), so that coalesced inputs make a coalesced sum."""
    if not isinstance(b, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if b._size != a._size:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a._size)} != "
                           f"{list(b._size)}")
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but got "
                           f"{a.sparse_dim()} and {b.sparse_dim()}")
    if not (a._values_t.is_contiguous() and b._values_t.is_contiguous()):  # (PyTorch's add then appends b's
        # elements after a's, uncoalesced: its walk reads contiguous values only)
        return SparseTensor(cat([a._indices_t, b._indices_t], 1), cat([a._values_t, b._values_t * sign], 0),
                            a._size, False)
    xp = xp_of(a._indices_t.array)
    la, lb = a._linear(), b._linear()  # (row-major positions order elements as their indices do)
    if a._coalesced and b._coalesced:
        lin = xp.union1d(la, lb)
        pa, pb = xp.searchsorted(lin, la), xp.searchsorted(lin, lb)
    else:  # an order the inputs' own: the walk itself
        la_, lb_, pa, pb, i, j, n = la.tolist(), lb.tolist(), [], [], 0, 0, 0
        lin = []
        while i < len(la_) or j < len(lb_):
            x = la_[i] if i < len(la_) else None
            y = lb_[j] if j < len(lb_) else None
            take_a = y is None or x is not None and x <= y
            take_b = x is None or y is not None and y <= x
            lin.append(x if take_a else y)
            if take_a:
                pa.append(n)
                i += 1
            if take_b:
                pb.append(n)
                j += 1
            n += 1
        lin, pa, pb = (xp.asarray(q, dtype=np.int64) for q in (lin, pa, pb))
    rows = []
    for n in reversed(a._size[:a.sparse_dim()]):  # back from positions to indices
        rows.append(lin % n)
        lin = lin // n
    indices = Tensor._wrap(xp.stack(rows[::-1]).reshape(a.sparse_dim(), -1))
    va, vb = a._values_t, b._values_t
    room = zeros(indices.shape[1], *va.shape[1:], dtype=va.dtype, device=va.device)
    placed_b = index_add(room, 0, Tensor._wrap(pb), vb)
    values = index_add(room, 0, Tensor._wrap(pa), va) + (placed_b if sign == 1 else -placed_b)
    return SparseTensor(indices, values, a._size, coalesced=a._coalesced and b._coalesced)


def spmm(input, mat2):
    return _mm(input, mat2, SparseMmDense) if isinstance(input, SparseTensor) else mm(input, mat2)


def _dense_mm(mat1, mat2, kind=DenseMmSparse):
    """dense @ sparse as (mat2^T @ mat1^T)^T, PyTorch's route, with its checks and texts. torch.sparse.mm's
    result (kind SparseMm) is that product's transpose; torch.mm's is one node."""
    if not isinstance(mat1, Tensor) or mat2.sparse_dim() != 2 or mat2.dense_dim() != 0:
        raise _no_sparse_kernel("mm")
    if mat1.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    product = _mm(mat2.t(), mat1.t(), kind)
    return product if kind is DenseMmSparse else product.transpose(0, 1)


def _check_indices(indices, size):
    """PyTorch's check_invariants texts for indices outside `size`."""
    idx = indices.array
    if not idx.shape[1]:
        return
    low, high = idx.min(axis=1), idx.max(axis=1)
    for d in range(idx.shape[0]):
        if low[d] < 0:
            raise RuntimeError(f"found negative index {int(low[d])} for dim {d}")
        if high[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{int(high[d])}")




# ---- to dense and coalesced: values added at their places, PyTorch's nodes ---------------------------------
class ToDense(Function):
    node_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx, values, rows, flat, size=None):  # zeros(flat)[rows] += values (repeats summed), seen as size
        ctx.rows, ctx.flat = rows, flat
        out = _scattered(values.array, flat, (rows,), True)
        return out if size is None else out.reshape(size)

    @staticmethod
    def backward(ctx, g):  # each value's gradient is the gradient at its place
        return Index.apply(g.reshape(ctx.flat), (ctx.rows,), True), None, None, None


class Coalesce(ToDense):
    node_name = "CoalesceBackward0"


# ---- from dense, cat, sum over dims ---------------------------------------------------------
class ToSparse(Function):
    node_name = "ToSparseBackward1"

    @staticmethod
    def forward(ctx, a, rows, sparse_dim):  # values = a's rows (over its first sparse_dim dims) holding a nonzero
        shape = a.array.shape
        ctx.shape, ctx.rows = shape, rows
        ctx.flat = (int(np.prod(shape[:sparse_dim])),) + shape[sparse_dim:]
        return a.array.reshape(ctx.flat)[rows]

    @staticmethod
    def backward(ctx, g):  # each row's gradient back at its place, zero elsewhere
        return IndexPutAdd.apply(g, ctx.flat, (ctx.rows,), True).reshape(ctx.shape), None, None


class ToSparseWithDim(ToSparse):
    node_name = "ToSparseBackward0"


def to_sparse(a, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: a coalesced COO tensor of `a`'s rows (over its first sparse_dim dims) that hold a nonzero."""
    if blocksize is not None:
        raise RuntimeError("dense_to_sparse: conversion from Strided to Sparse with blocksize argument given is not "
                           "supported")
    if layout is not None and layout.name in _COMPRESSED:
        return to_compressed(a, layout.name, dense_dim)
    if layout not in (None, _coo()):
        raise _no_sparse_kernel("to_sparse")  # (the block layouts: not here)
    k = a.dim() if sparse_dim is None else sparse_dim
    if not 0 <= k <= a.dim():
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{a.dim()}] range, but {k} is given")
    if k == 0 and a.dim():
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    arr = a.array
    xp = xp_of(arr)
    flat = arr.reshape(int(np.prod(arr.shape[:k])), int(np.prod(arr.shape[k:])))  # (not -1: an empty tensor's rows)
    rows = xp.flatnonzero((flat != 0).any(axis=1)) if flat.shape[1] else xp.zeros(0, dtype=np.int64)
    indices = xp.stack(xp.unravel_index(rows, arr.shape[:k])) if k else xp.zeros((0, len(rows)), dtype=np.int64)
    values = (ToSparse if sparse_dim is None else ToSparseWithDim).apply(a, rows, k)
    return SparseTensor(Tensor._wrap(indices.astype(np.int64)), values, a.shape, coalesced=True)


def _coo():
    from . import sparse_coo

    return sparse_coo


def _concatenate(tensors, dim):
    """torch.cat of sparse tensors: along a sparse dim each one's indices shifted past the ones before; along
    a dense dim each one's values padded with zeros to the others' places."""
    first = tensors[0]
    if not isinstance(first, SparseTensor):
        raise NotImplementedError("Could not run 'aten::_values' with arguments from the 'CPU' backend.")
    for i, t in enumerate(tensors):
        if not isinstance(t, SparseTensor):
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at position {i}.")
    d = normalize_dim(dim, first.dim())
    ks = first.sparse_dim(), first.dense_dim()
    for i, t in enumerate(tensors):
        if (t.sparse_dim(), t.dense_dim()) != ks:
            raise RuntimeError(f"All tensors must have the same sparse_dim and dense_dim: {ks[0]}, {ks[1]}, but tensor "
                               f"at position {i} has {t.sparse_dim()}, {t.dense_dim()}.")
        if any(a != b for j, (a, b) in enumerate(zip(t.shape, first.shape)) if j != d):
            raise RuntimeError(f"All tensors must have the same shape: {list(first.shape)} (except in the "
                               f"concatenating dimension), but found shape: {list(t.shape)} at position {i}.")
    size = list(first.shape)
    size[d] = builtins.sum(t.shape[d] for t in tensors)
    if d < ks[0]:
        xp, shifted, offset = xp_of(first._indices_t.array), [], 0
        for t in tensors:
            idx = t._indices_t.array.copy()
            idx[d] += offset
            shifted.append(idx)
            offset += t.shape[d]
        return SparseTensor(Tensor._wrap(xp.concatenate(shifted, axis=1)), cat([t._values_t for t in tensors]), size)
    vd, padded, before = d - ks[0] + 1, [], 0  # (the dim in the values, after their nnz dim)
    for t in tensors:
        v = t._values_t
        after = size[d] - before - t.shape[d]
        pad = [zeros(*v.shape[:vd], n, *v.shape[vd + 1:], dtype=v.dtype, device=v.device) for n in (before, after)]
        padded.append(cat([pad[0], v, pad[1]], vd))
        before += t.shape[d]
    return SparseTensor(cat([t._indices_t for t in tensors], 1), cat(padded), size)


class SumValues(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, v, inverse, n, axes, keepdim, shape):  # out[inverse[k]] += v[k] summed over dense dims `axes`
        ctx.shape, ctx.axes, ctx.keepdim, ctx.inverse = v.array.shape, axes, keepdim, inverse
        x = v.array.sum(axis=axes, keepdims=keepdim) if axes else v.array
        out = index_add(zeros(n, *x.shape[1:], dtype=v.dtype, device=v.device), 0, Tensor._wrap(inverse),
                        Tensor._wrap(x)).array
        ctx.grouped = out.shape
        return out if shape is None else out.reshape(shape)  # (a shape: the dense result of summing every sparse dim)

    @staticmethod
    def backward(ctx, g):  # each element gets its group's gradient, spread over the summed dense dims
        g = index_select(g.reshape(ctx.grouped), 0, Tensor._wrap(ctx.inverse))
        if ctx.axes and not ctx.keepdim:
            for a in ctx.axes:
                g = g.unsqueeze(a)
        return g.expand(ctx.shape), None, None, None, None, None


class SparseSum(SumValues):
    node_name = "SparseSumBackward0"


def _sum_dims(s, dim, keepdim, dtype, kind):
    """The sum over `dim`: a dense tensor when every sparse dim is summed, else sparse over the ones left."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, s.dim()) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    v = s._values_t if dtype is None else s._values_t.to(dtype)
    k = s.sparse_dim()
    axes = tuple(sorted(d - k + 1 for d in dims if d >= k))
    idx = s._indices_t.array
    kept = [d for d in range(k) if d not in dims]
    lin = xp_of(idx).zeros(idx.shape[1], dtype=np.int64)
    for d in kept:
        lin = lin * s.shape[d] + idx[d]
    groups, inverse = xp_of(idx).unique(lin, return_inverse=True)
    size = [1 if d in dims else n for d, n in enumerate(s.shape) if keepdim or d not in dims]
    out = kind.apply(v, inverse.reshape(-1), len(groups) if kept else 1, axes, keepdim, None if kept else size)
    if not kept:  # every sparse dim summed: one group, a dense result
        return out
    rows = []
    for d in reversed(kept):  # back from positions to indices
        rows.append(groups % s.shape[d])
        groups = groups // s.shape[d]
    rows = rows[::-1]
    if keepdim:
        zero = xp_of(idx).zeros_like(rows[0])
        rows = [rows[kept.index(d)] if d in kept else zero for d in range(k)]
    return SparseTensor(Tensor._wrap(xp_of(idx).stack(rows)), out, size, coalesced=not keepdim)


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: over every element (a dense 0-dim tensor) or over `dim` (sparse while a sparse dim is left)."""
    if dim is None:
        return input.sum(dtype=dtype)
    return _sum_dims(input, dim, False, dtype, SparseSum)


# ---- softmax over the specified elements, sparse_mask --------------------------------------------------
class SparseSoftmax(Function):
    """softmax of the values along a dim, the unspecified elements left out (as if they were -inf): over the
    elements that share every other sparse index (`groups`), or along a dense dim of the values (`axis`)."""

    node_name = "SparseSoftmaxBackward0"
    log = False

    @staticmethod
    def forward(ctx, v, groups, n_groups, axis, log):
        ctx.groups, ctx.n_groups, ctx.axis, ctx.log = groups, n_groups, axis, log
        x = v.array
        xp = xp_of(x)
        if axis is None:
            top = xp.full((n_groups,) + x.shape[1:], -np.inf, dtype=x.dtype)
            xp.maximum.at(top, groups, x)
            shifted = x - top[groups]
        else:
            shifted = x - x.max(axis=axis, keepdims=True) if x.size else x
        e = xp.exp(shifted)
        total = _group_sum_array(ctx, e)
        out = shifted - xp.log(total) if log else e / total
        ctx.save(result=Tensor._wrap(out))
        return out

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if ctx.log:  # d log_softmax: g - softmax * sum(g)
            return g - y.exp() * _group_sum(ctx, g), None, None, None, None
        return y * (g - _group_sum(ctx, g * y)), None, None, None, None


class SparseLogSoftmax(SparseSoftmax):
    node_name = "SparseLogSoftmaxBackward0"
    log = True


def _group_sum_array(ctx, x):
    """Each element's sum over its group (or along the axis), as an array shaped as x."""
    if ctx.axis is not None:
        return x.sum(axis=ctx.axis, keepdims=True)
    total = xp_of(x).zeros((ctx.n_groups,) + x.shape[1:], dtype=x.dtype)
    xp_of(x).add.at(total, ctx.groups, x)
    return total[ctx.groups]


def _group_sum(ctx, x):  # (the same with dense ops, for the backward)
    if ctx.axis is not None:
        return x.sum(ctx.axis, keepdim=True)
    groups = Tensor._wrap(ctx.groups)
    total = index_add(zeros(ctx.n_groups, *x.shape[1:], dtype=x.dtype, device=x.device), 0, groups, x)
    return index_select(total, 0, groups)


def _softmax(input, dim, dtype, kind):
    if not isinstance(input, SparseTensor):
        raise NotImplementedError(f"Could not run 'aten::_sparse_{'log_' if kind.log else ''}softmax' with "
                                  "arguments from the 'CPU' backend.")
    d = normalize_dim(dim, input.dim())
    s = input.coalesce()
    v = s._values_t if dtype is None else s._values_t.to(dtype)
    k = s.sparse_dim()
    if d >= k:
        values = kind.apply(v, None, 0, d - k + 1, kind.log)
    else:  # the elements that share every other sparse index make one softmax
        idx = s._indices_t.array
        lin = xp_of(idx).zeros(idx.shape[1], dtype=np.int64)
        for e in range(k):
            if e != d:
                lin = lin * s.shape[e] + idx[e]
        groups, inverse = xp_of(idx).unique(lin, return_inverse=True)
        values = kind.apply(v, inverse.reshape(-1), len(groups), None, kind.log)
    return SparseTensor(s._indices_t, values, s._size, coalesced=True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: a softmax along `dim` of the specified elements only; the result has input's elements."""
    return _softmax(input, dim, dtype, SparseSoftmax)


def log_softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, SparseLogSoftmax)


class SparseMask(ToSparse):
    node_name = "SparseMaskBackward0"


def sparse_mask(input, mask):
    """Tensor.sparse_mask: the dense `input` at the elements of the sparse `mask`, as a sparse tensor with mask's indices."""
    if not isinstance(mask, SparseTensor):
        raise NotImplementedError("Could not run 'aten::sparse_mask' with arguments from the 'CPU' backend.")
    if tuple(input.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(input.shape)} but "
                           f"mask has size {list(mask.shape)}")
    values = SparseMask.apply(input.to(mask.dtype) if input.dtype != mask.dtype else input, mask._linear(),
                              mask.sparse_dim())
    return SparseTensor(mask._indices_t, values, mask._size, mask._coalesced)


# ---- CSR and CSC: compressed arrays, the ops through COO -------------------------------------------------
_COMPRESSED = {"sparse_csr": ("crow_indices", "col_indices"), "sparse_csc": ("ccol_indices", "row_indices")}


class CompressedTensor:
    """A CSR (or CSC) matrix: the compressed pointers into its rows (columns), each element's column (row)
    and its values. What it does beyond holding them, it does as the COO tensor it converts to."""

    is_sparse = False
    _compressed = True

    def __init__(self, compressed, plain, values, size, layout_name):
        self._compressed_t, self._plain_t, self._values_t = compressed, plain, values
        self._size, self._layout_name = Size(size), layout_name

    @property
    def layout(self):
        from . import sparse_csc, sparse_csr

        return sparse_csr if self._layout_name == "sparse_csr" else sparse_csc

    @property
    def is_sparse_csr(self):
        return self._layout_name == "sparse_csr"

    shape = SparseTensor.shape
    size, dim, ndim, __len__ = SparseTensor.size, SparseTensor.dim, SparseTensor.ndim, SparseTensor.__len__
    dtype, device = SparseTensor.dtype, SparseTensor.device
    requires_grad, grad_fn, is_leaf = SparseTensor.requires_grad, SparseTensor.grad_fn, SparseTensor.is_leaf
    requires_grad_ = SparseTensor.requires_grad_

    def _nnz(self):
        return self._values_t.shape[0]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def values(self):
        return self._values_t

    def _refuse(self, name):
        return RuntimeError(f"{name} expected sparse {'row' if 'r' in name[:2] else 'column'} compressed tensor "
                            f"layout but got {'SparseCsr' if self.is_sparse_csr else 'SparseCsc'}")

    def crow_indices(self):
        if not self.is_sparse_csr:
            raise self._refuse("crow_indices")
        return self._compressed_t

    def col_indices(self):
        if not self.is_sparse_csr:
            raise self._refuse("col_indices")
        return self._plain_t

    def ccol_indices(self):
        if self.is_sparse_csr:
            raise self._refuse("ccol_indices")
        return self._compressed_t

    def row_indices(self):
        if self.is_sparse_csr:
            raise self._refuse("row_indices")
        return self._plain_t

    def indices(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got "
                           f"{'SparseCsr' if self.is_sparse_csr else 'SparseCsc'}")

    def detach(self):
        return CompressedTensor(self._compressed_t, self._plain_t, self._values_t.detach(), self._size,
                                self._layout_name)

    # ---- conversions: through COO --------------------------------------------------------
    def to_sparse_coo(self):
        c, p = self._compressed_t.array.astype(np.int64), self._plain_t.array.astype(np.int64)
        xp = xp_of(c)
        outer = xp.repeat(xp.arange(len(c) - 1), xp.diff(c))  # each element's row (column, for CSC)
        if self.is_sparse_csr:
            return SparseTensor(Tensor._wrap(xp.stack([outer, p])), self._values_t, self._size, coalesced=True)
        # (CSC's elements go by column, not in COO's row-major order: an uncoalesced tensor, as PyTorch's)
        return SparseTensor(Tensor._wrap(xp.stack([p, outer])), self._values_t, self._size,
                            coalesced=len(p) == 1)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout is _coo():
            return self.to_sparse_coo()
        return to_compressed(self, layout.name, dense_dim)

    def to_sparse_csr(self, dense_dim=None):
        return self if self.is_sparse_csr else to_compressed(self, "sparse_csr", dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        return self if not self.is_sparse_csr else to_compressed(self, "sparse_csc", dense_dim)

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self.to_sparse_coo().to_dense(dtype)

    def t(self):  # (the same arrays read the other way: CSR's transpose is a CSC matrix)
        other = "sparse_csc" if self.is_sparse_csr else "sparse_csr"
        return CompressedTensor(self._compressed_t, self._plain_t, self._values_t, self._size[::-1], other)

    def _like(self, values):
        return CompressedTensor(self._compressed_t, self._plain_t, values, self._size, self._layout_name)

    def __mul__(self, other):
        if SparseTensor._scalar(self, other) is None:
            raise _no_sparse_kernel("mul")
        return self._like(self._values_t * other)

    __rmul__ = __mul__

    def __neg__(self):
        return self._like(-self._values_t)

    def to(self, *args, **kwargs):
        values = self._values_t.to(*args, **kwargs)
        return self if values is self._values_t else self._like(values)

    def _check_product(self, other):
        if isinstance(other, Tensor) and other.dim() == 2 and other.shape[0] != self._size[1]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self._size[0]}x{self._size[1]} and "
                               f"{other.shape[0]}x{other.shape[1]})")

    def mm(self, mat2):
        self._check_product(mat2)
        return self.to_sparse_coo().mm(mat2)

    def matmul(self, other):
        self._check_product(other)
        return self.to_sparse_coo().matmul(other)

    __matmul__ = matmul

    def __rmatmul__(self, other):
        if isinstance(other, Tensor) and other.dim() == 2 and other.shape[1] != self._size[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({other.shape[0]}x{other.shape[1]} and "
                               f"{self._size[0]}x{self._size[1]})")
        return _dense_mm(other, self.to_sparse_coo())

    _rmm = __rmatmul__

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __repr__(self):
        from ._format import add_suffixes

        names = _COMPRESSED[self._layout_name]
        body = (f"tensor({names[0]}={_part_repr(self._compressed_t, 7 + len(names[0]) + 1)},\n"
                f"       {names[1]}={_part_repr(self._plain_t, 7 + len(names[1]) + 1)},\n"
                f"       values={_part_repr(self._values_t, 14)}")
        return add_suffixes(body, _repr_suffixes(self), len("tensor("))

    array = SparseTensor.array

    def _unsupported_layout(self):
        return RuntimeError(f"unsupported tensor layout: {'SparseCsr' if self.is_sparse_csr else 'SparseCsc'}")

    def __getattr__(self, name):
        if name.startswith("__") or not hasattr(Tensor, name):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")

        def unsupported(*args, **kwargs):
            raise NotImplementedError(
                f"Could not run 'aten::{name}' with arguments from the "
                "'SparseCsrCPU' backend. This could be because the operator doesn't exist "
                "for this backend, or was omitted during the selective/custom build process (if using custom build).")

        return unsupported


def _compressed_elementwise(name):
    """A compressed tensor's method `name` (and its in-place form) of the COO table's zero-keeping ops: the op on
    its values, its pointers kept (no coalescing: each element is stored once)."""
    op = _ELEMENTWISE[name][0]

    def method(self, *args, **kwargs):
        if op == "round" and (args or kwargs):
            raise self._unsupported_layout()
        return self._like(getattr(self._values_t, op)(*args, **kwargs))

    def in_place(self, *args, **kwargs):
        getattr(self._values_t, op + "_")(*args, **kwargs)
        return self

    method.__name__, in_place.__name__ = name, name + "_"
    return method, in_place


_COMPRESSED_LACKS = ("square", "nan_to_num")  # (PyTorch's compressed layouts run these as other ops: refused)
for _name in _ELEMENTWISE:
    if _name not in _COMPRESSED_LACKS:
        _method, _in_place = _compressed_elementwise(_name)
        setattr(CompressedTensor, _name, _method)
        if hasattr(Tensor, _name + "_"):
            setattr(CompressedTensor, _name + "_", _in_place)


def to_compressed(a, layout_name, dense_dim=None):
    """A CSR or CSC matrix of `a` (dense, COO or compressed), made from its coalesced COO form."""
    if dense_dim:
        raise RuntimeError(f"to_{layout_name}: minigrad's compressed tensors have no dense dims")
    coo = a if isinstance(a, SparseTensor) else a.to_sparse_coo() if isinstance(a, CompressedTensor) else None
    if coo is None:
        if a.dim() != 2:
            raise RuntimeError(f"to_{layout_name}: minigrad's compressed tensors are matrices (2-D), but got a "
                               f"{a.dim()}-D tensor")
        coo = to_sparse(a)
    if coo.sparse_dim() != 2 or coo.dense_dim() != 0:
        raise RuntimeError(f"to_{layout_name}: minigrad's compressed tensors are matrices (2 sparse and 0 dense "
                           f"dims), but got {coo.sparse_dim()} sparse and {coo.dense_dim()} dense")
    coo = coo.coalesce()
    rows, cols = coo._indices_t.array
    xp, values = xp_of(rows), coo._values_t
    if layout_name == "sparse_csr":
        outer, plain, n = rows, cols, coo.shape[0]
    else:
        order = xp.lexsort((rows, cols))
        outer, plain, n = cols[order], rows[order], coo.shape[1]
        values = index_select(values, 0, Tensor._wrap(order))
    compressed = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(xp.bincount(outer, minlength=n))])
    return CompressedTensor(Tensor._wrap(compressed.astype(np.int64)), Tensor._wrap(plain.astype(np.int64)), values,
                            coo.shape, layout_name)


def _compressed_tensor(compressed, plain, values, size, dtype, device, requires_grad, check_invariants, layout_name):
    compressed = compressed if isinstance(compressed, Tensor) else tensor(compressed)
    plain = plain if isinstance(plain, Tensor) else tensor(plain)
    values = values if isinstance(values, Tensor) else tensor(values)
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    names = _COMPRESSED[layout_name]
    if compressed.dim() != 1 or plain.dim() != 1 or values.dim() != 1:
        raise RuntimeError(f"{names[0]}, {names[1]} and values: minigrad's compressed tensors are matrices "
                           f"(1-D each), but got {compressed.dim()}-D, {plain.dim()}-D and {values.dim()}-D")
    outer = compressed.shape[0] - 1
    if size is None:
        inner = int(plain.array.max()) + 1 if plain.numel() else 0
        size = (outer, inner) if layout_name == "sparse_csr" else (inner, outer)
    size = tuple(size)
    if len(size) != 2:
        raise RuntimeError(f"{layout_name[7:]}: minigrad's compressed tensors are matrices (2-D), but got size "
                           f"{list(size)}")
    if check_invariants:
        if compressed.dtype != plain.dtype or compressed.dtype not in (dtypes.int32, dtypes.int64):
            raise RuntimeError(f"{names[0]} and {names[1]} must have the same dtype, bot got "
                               f"{compressed.dtype._legacy[:-6]} and {plain.dtype._legacy[:-6]}, respectively")
        n_outer = size[0] if layout_name == "sparse_csr" else size[1]
        if compressed.shape[0] != n_outer + 1:
            raise RuntimeError(f"{names[0]}.shape[-1] must be equal to the number of "
                               f"{'rows' if layout_name == 'sparse_csr' else 'columns'} + 1 (={n_outer + 1}), but got "
                               f"{compressed.shape[0]}")
        c, p = compressed.array, plain.array
        if c[0] != 0:
            raise RuntimeError(f"`{names[0]}[..., 0] == 0` is not satisfied.")
        if c[-1] != plain.shape[0]:
            raise RuntimeError(f"`{names[0]}[..., -1] == nnz` is not satisfied.")
        n_inner = size[1] if layout_name == "sparse_csr" else size[0]
        if p.size and (p.min() < 0 or p.max() >= n_inner):
            which = "ncols" if layout_name == "sparse_csr" else "nrows"
            raise RuntimeError(f"`0 <= {names[1]} < {which}` is not satisfied.")
    if plain.shape[0] != values.shape[0]:
        raise RuntimeError(f"{names[1]} and values must have the same number of elements, but got "
                           f"{plain.shape[0]} and {values.shape[0]}")
    out = CompressedTensor(compressed, plain, values, size, layout_name)
    if requires_grad:
        out.requires_grad_()
    return out


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None):
    """A CSR matrix: the elements of row r are col_indices[crow_indices[r]:crow_indices[r + 1]], with their values."""
    return _compressed_tensor(crow_indices, col_indices, values, size, dtype, device, requires_grad, check_invariants,
                              "sparse_csr")


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None):
    """A CSC matrix: the elements of column c are row_indices[ccol_indices[c]:ccol_indices[c + 1]], with their values."""
    return _compressed_tensor(ccol_indices, row_indices, values, size, dtype, device, requires_grad, check_invariants,
                              "sparse_csc")


def _part_repr(t, indent):
    """One part of a sparse tensor's repr (indices, values, ...): an empty part names its size, as a dense
    tensor's repr would not."""
    from ._format import tensor_repr
    from .device import to_device

    suffixes = [] if t.numel() else [f"size={tuple(t.shape)}"]
    return tensor_repr(to_device(t.array, "cpu"), suffixes).replace("\n", "\n" + " " * indent)


def _repr_suffixes(t):
    """size, nnz, a dtype not the default's, layout, then grad_fn or requires_grad: PyTorch's order."""
    suffixes = [f"size={tuple(t._size)}", f"nnz={t._nnz()}"]
    if t.dtype not in (dtypes.default_float, dtypes.default_complex(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={t.layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return suffixes


class SparseSspaddmm(Function):
    """PyTorch records sspaddmm (and smm, which is it) with no derivative: grad_fn=<NotImplemented>."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, values, *inputs):  # (the result's values, made already; the inputs only carry the history)
        return values

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::sspaddmm is not implemented")


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """torch.sspaddmm: beta * input + alpha * (mat1 @ mat2), sparse and uncoalesced as PyTorch makes it:
    input's elements first, then each row of mat1 that holds an element as a full row of the product
    (smm: input None, nothing to add)."""
    if not builtins.any(isinstance(a, SparseTensor) for a in (input, mat1, mat2)):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with layout Strided")
    if isinstance(mat2, SparseTensor):
        raise RuntimeError("sspaddmm: expected 'mat2' to have strided layout, got 'mat2' with layout Sparse")
    smm = input is None
    if not smm and not isinstance(input, SparseTensor):  # (PyTorch fails an internal assert here: one clear line)
        raise RuntimeError("sspaddmm: expected 'self' to have sparse layout, got 'self' with layout Strided")
    if mat1.sparse_dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #2: matrices expected, got {mat1.sparse_dim()}D tensor")
    if mat1.dense_dim() != 0:
        raise RuntimeError(f"sspaddmm: Argument #2: scalar values expected, got {mat1.dense_dim()}D values")
    if mat2.dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #3: matrices expected, got {mat2.dim()}D tensor")
    (n, m), k = mat1.shape, mat2.shape[1]
    sizes = ((3, 0, m, mat2.shape[0]),) + (() if smm else ((1, 0, n, input.shape[0]), (1, 1, k, input.shape[1])))
    for arg, d, want, got in sizes:
        if want != got:
            raise RuntimeError(f"sspaddmm: Argument #{arg}: Expected dim {d} size {want}, got {got}")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype._legacy[:-6]} but found {mat2.dtype._legacy[:-6]}")
    if not smm and input.dtype != mat1.dtype:
        raise RuntimeError(f"dtype of values ({mat1.dtype._legacy[:-6]}) must match dtype of sparse tensor "
                           f"({input.dtype._legacy[:-6]})")
    s = mat1.coalesce()
    rows, cols = s._indices_t.array
    v, d = s._values_t.array, mat2.array
    xp = xp_of(v)
    product = xp.zeros((n, k), dtype=v.dtype)
    xp.add.at(product, rows, (v * v.dtype.type(alpha))[:, None] * d[cols])
    kept = xp.unique(rows)  # (the rows with an element, in order: each a full row, zeros included)
    new_indices = xp.stack([xp.repeat(kept, k), xp.tile(xp.arange(k), len(kept))])
    values, indices = product[kept].reshape(-1), new_indices.astype(np.int64)
    if not smm:
        values = xp.concatenate([input._values_t.array * v.dtype.type(beta), values])
        indices = xp.concatenate([input._indices_t.array, indices], axis=1)
    grads = [t for t in (None if smm else input._values_t, mat1._values_t, mat2) if t is not None and t.requires_grad]
    values = SparseSspaddmm.apply(values, *grads) if grads else Tensor._wrap(values)
    return SparseTensor(Tensor._wrap(indices), values, (n, k), coalesced=False)


def smm(input, mat2):
    """torch.smm: input @ mat2 as sspaddmm's sparse result."""
    if not isinstance(mat2, Tensor) and not isinstance(mat2, SparseTensor):
        raise TypeError(f"smm(): argument 'mat2' (position 1) must be Tensor, not {type(mat2).__name__}")
    return sspaddmm(None, input, mat2)
