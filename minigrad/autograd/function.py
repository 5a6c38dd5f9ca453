"""Backward nodes and `Function`, the one mechanism behind every differentiable op.

An op is a `Function` subclass with two static methods side by side:
  forward(ctx, *args)  -> array(s) or Tensor(s)   computed on the inputs' arrays
  backward(ctx, *grads) -> one grad per forward arg (None where there is none)
`Function.apply` runs forward and, when grad mode is on and an input requires grad, makes
`ctx` a backward node: an instance of the op's node class (`MulBackward0`, ...) holding
`next_functions` edges to its inputs' nodes and the tensors forward saved. As in PyTorch,
the ctx that forward fills IS the node that backward later runs on. `wrap_outputs` turns
forward's arrays into the Tensors `apply` returns, each pointing at the node.
"""
import itertools
import re
import threading
import warnings
import weakref
from itertools import repeat
from operator import is_not

import numpy as np

from ..device import array_module
from .._fp_errors import quiet as fp_quiet, restore as fp_restore
from ..dtypes import from_numpy_dtype
from .recording import hook as _capture  # (minigrad.compile's per-thread hook)
from . import grad_mode, recording
from .grad_mode import state

_BACKWARD_SUFFIX = re.compile(r"Backward0?(?=\d*$)")

# Bound by minigrad.tensor right after it defines the class (it imports this module, so this module
# cannot import it): the hot path of Function.apply then pays no import per call.
Tensor = None
accumulate_into_leaf = None  # bound likewise by .engine, which imports this module
dual_apply = None  # forward_ad's Function.apply while a forward-AD level is entered (set by forward_ad)
jvp_ctx = None  # the ctx of the last user Function with a jvp to finish its forward (forward_ad runs its jvp)

_next_seq = itertools.count().__next__  # (the bound method: no builtin next() call per node)


class _ScopeState(threading.local):
    """The innermost `autograd.graph.scope(name)` of this thread; None outside any scope."""

    current = None


scope_state = _ScopeState()
# Set once any thread enters an `autograd.graph.scope` / installs saved-tensor hooks (graph.py): until then
# Function.apply and SavedTensor stop at these module globals rather than read the thread-locals, dearer.
scopes_entered = False
saved_tensors_hooks_used = False


class Node:
    """A node of the backward graph. `next_functions` is a tuple of (node or None, output_nr)."""

    _freed = False
    _scope = None  # the autograd.graph.scope active when the node was made ("transformer.h.0.attn")
    _pre_hooks = None  # {output_nr: {id: fn(grad) -> grad or None}}: tensor hooks on non-leaf outputs
    _node_pre_hooks = None  # {id: fn(grad_outputs) -> grad_outputs or None}: register_prehook's, after the tensor hooks
    _post_hooks = None
    # True once a hook of any of the three kinds above is registered on the node, and for a user Function's node
    # (whose backward may leave grad mode changed: the engine restores it): the engine's one test a node before it
    # looks for each (a node's class varies along the walk, so each read of a class default is a full look-up)
    _hooked = False

    def name(self):
        """The node's name, e.g. 'MulBackward0' (as PyTorch's `grad_fn.name()`)."""
        return type(self).__name__

    _repr_prefix = ""  # a user Function's nodes: "minigrad.autograd.function.", as PyTorch's show their module

    def __repr__(self):
        return f"<{self._repr_prefix}{type(self).__name__} object at {id(self):#x}>"

    def register_hook(self, fn):
        """`fn(grad_inputs, grad_outputs)` runs after this node's backward."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """`fn(grad_outputs)` runs before this node's backward; a tuple it returns replaces the gradients."""
        if self._node_pre_hooks is None:
            self._node_pre_hooks = {}
            self._hooked = True
        return add_hook(self._node_pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        return add_hook(self._pre_hooks.setdefault(output_nr, {}), fn)


_hook_ids = itertools.count()


class RemovableHandle:
    """What every `register_*_hook` returns, a tensor's, a node's or a module's (torch.utils.hooks'): `remove()`
    takes the hook out of its table (id -> hook), also on leaving a `with` block."""

    def __init__(self, table, key=None, extra_tables=(), changes=None):
        self.table, self.id = table, next(_hook_ids) if key is None else key
        self.extra_tables = extra_tables  # a module's tables of flags beside its hooks, keyed by the same id
        self.changes = changes  # a module's change count, where a compiled call guards its hooks

    def remove(self):
        removed = self.table.pop(self.id, None) is not None
        for extra in self.extra_tables:
            extra.pop(self.id, None)
        if removed and self.changes is not None:
            self.changes[0] += 1  # (a compiled call captured with this hook captures again without it)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(table, fn):
    """`fn` appended to `table` (id -> hook, in the order added); -> its handle."""
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`. Made by `leaf_accumulator` alone
    (its `variable`, no `next_functions`, its `_seq`)."""

    def apply(self, grad):
        """Accumulate `grad` into the leaf, after the leaf's hooks (which may replace it)."""
        if self.variable.grad_fn is not None:  # (it was written in place by a recorded op since this graph was made)
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if self.variable._requires_grad:  # (not after requires_grad_(False) or detach_(): PyTorch keeps nothing then)
            accumulate_into_leaf(self.variable, grad)
        hooks = self.variable._post_accumulate_grad_hooks
        if hooks:
            for hook in tuple(hooks.values()):
                hook(self.variable)
        return ()


INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")

_NO_EDGE = (None, 0)  # the edge of a tensor that needs no gradient

# What a node keeps besides its edges and saved tensors is made of atoms (ints, bools, strings, dtypes) or of
# one kept copy (these tables: at most 2**4 flag tuples per length; the names `save` sees): the garbage
# collector stops tracking a tuple of atoms at its first pass, and a step of a small model keeps a thousand
# nodes alive, each object of which a full collection would otherwise walk and every allocation of which
# counts toward the next collection. (So an output's meta names numpy by None rather than by the module.)
_KEPT_FLAGS = {}  # needs_input_grad's tuples of bools, each kept once
_KEPT_META = {}  # shape -> the _output_meta of one numpy output of that shape (and of the dtype it names), kept once
_KEPT_META_MAX = 1024  # (shapes that change at every step, past that many, get their own meta)
_EVERY_POSITION = tuple(tuple(range(n)) for n in range(5))  # _tensor_positions when every argument is a tensor


class SavedTensor:
    """A tensor saved for backward, remembering its version so later in-place edits are caught.

    An op's own output (`_saved_result`) is kept without its grad_fn, as PyTorch keeps it: holding
    the output itself would make a cycle node -> output -> node that only the garbage collector
    frees. `tensor` is then its array alone (no stand-in Tensor made at every such op's forward);
    unpacking makes a tensor on it whose grad_fn is the node.

    With saved-tensor hooks active (`autograd.graph.saved_tensors_hooks`), what is kept is
    whatever `pack_hook(tensor)` returned, given back through `unpack_hook` when needed. As in
    PyTorch, the tensor unpack_hook returns is put back in the original's place in the graph
    (`_reattach`), so a hook may keep a detached copy or a plain array and create_graph still
    differentiates through it.
    """

    __slots__ = (
        "tensor", "packed", "unpack_hook", "version", "counter", "is_output", "_shape", "_dtype", "edge",
    )

    def __init__(self, t, is_output=False):
        if grad_mode.inference_tensors_made and getattr(t, "_inference", False):  # (written in place with no version kept)
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)
        counter = self.counter = t._version_counter
        self.version = counter[0]
        self.is_output = is_output
        hooks = saved_tensors_hooks_used and state.saved_tensors_hooks
        if hooks:
            pack, self.unpack_hook = hooks[-1]
            # the original's place in the graph: its edge (None for an op's output: the node itself)
            self.edge = (None if is_output else t._edge()) if t._requires_grad else False
            self._shape, self._dtype = t.array.shape, t.array.dtype  # (the tensor itself is not kept)
            self.packed = pack(t)
            self.tensor = None
        else:  # (packed, unpack_hook, edge, _shape and _dtype stay unset: they serve a hook's packing only)
            self.tensor = t.array if is_output else t

    @property
    def array(self):
        """The saved array; None where a hook packed it or it was freed."""
        t = self.tensor
        return t if t is None or self.is_output else t.array

    @property
    def shape(self):
        a = self.array
        return self._shape if a is None else a.shape

    @property
    def dtype(self):
        """The array's dtype: the error message alone needs minigrad's name for it."""
        a = self.array
        return self._dtype if a is None else a.dtype

    def unpack(self, node):
        """The saved tensor, after checking it was neither freed nor modified in place."""
        counter = self.counter
        if counter is None:
            raise RuntimeError(FREED_MESSAGE)
        if counter[0] != self.version:
            raise RuntimeError(self._version_message(node))
        t = self.tensor
        if t is None:  # a hook packed it
            return _reattach(self.unpack_hook(self.packed), self.edge, node)
        if self.is_output:
            return Tensor._output(t, node, counter)
        return t

    def _version_message(self, node):
        # As PyTorch 2.13's: a saved output names its own node; a saved input names the node that
        # produces it now (after an in-place op, the in-place op's node); a leaf names none. The node's
        # name loses its "Backward" and a 0 ("output 0 of Mul", "of T1"); the hint depends on anomaly mode.
        # A saved view whose base was written since is named by its history regrown (AsStrided), as
        # PyTorch's reading of its grad_fn regrows it (or refuses, for a view taken under no_grad).
        t = self.tensor
        if not self.is_output and getattr(t, "_base", None) is not None and t._view_version != t._version_counter[0]:
            t._regrow_view()
        fn = node if self.is_output else getattr(t, "grad_fn", None)
        if fn is not None:
            nr = 0 if self.is_output else self.tensor._output_nr
            name = _BACKWARD_SUFFIX.sub('', fn.name())
            if name == "CopySlices":  # (a node PyTorch writes in C++ itself: its message names it by its namespace)
                name = "minigrad::autograd::CopySlices"
            where = f", which is output {nr} of {name},"
        else:
            where = ""
        dims = ", ".join(str(s) for s in self.shape)
        if state.anomaly:
            hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                    "The variable in question was changed in there or anywhere later. Good luck!")
        else:
            hint = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with minigrad.autograd.set_detect_anomaly(True, check_nan=False).")
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [minigrad.{from_numpy_dtype(self.dtype)._legacy} [{dims}]]{where} is at version "
            f"{self.counter[0]}; expected version {self.version} instead. {hint}"
        )

    def nbytes(self):
        """Bytes held by what was saved (a packed value counts if it is a tensor)."""
        data = self.array if self.tensor is not None else getattr(getattr(self, "packed", None), "array", None)
        return int(getattr(data, "nbytes", 0))


class SavedViewResult(SavedTensor):
    """The saved result of an in-place op on a view whose node CopySlices holds: saved as an output (its version
    error names the op), unpacked with the view's history, its region of CopySlices (a double backward reaches
    the op through CopySlices alone). That history is held weakly, as PyTorch's: the view's node leads back to
    CopySlices, which holds this, and a strong reference would make a cycle that only the garbage collector frees.
    Once the view's node is gone, the op's own node stands in, as in PyTorch."""

    __slots__ = ("view_fn",)

    def __init__(self, view):
        super().__init__(view, is_output=True)
        self.view_fn = weakref.ref(view.grad_fn)

    def unpack(self, node):
        fn = self.view_fn()
        if fn is not None and self.counter is not None and self.counter[0] == self.version:  # (errors name the op)
            node = fn
        return super().unpack(node)


_new_object = object.__new__


def _saved(t, is_output=False):
    """`SavedTensor(t, is_output)` as every op's forward makes it (no saved-tensor hooks, no inference
    tensor to refuse), without the class call: a Python __init__ behind a class call costs several
    times a plain function's call, and a recorded op saves one to three tensors."""
    if saved_tensors_hooks_used or grad_mode.inference_tensors_made:
        return SavedTensor(t, is_output)
    s = _new_object(SavedTensor)
    counter = s.counter = t._version_counter
    s.version = counter[0]
    s.is_output = is_output
    s.tensor = t.array if is_output else t
    return s


def _reattach(t, edge, node):
    """What an unpack hook returned, put in the saved original's place in the graph (PyTorch's rule)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"a saved-tensor unpack hook must return a Tensor, got {type(t).__name__}")
    if edge is False:  # the original did not require grad
        return t
    fn, nr = (node, 0) if edge is None else edge
    if t.grad_fn is fn and t._output_nr == nr:
        return t
    out = Tensor._wrap(t.array, version_counter=t._version_counter)
    out._requires_grad = True
    if isinstance(fn, AccumulateGrad):  # a leaf: gradients flow into the original leaf's accumulator
        out._grad_accumulator = weakref.ref(fn)
    else:
        out.grad_fn, out._output_nr = fn, nr
    return out


FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """What a Function's forward gets as `ctx` (PyTorch's name, for annotations and isinstance): the op's backward
    node while recording, a _ForwardOnlyContext when nothing is recorded."""


class BackwardNode(Node, FunctionCtx):
    """Node of a `Function`; the ctx of its forward. Subclassed once per Function."""

    _forward_cls = None
    _saved = None
    _saved_output_nr = None
    # class-level defaults, so that reading them is a plain lookup before anything sets them
    _names = None
    _dirty = None
    _non_diff = None
    _materialize = True

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for backward; read them back as `ctx.saved_tensors`."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = [None if t is None else _saved(t) for t in tensors]
        self._names = None

    def save(node, /, **named):
        """Save tensors under PyTorch's names (`self=`, `other=`): seen as `_saved_self`, ...

        A value may be a plain array (an intermediate a fused op keeps): it is saved as a new
        Tensor, made only here, so a forward that records nothing never pays for one."""
        saved = []
        for t in named.values():  # (a loop: a comprehension is a function call of its own)
            saved.append(None if t is None else _saved(t if isinstance(t, Tensor) else Tensor._wrap(t)))
        node._saved = saved
        names = tuple(named)
        kept = _SAVED_NAME_TUPLES.get(names)
        if kept is None:
            kept = _SAVED_NAME_TUPLES[names] = names
            _read_by_name(names)
        node._names = kept  # (the one kept copy: see _KEPT_FLAGS)

    _a_shape = None  # a binary op's operand shapes (_keep_shapes), None for one equal to the output's
    _b_shape = None

    def _keep_shapes(self, a_shape, b_shape):
        """Keep a binary op's operand shapes, to which its backward sums the gradients (`_shapes`). Most equal the
        output's, kept already: only one that differs is kept, each as its own tuple of ints, which the collector
        stops tracking at its first pass (a pair of them would outlive that pass, still holding tracked tuples)."""
        out = self._output_meta[0][0]
        if a_shape != out:
            self._a_shape = a_shape
        if b_shape != out:
            self._b_shape = b_shape

    @property
    def _shapes(self):
        out = self._output_meta[0][0]
        a, b = self._a_shape, self._b_shape
        return (out if a is None else a), (out if b is None else b)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        tensors = []  # (a loop: a comprehension is a function call of its own)
        for s in self._saved or ():
            tensors.append(None if s is None else s.unpack(self))
        return tuple(tensors)

    def save_for_forward(self, *tensors):
        """Save tensors (or None) for the jvp; it reads them back as `ctx.saved_tensors`."""
        self._saved_forward = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (their versions are bumped)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs):
        """Declare outputs (arrays or tensors returned by forward) that have no gradient."""
        self._non_diff = {id(o) for o in outputs}

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def apply(self, *grads):
        """Run the op's backward; returns one grad per tensor input (in `next_functions` order)."""
        if recording.recorders_made and _capture.recorder is not None:  # minigrad.compile is capturing: it runs
            return _capture.recorder.on_backward(self, grads)  # and records this
        # (`None in grads` would call Tensor.__eq__; a lone gradient, the usual, is tested alone; _materialize, a class
        # default read through a node of any class, last)
        if (grads[0] is None if len(grads) == 1 else not all(map(is_not, grads, repeat(None)))) and self._materialize:
            grads = tuple(_zeros_like_meta(m) if g is None and m is not None else g
                          for g, m in zip(grads, self._output_meta))  # (m None: an output not a tensor)
        cls = self._forward_cls
        out = cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        pos = self._tensor_positions
        if len(out) != len(pos):  # (the usual: one gradient per tensor input, kept as it is)
            if len(out) == self._n_args and (not pos or pos[-1] == len(pos) - 1):
                out = out[:len(pos)]  # one per argument, the tensors first (sum's (grad, None, None)): no call
            else:
                out = self._per_tensor_input(out)
        return self._validated(out) if cls._user else out

    def _per_tensor_input(self, out):
        """backward's result, one gradient per tensor input (PyTorch's forms: one per argument, or one per
        tensor argument, or None past the last)."""
        pos = self._tensor_positions
        if len(out) == len(pos):  # one per tensor input (or per argument, every one a tensor)
            return out
        if len(out) != self._n_args:
            if len(out) > self._n_args and all(g is None for g in out[self._n_args:]):
                out = out[:self._n_args]  # None past the last input, as PyTorch drops (a bias=None default's)
                return out if len(pos) == len(out) else tuple([out[i] for i in pos])
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {self._n_args}, got {len(out)})"
            )
        return tuple([out[i] for i in pos])

    def _validated(self, grads):
        """A user Function's gradients checked as PyTorch checks them: each of its input's shape, or one that
        input's shape broadcasts to (then summed back to it), and of its input's dtype (else cast)."""
        checked = []
        for i, (g, (shape, dtype)) in enumerate(zip(grads, self._input_meta)):
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if isinstance(g, Tensor):
                if g.array.shape != shape:
                    if not _expandable(shape, g.array.shape):
                        raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {i} - got "
                                           f"{list(g.array.shape)} but expected shape compatible with {list(shape)}")
                    g = g.sum_to_size(shape)
                if g.array.dtype != dtype:
                    g = g.to(from_numpy_dtype(dtype))
            checked.append(g)
        return tuple(checked)

    def _result_array(self):
        """The array of the op's saved output (what `_saved_result` wraps), for a backward computing on arrays:
        no Tensor made. Anything that would fail `_saved_result`'s checks (freed, packed by a hook, modified in
        place) goes through unpack, which raises its error or unpacks the hook's value."""
        s = self._saved[-1]  # (wrap_outputs saves the output after whatever forward saved: last)
        a = s.tensor
        if a is None or s.counter[0] != s.version:
            return s.unpack(self).array
        return a

    def release_saved(self):
        """Free saved tensors (called after backward unless retain_graph). A freed SavedTensor keeps no
        counter (unpack raises FREED_MESSAGE); its slots are cleared here rather than by a method of its own,
        which would be a call per saved tensor of every node of every backward."""
        saved = self._saved
        if saved:
            for s in saved:
                if s is not None:
                    s.tensor = s.packed = s.unpack_hook = s.counter = None
            self._freed = True

    def saved_nbytes(self):
        """Bytes held by this node's saved tensors."""
        return sum(s.nbytes() for s in (self._saved or ()) if s is not None)


_SAVED_NAMES = set()  # the names `save` has seen: each read as `_saved_<name>` through a _SavedByName
_SAVED_NAME_TUPLES = {}  # the tuples of names `save` has seen, each kept once (one lookup a call)


def _read_by_name(names):
    for name in names:
        if name not in _SAVED_NAMES:
            _SAVED_NAMES.add(name)
            if not hasattr(BackwardNode, "_saved_" + name):  # (_saved_output_nr is the engine's)
                setattr(BackwardNode, "_saved_" + name, _SavedByName(name))
                setattr(BackwardNode, "_raw_saved_" + name, _SavedByName(name, raw=True))


class _SavedByName:
    """`node._saved_<key>`: the tensor a node saved under that name, as PyTorch shows them
    (`_saved_self`, `_saved_other`, `_saved_result`, ...). A class attribute of BackwardNode, one per
    name `save` has seen, rather than a `__getattr__`, through which every attribute read of every
    node would go. It defines no __set__, so an instance attribute of the name still wins (compile's
    replay sets them)."""

    __slots__ = ("key", "raw")

    def __init__(self, key, raw=False):
        self.key, self.raw = key, raw  # raw: `_raw_saved_<key>`, the SavedTensor itself (SavedTensorHandle)

    def __get__(self, node, cls=None):
        if node is None:
            return self
        names = node._names
        if names and self.key in names:
            s = node._saved[names.index(self.key)]
            if self.raw:
                return None if s is None else SavedTensorHandle._of(node, s)
            if node._freed:
                raise RuntimeError(FREED_MESSAGE)
            return None if s is None else s.unpack(node)
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{'_raw' if self.raw else ''}_saved_{self.key}'")


class SavedTensorHandle:
    """`node._raw_saved_<name>`: PyTorch's `torch.autograd.SavedTensor`, one saved tensor of a node.
    `register_hooks(pack, unpack)` packs it at once and unpacks it when backward needs it, as the
    pair of `saved_tensors_hooks` would have done had it been active when the op ran."""

    __slots__ = ("_node", "_saved")

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, node, saved):
        h = object.__new__(cls)
        h._node, h._saved = node, saved
        return h

    def unpack(self):
        return self._saved.unpack(self._node)

    def register_hooks(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and unpack_hook must be "
                            "callables")
        s = self._saved
        if s.counter is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
                "to backward through the graph a second time or if you need to access saved variables after calling "
                "backward.")
        if s.tensor is None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                               "one pair of hooks is allowed at a time.")
        t = s.unpack(self._node)
        # (the fields SavedTensor.__init__ sets under saved_tensors_hooks; unpack then goes through _reattach)
        s.edge = (None if s.is_output else t._edge()) if t._requires_grad else False
        s._shape, s._dtype = t.array.shape, t.array.dtype
        s.packed, s.unpack_hook, s.tensor = pack_hook(t), unpack_hook, None


def _zeros_like_meta(meta):
    """Zeros standing in for the gradient of an output backward got none for (materialized grads)."""
    shape, dt, xp = meta
    return Tensor._wrap((xp or np).zeros(shape, dtype=dt))  # (xp None: numpy's)


class _ForwardOnlyContext(FunctionCtx):
    """The ctx a forward gets when nothing will be recorded: saving is a no-op. Its maker sets
    `needs_input_grad` to False per argument (a tuple, as PyTorch's: indexing costs no Python call)."""

    _dirty = None
    _non_diff = None
    _materialize = True

    def save_for_backward(self, *tensors):
        pass

    def save_for_forward(self, *tensors):
        self._saved_forward = tensors

    def save(ctx, /, **named):
        pass

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs):
        self._non_diff_outputs = outputs  # (for a jvp: these outputs take no tangent)

    def set_materialize_grads(self, value):
        self._materialize = bool(value)  # (a jvp's input tangents follow it)


def _no_setup_context(ctx, inputs, output):
    """Function's own setup_context: not overridden, forward takes ctx first (the classic style)."""
    raise NotImplementedError("You must implement the setup_context() staticmethod to use this style of "
                              "autograd.Function (a forward without ctx)")


def _grad_mode_off(forward):
    """`forward` with is_grad_enabled() False where apply leaves only grad_shown on (enable_grad inside inference_mode,
    where nothing records: apply turns recording off for a forward that records, and nothing else is on)."""
    def forward_without_grad_mode(ctx, *args):
        if not state.grad_shown:
            return forward(ctx, *args)
        state.grad_shown = False
        try:
            return forward(ctx, *args)
        finally:
            state.grad_shown = True
    return forward_without_grad_mode


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        node_name = attrs.get("node_name") or f"{name}Backward"
        ours = cls.__module__.split(".")[0] in ("minigrad", "nn", "gpt")  # the engine's, nn's and gpt's ops
        cls._backward_cls = type(node_name, (BackwardNode,), {
            "_forward_cls": cls, "__module__": cls.__module__, "_hooked": not ours,
            "_repr_prefix": "" if ours else "minigrad.autograd.function."})
        # PyTorch gives a user Function an edge for every tensor argument; a built-in op has edges only
        # for its differentiable (floating) inputs: no edge for where's condition or gather's index.
        cls._float_edges_only = ours
        cls._user = not ours  # (a user Function's gradients are checked against its inputs, as PyTorch's)
        # forward as apply calls it, with the context first: PyTorch 2's other style, a forward without ctx
        # and a `setup_context(ctx, inputs, output)` that saves what backward needs, is adapted to it
        forward, setup = cls.forward, getattr(cls, "setup_context", None)
        if setup is not None and getattr(setup, "__func__", setup) is not _no_setup_context:
            def forward_with_ctx(ctx, *args):
                out = forward(*args)
                setup(ctx, args, out)
                return out
            cls._forward_with_ctx = staticmethod(forward_with_ctx)
        else:
            cls._forward_with_ctx = staticmethod(forward)
        if not ours:  # a user's forward sees grad mode off, as PyTorch's, also under enable_grad in inference_mode
            cls._forward_with_ctx = staticmethod(_grad_mode_off(cls._forward_with_ctx))
        if not ours and getattr(cls, "jvp", None) is not None:  # forward AD runs the user's jvp with forward's ctx: apply leaves it here
            inner = cls._forward_with_ctx

            def forward_keeping_ctx(ctx, *args):
                global jvp_ctx
                out = inner(ctx, *args)
                jvp_ctx = ctx  # (after forward: a Function applied inside it has set its own by then)
                return out
            cls._forward_with_ctx = staticmethod(forward_keeping_ctx)


class Function(metaclass=FunctionMeta):
    """Base class of every differentiable op, built-in or user-defined (as `torch.autograd.Function`).

    Subclasses define `forward(ctx, *args)` and `backward(ctx, *grad_outputs)` as static
    methods and are called through `apply`. A built-in op's forward returns arrays; a user
    Function's forward may return Tensors, as in PyTorch.
    """

    node_name = None
    saves_result = False  # the op saves its output as `_saved_result` (exp, tanh, sigmoid, ...)
    # For minigrad.compile's replay of a program without a backward (generation, evaluation): a
    # staticmethod taking forward's arguments (without ctx) that returns forward's work as a function
    # of the tensor arguments' arrays, with what forward decides from shapes and dtypes (the backend
    # that runs, the output's shape) decided once, or None when it cannot (docs/compile.md).
    array_forward = None
    # True: that function decides what depends on its arrays' shapes at each call, so a replay may
    # give it other shapes than the capture's (else the replay checks them)
    array_forward_any_shape = False
    # For minigrad.compile's replay of a training program: a staticmethod `array_step(needs, *args)` (needs:
    # the node's needs_input_grad at capture, args: forward's) that returns (forward, backward) on arrays,
    # or None where it cannot: forward(*arrays) -> (output, saved), the arrays being those of the tensor
    # arguments in order (the output a tuple for an op of several), and backward(saved, *grads) (one per
    # output) -> a gradient (an array, or None) per tensor argument,
    # with what forward decides from shapes and dtypes decided once. Each runs what the op's forward and
    # backward (with no graph of the backward) run, in the same order: the same bits.
    array_step = None
    # once_differentiable's (a backward on raw arrays): the op's backward with recorded ops, run under
    # create_graph, and whether its gradient is the incoming one times constants (needing none)
    double_backward = None
    backward_ignores_inputs = False
    # What the op's caller sets on its node after apply, beyond what forward saved (a binary op's operand
    # shapes): a staticmethod keep_state(node, inputs, outputs), which the caller calls where apply made a
    # node, and forward AD on the node of its tangent run (one mechanism for both)
    keep_state = None
    # False: forward only moves or picks existing values (a view, cat, a lookup), which numpy never warns on,
    # so apply runs it without entering numpy's quiet floating-point state (minigrad/_fp_errors.py)
    fp_arithmetic = True

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    def __call__(self, *args, **kwargs):  # an instance called as a module: PyTorch's legacy style, refused
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch."
            "autograd.Function)")

    setup_context = staticmethod(_no_setup_context)

    @classmethod
    def apply(cls, *args):
        if recording.recorders_made and _capture.recorder is not None:  # minigrad.compile is capturing: it runs
            return _capture.recorder.on_apply(cls, args)  # and records this
        if dual_apply is not None:  # a forward-AD level is entered: outputs get tangents (forward_ad.py)
            return dual_apply(cls, args)
        record = False
        # this thread's grad mode through its thread-local's own dict: an item read and written there costs
        # half an attribute of the thread-local (the generic lookup a threading.local subclass takes)
        mode = state.__dict__
        if mode["grad_enabled"]:
            for a in args:
                if type(a) is Tensor or isinstance(a, Tensor):
                    if a._requires_grad or a._base is not None and a._view_version != a._version_counter[0] \
                            and a._base._requires_grad:  # (a view whose base was since written in place: below)
                        record = True
                        break
        if not record:  # nothing to record: no node, no edges, nothing saved
            ctx = _ForwardOnlyContext()
            ctx.needs_input_grad = (False,) * len(args)
            if cls.fp_arithmetic:
                fp = fp_quiet()  # inf and nan without numpy's warnings, as PyTorch (minigrad/_fp_errors.py)
                try:
                    out = cls._forward_with_ctx(ctx, *args)
                finally:
                    fp_restore(fp)
            else:
                out = cls._forward_with_ctx(ctx, *args)
            if type(out) is np.ndarray and ctx._dirty is None:  # the usual: one new array
                return Tensor._output(out, None)
            return wrap_outputs(out, None, args, ctx)

        node = cls._backward_cls()
        node._seq = _next_seq()
        if scopes_entered and scope_state.current is not None:
            node._scope = scope_state.current
        needs, edges, pos = [], [], []
        float_only = cls._float_edges_only
        for i, a in enumerate(args):
            # (one that requires grad is floating: its dtype needs no look)
            if (type(a) is Tensor or isinstance(a, Tensor)) and (
                    (rg := a._requires_grad) or not float_only or a.array.dtype.kind in "fc"):
                pos.append(i)
                if a._base is not None and a._view_version != a._version_counter[0]:
                    # a view taken before an in-place write to its base: its history is that region of
                    # the base as it is now (PyTorch regenerates a view's grad_fn likewise)
                    a._regrow_view()
                    rg = a._requires_grad
                fn = a.grad_fn  # a._edge(), inlined: this loop runs for every recorded op
                if fn is not None:
                    edges.append((fn, a._output_nr))
                elif rg:
                    ref = a._grad_accumulator  # (leaf_accumulator's first lines: the leaf's node made already)
                    fn = ref() if ref is not None else None
                    edges.append((fn if fn is not None else leaf_accumulator(a), 0))
                else:
                    edges.append(_NO_EDGE)
                needs.append(rg)
            else:
                needs.append(False)
        needs = tuple(needs)
        node.needs_input_grad = _KEPT_FLAGS.setdefault(needs, needs) if len(needs) <= 4 else needs
        node.next_functions = tuple(edges)
        node._tensor_positions = _EVERY_POSITION[len(pos)] if len(pos) == len(args) < 5 else tuple(pos)
        if cls._user:
            node._input_meta = [(args[i].array.shape, args[i].array.dtype) for i in pos]
        node._n_args = len(args)
        mode["grad_enabled"] = False  # forward bodies run with grad mode off, as in PyTorch
        fp = fp_quiet() if cls.fp_arithmetic else None
        try:
            out = cls._forward_with_ctx(node, *args)
        finally:
            mode["grad_enabled"] = True  # it was on: that is how we got here
            if fp is not None:
                fp_restore(fp)
        return wrap_outputs(out, node, args, node)


BackwardCFunction = BackwardNode  # PyTorch's name for the base of a Function's node class


class InplaceFunction(Function):
    """PyTorch's legacy base of a Function that may write its input in place: `inplace` records the choice."""

    def __init__(self, inplace=False):
        self.inplace = inplace


def keep_absent_edges(out, args, slots, drop=()):
    """PyTorch's edges for an op's optional tensor arguments passed as None (group_norm's weight=None): a None
    edge each, in argument order (apply gives tensors only). `slots`: those arguments' positions; `drop`: those
    of tensor arguments PyTorch gives no edge at all (batch_norm's running statistics); the op's backward
    returns one gradient per argument."""
    node = out.grad_fn
    if node is None:
        return out
    for i in slots:
        if args[i] is None:
            break
    else:  # every optional tensor given (the usual): only the dropped edges go, and they come last
        pos = node._tensor_positions
        n = len(pos) - len(drop)
        if pos[n:] == drop:
            if drop:
                node.next_functions, node._tensor_positions = node.next_functions[:n], pos[:n]
            return out
    edges = {i: e for i, e in zip(node._tensor_positions, node.next_functions) if i not in drop}
    for i in slots:
        if args[i] is None:
            edges[i] = _NO_EDGE
    every = sorted(edges)
    node.next_functions = tuple([edges[i] for i in every])
    node._tensor_positions = tuple(every)
    return out


def keep_operand_shapes(node, inputs, outputs):
    """keep_state of a binary op: its two operands' shapes, to which its backward sums the gradients."""
    a, b = inputs[0], inputs[1]
    node._keep_shapes(a.array.shape if isinstance(a, Tensor) else (), b.array.shape if isinstance(b, Tensor) else ())


def keeps_operand_shapes(*classes):
    """Declare binary ops whose callers keep their operands' shapes on the node."""
    for cls in classes:
        cls.keep_state = staticmethod(keep_operand_shapes)


def _expandable(shape, to):
    """Whether `shape` broadcasts to `to` (PyTorch's is_expandable_to)."""
    if len(shape) > len(to):
        return False
    return all(a == b or a == 1 for a, b in zip(reversed(shape), reversed(to)))


_ARRAY_TYPE = {np.ndarray}


def wrap_outputs(out, node, args, ctx):
    """Wrap forward's result(s) as Tensors; when recording, attach them to `node`."""
    # the usual: one new array (or numpy scalar: a full reduction's)
    if (type(out) is np.ndarray or isinstance(out, np.generic)) and ctx._dirty is None and ctx._non_diff is None:
        if node is None:
            return Tensor._wrap(out)
        if type(out) is not np.ndarray:
            out = np.asarray(out)  # (a numpy scalar: as Tensor() makes it a 0-d array)
        dt = out.dtype
        meta = _KEPT_META.get(out.shape)  # (keyed by the shape alone: a dtype's hash is dear, its identity is not)
        if meta is None or meta[0][1] is not dt:
            meta = ((out.shape, dt, None),)  # (None: numpy, see _KEPT_FLAGS)
            if len(_KEPT_META) < _KEPT_META_MAX:
                _KEPT_META[meta[0][0]] = meta
        node._output_meta = meta  # (a tuple of a tuple of a tuple: a fresh one outlives the collector's first 2 passes)
        t = Tensor._output(out, node if dt.kind in "fc" else None)
        if node._forward_cls.saves_result:
            _save_result(node, t)
        return t
    if node is not None and type(out) is tuple and ctx._dirty is None and ctx._non_diff is None \
            and set(map(type, out)) == _ARRAY_TYPE:
        # several new numpy arrays (unbind's, split's pieces): what the loop below makes of them, without its
        # per-output tests (one array module for all; Tensor._output rather than Tensor())
        results, meta = [], []
        for i, o in enumerate(out):
            dt = o.dtype
            if dt.kind in "fc":
                t = Tensor._output(o, node)
                t._output_nr = i
            else:
                t = Tensor._output(o, None)
            results.append(t)
            meta.append((o.shape, dt, None))
        node._output_meta = meta
        if node._forward_cls.saves_result:
            _save_result(node, results[0])
        return tuple(results)
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = getattr(ctx, "_dirty", None)
    non_diff = getattr(ctx, "_non_diff", None)
    if dirty:
        _check_dirty(dirty, args, outs, node)
    results = []
    for o in outs:
        if isinstance(o, Tensor):
            if dirty and any(o is d for d in dirty):
                if node is not None and o._requires_grad and o.grad_fn is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                o._bump_version()
                if node is not None and node._saved:
                    # PyTorch saves after the dirty bump: a tensor saved from a dirty input is current
                    for s in node._saved:
                        if s is not None and s.counter is o._version_counter:
                            s.version = s.counter[0]
                t = o
            else:
                t = Tensor._wrap(o.array, version_counter=o._version_counter) if o.grad_fn is not None or o._requires_grad else o
        elif o is None or not hasattr(o, "dtype"):  # (a user forward's other values: returned as they are)
            t = o
        else:
            t = Tensor._wrap(o)
        results.append(t)
    if node is not None:
        meta = []
        for i, (t, o) in enumerate(zip(results, outs)):
            if not isinstance(t, Tensor):
                meta.append(None)
                continue
            meta.append((t.array.shape, t.array.dtype, array_module(t.array)))
            if t.array.dtype.kind in "fc" and not (non_diff and id(o) in non_diff):
                t.grad_fn, t._output_nr, t._requires_grad = node, i, True
        node._output_meta = meta
        if node._forward_cls.saves_result:
            _save_result(node, results[0])
    return results[0] if single else tuple(results)


_read_by_name(("result",))


def _check_dirty(dirty, args, outs, node):
    """ctx.mark_dirty's tensors, as PyTorch checks them: inputs (else a warning, when recording), all returned."""
    if node is not None and not all(any(d is a for a in args) for d in dirty):
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                      "mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=4)
    if not all(any(d is o for o in outs) for d in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")


def _save_result(node, t):
    """Save the op's output `t` as `_saved_result` (after whatever forward saved)."""
    saved = _saved(t, True)
    if node._saved is None:  # (the usual: forward saved nothing else)
        node._saved, node._names = [saved], ("result",)
    else:
        node._saved = node._saved + [saved]
        node._names = (node._names or ()) + ("result",)


class once_differentiable:
    """Marks a backward that works on raw arrays. With create_graph=True (grad mode on in backward) the
    op's `double_backward` runs instead, where it has one: the same gradient as recorded ops, which can
    be differentiated again. Without one it raises, rather than give a gradient that silently lacks its
    dependence on the inputs; an op whose gradient is the incoming one times constants (dropout,
    embedding: `backward_ignores_inputs`) needs neither while no incoming gradient requires grad."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, ctx, *grads):
        if state.grad_enabled:
            cls = ctx._forward_cls
            if cls._user:
                return _once_differentiable_user(self.fn, ctx, grads)
            if not cls.backward_ignores_inputs or any(g is not None and g._requires_grad for g in grads):
                double = cls.double_backward  # (defaults on Function: no lookup that misses)
                if double is not None:
                    return double(ctx, *grads)
                raise RuntimeError(
                    f"{ctx.name()} is not differentiable twice: its backward is implemented on raw arrays "
                    "(create_graph=True through it is not supported)"
                )
        return self.fn(ctx, *grads)


ONCE_DIFFERENTIABLE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """A user's once_differentiable backward run under create_graph: its gradients are new leaves passed
    through this node, which raises only if something differentiates through them (as PyTorch's Error)."""

    node_name = "Error"

    @staticmethod
    def forward(ctx, *grads):
        return tuple(g.array for g in grads) if len(grads) > 1 else grads[0].array

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ONCE_DIFFERENTIABLE_MESSAGE)


def _once_differentiable_user(fn, ctx, grads):
    """PyTorch's rule for a user Function: the backward runs without a graph; its gradients require grad
    (through an Error node) only where an incoming gradient does."""
    with grad_mode.no_grad():
        out = fn(ctx, *grads)
    if not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
        return out
    outs = out if isinstance(out, tuple) else (out,)
    present = [o.detach().requires_grad_() for o in outs if o is not None]
    errs = _DelayedError.apply(*present)
    errs = iter(errs if isinstance(errs, tuple) else (errs,))
    wrapped = tuple(None if o is None else next(errs) for o in outs)
    return wrapped if isinstance(out, tuple) else wrapped[0]


class _SecondOrder(Function):
    """An op's gradient under create_graph, passed through one node named as PyTorch's node there (`name` below):
    its edges reach what PyTorch's double backward formula reads beyond the recorded ops that made the gradient.
    rule "zero": the op's input, with a zero slope (PyTorch's `zeros_like(self)`: a pool's argmax or nll's picks
    do not move with it); "none": the input with no gradient at all (grid_sample's); an exception: PyTorch has no
    double backward there, and differentiating through the node raises it."""

    @staticmethod
    def forward(ctx, gx, rule, *others):
        ctx.rule = rule
        return gx.array

    @staticmethod
    def backward(ctx, gg):
        rule = ctx.rule
        if isinstance(rule, Exception):
            raise type(rule)(*rule.args)
        others = (None,) * (ctx._n_args - 3)  # (an incoming gradient: a refusal's only)
        x = Tensor._wrap(array_module(gg.array).zeros_like(gg.array)) if rule == "zero" else None
        return (gg, None, x) + others


_SECOND_ORDER_NODES = {}


def second_order(node, gx, rule="zero", *others, name=None):
    """Under create_graph, `node`'s gradient `gx` of its first tensor input, kept in a graph through that input
    as PyTorch's (see _SecondOrder; `others`: more tensors the node reaches, a refusal's incoming gradient).
    The node's name: PyTorch's for the double backward of `node` (MaxPool2DWithIndicesBackwardBackward0), or `name`."""
    name = name or node.name().removesuffix("0") + "Backward0"
    cls = _SECOND_ORDER_NODES.get(name)
    if cls is None:
        cls = _SECOND_ORDER_NODES[name] = type(name, (_SecondOrder,), {"node_name": name, "__module__": __name__})
    fn, nr = node.next_functions[0]
    x = Tensor._wrap(np.zeros((), dtype=gx.array.dtype))  # (a stand-in on the input's own edge: no values read)
    if fn is not None:
        x.grad_fn, x._output_nr, x._requires_grad = fn, nr, True
    return cls.apply(gx, rule, x, *others)


def leaf_accumulator(t):
    """The AccumulateGrad node of leaf `t`, one per leaf (held weakly by the leaf, as in PyTorch). None for a view
    taken in no_grad mode: it requires grad through its base, yet PyTorch gives it no node (a gradient stops there)."""
    if t._base is not None and getattr(t, "_no_grad_view", False):
        return None
    ref = t._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        # AccumulateGrad(t) without the class call (see _saved): a leaf's node dies with each graph, so every
        # forward makes its leaves' nodes anew
        node = _new_object(AccumulateGrad)
        node.variable, node.next_functions, node._seq = t, (), _next_seq()
        t._grad_accumulator = weakref.ref(node)
    return node
