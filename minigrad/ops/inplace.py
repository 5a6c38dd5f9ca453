"""In-place ops (`add_`, `mul_`, `zero_`, `masked_fill_`, `t[i] = v`, ...).

Without grad recording they write straight into the array. With it, the out-of-place op is
recorded, its result is copied into this tensor's memory (so views see it), and the tensor's
`grad_fn` is rebased onto the new node. Either way the version counter is bumped, which is how
saved tensors find out that they were overwritten.
"""
import functools
import warnings

import numpy as np

from .. import dtypes
from ..autograd import forward_ad, grad_mode, recording
from ..autograd import function as _function
from ..autograd.function import Function, SavedViewResult, keep_absent_edges
from ..autograd.grad_mode import state
from ..device import array_module
from ..tensor import Tensor, _RetainGrad, invalid_arguments
from ._util import (SHARED_MEMORY_MESSAGE, broadcast_shapes, checked_scalar, may_overlap, output_shape_error, overlaps,
                    repeats_elements, same_elements, writable_alias, too_many_positional, type_name)
from .complex import real_of, refuse, refuse_non_float, view_as_complex, view_as_real
from .conversion import warn_complex_to_real
from .shape import Clone
from .indexing import (Index, IndexPut, masked_fill_mask, spelled_out, refuse_byte_mask_fill, _basic_steps, _check_count, _check_masks, _convert_index, _index_error,
                       _ints_first, _plain_ints, _zero_dim_error, as_int, check_put_shapes, put_values)


_NO_GRAD_VIEW_ADVICE = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
    "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or "
    "both outside (if you want the inplace to be tracked).")
NO_GRAD_VIEW_MESSAGE = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
                        + _NO_GRAD_VIEW_ADVICE)
NO_GRAD_VIEW_BASE_MESSAGE = ("A view was created in no_grad mode and its base or another view of its base has been "
                             "modified inplace with grad mode enabled. " + _NO_GRAD_VIEW_ADVICE)


def no_grad_view_error(op=None, output_nr=0):
    """PyTorch's refusal to write, with grad mode on, into a view taken in no_grad mode; `op`: the view op that
    took a view of that view with grad mode on (its node's name without Backward0), which PyTorch names."""
    if op is None:
        return RuntimeError(NO_GRAD_VIEW_MESSAGE)
    return RuntimeError(f"Output {output_nr} of {op} is a view of a view which was created in no_grad mode and is being "
                        "modified inplace with grad mode enabled. " + _NO_GRAD_VIEW_ADVICE)


def check_inplace(self):
    """PyTorch's refusals of an in-place op on `self` (values or shape) with grad mode on: a leaf that
    requires grad or a view of one, a view taken in no_grad mode, a piece of unbind/split (or a view of
    one), whose op's node could not be rebased onto one piece's write."""
    flag = getattr(self, "_no_grad_view", False)
    if flag is True:
        raise RuntimeError(NO_GRAD_VIEW_MESSAGE)
    base = self._base
    if self._requires_grad:
        if self.grad_fn is None:  # (a leaf taken as a view, `arange(6.).view(2, 3).requires_grad_()`: PyTorch's other text)
            raise RuntimeError(f"a {'view of a ' if base is not None and base.grad_fn is None else ''}leaf Variable that "
                               "requires grad is being used in an in-place operation.")
        if base is not None and getattr(self, "_multi_output", False):
            raise multi_output_error(self._output_nr, self.grad_fn.name().removesuffix("Backward0"))
        if flag:  # a view taken, with grad mode on, of one taken in no_grad mode
            raise no_grad_view_error(self.grad_fn.name().removesuffix("Backward0"), self._output_nr)
    # (a view taken before its base required grad too, or one of a base detach_()ed since: a leaf now)
    if base is not None and base.grad_fn is None and (self._requires_grad or base._requires_grad):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


INFERENCE_WRITE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


def _inference_outside(self):
    """Whether `self` is an inference tensor (or a view of one) written outside inference_mode, which PyTorch
    refuses: it keeps no version counter for such a tensor, so a write could not be seen by a saved one."""
    return (not state.inference and (getattr(self, "_inference", False)
                                     or self._base is not None and getattr(self._base, "_inference", False)))


def multi_output_error(output_nr, op_name):
    return RuntimeError(
        f"Output {output_nr} of {op_name} is a view and is being modified inplace. This view is the output of a "
        "function that returns multiple views. Such functions do not allow the output views to be modified "
        "inplace. You should replace the inplace operation by an out-of-place one.")


OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.")


def check_overlap(self):
    """PyTorch's refusal to write into a tensor some of whose elements share memory (an expanded one)."""
    if not self.array.flags.writeable:
        write_target(self)


def write_target(self, fill=False):
    """The array to write into for read-only self: numpy's broadcast view (an expanded tensor) or a view of one.
    PyTorch refuses a write where elements of self are one memory location, but for a fill (fill_, zero_:
    each gets the one value); a view of distinct elements (`expanded[0]`) takes writes from now on, as its."""
    a = self.array
    shared = repeats_elements(a)
    alias = writable_alias(a) if fill or not shared else None
    if alias is None:
        raise RuntimeError(OVERLAP_MESSAGE)
    if not shared:
        self.array = alias
    return alias


def refuse_shared(self, dst, reads, full=True, differentiable=True):
    """PyTorch's refusal to write into `dst` (self's array, or the view of it written) while reading any of the
    arrays `reads` that shares memory with it (`overlaps`), after autograd's refusals of the write (none for an
    op without a derivative). full=False: an elementwise op's, which may read all of dst (`x.add_(x)`)."""
    for src in reads:
        if overlaps(dst, src, full):
            if differentiable and state.grad_enabled:
                check_inplace(self)
            raise RuntimeError(SHARED_MEMORY_MESSAGE)


def check_in_order(self, others, result=None, differentiable=True, own=None):
    """PyTorch's refusals of an in-place op on `self`, in its order: autograd's (a leaf that requires grad, ...;
    none for an op without a derivative), the op's `own()` checks of its arguments (bool - bool), elements of
    self sharing memory, `others` sharing part of it, `others` not broadcasting into self, then a `result` dtype
    self cannot hold. Every in-place op runs them before its kernel's dtype refusals."""
    if differentiable and state.grad_enabled:
        check_inplace(self)
    if own is not None:
        own()
    check_overlap(self)
    refuse_shared(self, self.array, [o.array for o in others if isinstance(o, Tensor)], False, differentiable)
    check_broadcasts_into(self, *others)
    if result is not None:
        check_cast(self, result)


def check_cast(self, result):
    """PyTorch's refusal of a result dtype self cannot hold: any integer casts into any other (uint8 |= int32
    wraps), nothing casts down a category (float into int, complex into float, anything but bool into bool)."""
    if dtypes._category(result) > dtypes._category(self.array.dtype):
        raise RuntimeError(f"result type {dtypes.from_numpy_dtype(result)._legacy[:-6]} can't be cast to the desired "
                           f"output type {self.dtype._legacy[:-6]}")


def warn_expanded(a, op):
    """PyTorch's deprecation warning for `op` (index_put_, masked_fill_, index_fill_), which it lets write into
    an expanded tensor, where elements of read-only array `a` repeat."""
    if repeats_elements(a):
        example = "tensor[indices] = tensor" if op == "index_put_" else "tensor[mask] = scalar"
        warnings.warn(f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing "
                      f"this operation. This also applies to advanced indexing e.g. {example}", stacklevel=3)


def apply_inplace(self, raw, recorded, *others, differentiable=True, fill=False):
    """Modify `self` in place: `raw(array)` without grad, `recorded()` (out-of-place) with it. An op without a
    derivative (logical_not_) is neither checked nor recorded by autograd: its write is always the raw one.
    fill: a write PyTorch makes into an expanded tensor too: True (fill_), the name of an op it warns of there
    (masked_fill_), or setitem's put, checked where it is (its arguments to _put_into_expanded)."""
    if _function.dual_apply is not None:  # a forward-AD level is entered: self may take a tangent
        return forward_ad.apply_inplace(self, raw, recorded, others, apply_inplace)
    recording.escape("an in-place tensor op (add_, t[i] = v, ...)")
    inference_outside = grad_mode.inference_tensors_made and _inference_outside(self)
    record = False
    if state.grad_enabled and differentiable:
        check_inplace(self)
        if self._requires_grad:
            record = True
        else:  # (a loop, not any() over a generator: this runs for every in-place op, optimizer steps' too)
            for o in others:
                if isinstance(o, Tensor) and o._requires_grad:
                    record = True
                    break
    a = self.array
    if not a.flags.writeable:
        if type(fill) is str:  # (an op PyTorch lets write, with a warning)
            warn_expanded(a, fill)
        elif type(fill) is tuple:
            fill = _put_into_expanded(*fill)
        a = write_target(self, bool(fill) and not record)
    if record and not inference_outside:
        if self._base is not None:
            place = _place_in_base(self.array, self._base.array)
            if place is None:
                raise RuntimeError(
                    "an in-place operation on this view of another tensor, while gradients are being recorded, is "
                    "not supported by minigrad (its base is not a contiguous array of its dtype). Modify the base "
                    "itself (base[index] = value), or clone() the view first, or do it under minigrad.no_grad()."
                )
            out = recorded()
            _inplace_on_view(self, out, place)
            self._version_counter[0] += 1
            self._view_version = self._version_counter[0]  # (its grad_fn is current)
            _output_kept_in(self, out)
            return self
        return write_result(self, recorded())
    else:
        try:
            raw(a)
        except TypeError as e:  # numpy refuses e.g. writing floats into an int tensor
            if not str(e).startswith("Cannot cast"):  # (only its casting refusal: any other TypeError is the caller's)
                raise
            raise RuntimeError(f"result type can't be cast to the desired output type {self.dtype} ({e})") from None
    if inference_outside:  # (PyTorch refuses at the version bump, after its kernel wrote: the values stay written)
        raise RuntimeError(INFERENCE_WRITE_MESSAGE)
    self._version_counter[0] += 1
    return self


def write_result(self, out):
    """An in-place op recorded in the autograd graph: the out-of-place op's result `out` written into
    self's memory, its node self's history, self's version bumped."""
    if out.array.shape != self.array.shape:  # (the op broadcast self to a larger shape: PyTorch's error)
        raise output_shape_error(self.array.shape, out.array.shape)
    _keep_original(self, out.grad_fn)
    a, b = self.array, out.array
    if a.dtype == b.dtype:  # (the usual, `loss += l`: a plain copy, without copyto's dispatch and casting check)
        a[...] = b
    else:
        array_module(a).copyto(a, b, casting="same_kind")
    set_history(self, out.grad_fn)
    self._version_counter[0] += 1
    _output_kept_in(self, out)
    return self


def set_history(t, node):
    """t's history becomes `node` (an in-place write recorded): its retain_grad hook moves to node, as PyTorch's
    does, so .grad is the gradient of t as it is now; other hooks stay on the node they were registered on."""
    old, nr = t.grad_fn, t._output_nr
    t.grad_fn, t._output_nr, t._requires_grad = node, 0, True
    hooks = t._retains_grad and old is not None and old._pre_hooks and old._pre_hooks.get(nr)
    for key, hook in list(hooks.items()) if hooks else ():
        if type(hook) is _RetainGrad:
            del hooks[key]
            node._register_tensor_hook(0, hook)


def _output_kept_in(self, out):
    """Where the out-of-place op saved its output `out` for backward (relu_'s, sigmoid_'s), what it saved is
    self from here on, at its version now: a later in-place op on self is caught, as PyTorch catches it."""
    node = out.grad_fn
    saved = getattr(node, "_saved", None) or ()
    for i, s in enumerate(saved):
        if s is not None and s.is_output and s.tensor is out.array:
            if self._base is not None and getattr(self._base.grad_fn, "fn", None) is node:  # (folded: CopySlices')
                saved[i] = SavedViewResult(self)
            else:
                s.tensor, s.counter, s.version = self.array, self._version_counter, self._version_counter[0]


def in_graph(self, others):
    """Whether an in-place op on self with tensor arguments `others` is recorded in the autograd graph
    (grad mode on, self or one of them requiring grad), self being no view: what minigrad.compile
    records as the out-of-place op whose result self stands for (capture.py's `on_inplace_in_graph`)."""
    return state.grad_enabled and self._base is None and (
        self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))


def _place_in_base(view, base):
    """Where the elements of the array `view` lie in `base`, the array it views: a Strided place (its offset,
    shape and strides in base's elements), an index of base (one integer array per dim, each of view's shape)
    where two of view's elements are one of base's (an expanded view: its gradient sums them), a PartsOf for a
    real view of a complex base, or None where base is not a C-contiguous numpy array (its memory order is then
    not its index order) of view's dtype or of complex numbers of view's dtype."""
    if type(base) is not np.ndarray or not base.flags.c_contiguous:
        return None
    if view.dtype != base.dtype:
        return _parts_place(view, base)
    size = view.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // size
    strides = tuple([s // size for s in view.strides])
    place = _strided(base.shape, offset, view.shape, strides)
    if place is not None:
        return place
    positions = np.arange(base.size, dtype=np.int64)
    flat = np.lib.stride_tricks.as_strided(positions[offset:], view.shape, [s * positions.itemsize for s in strides])
    if base.ndim == 0:  # no dim to index: its one element, through base.reshape(-1)
        return FlatOf(flat)
    return np.unravel_index(flat, base.shape)


class Strided:
    """A view's place in its base (PyTorch's as_strided of the base): `shape` and `strides` from element
    `offset` of the base's memory, in elements, and `index`, the basic index of the base that gives that view
    where there is one (slices, ints and None: what slicing, select, narrow and unsqueeze take), else None."""
    __slots__ = ("index", "offset", "shape", "strides")

    def __init__(self, index, offset, shape, strides):
        self.index, self.offset, self.shape, self.strides = index, offset, shape, strides

    def of(self, a):
        """The view of array `a` (of the base's shape) at this place; a view of a contiguous copy of `a` where
        no basic index gives it and `a` is not C-contiguous (read it, do not write it)."""
        if self.index is not None:
            return a[self.index]
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        if 0 in self.shape:  # (no elements, so no offset into a's memory to check)
            return a.reshape(-1)[:0].reshape(self.shape)
        n = a.itemsize
        return np.ndarray(self.shape, a.dtype, a, self.offset * n, tuple([s * n for s in self.strides]))


@functools.lru_cache(maxsize=4096)
def _strided(base_shape, offset, shape, strides):
    """The Strided place of a view of a C-contiguous base of `base_shape` with no two elements at one position
    (None for one with: an expanded view); its basic index where each of its dims of more than one element steps
    through a dim of the base of its own, in the base's order, within it (the other dims ints or new dims)."""
    if 0 not in shape:
        reach = 0  # (the view's steps, smallest first: each must pass all the smaller ones together)
        for step, n in sorted((abs(s), n) for s, n in zip(strides, shape) if n > 1):
            if step <= reach:
                return None
            reach += step * (n - 1)
    if 0 in shape or 0 in base_shape:
        return Strided(None, offset, shape, strides)
    base_strides, step = [], 1
    for n in reversed(base_shape):
        base_strides.insert(0, step)
        step *= n
    starts, rest = [], offset
    for bs in base_strides:
        starts.append(rest // bs)
        rest %= bs
    index, d = [], 0
    for n, s in zip(shape, strides):
        if n == 1:
            index.append(None)
            continue
        for e in range(d, len(base_shape)):
            k, r = divmod(s, base_strides[e])
            if k >= 1 and not r and starts[e] + (n - 1) * k < base_shape[e]:
                break
        else:
            return Strided(None, offset, shape, strides)
        index += starts[d:e]
        index.append(slice(starts[e], starts[e] + (n - 1) * k + 1, k if k > 1 else None))
        d = e + 1
    index += starts[d:]
    index.append(Ellipsis)  # (so that ints at every dim give a 0-d view, not a scalar)
    return Strided(tuple(index), offset, shape, strides)


class TakeRegion(Function):
    """The elements of a tensor at a Strided place (PyTorch's as_strided of it)."""
    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, a, place):
        ctx.place, ctx.shape = place, a.array.shape
        return place.of(a.array)

    @staticmethod
    def backward(ctx, g):  # zeros with g at the place
        zeros = Tensor._wrap(np.zeros(ctx.shape, dtype=g.array.dtype))
        return _with_region(zeros, g, ctx.place), None


class PutRegion(Function):
    """A tensor with `value` written at a Strided place (PyTorch's copy_ into its as_strided view)."""
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, a, value, place):
        ctx.place, ctx.value_shape = place, value.array.shape
        out = a.array.copy()
        place.of(out)[...] = value.array
        return out

    @staticmethod
    def backward(ctx, g):  # the overwritten elements pass nothing back to `a`; `value` gets their grads
        from ._util import sum_to

        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = _with_region(g, Tensor._wrap(np.zeros((), dtype=g.array.dtype)), ctx.place)
        if ctx.needs_input_grad[1]:
            gv = sum_to(_region(g, ctx.place), ctx.value_shape)
        return ga, gv, None


def _region(t, place):
    """t's elements at a Strided place (recorded where t requires grad and grad mode is on)."""
    if state.grad_enabled and t._requires_grad:
        return TakeRegion.apply(t, place)
    return Tensor._wrap(place.of(t.array))


def _with_region(t, value, place):
    """t with `value` at a Strided place (recorded where one of them requires grad and grad mode is on)."""
    if state.grad_enabled and (t._requires_grad or value._requires_grad):
        return PutRegion.apply(t, value, place)
    out = t.array.copy()
    place.of(out)[...] = value.array
    return Tensor._wrap(out)


class PartsOf:
    """Where a real view (`.real`, `.imag`, `view_as_real`) lies in its complex base: `at`, of the view's
    shape, the position of each of its elements among the base's parts read as one real array (2k the real
    part of element k, 2k + 1 its imaginary part)."""

    def __init__(self, at):
        self.at = at


class FlatOf(PartsOf):
    """Where a view lies in its 0-d base: `at`, of the view's shape, the position of each of its elements in
    the base read as a 1-element array."""


def _parts_place(view, base):
    """The place (PartsOf) of `view`, a real array, in `base`, a C-contiguous complex array of its parts'
    dtype; None for any other pair of dtypes."""
    if base.dtype.kind != "c" or view.dtype != real_of(base.dtype):
        return None
    size = view.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // size
    positions = np.arange(2 * base.size, dtype=np.int64)
    return PartsOf(np.lib.stride_tricks.as_strided(positions[offset:], view.shape,
                                                   [s // size * positions.itemsize for s in view.strides]))


def _parts(t):
    """A complex tensor's parts as one flat real tensor (recorded: view_as_real, then a reshape)."""
    return view_as_real(t).reshape(-1)


class CopyParts(Function):
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, a, value, at):
        ctx.at = at
        out = a.array.copy()
        out.view(real_of(out.dtype)).reshape(-1)[at] = value.array
        return out

    @staticmethod
    def backward(ctx, g):  # overwritten parts pass nothing back to `a`; `value` gets their grads (re g, im g)
        ga = gv = None
        if ctx.needs_input_grad[0]:
            mask = array_module(g.array).ones(2 * g.array.size, dtype=real_of(g.array.dtype))
            mask[ctx.at] = 0
            ga = view_as_complex((view_as_real(g) * Tensor._wrap(mask.reshape(g.array.shape + (2,)))).contiguous())
        if ctx.needs_input_grad[1]:
            gv = Index.apply(_parts(g), (ctx.at,), True)
        return ga, gv, None


def _inplace_on_view(view, out, place):
    """An in-place op on a view, recorded as PyTorch records it: the base's history is rewritten (its
    node a CopySlices of the op's result `out` into its `place`), and the view's history becomes that
    region of the new base, so later uses of either send their gradients through the op."""
    base = view._base
    fn = out.grad_fn
    _keep_original(view, fn)
    if _folds(view, out):
        new_base = CopySlices.apply(base, out, place)
        _fold(new_base.grad_fn, fn)
    else:  # (out is not the op's own node on the view: a CopySlices of the write alone, out's node its edge)
        new_base = _put_into(base, out, place)
    if new_base.array is not base.array:  # (new_base's values, in memory)
        array_module(view.array).copyto(view.array, out.array, casting="same_kind")
    set_history(base, new_base.grad_fn)
    _region_of_base(view, place)


def _put_into(t, value, place):
    """t with `value` written at its `place` in t (recorded)."""
    if type(place) is Strided:
        return _with_region(t, value, place)
    if type(place) is PartsOf:  # (a write through .real/.imag/view_as_real of a complex base)
        return CopyParts.apply(t, value, place.at)
    if type(place) is FlatOf:  # (a 0-d base: the view's one element is all of it)
        return IndexPut.apply(t, value.reshape(()), ())
    return IndexPut.apply(t, value, place)


def _slice_of(t, place, node=Index):
    """The elements at `place` in t, in the view's shape (recorded as a `node`, or an AsStridedBackward0 for a
    Strided place)."""
    if type(place) is Strided:
        return _region(t, place)
    if type(place) is PartsOf:
        return node.apply(_parts(t), (place.at,), True)
    if type(place) is FlatOf:
        return node.apply(t.reshape(-1), (place.at,), True)
    return node.apply(t, place, True)


def _folds(view, out):
    """Whether out's node is the in-place op's own, its first input the view as it was: PyTorch folds that node
    into CopySlices."""
    fn = out.grad_fn
    if fn is None or out._output_nr != 0 or len(fn._output_meta) != 1 or not fn.next_functions:
        return False
    first = fn.next_functions[0]
    if type(first[0]) is Clone._backward_cls:  # (an op that saves its input runs on a clone)
        first = first[0].next_functions[0]
    return first == (view.grad_fn, view._output_nr if view.grad_fn is not None else 0)


class CopySlices(Function):
    """PyTorch's node of an in-place op on a view, holding the op's own node `fn`: its edges are the base's and
    fn's other inputs'; its backward runs fn's on the view's slice of the gradient, whose gradient for the
    view's old values takes that slice's place in the base's."""
    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, out, place):
        ctx.place = place
        if type(place) is Strided:  # written into the base's own memory (its new values): no copy of it made
            np.copyto(place.of(base.array), out.array, casting="same_kind")
            return base.array
        return _put_into(base, out, place).array  # (grad mode is off in forward: nothing recorded)

    @staticmethod
    def backward(ctx, g):
        if ctx.fn is None:  # (released by an earlier backward)
            raise RuntimeError(_function.FREED_MESSAGE)
        grads = ctx.fn.apply(_slice_of(g, ctx.place))
        ga = None
        if ctx.needs_input_grad[0]:
            old = grads[0]
            if old is None:  # (the op's result does not depend on the view's old values: zero_, fill_, copy_)
                old = Tensor._wrap(array_module(g.array).zeros(_slice_of(g, ctx.place).shape, dtype=g.array.dtype))
            ga = _put_into(g, old, ctx.place)
        return (ga, *grads[1:])


def _release_fn(node):
    """CopySlices' release after a backward without retain_graph, as PyTorch's: it lets go of the op's node (whose
    saved tensors go with it, unless a saved view's history still holds it) and refuses a second backward."""
    node.fn = node._saved = None
    node._freed = True


CopySlices._backward_cls.release_saved = _release_fn


def _fold(node, fn):
    """node (CopySlices) takes fn's place in the graph: fn's edges but the first (the view's) become its own, and
    fn's saved tensors are freed with node's."""
    node.fn = fn
    node.next_functions = node.next_functions[:1] + fn.next_functions[1:]
    needs = fn.needs_input_grad
    node.needs_input_grad = node.needs_input_grad[:1] + tuple([needs[i] for i in fn._tensor_positions[1:]])
    node._tensor_positions = tuple(range(len(node.next_functions)))
    node._n_args = len(node.next_functions)
    node._saved = fn._saved


def regrow_view(view):
    """A view's history made current after its base was written in place since the view was taken (by
    a recorded op, through the base or another view): the view's region of the base as it is now."""
    base = view._base
    if getattr(view, "_no_grad_view", False) is True:  # (its history could not be regrown: PyTorch refuses it)
        raise RuntimeError(NO_GRAD_VIEW_BASE_MESSAGE)
    view._view_version = view._version_counter[0]
    if not base._requires_grad:
        return
    place = _place_in_base(view.array, base.array)
    if place is None:
        raise RuntimeError(
            "a view of a tensor that was modified in place after the view was taken is used where gradients are "
            "recorded, and its base is not a contiguous array of its dtype: take the view again after the "
            "in-place operation"
        )
    _region_of_base(view, place)


class ViewOfModifiedBase(Index):
    """A view's region of its base, regrown after an in-place write: PyTorch rebuilds such a view's history
    from its sizes and strides alone, and names the node after that op."""
    node_name = "AsStridedBackward0"


def _region_of_base(view, place):
    """The view's history made its `place` in its base as the base is now (an Index node after the
    base's grad_fn; its forward's copy of the values is not kept: the view's array stays the view)."""
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        region = _slice_of(view._base, place, ViewOfModifiedBase)
    finally:
        state.grad_enabled = prev
    set_history(view, region.grad_fn)


def _keep_original(self, node):
    """Where the out-of-place op that stands for an in-place one saved `self` for its backward (clamp_'s
    mask reads the input), what it saved is overwritten next: it keeps a copy of self as it was instead,
    in self's place in the graph, as PyTorch's in-place ops keep the original."""
    for s in getattr(node, "_saved", None) or ():
        if s is not None and s.tensor is self:
            original = Tensor._wrap(self.array.copy())
            original.grad_fn, original._output_nr, original._requires_grad = self.grad_fn, self._output_nr, self._requires_grad
            s.tensor, s.counter, s.version = original, original._version_counter, 0


def _data(x):
    return x.array if isinstance(x, Tensor) else x


_OPERANDS = (Tensor, int, float, bool, complex, np.generic)  # (an ndarray is refused, as PyTorch: wrap it first)


def _plain_write(self, other):
    """Whether `self` op= `other` is one numpy call into self's array, as apply_inplace's `raw` makes it:
    a writeable float32/64 numpy array, `other` a float Python number or a tensor of that dtype whose
    shape is self's or its end, nothing to record."""
    a = self.array
    if type(a) is not np.ndarray or a.dtype.kind != "f" or a.dtype.itemsize < 4 or not a.flags.writeable:
        return False
    if grad_mode.inference_tensors_made and _inference_outside(self):
        return False  # (apply_inplace refuses it)
    grad = state.grad_enabled
    if type(other) is Tensor:
        b = other.array
        return (type(b) is np.ndarray and b.dtype == a.dtype and not (grad and (self._requires_grad or other._requires_grad))
                and (b.shape == a.shape or b.shape == a.shape[a.ndim - b.ndim:])  # (a bias's shape: the end of self's)
                # (part of self's memory: check_in_order refuses it; arrays that own theirs share none, unlooked at)
                and (b.base is None and a.base is None or b is a or not np.may_share_memory(a, b)))
    return type(other) is float and not (grad and self._requires_grad)


def _sums_in_place(self, other):
    """Whether `self += other` (or -=) records a gradient in the usual case (a running loss `loss += l`):
    grad mode on, self a float tensor that is neither a view nor a leaf requiring grad, other a tensor of
    its array type and dtype whose shape is self's or its end, one of them requiring grad. The
    out-of-place op's node then becomes self's history (`write_result`): it saves neither input, so self's
    old values are not needed."""
    if type(other) is not Tensor or type(self) is not Tensor or not state.grad_enabled \
            or grad_mode.inference_tensors_made and _inference_outside(self):
        return False
    a, b = self.array, other.array
    return (self._base is None and not (self._requires_grad and self.grad_fn is None)
            and (self._requires_grad or other._requires_grad) and type(a) is np.ndarray and type(b) is np.ndarray
            and b.dtype == a.dtype and a.dtype.kind == "f" and a.flags.writeable
            and (b.shape == a.shape or b.shape == a.shape[a.ndim - b.ndim:])
            and (b is a or not np.may_share_memory(a, b)))  # (part of self's memory: check_in_order refuses it)


def _ufunc_inplace(name, op, torch_name, record_sum=None, refuse=None, alpha_first=None):
    ufunc = getattr(np, name)

    def method(self, other, *args, **kwargs):
        recorder = recording.hook.recorder if recording.recorders_made else None  # (the module global: cheaper)
        if recorder is not None:  # minigrad.compile is capturing: it runs and records this
            if record_sum is not None and not args and not kwargs and _sums_in_place(self, other):
                return recorder.on_inplace_in_graph(self, other, record_sum, write_result)
            return recorder.on_inplace(method, self, (other, *args), kwargs, lambda source: op(source, other, *args, **kwargs))
        # the common case: the numpy call alone (an SGD step's `p.data.add_(p.grad.data, alpha=-lr)` too)
        scale = kwargs["alpha"] if kwargs and len(kwargs) == 1 and "alpha" in kwargs else None if kwargs else 1
        if not args and type(scale) in (int, float) and _function.dual_apply is None and _plain_write(self, other):
            a = self.array
            o = other.array if type(other) is Tensor else other
            ufunc(a, o if scale == 1 else o * scale, a)  # (out given by position: cheaper)
            self._version_counter[0] += 1
            return self
        if args:  # (alpha is keyword-only: add_'s and sub_'s deprecated `(alpha, other)` overload, or PyTorch's error)
            if alpha_first is None:
                raise TypeError(too_many_positional(torch_name, 1, 1 + len(args)))
            other, alpha = alpha_first(other, args, True)
            args, kwargs = (), {**kwargs, "alpha": alpha}
        if record_sum is not None and scale == 1 and not args and _function.dual_apply is None \
                and _sums_in_place(self, other):
            return write_result(self, record_sum(self, other))
        if not isinstance(other, _OPERANDS):  # (p.grad of None, say: PyTorch's words, not numpy's)
            raise TypeError(f"{torch_name}(): argument 'other' (position 1) must be Tensor, not {type_name(other)}")
        xp = array_module(self.array)
        alpha = kwargs.get("alpha", 1)
        if type(other) is Tensor or refuse is not None or self._requires_grad or self._base is not None \
                or not self.array.flags.writeable:  # (else nothing here refuses: `x.mul_(2)` skips the call)
            check_in_order(self, (other,) if type(other) is Tensor else (),
                           own=None if refuse is None else lambda: refuse(self, other))
        mode = kwargs.get("rounding_mode")  # (div_'s: an integer tensor keeps a floor or trunc quotient)
        kind = self.array.dtype.kind
        if kind != "f" or type(other) is complex or type(other) is Tensor and other.array.dtype.kind == "c":
            _check_castable(self, other, name == "true_divide" and mode is None, alpha)

        def raw(a):
            if mode is not None:  # the out-of-place op's rounded quotient, written back
                xp.copyto(a, op(self, other, rounding_mode=mode).array, casting="same_kind")
                return
            o = _data(other)
            if alpha != 1:
                o = o * alpha
            getattr(xp, name)(a, o, out=a, casting="same_kind")

        return apply_inplace(self, raw, lambda: op(self, other, *args, **kwargs), other)

    method.__name__ = torch_name
    method.__doc__ = f"In-place {name}; bumps the version counter."
    return method


def _check_castable(self, other, true_divide, alpha):
    """PyTorch's refusals of an integer or bool tensor's in-place op whose result it cannot hold (`t.add_(0.5)`,
    `t /= 2`), in its words, before numpy's."""
    if isinstance(alpha, float) and self.array.dtype.kind in "iu":  # (it holds the result: its dtype decides)
        from .elementwise import refuse_float_alpha

        refuse_float_alpha(alpha, self, 0)
    result = dtypes.result_type(self, other)
    if true_divide and result.kind not in "fc":
        result = dtypes.default_float.np
    check_cast(self, result)


def _setup():
    from . import elementwise as E

    return {
        "add_": _ufunc_inplace("add", E.add, "add_", functools.partial(E.apply_binary, E.Add),
                               alpha_first=functools.partial(E._alpha_first, "add_")),
        "sub_": _ufunc_inplace("subtract", E.sub, "sub_", functools.partial(E.apply_binary, E.Sub), E.refuse_bool_sub,
                               alpha_first=functools.partial(E._alpha_first, "sub_")),
        "mul_": _ufunc_inplace("multiply", E.mul, "mul_"),
        "div_": _ufunc_inplace("true_divide", E.div, "div_"),
    }


def setitem(self, index, value):
    """`t[index] = value` in place (recorded as PyTorch's CopySlices when grad is needed)."""
    if index is False:  # PyTorch writes nothing for a plain False, checks nothing, records nothing
        return
    if index is True:  # a plain True is PyTorch's None: a copy into t.unsqueeze(0), not an index tensor
        index = None
    if recording.recorders_made and recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs
        recording.hook.recorder.on_inplace(setitem, self, (index, value), {})  # and records this
        return
    index, a = as_int(index, self.array), self.array
    if type(index) is int and type(value) is Tensor and type(a) is np.ndarray and value.array.dtype == a.dtype \
            and a.ndim and -a.shape[0] <= index < a.shape[0] and a.flags.writeable \
            and not (state.grad_enabled and (self._requires_grad or value._requires_grad)):
        # `dC[ix] += demb[k, j]` (its write back) with nothing to record: apply_inplace's raw write, checked here
        v = value.array
        if may_overlap(a, v):
            row = a[index]
            if a.ndim > 1 and v.shape == row.shape and same_elements(row, v):  # (the += write back): written
                self._version_counter[0] += 1
                return
            _refuse_shared_copy(self, row, v)
        put_values(a, index, v)
        self._version_counter[0] += 1
        return
    if not a.ndim and (type(index) is int or type(index) is slice):
        raise _zero_dim_error(index)
    xp = array_module(self.array)
    ids = type(index) is Tensor and a.ndim and index.array.ndim and index.array.dtype in (np.int64, np.int32)
    if ids:  # `x[ids] = v`: what the conversion makes of it, with no int, mask or slice to check
        idx, advanced = (index.array,), True
    else:
        idx, advanced = _convert_index(index, xp, self.array.shape)
    if advanced:
        ordered = idx if ids else _ints_first(idx, self.array.shape)  # (PyTorch checks the integers before the masks)
        if state.grad_enabled and self._requires_grad and self.grad_fn is None:  # (autograd's refusal: after the
            _check_count(idx, a.shape)  # basic items' checks, before index_put_'s own)
            if _index_put_into_a_view(index, a.shape):
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
            check_inplace(self)
        if not ids or may_overlap(a, idx[0]) or type(value) is Tensor and may_overlap(a, value.array):
            _refuse_shared_put(self, idx, value)
        if not ids:
            _check_masks(idx, self.array.shape)
            refuse_byte_mask_fill(index, value)
        idx = ordered
    else:
        # PyTorch's checks, in its order, where it matters: a view of a leaf refused, a step below 1 (numpy takes
        # it), or an index numpy refuses (raw below); otherwise numpy's own checks are the same, and cheaper
        steps = None
        if state.grad_enabled and self._requires_grad or any(type(i) is slice and i.step is not None and i.step < 1
                                                             for i in idx):
            steps = _basic_steps(_plain_ints(idx), a.shape)
        if state.grad_enabled and self._requires_grad and self.grad_fn is None:
            if type(value) is Tensor:  # (PyTorch expands the value to the view before its copy_ is refused)
                check_put_shapes(a, idx, value.array)
            if steps and getattr(self, "_no_grad_view", False):  # (written through the index's view: that op named)
                raise no_grad_view_error(_view_op_name(index, a.shape))
            if steps:  # a basic index into a leaf is a view of it (PyTorch's text says so; all of it is the leaf itself)
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
    if not advanced and type(value) is Tensor and may_overlap(a, value.array):  # (PyTorch's copy_)
        try:
            view = a[idx]
        except IndexError:  # (raw's error, below)
            view = None
        if view is not None:
            _refuse_shared_copy(self, view, value.array)
    if not advanced and state.grad_enabled and self._requires_grad:
        if getattr(self, "_multi_output", False):  # (PyTorch writes into the index's view of the piece: its op named)
            name = _view_op_name(index, self.array.shape)
            if name is not None:
                raise multi_output_error(0, name)
    number = not isinstance(value, Tensor)
    if number:  # (-inf into an integer tensor: PyTorch's overflow text)
        if type(value) not in (int, float, bool, complex) and not isinstance(value, np.generic):
            raise TypeError(f"can't assign a {type_name(value)} to a minigrad.{self.dtype._legacy}")
        value = Tensor._wrap(xp.asarray(checked_scalar(value, self.array.dtype), dtype=self.array.dtype))
    elif value.array.dtype != self.array.dtype:
        if advanced and masked_fill_mask(index, value) is None:  # (PyTorch's index_put_ casts nothing)
            check_put_shapes(a, idx, value.array)
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{self.dtype._legacy[:-6]} for the destination and {value.dtype._legacy[:-6]} for "
                               "the source.")
        value = value.to(self.dtype)

    def raw(a):
        try:
            put_values(a, idx, value.array)
        except IndexError as e:
            if not advanced:
                _basic_steps(_plain_ints(idx), a.shape)  # (PyTorch's error where several components are wrong)
                if idx.count(Ellipsis) > 1:  # (PyTorch's several Ellipsis, as numpy takes them)
                    return put_values(a, spelled_out(_plain_ints(idx), a.shape), value.array)
            raise _index_error(e, a.shape, idx) from None

    def recorded():
        node = IndexPut  # (PyTorch's copy_ or index_put_ into a view of t: CopySlices)
        if advanced and not _index_put_into_a_view(index, a.shape):
            node = IndexPutWhole
        elif not advanced and not (steps if steps is not None else _basic_steps(_plain_ints(idx), a.shape)):
            # no view: PyTorch's fill_ or copy_
            node = FillWhole if not value.array.ndim and self.array.ndim else CopyWhole  # (a 0-d tensor too)
        try:
            return node.apply(self, value, idx)
        except IndexError as e:
            if not advanced and idx.count(Ellipsis) > 1:  # (as raw's)
                return node.apply(self, value, spelled_out(_plain_ints(idx), a.shape))
            raise _index_error(e, a.shape, idx) from None

    # (_put_into_expanded's arguments, asked only where a is read-only: no flags read here on the usual path)
    apply_inplace(self, raw, recorded, value, fill=(a, idx, advanced, index, value))  # (returns None, as PyTorch's)


def _put_into_expanded(a, idx, advanced, index, value):
    """Whether `t[index] = value` writes into `a`, an expanded tensor's read-only array (or a view of one's):
    PyTorch copies into the view a basic index takes, refused where its elements repeat, and makes an
    advanced index's put, with a warning where elements of t repeat."""
    if advanced:
        warn_expanded(a, "index_put_")
        if masked_fill_mask(index, value) is not None:  # (its index_put_ then calls masked_fill_, which warns too)
            warn_expanded(a, "masked_fill_")
        return True
    try:
        return not repeats_elements(a[idx])
    except IndexError:  # (raw's error, below)
        return True


def _refuse_shared_copy(self, view, v):
    """PyTorch's refusal of `t[basic index] = value` (its copy_ into the view) where value shares only part of
    the view's memory; none where value is broadcast (its expanded copy is not dense) or 0-d (a fill)."""
    if v.shape != view.shape:
        if not v.ndim or _shape_after_ones(v.shape) != _shape_after_ones(view.shape):
            return
        v = v.reshape(view.shape)
    refuse_shared(self, view, (v,), full=False)


def _shape_after_ones(shape):
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _refuse_shared_put(self, idx, value):
    """PyTorch's refusal of `t[index] = value` (its index_put_ into the view of t the basic items leave) where
    the value or an index tensor shares memory with that view; none where it writes as masked_fill_ (one
    mask, one value)."""
    a = self.array
    reads = [i for i in idx if type(i) is np.ndarray and i.ndim]
    if len(reads) == 1 and reads[0].dtype == np.bool_ and (type(value) is not Tensor or value.array.size == 1):
        return
    if type(value) is Tensor:
        reads.append(value.array)
    if not any(may_overlap(a, r) for r in reads):
        return
    view = []  # t's view: a slice for each dim an index tensor takes, the basic items as they are
    for i in idx:
        if type(i) is not np.ndarray:
            view.append(i)
        elif i.dtype == np.bool_:
            view += [slice(None)] * i.ndim if i.ndim else [None if i else slice(0, 0)]
        else:
            view.append(slice(None) if i.ndim else int(i))
    try:
        view = a[tuple(view)]
    except IndexError:  # (index_put_'s own error, later)
        return
    refuse_shared(self, view, reads, full=len(reads) > 1 or type(value) is not Tensor)


def _index_put_into_a_view(index, shape):
    """Whether PyTorch's index_put_ for an advanced `index` writes into a view of t, not t: the basic items
    beside the tensors (an int, None, a bool, a slice short of its dim) are applied first, each a view."""
    items = index if type(index) is tuple else (index,)

    def ndims(i):  # the dims of t an item consumes
        if i is None or i is Ellipsis or type(i) is bool:
            return 0
        a = i.array if isinstance(i, Tensor) else i
        return a.ndim if getattr(a, "dtype", None) == np.bool_ else 1

    d = 0
    for i in items:
        if i is Ellipsis:
            d += len(shape) - sum(ndims(j) for j in items)
        elif i is None or type(i) is bool or isinstance(i, (int, np.integer)):
            return True
        elif isinstance(i, Tensor) and not i.array.ndim and i.array.dtype.kind in "iub":
            return True  # (a 0-d integer tensor: an int to PyTorch's indexing; a 0-d bool: a bool)
        elif type(i) is slice:
            if not (i.start in (None, 0) and i.step in (None, 1) and (i.stop is None or i.stop >= shape[d])):
                return True
            d += 1
        else:
            d += ndims(i)
    return False


class IndexPutWhole(IndexPut):
    """`t[tensors] = value` with no basic item beside them: PyTorch's index_put_ into t itself."""
    node_name = "IndexPutBackward0"


class CopyWhole(IndexPut):
    """`t[()] = value` (or `t[...]`, `t[:]`) writing all of t: PyTorch's copy_ into t itself, not into a view."""
    node_name = "CopyBackwards"


class FillWhole(IndexPut):
    """The same with a number or a 0-d tensor, t not 0-d: PyTorch's fill_."""
    node_name = "FillBackward3"


def _view_op_name(index, shape):
    """The op of the last view a basic `index` takes of a tensor of `shape`, PyTorch's indexing taking them
    one index item after another; None where it takes none (`t[:]`, `t[...]`: the tensor itself)."""
    items = index if type(index) is tuple else (index,)
    dims = sum(1 for i in items if i is not None and i is not Ellipsis and type(i) is not bool)
    name, d = None, 0
    for i in items:
        if i is Ellipsis:
            d += len(shape) - dims
        elif i is None or type(i) is bool:
            name = "Unsqueeze"
        elif type(i) is slice:
            if not (i.start in (None, 0) and i.step in (None, 1) and (i.stop is None or i.stop >= shape[d])):
                name = "Slice"
            d += 1
        else:
            name, d = "Select", d + 1
    return name


def zero_(self):
    """Fill with zeros, in place."""
    a = self.array
    if type(a) is np.ndarray and a.ndim and a.flags.c_contiguous and a.flags.writeable \
            and recording.hook.recorder is None and not (state.grad_enabled and self._requires_grad) \
            and not (grad_mode.inference_tensors_made and _inference_outside(self)):
        # zero in every dtype is all bits 0: the array's bytes cleared (a memset, faster than a float fill)
        a.view(np.uint8).fill(0)
        self._version_counter[0] += 1
        return self
    return fill_(self, 0, _node="ZeroBackward0")


def fill_(self, value, _node="FillBackward2"):
    """Fill with `value`, in place."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
        return recording.hook.recorder.on_inplace(fill_, self, (value,), {})
    if isinstance(value, complex):  # (a complex 0-d tensor gives its real part, as PyTorch's)
        from .elementwise import complex_fill

        complex_fill(value, self.dtype)
    v = checked_scalar(_data(value), self.array.dtype)
    if isinstance(value, Tensor):
        return apply_inplace(self, lambda a: a.fill(v), lambda: keep_absent_edges(
            FillTensor.apply(self, value, v), (self, value if value.array.dtype.kind in "fc" else None), (1,)), value)
    return apply_inplace(self, lambda a: a.fill(v), lambda: _overwrite_node(_node).apply(
        self, array_module(self.array).full(self.array.shape, v, dtype=self.array.dtype)), fill=True)


def check_broadcasts_into(self, *others):
    """PyTorch's errors for an in-place op whose other operands (numbers skipped) do not broadcast to
    self's shape: sizes that do not match (self named tensor a), or a broadcast shape larger than self's
    (all operands' broadcast shape named, as PyTorch's TensorIterator does)."""
    s = self.array.shape
    shapes = [o.array.shape for o in others if isinstance(o, Tensor)]
    for o in shapes:
        if o != s and s[len(s) - len(o):] != o:  # (the usual shapes, equal or self's last ones, checked first)
            shape = s
            for b in shapes:
                shape = broadcast_shapes(shape, b)
            if shape != s:
                raise output_shape_error(s, shape)
            return


def copy_(self, src):
    """Copy `src` (broadcast, converted) into this tensor's memory."""
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
        return recording.hook.recorder.on_inplace(copy_, self, (src,), {})
    if not isinstance(src, Tensor):
        if not isinstance(src, _OPERANDS):  # (an ndarray or a list: PyTorch's words, not a silent conversion)
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type_name(src)}")
        src = Tensor._wrap(np.asarray(src))
    refuse_shared(self, self.array, (src.array,), full=False)
    check_broadcasts_into(self, src)

    def raw(a):
        from ..device import to_device

        s = to_device(src.array, self.device)
        if type(a) is np.ndarray and not isinstance(s, (np.ndarray, np.generic)):
            s = np.asarray(s)  # (another library's array, as load_state_dict hands over a torch state_dict's values)
        if s.dtype.kind == "c" and a.dtype.kind not in "cb":  # (PyTorch's warning, not numpy's ComplexWarning)
            warn_complex_to_real()
            s = s.real
        array_module(a).copyto(a, s, casting="unsafe")

    def recorded():  # src's values; self's old history gets a zero gradient
        s = src.to(device=self.device, dtype=self.dtype) if src.array.dtype != self.array.dtype else src
        return Copy.apply(self, s)

    return apply_inplace(self, raw, recorded, src)


class Copy(Function):
    """copy_'s node (PyTorch's CopyBackwards): src's values broadcast over self's; self's old values get zeros."""
    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, a, src):
        ctx.src_shape = src.array.shape
        return array_module(a.array).broadcast_to(src.array, a.array.shape).copy()

    @staticmethod
    def backward(ctx, g):
        from ._util import sum_to

        ga = Tensor._wrap(array_module(g.array).zeros_like(g.array)) if ctx.needs_input_grad[0] else None
        return ga, sum_to(g, ctx.src_shape) if ctx.needs_input_grad[1] else None


def masked_fill_(self, mask, value):
    """Fill positions where `mask` is True with `value`, in place."""
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
        return recording.hook.recorder.on_inplace(masked_fill_, self, (mask, value), {},
                                                  lambda source: _masked_fill(source, mask, value))
    from .elementwise import check_fill_mask, check_fill_value, masked_fill

    if not isinstance(mask, Tensor):
        mask = Tensor._wrap(np.asarray(mask))
    check_fill_mask(mask)
    check_fill_value(value, self.dtype)
    value = checked_scalar(value, self.array.dtype)
    refuse_shared(self, self.array, (mask.array,), full=False)  # (not a 0-d tensor value: PyTorch reads it as a number)
    check_broadcasts_into(self, mask)  # (a causal mask cut shorter than the scores: numpy's ValueError otherwise)

    def raw(a):
        xp = array_module(a)
        xp.copyto(a, xp.asarray(_data(value), dtype=a.dtype), where=xp.broadcast_to(mask.array, a.shape))

    return apply_inplace(self, raw, lambda: masked_fill(self, mask, value), value, fill="masked_fill_")


def clamp_(self, min=None, max=None):
    """Clip to [min, max], in place."""
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: it runs and records this
        return recording.hook.recorder.on_inplace(clamp_, self, (min, max), {}, lambda source: _clamp(source, min, max))
    from .elementwise import clamp, clip_array, integer_bound

    if min is not None and max is not None and isinstance(min, Tensor) is not isinstance(max, Tensor):
        from .elementwise import bounds_error, mixed_bounds  # (a tensor bound beside a number: the rare case)

        if mixed_bounds(min, max):
            raise bounds_error("clamp_", (min, max), method=True)
    bounds = [b for b in (min, max) if b is not None]
    refuse_shared(self, self.array, [b.array for b in bounds if isinstance(b, Tensor)], full=False)
    check_broadcasts_into(self, *bounds)  # (before the dtype's refusals, as PyTorch; numpy's ValueError otherwise)
    if self.array.dtype.kind != "f" and bounds:
        if self.array.dtype.kind == "c":
            from .complex import refuse

            refuse("clamp", self)  # an integer tensor cannot hold float bounds' result
        result = dtypes.result_type(self, *bounds)
        if dtypes._category(result) > dtypes._category(self.array.dtype):
            # (PyTorch names the dtype as C++ does when a bound is a number, by its legacy name otherwise)
            name = (self.dtype._legacy[:-6] if all(isinstance(b, Tensor) for b in bounds)
                    else dtypes.cpp_name(self.array.dtype))
            raise RuntimeError(f"result type {dtypes.from_numpy_dtype(result)._legacy[:-6]} can't be cast to the "
                               f"desired output type {name}")
        if self.array.dtype.kind in "iu":
            min, max = integer_bound(min, self.array.dtype), integer_bound(max, self.array.dtype)
    return apply_inplace(self, lambda a: clip_array(a, min, max, out=a), lambda: clamp(self, min, max))


def uniform_(self, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b) samples (no gradient is recorded)."""
    from .. import random

    random.check_uniform(a, b, self.dtype)
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(uniform_, self, (a, b), {"generator": generator})
    rng = generator or random.generator(array_module(self.array))
    vals = random.floats(rng, "uniform", self.array.shape, self.array.dtype)
    lo = complex(a, a) if vals.dtype.kind == "c" else a  # (a complex tensor's parts each from U(a, b))
    return _write_draws(self, vals * (b - a) + lo, "UniformBackward0")


def normal_(self, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2) samples (no gradient is recorded)."""
    from ..random import check_std

    check_std(std)
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(normal_, self, (mean, std), {"generator": generator})
    from .. import random

    rng = generator or random.generator(array_module(self.array))
    vals = random.floats(rng, "normal", self.array.shape, self.array.dtype)
    if std != 1.0:
        vals *= std
    if mean != 0.0:  # (a complex tensor's real and imaginary parts each get the mean, as PyTorch's)
        vals += complex(mean, mean) if vals.dtype.kind == "c" else mean
    return _write_draws(self, vals, "NormalBackward0")


def bernoulli_(self, p=0.5, generator=None):
    refuse("bernoulli_tensor" if isinstance(p, Tensor) else "bernoulli_", self)
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(bernoulli_, self, (p,), {"generator": generator})
    from .. import random

    rng = generator or random.generator(array_module(self.array))
    p = p.array if isinstance(p, Tensor) else p
    random.check_probability(p)
    return _write_draws(self, rng.random(self.array.shape) < p, "BernoulliBackward1" if np.ndim(p) else "BernoulliBackward2")


# ---- more random fills, from uniform draws (no gradient is recorded) --------------------------------------
def _fill_draws(self, draw, generator, node):
    """Write draw(rng, xp, shape) into the tensor; rng the given generator or the default one."""
    from .. import random

    xp = array_module(self.array)
    rng = generator or random.generator(xp)
    return _write_draws(self, draw(rng, xp, self.array.shape), node)


class Overwrite(Function):
    """Values written over a tensor in a graph (a random fill, fill_ with a number): the old values get a zero
    gradient. A node of PyTorch's name for each fill (`_overwrite_node`)."""

    @staticmethod
    def forward(ctx, a, values):
        return values

    @staticmethod
    def backward(ctx, g):  # (zeros, not g * 0: an inf or NaN in g stays out, as PyTorch's)
        return Tensor._wrap(array_module(g.array).zeros_like(g.array)), None


class FillTensor(Function):
    """fill_ with a 0-d tensor: self's old values get a zero gradient, the value the sum of the output's."""
    node_name = "FillBackward3"

    @staticmethod
    def forward(ctx, a, value, v):
        ctx.dtype = value.dtype
        return array_module(a.array).full(a.array.shape, v, dtype=a.array.dtype)

    @staticmethod
    def backward(ctx, g):  # d/dself = 0, d/dvalue = sum(g)
        return Tensor._wrap(array_module(g.array).zeros_like(g.array)), g.sum().to(ctx.dtype), None


@functools.cache
def _overwrite_node(name):
    return type(name, (Overwrite,), {"node_name": name})


def _write_draws(self, vals, node):
    """Random draws written into the tensor as PyTorch's random fills write them: refused where any in-place
    op is, and, where self is in a graph, a node of the fill's name that cuts its history (no gradient reaches
    its old values)."""
    def raw(a):
        array_module(a).copyto(a, vals, casting="unsafe")

    def recorded():
        return _overwrite_node(node).apply(self, array_module(self.array).asarray(vals, dtype=self.array.dtype))

    return apply_inplace(self, raw, recorded)


def exponential_(self, lambd=1.0, generator=None):  # -log(1 - U) / lambd
    refuse_non_float("exponential_", self)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={float(lambd):g}")
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(exponential_, self, (lambd,), {"generator": generator})
    return _fill_draws(self, lambda rng, xp, s: -xp.log1p(-rng.random(s)) / lambd, generator, "ExponentialBackward0")


def geometric_(self, p, generator=None):  # trials to the first success: floor(log(1 - U) / log(1 - p)) + 1
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={float(p)}")
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(geometric_, self, (p,), {"generator": generator})
    return _fill_draws(self, lambda rng, xp, s: xp.floor(xp.log1p(-rng.random(s)) / np.log1p(-p)) + 1, generator,
                       "GeometricBackward0")


def cauchy_(self, median=0.0, sigma=1.0, generator=None):  # median + sigma tan(pi (U - 1/2))
    refuse_non_float("cauchy_", self)
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(cauchy_, self, (median, sigma), {"generator": generator})
    return _fill_draws(self, lambda rng, xp, s: median + sigma * xp.tan(np.pi * (rng.random(s) - 0.5)), generator,
                       "CauchyBackward0")


def log_normal_(self, mean=1.0, std=2.0, generator=None):  # exp(N(mean, std^2))
    refuse_non_float("log_normal_", self)
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(log_normal_, self, (mean, std), {"generator": generator})
    return _fill_draws(self, lambda rng, xp, s: xp.exp(mean + std * rng.standard_normal(s)), generator,
                       "LogNormalBackward0")


def random_(self, *bounds, generator=None, **kwargs):
    """Integers uniform in [from, to): random_(to), random_(from, to), or random_() over every integer the
    dtype holds exactly ([0, 2^mantissa] for floats, as PyTorch)."""
    from .. import random

    # (PyTorch's node for each form: RandomBackward0 from-to, 1 to, 2 neither)
    node = f"RandomBackward{0 if len(bounds) == 2 or 'from' in kwargs else 1 if bounds or 'to' in kwargs else 2}"
    given = dict(kwargs)
    lo, hi = kwargs.pop("from", 0), kwargs.pop("to", None)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for b in (*bounds, *given.values()):  # (ints: a numpy int or a 0-d integer tensor too; no float, no bool)
        if isinstance(b, (bool, np.bool_)) or not hasattr(b, "__index__") or isinstance(b, Tensor) and b.array.dtype.kind not in "iu":
            raise TypeError(invalid_arguments("random_", bounds, random.RANDOM_OVERLOADS, given))
    random.check_random_generator(generator, bounds)
    if len(bounds) == 1:
        hi = bounds[0]
    elif len(bounds) == 2:
        lo, hi = bounds
    if hi is None:
        d = self.array.dtype
        hi = 2 if d.kind == "b" else (1 << np.finfo(d).nmant) + 1 if d.kind == "f" else int(np.iinfo(d).max) + 1
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    if recording.hook.recorder is not None:  # minigrad.compile is capturing: drawn again at each replay
        return recording.hook.recorder.on_inplace(random_, self, (lo, hi), {"generator": generator})
    return _fill_draws(self, lambda rng, xp, s: random.integers(rng, lo, hi, s), generator, node)


def fill_diagonal_(self, fill_value, wrap=False):
    """Write fill_value on the main diagonal (every dim the same length beyond 2-D; wrap: restart below a tall
    matrix's diagonal every n + 1 rows, as numpy's fill_diagonal)."""
    from .elementwise import FillDiagonal

    a = self.array
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise RuntimeError("all dimensions of input must be of equal length" if a.ndim > 2 else
                           "dimensions must larger than 1")
    if state.grad_enabled and self._requires_grad and self.grad_fn is None:  # (PyTorch writes through a view)
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    fill_value = checked_scalar(fill_value, a.dtype)  # (-inf into an integer tensor: PyTorch's overflow text)
    xp = array_module(a)
    mask = xp.zeros(a.shape, dtype=bool)
    xp.fill_diagonal(mask, True, wrap=wrap)
    mask = Tensor._wrap(mask)
    return apply_inplace(self, lambda arr: xp.copyto(arr, fill_value, where=mask.array, casting="unsafe"),
                         lambda: FillDiagonal.apply(self, mask, fill_value))


def _masked_fill(input, mask, value):
    from .elementwise import masked_fill

    return masked_fill(input, mask if isinstance(mask, Tensor) else Tensor._wrap(np.asarray(mask)), value)


def _clamp(input, min, max):
    from .elementwise import clamp

    return clamp(input, min, max)


def _size_args(sizes):
    """`f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(torch.Size(...))`: the sizes as a tuple of ints."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(int(n) for n in sizes)


def resize_(self, *sizes, memory_format=None):
    """PyTorch's resize_: `sizes`, contiguous, over the memory self views from its first element on (so a
    smaller size stays a view of it, as PyTorch keeps the storage); new memory, the old elements first, where
    that is too small."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _size_args(sizes)
    if min(shape, default=0) < 0:
        raise RuntimeError("numel: integer multiplication overflow")
    if shape == tuple(self.array.shape):  # (PyTorch leaves the tensor as it is, strides and version too)
        return self
    a, n = self.array, int(np.prod(shape))
    root = a
    while getattr(root, "base", None) is not None and hasattr(root.base, "__array_interface__"):
        root = root.base
    xp = array_module(a)
    start = self.storage_offset()
    if xp is np and root.dtype == a.dtype and root.flags.c_contiguous:
        memory = root.reshape(-1)[start:]
    else:  # (memory numpy cannot show flat: the tensor's own elements, in order)
        memory = a.reshape(-1)
    if n <= memory.size:
        new = memory[:n].reshape(shape)
    else:
        new = xp.zeros(n, dtype=a.dtype)  # (PyTorch leaves the new elements uninitialized)
        new[:memory.size] = memory
        new = new.reshape(shape)
    self.array = new
    self._version_counter[0] += 1
    return self


def resize_as_(self, the_template, memory_format=None):
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type_name(the_template)}")
    return resize_(self, the_template.shape)


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) on Python numbers, `tensor` broadcast to self's shape (CPU only,
    outside autograd, as PyTorch's)."""
    return _map(self, "map_", (("other", tensor),), callable)


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), as map_ with two tensors."""
    return _map(self, "map2_", (("x", x), ("y", y)), callable)


def _map(self, name, others, callable):
    from .shape import expand

    for pos, (arg, t) in enumerate(others, 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type_name(t)}")
    if self._requires_grad or any(t._requires_grad for _, t in others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    for arg, t in others:
        if t.dtype != self.dtype:
            label = f"'{arg}'" if name == "map_" else f"argument '{arg}'"  # (PyTorch's two texts)
            raise TypeError(f"{name}: expected torch.{self.dtype._legacy} for {label} (got torch.{t.dtype._legacy})")
    arrays = [expand(t, list(self.shape)).array for _, t in others]
    a = self.array
    for i in np.ndindex(a.shape):
        a[i] = callable(a[i].item(), *(o[i].item() for o in arrays))
    return self  # (PyTorch's map_ leaves the version as it was)


def put_(self, index, source, accumulate=False):
    """self.flatten()[index] = source (+= with `accumulate`), in place, in self's logical (row-major) order."""
    from .indexing import check_put, put, put_array

    check_put(self, index, source, "put_")
    refuse_shared(self, self.array, (index.array, source.array))
    return apply_inplace(self, lambda a: put_array(a, index.array, source.array, accumulate),
                         lambda: put(self, index, source, accumulate), source)


def _memory_of(a):
    """The flat array of the memory `a` views (its first element at `a`'s storage offset), or None where
    numpy cannot show that memory flat."""
    root = a
    while getattr(root, "base", None) is not None and hasattr(root.base, "__array_interface__"):
        root = root.base
    if type(a) is not np.ndarray or root.dtype != a.dtype or not root.flags.c_contiguous:
        return None
    return root.reshape(-1)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """PyTorch's set_: the tensor views `source`'s memory (all of it as `source` shows it, or `size` and
    `stride` from `storage_offset` on); with no source, an empty tensor. Outside autograd's history."""
    if state.grad_enabled:
        check_inplace(self)
    if source is None:
        self.array = array_module(self.array).empty(0, dtype=self.array.dtype)
    else:
        if not isinstance(source, Tensor):
            raise TypeError(f"set_(): expected a Tensor as source, got {type_name(source)} (minigrad has no "
                            "storages to set a tensor to)")
        if source.array.dtype != self.array.dtype:
            raise RuntimeError(f"Could not set tensor of type {dtypes.cpp_name(source.array.dtype)} to a tensor of "
                               f"type {dtypes.cpp_name(self.array.dtype)}")
        if size is None:
            self.array = source.array
        else:
            size = tuple(size)
            if stride is None:  # (contiguous strides)
                stride, step = [], 1
                for n in reversed(size):
                    stride.insert(0, step)
                    step *= max(n, 1)
            memory = _memory_of(source.array)
            if memory is None:
                raise RuntimeError("set_: minigrad views only the memory of a numpy array it can show flat")
            start = source.storage_offset() + storage_offset  # (PyTorch counts it from source's first element)
            end = start + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else start
            if start < 0 or end > memory.size:  # (PyTorch grows the storage: numpy's memory cannot grow)
                raise RuntimeError(f"set_: sizes {list(size)}, strides {list(stride)} from storage offset {start} "
                                   f"need {end} elements; minigrad cannot grow the {memory.size} of this memory")
            self.array = np.lib.stride_tricks.as_strided(
                memory[start:], size, tuple(s * memory.itemsize for s in stride))
    self._version_counter[0] += 1
    return self


def _elements_at(a, place):
    """A copy of the elements of array `a` (of a base's shape) at a view's `place` in it; None for a place neither
    Strided nor an index."""
    if type(place) is Strided:
        return place.of(a).copy()
    return a[place] if type(place) is tuple else None


def _write_at(a, place, value):
    """`value` written into array `a` (of a base's shape) at a view's `place` in it; False, nothing written, for
    a place neither Strided nor an index."""
    if type(place) is tuple:
        a[place] = value
    elif type(place) is Strided:
        c = a if place.index is not None or a.flags.c_contiguous else a.copy()
        place.of(c)[...] = value
        if c is not a:
            a[...] = c
    else:
        return False
    return True


forward_ad.place_in_base, forward_ad.elements_at, forward_ad.write_at = _place_in_base, _elements_at, _write_at
